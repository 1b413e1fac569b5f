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

from lengthgen.experiments.izzo.rows import bound_data
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


