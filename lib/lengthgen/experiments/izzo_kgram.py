"""The two-layer in-context k-gram experiment of Izzo et al. (2026), described in words only
in the summary of the paper; the setup here is ours.

Task (`KGramTask`): each string follows its own random order-(k-1) Markov chain over S symbols;
the target at the last token is the Laplace-smoothed in-context estimate of the next-symbol
law after its last k-1 symbols (S real values, MSE summed over them). Model: two layers of the
limit-style transformer, each with a learned tau-local bias phi (tau = k - 1) so that the first
layer can read the previous tokens, log-length scaling, muP and the per-role Adam rates of the
one-layer protocol. The claim checked: the plateau of the test loss (at long test strings)
grows with the vocabulary size S (at k = 2) and with k (at S = 2).
Book scale: one seed, a step cap, batch 256, one train length (see CONFIGS).
"""
import matplotlib.pyplot as plt

from lengthgen.experiments.izzo_common import PAPER_PROTOCOL, build_model, mean, train_and_test
from lengthgen.tasks.izzo import KGramTask

FIGURE_ID = "izzo-kgram"
TITLE = "In-context k-gram, two layers: the plateau loss grows with S and with k (our setup)"

_SHARED = {**PAPER_PROTOCOL, "d_model": 32, "mlp_width": 128, "hidden_lr": 1e-2 / 32,
           "settings": [[2, 2], [3, 2], [4, 2], [2, 3]]}
CONFIGS = {
    "test": {**_SHARED, "batch_size": 32, "max_steps": 10, "eval_every": 5, "eval_samples": 32,
             "test_samples": 32, "settings": [[2, 2], [2, 3]], "train_lengths": [12],
             "seeds": [0], "test_lengths": [12, 24]},
    "book": {**_SHARED, "batch_size": 256, "max_steps": 1500, "eval_samples": 512,
             "test_samples": 512, "train_lengths": [32], "seeds": [0],
             "test_lengths": [32, 64, 128, 256]},
    "paper": {**_SHARED, "train_lengths": [16, 32, 64, 128], "seeds": list(range(8)),
              "test_lengths": [32, 64, 128, 256, 512, 1024]},
}


def runs(config):
    return [{"name": f"S{S}-k{k}-N{n}-s{seed}", "task": f"izzo_kgram_S{S}_k{k}", "S": S,
             "k": k, "train_length": n, "seed": seed}
            for S, k in config["settings"] for n in config["train_lengths"]
            for seed in config["seeds"]]


def run_one(params, config, device):
    task = KGramTask(params["S"], params["k"], train_max=params["train_length"])
    model = build_model(task, config, params["seed"], n_layers=2, pe="nope",
                        local_tau=params["k"] - 1)
    return train_and_test(task, model, config, params["seed"], params["train_length"],
                          config["test_lengths"], device)


def data(records):
    """One row per (S, k, train length, test length): the mean test MSE over seeds."""
    rows = []
    keys = sorted({(r["params"]["S"], r["params"]["k"], r["params"]["train_length"])
                   for r in records})
    for S, k, n in keys:
        group = [r for r in records if (r["params"]["S"], r["params"]["k"],
                                        r["params"]["train_length"]) == (S, k, n)]
        for t in group[0]["config"]["test_lengths"]:
            rows.append({"S": S, "k": k, "train_length": n, "test_length": t,
                         "test_loss": mean(r["metrics"]["test_loss"][str(t)] for r in group),
                         "train_loss": mean(r["metrics"]["train_loss"] for r in group),
                         "seeds": len(group)})
    return rows


def figure(records):
    config = records[0]["config"]
    rows = data(records)
    longest = max(config["test_lengths"])
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    settings = sorted({(r["S"], r["k"], r["train_length"]) for r in rows})
    for i, (S, k, n) in enumerate(settings):
        pts = [(r["test_length"], r["test_loss"]) for r in rows
               if (r["S"], r["k"], r["train_length"]) == (S, k, n)]
        axes[0].plot(*zip(*pts), "o-", ms=3, color=f"C{i}", label=f"S={S}, k={k}, N={n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title="test loss vs test length")
    axes[0].legend(fontsize=7)
    plateau = {(r["S"], r["k"], r["train_length"]): r["test_loss"] for r in rows
               if r["test_length"] == longest}
    n = max(config["train_lengths"])
    by_s = sorted((S, v) for (S, k, m), v in plateau.items() if k == 2 and m == n)
    by_k = sorted((k, v) for (S, k, m), v in plateau.items() if S == 2 and m == n)
    if by_s:
        axes[1].plot(*zip(*by_s), "o-", color="C0")
    axes[1].set(yscale="log", xlabel="vocabulary size S (k = 2)",
                ylabel=f"plateau (MSE at length {longest})", title="plateau vs S")
    if by_k:
        axes[2].plot(*zip(*by_k), "o-", color="C1")
    axes[2].set(yscale="log", xlabel="k (S = 2)", ylabel=f"plateau (MSE at length {longest})",
                title="plateau vs k")
    fig.suptitle(f"In-context k-gram, 2 layers (our setup), train length {n}, "
                 f"{len(config['seeds'])} seed(s), at most {config['max_steps']} steps",
                 fontsize=10)
    fig.tight_layout()
    return fig
