"""The inference procedure of Huang et al. (2025, Def. 6) made concrete at small scale.

For growing training lengths n, fit an APE decoder on inputs of length at most n and test it on
lengths n+1..2n, as Theorem 7 does. (aa)* has a C-RASP[periodic, local] program (the parity of
the position decides the next symbol), so the theorem predicts success once n is large enough;
PARITY has no such program, and nothing is guaranteed. Real training (AdamW, a few hundred steps)
stands in for the idealized procedure (exact fit with a minimal regularizer), so this shows the
predicted contrast, not the theorem itself.
"""
import matplotlib.pyplot as plt

from lengthgen.evaluate import bin_name
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, train_and_evaluate

FIGURE_ID = "limit-inference-procedure"
TITLE = "Accuracy at twice the training length: a C-RASP[periodic, local] language vs PARITY"

_MODEL = {"d_model": 64, "n_layers": 2, "n_heads": 2}
CONFIGS = {
    "test": {"tasks": ["aa_star", "parity"], "train_lengths": [4], "seeds": [0], "steps": 20,
             "batch_size": 16, "lr": 1e-3, "eval_samples": 32, "test_samples": 32,
             "model": {"d_model": 16, "n_layers": 1, "n_heads": 1}},
    "book": {"tasks": ["aa_star", "parity"], "train_lengths": [8, 16, 32], "seeds": [0],
             "steps": 1000, "batch_size": 64, "lr": 1e-3, "eval_samples": 256,
             "test_samples": 256, "model": _MODEL},
    "paper": {"tasks": ["aa_star", "parity"], "train_lengths": [10, 20, 30, 40, 50],
              "seeds": [0, 1, 2, 3, 4], "steps": 30000, "batch_size": 64, "lr": 1e-4,
              "eval_samples": 1000, "test_samples": 2000, "model": _MODEL},
}


def runs(config: dict) -> list[dict]:
    return [{"name": f"{task}-n{n}-s{seed}", "task": task, "train_length": n, "seed": seed}
            for task in config["tasks"] for n in config["train_lengths"] for seed in config["seeds"]]


def run_one(params: dict, config: dict, device) -> dict:
    n = params["train_length"]
    train_cfg = TrainConfig(steps=config["steps"], batch_size=config["batch_size"],
                            lr=config["lr"], min_len=1, max_len=n, eval_every=100,
                            eval_samples=config["eval_samples"], seed=params["seed"])
    metrics = train_and_evaluate(get_task(params["task"]), train_cfg, device,
                                 bins=[(1, n), (n + 1, 2 * n)],
                                 samples_per_bin=config["test_samples"], pe="ape",
                                 **config["model"])
    return {"in_distribution": metrics["bins"][bin_name(1, n)]["accuracy"],
            "twice_length": metrics["bins"][bin_name(n + 1, 2 * n)]["accuracy"],
            "steps": metrics["steps"], "n_params": metrics["n_params"]}


def figure(records: list[dict]):
    config = records[0]["config"]
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = {"aa_star": "(aa)*: C-RASP[periodic, local]", "parity": "PARITY: no C-RASP program"}
    for color, task in enumerate(config["tasks"]):
        ns = sorted({r["params"]["train_length"] for r in records if r["params"]["task"] == task})
        for key, style, what in (("twice_length", "o-", "lengths n+1..2n"),
                                 ("in_distribution", "x:", "lengths 1..n")):
            means = []
            for n in ns:
                rows = [r["metrics"][key] for r in records
                        if r["params"]["task"] == task and r["params"]["train_length"] == n]
                means.append(sum(rows) / len(rows))
            ax.plot(ns, means, style, color=f"C{color}",
                    label=f"{labels.get(task, task)}, {what}")
    ax.set_xlabel("training length n (train on 1..n)")
    ax.set_ylabel("sequence accuracy")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["params"]["train_length"] for r in records}))
    ax.get_xaxis().set_major_formatter(plt.ScalarFormatter())
    ax.legend(fontsize=7)
    ax.set_title(f"APE decoders, {config['steps']} steps, {len(config['seeds'])} seed(s)",
                 fontsize=9)
    fig.tight_layout()
    return fig
