"""The two-layer in-context k-gram experiment of Izzo et al. (2026), described in words only
in the summary of the paper; the setup here is ours.

Task (`KGramTask`): each string follows its own random order-(k-1) Markov chain over S symbols;
the target at the last token is the in-context proportion of each symbol after earlier
occurrences of its last k-1 symbols (S real values, MSE summed over them). Model: two layers of
the limit-style transformer, each with a learned tau-local bias phi (tau = k - 1) so that the
first layer can read the previous tokens, phi scaled by log i (the paper's tau-suffix scaling),
muP and the per-role Adam rates of the one-layer protocol, trained to the stop rule (the step
cap is a safety). The claim checked: the plateau of the test loss (at long test strings)
grows with the vocabulary size S (at k = 2) and with k (at S = 2).

Why the target changed: the first version used the Laplace-smoothed (n_s + 1) / (n + S). Its
models stalled at a training loss of about 1e-2 and their loss rose with the test length.
`tables.smoothing_gap_rows` measures the cause: the smoothed target differs from the
proportion (what an attention average over the matches gives) by a term that depends on the
count n, hence on the length: averaged over train lengths 1..32 the gap is about 4e-2 at
S = k = 2, so a model of proportions cannot fit it, and what a model learns about n at short
lengths is wrong at long ones.
Book scale: 3 seeds, batch 256, one train length (see CONFIGS).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked limit-style jobs (lengthgen.engine.stacked_limit), each scored as `run_one`
scores its model.

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-kgram`
"""
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.experiments.izzo.drawing import loss_band, name_two_and_five
from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, job, planned_hooks
from lengthgen.experiments.izzo.rows import kgram_data
from lengthgen.runs.planned import Run as spec, plan_runs  # noqa: F401
from lengthgen.tasks.izzo import KGramTask

FIGURE_ID = "izzo-kgram"
TITLE = "In-context k-gram, two layers: the plateau loss grows with S and with k (our setup)"
PAPER_SCALE = ("The paper describes this experiment in words only, with no setup: all of it "
               "is this book's (two layers with a learned local bias, d = 32, MLP 128, the "
               "one-layer protocol's optimizer, batch 1024 and stop rule, 8 seeds, train "
               "lengths 16 to 128), with a cap of 200,000 steps that the cost counts.")

_SHARED = {**PAPER_PROTOCOL, "d_model": 32, "mlp_width": 128, "hidden_lr": 1e-2 / 32,
           "settings": [[2, 2], [3, 2], [4, 2], [2, 3]], "attention_samples": 64}
CONFIGS = {
    "test": {**_SHARED, "batch_size": 32, "max_steps": 10, "eval_every": 5, "eval_samples": 32,
             "test_samples": 32, "settings": [[2, 2], [2, 3]], "train_lengths": [12],
             "seeds": [0, 1], "test_lengths": [12, 24]},
    "book": {**_SHARED, "batch_size": 256, "max_steps": 1200, "eval_samples": 512,
             "test_samples": 512, "train_lengths": [32], "seeds": [0, 1, 2],
             "test_lengths": [32, 64, 128, 256, 512]},
    "paper": {**_SHARED, "train_lengths": [16, 32, 64, 128], "seeds": list(range(8)),
              "test_lengths": [32, 64, 128, 256, 512, 1024]},
}


def runs(config):
    return [{"name": f"S{S}-k{k}-N{n}-s{seed}", "task": f"izzo_kgram_S{S}_k{k}", "S": S,
             "k": k, "train_length": n, "seed": seed}
            for S, k in config["settings"] for n in config["train_lengths"]
            for seed in config["seeds"]]


def _job(params, config):
    """One run as the engine's Job (izzo.protocol.job): two layers, no positional encoding,
    a learned local bias over the k - 1 previous tokens."""
    task = KGramTask(params["S"], params["k"], train_max=params["train_length"])
    return job(task, config, params["seed"], params["train_length"], layers=2, pe="nope",
               local_tau=params["k"] - 1)


