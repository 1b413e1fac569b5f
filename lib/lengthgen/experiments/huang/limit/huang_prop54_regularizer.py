"""Huang et al. (2025) App. G.1, Prop. 54: the attention-product regularizer term at initialization.

Width d = c * N keeps the term bounded as the context length N grows; a fixed width does not.
Each run is one (N, width rule) pair, averaged over seeds, next to the exact expectation.

Feeds: book/limit_transformers.ipynb, {numref}`fig-prop54`
"""
import statistics

import matplotlib.pyplot as plt

from lengthgen.theory.regularizer import VARIANTS, expected_term, sample_term

FIGURE_ID = "huang-prop54-regularizer"
TITLE = "The attention-product regularizer at initialization stays bounded when width grows with N"

CONFIGS = {
    "test": {"lengths": [8, 16], "width_ratio": 1.0, "fixed_width": 8, "heads": 1, "seeds": 3},
    "book": {"lengths": [16, 32, 64, 128, 256, 512], "width_ratio": 1.0, "fixed_width": 16,
             "heads": 1, "seeds": 20},
    "paper": {"lengths": [16, 32, 64, 128, 256, 512, 1024, 2048], "width_ratio": 1.0,
              "fixed_width": 16, "heads": 1, "seeds": 100},
}
_RULES = ("linear", "fixed")
_TITLES = {"first_position": r"$\sum_j (p_0^\top K^\top Q\, p_j)^2$",
          "all_pairs": r"$\frac{1}{N}\sum_{j\leq i} (p_j^\top K^\top Q\, p_i)^2$"}


def _width(rule: str, n: int, config: dict) -> int:
    return max(1, round(config["width_ratio"] * n)) if rule == "linear" else config["fixed_width"]


def runs(config: dict) -> list[dict]:
    return [{"name": f"{rule}-N{n}", "rule": rule, "n": n}
            for rule in _RULES for n in config["lengths"]]


def run_one(params: dict, config: dict, device) -> dict:
    n, d, heads = params["n"], _width(params["rule"], params["n"], config), config["heads"]
    metrics = {"width": d}
    for variant in VARIANTS:
        values = [sample_term(n, d, d, heads, variant, seed) for seed in range(config["seeds"])]
        metrics[variant] = {"mean": statistics.mean(values), "std": statistics.pstdev(values),
                            "expected": expected_term(n, d, d, heads, variant)}
    return metrics


def data(records: list[dict]) -> list[dict]:
    """One row per width rule, context length and regularizer term: the mean and standard
    deviation over seeds (the error bars) and the exact expectation (the dashed lines)."""
    rows = []
    for r in sorted(records, key=lambda r: (_RULES.index(r["params"]["rule"]), r["params"]["n"])):
        for variant in VARIANTS:
            term = r["metrics"][variant]
            rows.append({"rule": r["params"]["rule"], "n": r["params"]["n"],
                         "width": r["metrics"]["width"], "term": variant,
                         "seeds": r["config"]["seeds"], "mean": term["mean"], "std": term["std"],
                         "expected": term["expected"]})
    return rows


def figure(records: list[dict]):
    config = records[0]["config"]
    fig, axes = plt.subplots(1, len(VARIANTS), figsize=(10, 3.8), sharex=True)
    labels = {"linear": f"width d = {config['width_ratio']:g} N",
              "fixed": f"fixed width d = {config['fixed_width']}"}
    for ax, variant in zip(axes, VARIANTS):
        for rule, color in zip(_RULES, ("C0", "C3")):
            rows = sorted((r for r in records if r["params"]["rule"] == rule),
                          key=lambda r: r["params"]["n"])
            ns = [r["params"]["n"] for r in rows]
            mean = [r["metrics"][variant]["mean"] for r in rows]
            std = [r["metrics"][variant]["std"] for r in rows]
            ax.errorbar(ns, mean, yerr=std, fmt="o", color=color, capsize=3,
                        label=f"{labels[rule]} (measured)")
            ax.plot(ns, [r["metrics"][variant]["expected"] for r in rows], "--", color=color,
                    label=f"{labels[rule]} (exact expectation)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context length N")
        ax.set_ylabel("regularizer term")
        ax.set_title(_TITLES[variant])
    # one legend for both panels, under them: inside a panel it covered the measured points
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncols=2, frameon=False)
    fig.suptitle("Attention-product term at N(0, 1/d) initialization, "
                 f"{config['seeds']} seeds per point (mean ± sd)")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig
