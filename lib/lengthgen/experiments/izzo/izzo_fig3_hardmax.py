"""Izzo et al. (2026), Figure 3: trained attention on ModPTask (p = 5) is close to a hardmax.

For models trained with the protocol at several train lengths, the last token's attention
weights on test strings of length 80: the 16 positions t = k mod p should each get about 1/16,
every other position about 0. Mean and standard deviation over a batch of test strings.
Every run trains to the paper's stop rule (loss < 1e-5; the step cap is a safety). Book scale:
3 seeds instead of 8, batch 256 instead of 1024, train lengths up to 40.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked limit-style jobs (lengthgen.engine.stacked_limit), each scored as `run_one`
scores its model.

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-fig3-hardmax`
"""
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.experiments.izzo.protocol import (PAPER_PROTOCOL, PAPER_SCALE,  # noqa: F401
                                                 job, planned_hooks)
from lengthgen.runs.planned import Run as spec, plan_runs  # noqa: F401
from lengthgen.tasks.izzo import ModPTask

FIGURE_ID = "izzo-fig3-hardmax"
TITLE = "ModPTask attention: about 1/16 on each position = k mod 5 of a length-80 string"

_SHARED = {"period": 5, "k": 0, "attention_length": 80}
CONFIGS = {
    "test": {**PAPER_PROTOCOL, **_SHARED, "batch_size": 64, "max_steps": 20, "eval_every": 10,
             "eval_samples": 64, "test_samples": 64, "train_lengths": [10], "seeds": [0],
             "test_lengths": [80], "attention_samples": 32},
    "book": {**PAPER_PROTOCOL, **_SHARED, "batch_size": 256, "max_steps": 3000,
             "eval_samples": 512, "test_samples": 512, "train_lengths": [5, 10, 20, 40],
             "seeds": [0, 1, 2],
             "test_lengths": [80], "attention_samples": 256},
    "paper": {**PAPER_PROTOCOL, **_SHARED, "train_lengths": [5, 10, 20, 40, 80],
              "seeds": list(range(8)), "test_lengths": [80], "attention_samples": 1024},
}


def runs(config):
    return [{"name": f"N{n}-s{seed}", "task": f"izzo_modp_p{config['period']}_k{config['k']}",
             "train_length": n, "seed": seed}
            for n in config["train_lengths"] for seed in config["seeds"]]


def _job(params, config):
    """One run as the engine's Job (izzo.protocol.job): a positional table of period p."""
    task = ModPTask(config["period"], config["k"], train_max=params["train_length"])
    return job(task, config, params["seed"], params["train_length"], pe="periodic",
               period=config["period"])


def _attention(metrics, run, model, config, device):
    """The metrics with the last token's attention on length-n strings, mean and std over
    the strings."""
    import torch

    from lengthgen.evaluate import bin_rng
    model = model.to(device)
    task = run.get_task()
    n = config["attention_length"]
    batch = task.sample(bin_rng(run.seed, n, n), config["attention_samples"], n, n)
    weights = model.last_attention(torch.as_tensor(batch.inputs).to(device)).cpu().numpy()
    metrics["attention_mean"] = weights.mean(axis=0).tolist()
    metrics["attention_std"] = weights.std(axis=0).tolist()
    return metrics


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
# record measured as `run_one`'s is, the attention read after (protocol.planned_hooks)
plan = plan_runs(runs)
engine_job, score, run_one = planned_hooks(_job, _attention)


def data(records):
    """What the figure draws: one row per (train length, seed, key position t): the mean and
    std over the test strings of the last token's attention weight on t, and whether t is one
    of the k mod p positions."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["train_length"], r["params"]["seed"])):
        config = r["config"]
        loss = r["metrics"]["test_loss"][str(config["test_lengths"][-1])]
        for t, (mean, std) in enumerate(zip(r["metrics"]["attention_mean"],
                                            r["metrics"]["attention_std"])):
            rows.append({"train_length": r["params"]["train_length"], "seed": r["params"]["seed"],
                         "position": t,
                         "positions": "k mod p" if t % config["period"] == config["k"]
                         else "other",
                         "mean_weight": mean, "std_weight": std, "test_loss": loss})
    return rows


def figure(records):
    config = records[0]["config"]
    lengths = sorted({r["params"]["train_length"] for r in records})
    fig, axes = plt.subplots(1, len(lengths), figsize=(2.1 * len(lengths) + 0.6, 3.0),
                             sharey=True, squeeze=False)
    n = config["attention_length"]
    on = np.arange(n) % config["period"] == config["k"]
    t = np.arange(n)
    for ax, length in zip(axes[0], lengths):
        group = sorted((r for r in records if r["params"]["train_length"] == length),
                       key=lambda r: r["params"]["seed"])
        for i, r in enumerate(group):
            mean = np.array(r["metrics"]["attention_mean"])
            std = np.array(r["metrics"]["attention_std"])
            ax.errorbar(t[on] + 0.8 * i, mean[on], yerr=std[on], fmt="o", ms=2.5, lw=0.8,
                        color=f"C{i}", label=f"seed {r['params']['seed']}, t = k mod Δ")
            ax.plot(t[~on], mean[~on], ".", ms=1.5, color="0.5",
                    label="other t" if i == 0 else None)
        ax.axhline(1 / on.sum(), color="k", ls="--", lw=1, label=f"1/{on.sum()}")
        ax.set_title(f"train length {length}", fontsize=9)
        ax.set_xlabel("key position t")
    axes[0][0].set_ylabel("attention weight")
    axes[0][-1].legend(fontsize=6)
    fig.suptitle(f"ModPTask Δ = {config['period']}: last-token attention on length-{n} strings, "
                 f"mean and std over {config['attention_samples']} strings, per seed",
                 fontsize=9)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: one training per run (izzo.protocol.trainings)."""
    from lengthgen.experiments.izzo import protocol
    return protocol.trainings(runs(config), config, _job)
