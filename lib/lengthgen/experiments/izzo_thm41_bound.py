"""Izzo et al. (2026), Theorem 4.1 and its proof, run: the simulation argument on the
one-layer Limit Transformers of App. A.2 (SimpleTask and ModPTask from explicit weights).

For long random inputs x (lengths up to 10^5), `simulate` builds the proof's short string z
(App. A.1) and measures how far the attended-type frequencies and the output move from x to z.
The theorem's quantities are computed from the weights: the logit margin gamma, the norm L, the
period Delta, tau and the bits p, hence both terms of N. The claim checked: |z| stays bounded
(and below N) however long x gets, while the statistics and outputs on z stay within O(eps)
and O(L eps) of those on x. No training; the numbers are exact up to float64 rounding.
"""
import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from lengthgen.tasks.izzo import ModPTask, SimpleTask
from lengthgen.theory.izzo_bound import (logit_margin, modp_task_model, simple_task_model,
                                         simulate, theorem41_length, theorem_norm)

FIGURE_ID = "izzo-thm41-bound"
TITLE = "The simulation argument: a short z reproduces f on long x (Theorem 4.1)"

_SHARED = {"bits": 8, "margin": 2.0, "knots": 64}
CONFIGS = {
    "test": {**_SHARED, "models": [["simple", 2.0], ["modp", 3]], "eps": [0.1],
             "x_lengths": [50, 500], "inputs_per_length": 2, "seeds": [0]},
    "book": {**_SHARED, "models": [["simple", 1.0], ["simple", 2.0], ["simple", 4.0],
                                   ["modp", 2], ["modp", 4], ["modp", 8]],
             "eps": [0.1, 0.05, 0.02], "x_lengths": [100, 1000, 10000, 100000],
             "inputs_per_length": 8, "seeds": [0]},
    "paper": {**_SHARED, "models": [["simple", 1.0], ["simple", 2.0], ["simple", 4.0],
                                    ["simple", 8.0], ["modp", 2], ["modp", 3], ["modp", 4],
                                    ["modp", 5], ["modp", 8]],
              "eps": [0.1, 0.05, 0.02, 0.01], "x_lengths": [100, 1000, 10000, 100000, 1000000],
              "inputs_per_length": 32, "seeds": [0]},
}


def runs(config):
    return [{"name": f"{kind}{value:g}-eps{eps:g}-s{seed}", "kind": kind, "value": value,
             "eps": eps, "seed": seed}
            for kind, value in config["models"] for eps in config["eps"]
            for seed in config["seeds"]]


def _construction(params, config):
    if params["kind"] == "simple":
        return (simple_task_model(float(params["value"]), config["knots"], config["margin"],
                                  config["bits"]), SimpleTask(float(params["value"])))
    p = int(params["value"])
    return modp_task_model(p, 0, config["margin"], config["bits"]), ModPTask(p, 0)


def run_one(params, config, device):
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


def _label(r):
    p = r["params"]
    return (f"SimpleTask omega={p['value']:g}" if p["kind"] == "simple"
            else f"ModPTask p={int(p['value'])}")


def data(records):
    """One row per (model, eps, |x|): the worst |z|, statistic and output errors over the
    inputs, beside the theorem's N, gamma, L and the O(L eps) scale."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["kind"], r["params"]["value"],
                                            -r["params"]["eps"])):
        m = r["metrics"]
        for n, v in sorted(m["by_length"].items(), key=lambda kv: int(kv[0])):
            rows.append({"model": _label(r), "eps": r["params"]["eps"], "x_length": int(n),
                         "z_length_max": v["z_length_max"],
                         "statistic_error_max": v["statistic_error_max"],
                         "output_error_max": v["output_error_max"],
                         "L_eps": m["L"] * r["params"]["eps"], "N": m["N"], "gamma": m["gamma"],
                         "L": m["L"], "delta": m["delta"], "tau": m["tau"]})
    return rows


def figure(records):
    rows = data(records)
    eps_values = sorted({r["eps"] for r in rows})
    eps = eps_values[len(eps_values) // 2]
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for i, model in enumerate(models):
        pts = [r for r in rows if r["model"] == model and r["eps"] == eps]
        xs = [r["x_length"] for r in pts]
        axes[0].plot(xs, [r["z_length_max"] for r in pts], "o-", color=f"C{i}", label=model)
        axes[1].plot(xs, [r["output_error_max"] for r in pts], "o-", color=f"C{i}")
        axes[1].axhline(pts[0]["L_eps"], color=f"C{i}", ls=":", lw=1)
        by_eps = [(e, max(r["z_length_max"] for r in rows if r["model"] == model
                          and r["eps"] == e)) for e in eps_values]
        axes[2].plot([1 / e for e, _ in by_eps], [z for _, z in by_eps], "o-", color=f"C{i}")
    axes[0].plot(xs, xs, "k--", lw=0.8, label="|z| = |x|")
    axes[0].set(xscale="log", yscale="log", xlabel="|x|", ylabel="|z| (worst input)",
                title=f"length of the simulating string (eps = {eps:g})")
    axes[0].legend(fontsize=7)
    axes[1].set(xscale="log", yscale="log", xlabel="|x|", ylabel="|f(x) - f(z)| (worst input)",
                title="output error; dotted: L eps of each model")
    axes[2].set(xscale="log", yscale="log", xlabel="1 / eps", ylabel="|z| (worst over |x|)",
                title="|z| grows like tau Delta / eps")
    for axis in (axes[2].xaxis, axes[2].yaxis):
        axis.set_minor_formatter(NullFormatter())
    axes[2].set_xticks([1 / e for e in eps_values], [f"{1 / e:g}" for e in eps_values])
    fig.tight_layout()
    return fig
