"""Izzo et al. (2026), Theorem 4.1 and its proof, run: the simulation argument on the
one-layer Limit Transformers of App. A.2 (SimpleTask and ModPTask from explicit weights).

For long random inputs x (lengths up to 10^5), `simulate` builds the proof's short string z
(App. A.1) for one model and measures how far the attended-type frequencies and the output
move from x to z; `simulate_pair` runs the proof's second half, one z for two models f and g
that attend to different positions (ModPTask at residues 0 and 1; SimpleTask on the symbols
0, 1 and on 1, 2), where the string needs about tau Delta / eps^2 tokens.
The theorem's quantities are computed from the weights: the logit margin gamma, the norm L, the
period Delta, tau and the bits p, hence both terms of N. The claim checked: |z| stays bounded
(and below N) however long x gets, while the statistics and outputs on z stay within O(eps)
and O(L eps) of those on x. No training; the numbers are exact up to float64 rounding.

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-thm41-bound`
"""
import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from lengthgen.experiments.izzo.rows import bound_data, pair_summary  # noqa: F401 (the chapter's)
from lengthgen.experiments.prose import sig
from lengthgen.tasks.izzo import ModPTask, SimpleTask

FIGURE_ID = "izzo-thm41-bound"
TITLE = "The simulation argument: a short z reproduces f on long x (Theorem 4.1)"

_SHARED = {"bits": 8, "margin": 2.0, "knots": 64}
_PAIRS = [[["modp", 2, 0], ["modp", 2, 1]], [["modp", 4, 0], ["modp", 4, 1]],
          [["simple", 2.0, [0, 1]], ["simple", 2.0, [1, 2]]]]
CONFIGS = {
    "test": {**_SHARED, "models": [["simple", 2.0], ["modp", 3]], "eps": [0.1],
             "x_lengths": [50, 500], "inputs_per_length": 2, "seeds": [0],
             "pairs": [[["modp", 2, 0], ["modp", 2, 1]]]},
    "book": {**_SHARED, "models": [["simple", 1.0], ["simple", 2.0], ["simple", 4.0],
                                   ["modp", 2], ["modp", 4], ["modp", 8]],
             "eps": [0.1, 0.05, 0.02], "x_lengths": [100, 1000, 10000, 100000],
             "inputs_per_length": 8, "seeds": [0], "pairs": _PAIRS},
    "paper": {**_SHARED, "models": [["simple", 1.0], ["simple", 2.0], ["simple", 4.0],
                                    ["simple", 8.0], ["modp", 2], ["modp", 3], ["modp", 4],
                                    ["modp", 5], ["modp", 8]],
              "eps": [0.1, 0.05, 0.02, 0.01], "x_lengths": [100, 1000, 10000, 100000, 1000000],
              "inputs_per_length": 32, "seeds": [0], "pairs": _PAIRS},
}


def runs(config):
    singles = [{"name": f"{kind}{value:g}-eps{eps:g}-s{seed}", "kind": kind, "value": value,
                "eps": eps, "seed": seed}
               for kind, value in config["models"] for eps in config["eps"]
               for seed in config["seeds"]]
    pairs = [{"name": f"pair-{_pair_name(pair)}-eps{eps:g}-s{seed}", "kind": "pair",
              "pair": pair, "eps": eps, "seed": seed}
             for pair in config.get("pairs", []) for eps in config["eps"]
             for seed in config["seeds"]]
    return singles + pairs


def _pair_name(pair) -> str:
    (kind, value, arg), (_, _, other) = pair
    if kind == "modp":
        return f"modp{value}-k{arg}-k{other}"
    return f"simple{value:g}-{''.join(map(str, arg))}-{''.join(map(str, other))}"


def _construction(params, config):
    # the constructions are torch models: imported where built (data() and runs() need none)
    from lengthgen.theory.izzo_bound import modp_task_model, simple_task_model
    if params["kind"] == "simple":
        return (simple_task_model(float(params["value"]), config["knots"], config["margin"],
                                  config["bits"]), SimpleTask(float(params["value"])))
    p = int(params["value"])
    return modp_task_model(p, 0, config["margin"], config["bits"]), ModPTask(p, 0)


