"""The loss curves of Izzo et al. Figs. 1 and 2 (and the bands Fig. k-gram reuses), drawn from
the rows of `analysis`."""
from lengthgen.experiments.izzo.analysis import curve_rows, summary_rows


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
