"""The loss curves of Izzo et al. Figs. 1 and 2 (and the bands Fig. k-gram reuses), drawn from
the rows of `analysis`."""
from lengthgen.experiments.izzo.analysis import curve_rows, summary_rows
from lengthgen.experiments.izzo.rows import scaling_rows


def loss_band(ax, pts, color: str, label: str) -> None:
    """The mean test loss against test length of rows `pts`, with the band from their
    smallest to their largest seed."""
    xs = [r["test_length"] for r in pts]
    ax.plot(xs, [r["test_loss"] for r in pts], "o-", ms=3, color=color, label=label)
    ax.fill_between(xs, [r["test_loss_min"] for r in pts], [r["test_loss_max"] for r in pts],
                    color=color, alpha=0.2, lw=0)


def name_two_and_five(ax) -> None:
    """On each log axis of `ax`, of the minor ticks matplotlib names (on an axis spanning
    about a decade: 2, 3, 4 and 6 times a power of ten), name only 2 and 5 times one: "3 x
    10^1", "4 x 10^1" and "6 x 10^1" ran into each other on a phone's narrow panel."""
    from matplotlib.ticker import LogFormatterSciNotation

    class TwoAndFive(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            if x <= 0 or f"{x:.0e}"[0] not in "25":
                return ""
            return super().__call__(x, pos)

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_minor_formatter(TwoAndFive(labelOnlyBase=False))


def curves_figure(records, key: str, symbol: str, task_name: str):
    """(a) test loss vs test length per train length (largest `key` value), band: min to max
    over seeds. (b) plateau vs train length per `key` value, bars: min to max over seeds.
    (c) the same against N / key, where the curves overlap if the required N is linear in the
    key. (d) required train length vs `key` at eps and eps/10, bars: each seed's own."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter
    config = records[0]["config"]
    rows = curve_rows(records, key)
    values = sorted({r[key] for r in rows})
    fig, axes = plt.subplots(2, 2, figsize=(8.2, 6.6))
    axes = axes.ravel()
    shown = values[-1]
    lengths = sorted({r["train_length"] for r in rows if r[key] == shown})
    for i, n in enumerate(lengths):
        loss_band(axes[0], [r for r in rows if r[key] == shown and r["train_length"] == n],
                  f"C{i}", f"N = {n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title=f"(a) test loss, {symbol} = {shown:g}")
    axes[0].legend(fontsize=7, ncol=2)
    summary = summary_rows(records, key)
    for i, value in enumerate(values):
        pts = sorted((r["train_length"], r["plateau"], r["plateau_min"], r["plateau_max"])
                     for r in summary if r[key] == value)
        ns, mid, low, high = map(list, zip(*pts))
        bars = [[m - lo for m, lo in zip(mid, low)], [h - m for m, h in zip(mid, high)]]
        for ax, x in ((axes[1], ns), (axes[2], [n / value for n in ns])):
            ax.errorbar(x, mid, yerr=bars, fmt="o-", ms=3, capsize=2, color=f"C{i}",
                        label=f"{symbol} = {value:g}")
    for ax, xlabel, title in ((axes[1], "train length N", "(b) plateau vs N"),
                              (axes[2], f"N / {symbol}", f"(c) plateau vs N / {symbol}")):
        for level in (config["eps"], config["eps"] / 10):
            ax.axhline(level, color="k", ls=":", lw=1)
        ax.set(xscale="log", yscale="log", xlabel=xlabel,
               ylabel=f"MSE at length {max(config['test_lengths'])}", title=title)
        ax.legend(fontsize=7)
    every_length = sorted({r["train_length"] for r in summary})
    axes[1].xaxis.set_minor_formatter(NullFormatter())
    plain = FuncFormatter(lambda x, _: f"{x:g}")
    axes[2].xaxis.set_major_formatter(plain)
    # between the powers of ten only 2 and 5 (0.2, 0.5, 2, 5, ...) are named: every minor tick
    # named ran "0.5", "0.6", ... "0.9", "1" into each other
    axes[2].xaxis.set_minor_formatter(FuncFormatter(
        lambda x, _: f"{x:g}" if x > 0 and f"{x:.0e}"[0] in "25" else ""))
    axes[2].tick_params(axis="x", which="both", labelsize=7)
    axes[1].set_xticks(every_length, [str(n) for n in every_length], fontsize=7)
    for column, eps, color in (("required_N", config["eps"], "C3"),
                               ("required_N_eps_over_10", config["eps"] / 10, "C4")):
        pts = sorted({(r[key], r[column], r[column + "_min"], r[column + "_max"])
                      for r in summary if r[column] is not None})
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        low = [p[1] - p[2] if p[2] is not None else 0 for p in pts]
        high = [p[3] - p[1] if p[3] is not None else 0 for p in pts]
        axes[3].errorbar(xs, ys, yerr=[low, high], fmt="o", capsize=3, color=color,
                         label=f"plateau <= {eps:g}")
        # an upper bound (the grid's first train length already below eps) is no crossing:
        # drawn as a downward triangle, and left out of the line
        bounds = sorted({(r[key], r[column]) for r in summary
                         if r[column] is not None and r[column + "_bound"]})
        if bounds:
            axes[3].plot(*zip(*bounds), "v", color=color, markersize=9,
                         label=f"plateau <= {eps:g}: upper bound only")
        line = {r[key]: r[column + "_line"] for r in summary}
        if len(pts) >= 2 and None not in line.values():
            # the least-squares line of the crossings, between the first and last key
            slope = (line[max(xs)] - line[min(xs)]) / (max(xs) - min(xs))
            axes[3].plot([min(xs), max(xs)], [line[min(xs)], line[max(xs)]], ":", color=color,
                         label=f"line, slope {slope:.2g}")
    axes[3].set(xlabel=symbol, ylabel="smallest N (interpolated, or a bound)",
                title=f"(d) required N vs {symbol}")
    if axes[3].get_legend_handles_labels()[0]:
        axes[3].legend(fontsize=7)
    else:  # e.g. test scale: no train length in the grid reaches eps
        axes[3].text(0.5, 0.5, f"eps = {config['eps']:g} not reached", ha="center",
                     va="center", transform=axes[3].transAxes, fontsize=8)
    fig.suptitle(f"{task_name}: {len(config['seeds'])} seeds, batch {config['batch_size']}, "
                 f"stop at loss < {config['stop_loss']:g} (cap {config['max_steps']} steps)",
                 fontsize=10)
    fig.tight_layout()
    return fig


def scaling_figure(records):
    """Test loss against test length at the compared period, per train length: the paper's
    scaling (solid) and every logit scaled by log i (dashed); bands: min to max over seeds."""
    import matplotlib.pyplot as plt
    rows = scaling_rows(records)
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    lengths = sorted({r["train_length"] for r in rows})
    for i, n in enumerate(lengths):
        for scaling, style in (("suffix", "o-"), ("all", "s--")):
            pts = [r for r in rows if r["train_length"] == n and r["logit_scaling"] == scaling]
            if not pts:
                continue
            xs = [r["test_length"] for r in pts]
            ax.plot(xs, [r["test_loss"] for r in pts], style, ms=3, color=f"C{i}",
                    label=f"N = {n}, {'log i on the suffix only' if scaling == 'suffix' else 'log i on every logit'}")
            ax.fill_between(xs, [r["test_loss_min"] for r in pts],
                            [r["test_loss_max"] for r in pts], color=f"C{i}", alpha=0.15, lw=0)
    ax.set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
           title=f"ModPTask Δ = {rows[0]['period'] if rows else '?'}: two logit scalings")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


class BoundFigure:
    """The calculator's picture: N against Delta (one curve per tau, the chosen tau bold) with
    the two terms apart, and the chosen setting marked (the bound's numbers:
    theory.izzo_bound.theorem41_length). Built once for every setting it will show (dicts of
    delta, tau, L, eps, p, gamma), so that one range of N serves them all and a slider's frames
    compare by eye, then redrawn per setting by `show`: the layout is done once, with room for
    the longest title and label any setting gives."""

    def __init__(self, settings: list[dict], deltas=range(1, 33), taus=(1, 2, 4, 8, 16)):
        import matplotlib.pyplot as plt

        from lengthgen.theory.izzo_bound import theorem41_length   # here: data() needs no torch
        self.bound, self.deltas, self.taus = theorem41_length, list(deltas), tuple(taus)
        values, texts = [], []
        for setting in settings:
            values += [y for ys in self._curves(setting).values() for y in ys]
            values.append(self._point(setting)["hardmax"])
            texts.append(self._texts(setting))
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        self.curves = {t: ax.plot(self.deltas, self.deltas, lw=0.9, alpha=0.5,
                                  label=rf"$\tau\Delta L^2/\varepsilon^2$, $\tau$ = {t}")[0]
                       for t in self.taus}
        self.hardmax = ax.axhline(1, color="k", ls="--", lw=1.2, label=r"$2^{p/\gamma}$ (hardmax)")
        title, label = (max(column, key=len) for column in zip(*texts))
        (self.point,) = ax.plot([], [], "o", ms=9, color="crimson", zorder=5, label=label)
        ax.set_yscale("log")
        ax.set_ylim(min(values) / 2, max(values) * 2)
        ax.set_xlabel(r"period $\Delta$")
        ax.set_ylabel("training length N (constants = 1)")
        self.title = ax.set_title(title, fontsize=10)
        # the legend under the axes: inside, it would hide the marked setting wherever it falls
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)
        fig.tight_layout()
        self.fig, self.ax = fig, ax

    def _curves(self, s: dict) -> dict:
        return {t: [self.bound(d, t, s["L"], s["eps"], s["p"], s["gamma"])["statistics"]
                    for d in self.deltas] for t in self.taus}

    def _point(self, s: dict) -> dict:
        return self.bound(s["delta"], s["tau"], s["L"], s["eps"], s["p"], s["gamma"])

    def _texts(self, s: dict) -> tuple[str, str]:
        """The title and the marked setting's legend label at a setting."""
        point = self._point(s)
        return (rf"Theorem 4.1 at $L$ = {s['L']:g}, $\varepsilon$ = {s['eps']:g}, "
                rf"$p$ = {s['p']}, $\gamma$ = {s['gamma']:g}",
                f"N = {point['N']:.3g} ({point['regime']} term)")

    def show(self, delta: int, tau: int, L: float = 1.0, eps: float = 0.1, p: int = 8,
             gamma: float = 1.0):
        """The figure at one setting (one of those it was built for)."""
        setting = {"delta": delta, "tau": tau, "L": L, "eps": eps, "p": p, "gamma": gamma}
        for t, ys in self._curves(setting).items():
            self.curves[t].set_ydata(ys)
            self.curves[t].set_linewidth(2.4 if t == tau else 0.9)
            self.curves[t].set_alpha(1 if t == tau else 0.5)
        point = self._point(setting)
        self.hardmax.set_ydata([point["hardmax"]] * 2)
        self.point.set_data([delta], [point["N"]])
        title, label = self._texts(setting)
        # a layout for a narrow column may have broken the longest title or label into lines:
        # break these where it broke that one (after as many words)
        self.title.set_text(_broken_like(title, self.title.get_text()))
        entry = self.ax.get_legend().texts[-1]
        entry.set_text(_broken_like(label, entry.get_text()))
        return self.fig


def _broken_like(text: str, laid_out: str) -> str:
    """`text` broken into lines after the same numbers of words as `laid_out`."""
    words, out = text.split(" "), []
    for line in laid_out.split("\n")[:-1]:
        count = len(line.split(" "))
        out.append(" ".join(words[:count]))
        words = words[count:]
    return "\n".join(out + [" ".join(words)])
