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
`smoothing_gap_rows` measures the cause: the smoothed target differs from the proportion (what
an attention average over the matches gives) by a term that depends on the count n, hence on
the length: averaged over train lengths 1..32 the gap is about 4e-2 at S = k = 2, so a model
of proportions cannot fit it, and what a model learns about n at short lengths is wrong at long
ones.
Book scale: 3 seeds, batch 256, one train length (see CONFIGS).

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-kgram`
"""
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.experiments.izzo.drawing import loss_band, name_two_and_five
from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, build_model, train_and_test
from lengthgen.experiments.izzo.rows import kgram_data
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


def _model_for(params, config):
    """(task, fresh model) of one run: two layers."""
    task = KGramTask(params["S"], params["k"], train_max=params["train_length"])
    return task, build_model(task, config, params["seed"], n_layers=2, pe="nope",
                             local_tau=params["k"] - 1)


def run_one(params, config, device):
    task, model = _model_for(params, config)
    metrics = train_and_test(task, model, config, params["seed"], params["train_length"],
                             config["test_lengths"], device)
    metrics["phi"] = [[float(v) for v in layer.local_bias.detach().cpu()]
                      for layer in model.layers]
    metrics["attention"] = _attention_shares(model, task, config["test_lengths"],
                                            config["attention_samples"], params["seed"], device)
    return metrics


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


def smoothing_gap_rows(settings, length_bins, samples: int = 2000, seed: int = 0) -> list:
    """The measurement behind the change of target: per (S, k) and length bin, the mean squared
    distance (summed over the S outputs) between the Laplace-smoothed (n_s + 1) / (n + S) of
    the first version and the proportion n_s / n the task now uses, on `samples` strings."""
    rows = []
    for S, k in settings:
        task = KGramTask(S, k)
        rng = np.random.default_rng(seed)
        for lo, hi in length_bins:
            batch = task.sample(rng, samples, max(lo, task.min_len), hi)
            values = batch.inputs - 1
            y = batch.targets[np.arange(samples), batch.lengths - 1]
            smoothed = []
            for row, n in zip(values, batch.lengths):
                counts = np.zeros(S)
                string, context = list(row[:n]), list(row[n - k + 1:n])
                for end in range(k - 2, n - 1):
                    if string[end - k + 2:end + 1] == context:
                        counts[string[end + 1]] += 1
                smoothed.append((counts + 1) / (counts.sum() + S))
            gap = ((np.array(smoothed) - y) ** 2).sum(axis=1).mean()
            rows.append({"S": S, "k": k, "lengths": f"{lo}-{hi}", "gap_mse": float(gap)})
    return rows


_SATURATED = 0.95  # layer 1's weight on the previous tokens that counts as a settled local read


def attention_summary(records) -> dict:
    """What the prose says about where the layers look, computed from the records: the range
    over runs of layer 1's weight on the previous tokens and of layer 2's weight on the matches
    at the shortest and longest test length, the range of layer 1's phi at distance 1, and the
    regime it puts layer 1 in (the previous token's weight grows like i^phi against the i
    other positions: phi > 1 sharpens with length, phi < 1 fades), and, for k = 2, the growth
    of the loss from the shortest to the longest test length for the runs whose layer-1 read is
    already settled at the shortest length (weight >= SATURATED) and for the others; the final
    training losses of k = 2 and of longer contexts.

    Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-kgram`,
    {numref}`tab-izzo-kgram-attention`"""
    def span(values):
        values = [v for v in values if v is not None]
        return f"{min(values):.2g} to {max(values):.2g}" if values else "-"
    lengths = sorted({int(n) for r in records for n in r["metrics"]["attention"]})
    first, last = str(lengths[0]), str(lengths[-1])
    att = [r["metrics"]["attention"] for r in records]
    phi1 = [r["metrics"]["phi"][0][1] for r in records]
    l1 = [(a[first]["layer1_previous"], a[last]["layer1_previous"]) for a in att]
    sharper = sum(b > a for a, b in l1)
    regime = ("above 1 in every run: the paper's position-dominated regime" if min(phi1) > 1
              else "below 1 in every run: the token-dominated regime, where the local read "
                   "fades" if max(phi1) < 1 else "on both sides of 1 across runs")
    growth = [r["metrics"]["test_loss"][last] / r["metrics"]["test_loss"][first]
              for r in records]
    pairs = [(a, g) for r, (a, _), g in zip(records, l1, growth) if r["params"]["k"] == 2]
    sure = [g for a, g in pairs if a >= _SATURATED]
    unsure = [g for a, g in pairs if a < _SATURATED]
    longer = [r["metrics"]["train_loss"] for r in records if r["params"]["k"] > 2]
    # the chapter glues these with glue_numbers(..., prefix="izzo-kgram"):
    # glue keys: izzo-kgram-{first,last,phi1,regime,saturated,k2-runs,k2-train}
    # glue keys: izzo-kgram-{sure-runs,sure-growth,unsure-runs,unsure-growth}
    # glue keys: izzo-kgram-{longer-context-train,l1-first,l1-last,l1-sharper,l2-first,l2-last}
    return {"first": first, "last": last, "phi1": span(phi1), "regime": regime,
            "saturated": f"{_SATURATED:g}", "sure-runs": str(len(sure)),
            "sure-growth": span(sure), "unsure-runs": str(len(unsure)),
            "unsure-growth": span(unsure), "k2-runs": str(len(pairs)),
            "longer-context-train": span(longer),
            "k2-train": span(r["metrics"]["train_loss"] for r in records
                             if r["params"]["k"] == 2),
            "l1-first": span(a for a, _ in l1), "l1-last": span(b for _, b in l1),
            "l1-sharper": f"{sharper} of {len(l1)}",
            "l2-first": span(a[first]["layer2_matches"] for a in att),
            "l2-last": span(a[last]["layer2_matches"] for a in att)}


def gap_table(rows) -> list[dict]:
    """The chapter's table of `smoothing_gap_rows`."""
    return [{"S": r["S"], "k": r["k"], "lengths": r["lengths"],
             "smoothed vs proportion (MSE)": r["gap_mse"]} for r in rows]


def table_rows(records) -> list[dict]:
    """The chapter's table: `data` with the headers the reader sees."""
    shown = {"S": "S", "k": "k", "train_length": "N", "test_length": "test length",
             "test_loss": "test MSE", "test_loss_min": "smallest seed",
             "test_loss_max": "largest seed", "train_loss": "train loss",
             "stopped_by_loss": "stopped by the rule"}
    return [{header: row[key] for key, header in shown.items()} for row in data(records)]


def attention_rows(records) -> list[dict]:
    """Per run and test length: layer 1's weight on the previous tokens, layer 2's on the
    matches (blank where none) and layer 1's learned local bias phi."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["S"], r["params"]["k"],
                                            r["params"]["seed"])):
        phi = ", ".join(f"{v:.2f}" for v in r["metrics"]["phi"][0])
        # records keep their keys as sorted strings ("128" before "32"): order by length
        for n, a in sorted(r["metrics"]["attention"].items(), key=lambda item: int(item[0])):
            rows.append({"S": r["params"]["S"], "k": r["params"]["k"], "seed": r["params"]["seed"],
                         "test length": int(n), "layer 1 on previous": a["layer1_previous"],
                         "layer 2 on matches": ("" if a["layer2_matches"] is None
                                                else a["layer2_matches"]),
                         "phi layer 1": phi})
    return rows


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
    return protocol.trainings(runs(config), config, _model_for)