def _readings(metrics, run, model, config, device):
    """The metrics with each layer's phi and where the two layers look."""
    model = model.to(device)
    task = run.get_task()
    metrics["phi"] = [[float(v) for v in layer.local_bias.detach().cpu()]
                      for layer in model.layers]
    metrics["attention"] = _attention_shares(model, task, config["test_lengths"],
                                            config["attention_samples"], run.seed, device)
    return metrics


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
# record measured as `run_one`'s is, phi and the attention read after (protocol.planned_hooks)
plan = plan_runs(runs)
engine_job, score, run_one = planned_hooks(_job, _readings)


def _attention_shares(model, task, lengths, samples: int, seed: int, device) -> dict:
    """Where the two layers look, per test length, at the last token (mean over strings):
    layer 1's weight on the k-1 tokens before it (what it must copy), and layer 2's weight on
    the matches, the positions t < T whose k-1 predecessors equal the last k-1 tokens (what it
    must average). A hardmax construction has 1 for both at every length."""
    import torch
    k = task.k
    out = {}
    for n in lengths:
        batch = task.sample(np.random.default_rng([seed, n, 7]), samples, n, n)
        tokens = torch.as_tensor(batch.inputs).to(device)
        with torch.no_grad():
            x = model.embed(tokens)
            first = model.layers[0].weights(x, None)[:, -1]          # [B, T]
            y, _ = model.layers[0](x)
            second = model.layers[1].weights(y, None)[:, -1]
        values = batch.inputs - 1
        match = np.zeros(values.shape, dtype=bool)
        context = values[:, n - k + 1:]
        for t in range(k - 1, n - 1):   # x_t follows the context x_{t-k+1..t-1}
            match[:, t] = (values[:, t - k + 1:t] == context).all(axis=1)
        found = match.any(axis=1)
        share = (second.cpu().numpy() * match).sum(axis=1)
        out[str(n)] = {"layer1_previous": float(first[:, n - k:n - 1].sum(-1).mean()),
                       "layer2_matches": float(share[found].mean()) if found.any() else None}
    return out


def data(records):
    """One row per (S, k, train length, test length): the test MSE over the seeds, the train
    loss and the stop counts (`izzo.rows.kgram_data`, which the chapter's analysis reads too)."""
    return kgram_data(records)


def figure(records):
    config = records[0]["config"]
    rows = data(records)
    longest = max(config["test_lengths"])
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.3))
    settings = sorted({(r["S"], r["k"], r["train_length"]) for r in rows})
    for i, (S, k, n) in enumerate(settings):
        loss_band(axes[0], [r for r in rows if (r["S"], r["k"], r["train_length"]) == (S, k, n)],
                  f"C{i}", f"S={S}, k={k}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title="test loss vs test length")
    axes[0].legend(fontsize=7)
    n = max(config["train_lengths"])
    at = {(r["S"], r["k"]): r for r in rows if r["test_length"] == longest
          and r["train_length"] == n}
    for ax, pick, xlabel, color in ((axes[1], lambda S, k: k == 2, "vocabulary size S (k = 2)",
                                     "C0"),
                                    (axes[2], lambda S, k: S == 2, "k (S = 2)", "C1")):
        pts = sorted(((S if ax is axes[1] else k), r) for (S, k), r in at.items() if pick(S, k))
        if pts:
            xs = [x for x, _ in pts]
            mid = [r["test_loss"] for _, r in pts]
            ax.errorbar(xs, mid, yerr=[[m - r["test_loss_min"] for m, (_, r) in zip(mid, pts)],
                                       [r["test_loss_max"] - m for m, (_, r) in zip(mid, pts)]],
                        fmt="o-", capsize=3, color=color)
        ax.set(yscale="log", xlabel=xlabel, ylabel=f"MSE at length {longest}",
               title="plateau vs " + ("S" if ax is axes[1] else "k"))
    fig.suptitle(f"In-context k-gram, 2 layers (our setup), train length {n}, "
                 f"{len(config['seeds'])} seeds, stop at loss < {config['stop_loss']:g} "
                 f"(cap {config['max_steps']})", fontsize=9)
    for ax in axes:
        name_two_and_five(ax)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: one training per run (izzo.protocol.trainings)."""
    from lengthgen.experiments.izzo import protocol
    return protocol.trainings(runs(config), config, _job)