def _member(spec, config):
    from lengthgen.theory.izzo_bound import modp_task_model, simple_task_model
    kind, value, arg = spec
    if kind == "modp":
        return modp_task_model(int(value), int(arg), config["margin"], config["bits"])
    return simple_task_model(float(value), config["knots"], config["margin"], config["bits"],
                             pair=tuple(arg))


def _run_pair(params, config):
    from lengthgen.theory.izzo_bound import (logit_margin, simulate_pair, theorem41_length,
                                             theorem_norm)
    (kind, value, _), _ = params["pair"]
    f, g = (_member(spec, config) for spec in params["pair"])
    task = ModPTask(int(value), 0) if kind == "modp" else SimpleTask(float(value))
    gamma, L = min(logit_margin(f), logit_margin(g)), max(theorem_norm(f), theorem_norm(g))
    bound = theorem41_length(f.delta, f.tau, L, params["eps"], f.bits, gamma)
    hardmax = math.ceil(bound["hardmax"])
    rng = np.random.default_rng(params["seed"])
    per_length = {}
    for n in config["x_lengths"]:
        results = [simulate_pair(f, g, task.sample(rng, 1, n, n).inputs[0], params["eps"],
                                 min_length=hardmax)
                   for _ in range(config["inputs_per_length"])]
        errors = [max(r["output_error_f"], r["output_error_g"]) for r in results]
        per_length[str(n)] = {
            "z_length_max": max(r["z_length"] for r in results),
            "statistic_error_max": max(max(r["statistic_error_f"], r["statistic_error_g"])
                                       for r in results),
            "output_error_max": max(errors), "output_error_mean": float(np.mean(errors)),
            "cases": sorted({r["case"] for r in results})}
    return {"gamma": gamma, "L": L, "delta": f.delta, "tau": f.tau, "bits": f.bits,
            "hardmax_length": bound["hardmax"], "statistics_term": bound["statistics"],
            "N": bound["N"], "regime": bound["regime"], "by_length": per_length}


def run_one(params, config, device):
    from lengthgen.theory.izzo_bound import logit_margin, simulate, theorem41_length, theorem_norm
    if params["kind"] == "pair":
        return _run_pair(params, config)
    c, task = _construction(params, config)
    gamma, L = logit_margin(c), theorem_norm(c)
    bound = theorem41_length(c.delta, c.tau, L, params["eps"], c.bits, gamma)
    hardmax = math.ceil(bound["hardmax"])
    rng = np.random.default_rng(params["seed"])
    per_length = {}
    for n in config["x_lengths"]:
        results = []
        for _ in range(config["inputs_per_length"]):
            x = task.sample(rng, 1, n, n).inputs[0]
            r = simulate(c, x, params["eps"], min_length=hardmax)
            results.append(r)
        per_length[str(n)] = {
            "z_length_max": max(r["z_length"] for r in results),
            "statistic_error_max": max(r["statistic_error"] for r in results),
            "output_error_max": max(r["output_error"] for r in results),
            "output_error_mean": float(np.mean([r["output_error"] for r in results])),
        }
    return {"gamma": gamma, "L": L, "delta": c.delta, "tau": c.tau, "bits": c.bits,
            "hardmax_length": bound["hardmax"], "statistics_term": bound["statistics"],
            "N": bound["N"], "regime": bound["regime"], "by_length": per_length}


def data(records):
    """One row per (model, eps, |x|): the worst |z|, statistic and output errors, beside the
    theorem's N (`izzo.rows.bound_data`, which the chapter's analysis reads too)."""
    return bound_data(records)


def simulation_table(records) -> list[dict]:
    """The chapter's simulation table: per (model, eps), the worst over every |x| and input of
    |z|, the statistic change and the output error, beside L eps and the theorem's N."""
    worst = {}
    for r in data(records):
        w = worst.setdefault((r["model"], r["eps"]), {**r, "x_length": 0})
        for k in ("x_length", "z_length_max", "statistic_error_max", "output_error_max"):
            w[k] = max(w[k], r[k])
    return [{"model": w["model"], "eps": w["eps"], "longest |x|": w["x_length"],
             "longest z": w["z_length_max"], "largest proportion change": w["statistic_error_max"],
             "largest output error": w["output_error_max"], "L eps": w["L_eps"],
             "theorem's N": w["N"]} for w in worst.values()]


