"""Huang et al. (2025) App. G.2, Figures 5-6: which positional products extrapolate.

A product p_i^T Q^T K p_j is fitted to a target phi(i, j) on windows of 50 positions at random
offsets and tested on longer windows. Local and periodic targets keep a small error at lengths
never trained on; targets that are neither local nor periodic do not.
Book scale trains for fewer steps than the paper's 15k (see CONFIGS).
"""
import matplotlib.pyplot as plt

from lengthgen.theory.positional_fit import KINDS, TARGETS, extrapolation_errors, fit

FIGURE_ID = "huang-fig5-6-positional"
TITLE = "Fitting positional products: local and periodic targets extrapolate, others do not"

_SHARED = {"n_positions": 200, "train_length": 50, "batch_size": 64, "lr": 1e-3,
           "weight_penalty": 0.01, "test_lengths": [50, 75, 100, 125, 150, 175, 200]}
CONFIGS = {
    "test": {**_SHARED, "targets": ["i-j=2", "i-j>5"], "widths": [8], "steps": 30, "seeds": [0],
             "test_lengths": [50, 100]},
    "book": {**_SHARED, "targets": list(TARGETS), "widths": [16, 64, 256], "steps": 3000,
             "seeds": [0]},
    "paper": {**_SHARED, "targets": list(TARGETS), "widths": [16, 64, 256], "steps": 15000,
              "seeds": [0, 1, 2]},
}


def runs(config: dict) -> list[dict]:
    return [{"name": f"{target}-d{width}-s{seed}", "target": target, "width": width, "seed": seed}
            for target in config["targets"] for width in config["widths"]
            for seed in config["seeds"]]


def run_one(params: dict, config: dict, device) -> dict:
    model = fit(params["target"], params["width"], config["steps"], params["seed"],
                n_positions=config["n_positions"], train_length=config["train_length"],
                batch_size=config["batch_size"], lr=config["lr"],
                weight_penalty=config["weight_penalty"])
    errors = extrapolation_errors(model, params["target"], config["test_lengths"])
    return {"test_mse": {str(n): e for n, e in errors.items()}}


def figure(records: list[dict]):
    config = records[0]["config"]
    kinds = [k for k in KINDS if any(TARGETS[r["params"]["target"]][0] == k for r in records)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(3.2 * len(kinds), 3.6), sharey=True,
                             squeeze=False)
    widths = sorted({r["params"]["width"] for r in records})
    styles = dict(zip(widths, ("-", "--", ":")))
    for ax, kind in zip(axes[0], kinds):
        targets = [t for t in config["targets"] if TARGETS[t][0] == kind]
        for color, target in enumerate(targets):
            for width in widths:
                rows = [r for r in records if r["params"]["target"] == target
                        and r["params"]["width"] == width]
                if not rows:
                    continue
                lengths = sorted(int(n) for n in rows[0]["metrics"]["test_mse"])
                mean = [sum(r["metrics"]["test_mse"][str(n)] for r in rows) / len(rows)
                        for n in lengths]
                ax.plot(lengths, mean, styles[width], marker="o", ms=3, color=f"C{color}",
                        label=f"{target}, d={width}")
        ax.axvline(config["train_length"], color="grey", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(kind)
        ax.set_xlabel("test length n")
        ax.legend(fontsize=6)
    axes[0][0].set_ylabel("test MSE (entries i >= j)")
    fig.suptitle(f"Positional products fitted at length {config['train_length']} "
                 f"({config['steps']} steps), tested at longer n (grey line: training length)")
    fig.tight_layout()
    return fig