def theorem_lengths(records) -> tuple[float, float]:
    """The smallest and largest N of Theorem 4.1 over the models and eps of the records."""
    lengths = [r["metrics"]["N"] for r in records]
    return min(lengths), max(lengths)


def _z_shares(records) -> dict[str, str]:
    """The longest z as a share of the theorem's N (constants set to 1), worst case per model
    and eps: for the ModPTask pairs, where L = 1 and the second half needs tau Delta / eps^2
    positions, the theorem's second term itself, and for every other model or pair. Ranges as
    text, for the chapter's sentence on how short z is.

    Feeds: book/quantitative_bounds.ipynb, {numref}`tab-izzo-simulation-table`,
    {numref}`tab-izzo-pair-table`"""
    groups = {"modp-pairs": [], "others": []}   # glue keys: izzo-z-share-{modp-pairs,others}
    for row in simulation_table(records):
        modp_pair = row["model"].startswith("pair: ModPTask")
        groups["modp-pairs" if modp_pair else "others"].append(row["longest z"]
                                                                / row["theorem's N"])
    return {name: (f"{sig(min(v))} to {sig(max(v))}" if v else "none")
            for name, v in groups.items()}


class BoundFigure:
    """The calculator's picture: N against Delta (one curve per tau, the chosen tau bold) with
    the two terms apart, and the chosen setting marked (the bound's numbers:
    theory.izzo_bound.theorem41_length). Built once for every setting it will show (dicts of
    delta, tau, L, eps, p, gamma), so that one range of N serves them all and a slider's frames
    compare by eye, then redrawn per setting by `show`: the layout is done once, with room for
    the longest title and label any setting gives."""

    def __init__(self, settings: list[dict], deltas=range(1, 33), taus=(1, 2, 4, 8, 16)):
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


def figure(records):
    rows = data(records)
    eps_values = sorted({r["eps"] for r in rows})
    eps = eps_values[len(eps_values) // 2]
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(2, 2, figsize=(8.6, 8.8))   # (the legend under the panels)
    axes = axes.ravel()
    pairs = [m for m in models if m.startswith("pair")]
    for i, model in enumerate(models):
        pts = [r for r in rows if r["model"] == model and r["eps"] == eps]
        xs = [r["x_length"] for r in pts]
        style = "s--" if model in pairs else "o-"
        axes[0].plot(xs, [r["z_length_max"] for r in pts], style, ms=3, color=f"C{i}",
                     label=model.replace("pair: ", "pair, "))
        axes[1].plot(xs, [r["output_error_max"] for r in pts], style, ms=3, color=f"C{i}")
        axes[1].axhline(pts[0]["L_eps"], color=f"C{i}", ls=":", lw=1)
        by_eps = [(e, max(r["z_length_max"] for r in rows if r["model"] == model
                          and r["eps"] == e)) for e in eps_values]
        ax = axes[3] if model in pairs else axes[2]
        ax.plot([1 / e for e, _ in by_eps], [z for _, z in by_eps], style, ms=3, color=f"C{i}")
    axes[0].plot(xs, xs, "k--", lw=0.8, label="|z| = |x|")
    axes[0].set(xscale="log", yscale="log", xlabel="|x|", ylabel="|z| (worst input)",
                title=f"(a) length of z (ε = {eps:g})")
    axes[1].set(xscale="log", yscale="log", xlabel="|x|", ylabel="|f(x) - f(z)| (worst input)",
                title="(b) output error; dotted: L·ε")
    inv = [1 / e for e in eps_values]
    for ax, power, title in ((axes[2], 1, "(c) one model: |z| ~ τΔ / ε"),
                             (axes[3], 2, "(d) two models: |z| ~ τΔ / ε²")):
        ax.set(xscale="log", yscale="log", xlabel="1 / ε", ylabel="|z| (worst over |x|)",
               title=title)
        lines = ax.get_lines()
        if lines:
            top = max(max(line.get_ydata()) for line in lines)
            ax.plot(inv, [top * (x / inv[-1]) ** power for x in inv], "k:", lw=1,
                    label=f"slope {power}")
            ax.legend(fontsize=7)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(NullFormatter())
        ax.set_xticks(inv, [f"{x:g}" for x in inv])
    # the models' legend under the panels: inside panel (a), its nine entries covered the
    # curves and the panel's y label
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=2, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    return fig


