"""The inference procedure of Huang et al. (2025, Def. 6) made concrete at small scale.

For growing training lengths n, fit an APE decoder on inputs of length at most n and test it on
lengths n+1..2n: Theorem 7 fits inputs up to half the context window and asks for correctness on
the whole window, which is 2n here. (aa)* has a C-RASP[periodic, local] program (the parity of
the position decides the next symbol), so the theorem predicts success once n is large enough;
PARITY has no such program (whether some periodic, local Limit Transformer computes it is
open), and nothing is guaranteed. Real training (AdamW, a few hundred steps)
stands in for the idealized procedure (exact fit with a minimal regularizer), so this shows the
predicted contrast, not the theorem itself.

Each run also records how far the trained first-layer heads' positional products are from the
shapes a Limit Transformer allows (lengthgen.models.products; period 2, locality 2).

No paper counterpart: Huang et al. do not run the inference procedure, and no figure of theirs
shows this. The `paper` scale is this book's experiment at larger settings (more training
lengths, seeds and steps), not a figure of the paper, and it does not use the paper's
hyperparameter search of the APE vs NoPE sweep (huang.sweep.protocol.paper_grid).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked jobs, each scored as `run_one` scores its model.

Feeds: book/limit_transformers.ipynb, {numref}`fig-inference-procedure`
"""
import matplotlib.pyplot as plt

from lengthgen.experiments import spread
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "limit-inference-procedure"
TITLE = "Accuracy at twice the training length: a C-RASP[periodic, local] language vs PARITY"
PAPER_SCALE = ("No paper counterpart (the paper runs no inference procedure). Its paper "
               "config is this book's experiment made larger: Len up to 50, 5 seeds, 30,000 "
               "steps at 1e-4, a 2-layer width-64 APE decoder.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("task", "train_length")

_PRODUCT_PERIOD, _PRODUCT_TAU = 2, 2
_MODEL = {"d_model": 64, "n_layers": 2, "n_heads": 2}
CONFIGS = {
    "test": {"tasks": ["aa_star", "parity"], "train_lengths": [4], "seeds": [0], "steps": 20,
             "batch_size": 16, "lr": 1e-3, "eval_samples": 32, "test_samples": 32,
             "model": {"d_model": 16, "n_layers": 1, "n_heads": 1}},
    "book": {"tasks": ["aa_star", "parity"], "train_lengths": [8, 16, 32], "seeds": [0, 1, 2],
             "steps": 1000, "batch_size": 64, "lr": 1e-3, "eval_samples": 256,
             "test_samples": 256, "model": _MODEL},
    "paper": {"tasks": ["aa_star", "parity"], "train_lengths": [10, 20, 30, 40, 50],
              "seeds": [0, 1, 2, 3, 4], "steps": 30000, "batch_size": 64, "lr": 1e-4,
              "eval_samples": 1000, "test_samples": 2000, "model": _MODEL},
}


def runs(config: dict) -> list[dict]:
    return [{"name": f"{task}-n{n}-s{seed}", "task": task, "train_length": n, "seed": seed}
            for task in config["tasks"] for n in config["train_lengths"]
            for seed in config["seeds"]]


def _bins(n: int) -> list[tuple[int, int]]:
    """The two test bins of training length n: in distribution, and up to twice n."""
    return [(1, n), (n + 1, 2 * n)]


def _job(params: dict, config: dict):
    """One run as the engine's typed Job (the figure's one spelling of its model): an APE
    decoder of config["model"] whose position table holds Len 2n, trained on Len 1..n with
    an evaluation every 100 steps."""
    from lengthgen.engine.jobs import Job
    from lengthgen.engine.single import decoder_config_for_task
    from lengthgen.train import TrainConfig
    n = params["train_length"]
    run = Job(params["task"], {}, TrainConfig.from_config(config, min_len=1, max_len=n,
                                                          eval_every=100, seed=params["seed"]),
              name=params.get("name", ""))
    model = {"pe": "ape", **config["model"]}
    table = decoder_config_for_task(run.get_task(), bins=_bins(n), **model).n_positions
    run.model = {**model, "n_positions": table}
    return run


def trainings(config: dict) -> list:
    """For `figure cost`: one decoder per task, training length and seed."""
    from lengthgen.runs.cost import job_training
    return [job_training(_job({"task": task_id, "train_length": n, "seed": 0}, config),
                         count=len(config["seeds"]))
            for task_id in config["tasks"] for n in config["train_lengths"]]


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def engine_job(job, config):
    return _job(job.params(), config)


def score(model, job, result, config, device, group_size):
    """A run trained in a slice, measured as `run_one` measures its model."""
    return _measure(model, job.params(), result, config, device)


def run_one(params: dict, config: dict, device) -> dict:
    # training and its models are imported here: data() and runs() need no torch
    from lengthgen.train import train
    run = _job(params, config)
    task, model = run.build()
    result = train(model, task, run.train, device)
    return _measure(model, params, result, config, device)


def _measure(model, params: dict, result, config: dict, device) -> dict:
    """Accuracy in distribution and up to twice the training length, and the first layer's
    positional products against a Limit Transformer's shapes."""
    from lengthgen.evaluate import evaluate
    from lengthgen.models.products import product_report
    from lengthgen.tasks import get_task
    from lengthgen.tasks.base import bin_name
    from lengthgen.train import EVAL_SEED_OFFSET
    n, task = params["train_length"], get_task(params["task"])
    model = model.to(device)   # a slice hands back its models on the CPU
    accuracy = evaluate(model, task, _bins(n), config["test_samples"],
                        params["seed"] + 2 * EVAL_SEED_OFFSET, device)
    products = product_report(model.cpu(), period=_PRODUCT_PERIOD, tau=_PRODUCT_TAU)
    return {"in_distribution": accuracy[bin_name(1, n)]["accuracy"],
            "twice_length": accuracy[bin_name(n + 1, 2 * n)]["accuracy"],
            "steps": result.steps, "n_params": model.num_parameters(),
            "products": [row for row in products if row["layer"] == 0]}


def _over_seeds(records, task, n, value) -> list:
    return [value(r["metrics"]) for r in records
            if r["params"]["task"] == task and r["params"]["train_length"] == n]


def _mean_over_seeds(records, task, n, value):
    rows = _over_seeds(records, task, n, value)
    return sum(rows) / len(rows)


def data(records: list[dict]) -> list[dict]:
    """One row per task, training length and seed: the two accuracies (left panel) and each
    first-layer head's distances from the Limit Transformer's shapes (right panel: their mean,
    `limit_distance` and `translation_distance`, averaged over seeds)."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["task"], r["params"]["train_length"],
                                            r["params"]["seed"])):
        m, heads = r["metrics"], r["metrics"]["products"]
        row = {"task": r["params"]["task"], "train_length": r["params"]["train_length"],
               "seed": r["params"]["seed"], "in_distribution": m["in_distribution"],
               "twice_length": m["twice_length"], "steps": m["steps"],
               "limit_distance": sum(h["limit"] for h in heads) / len(heads),
               "translation_distance": sum(h["translation"] for h in heads) / len(heads)}
        for h in heads:
            for key in ("limit", "periodic", "local", "translation"):
                row[f"head{h['head']}_{key}"] = h[key]
        rows.append(row)
    return rows


def figure(records: list[dict]):
    config = records[0]["config"]
    fig, (ax, ax_products) = plt.subplots(1, 2, figsize=(12, 5))
    labels = {"aa_star": "(aa)*: C-RASP[periodic, local]", "parity": "PARITY: no C-RASP program"}
    lengths = sorted({r["params"]["train_length"] for r in records})
    for color, task in enumerate(config["tasks"]):
        ns = [n for n in lengths if any(r["params"]["task"] == task
                                        and r["params"]["train_length"] == n for r in records)]
        name = labels.get(task, task)
        for key, style, what in (("twice_length", "o-", "lengths n+1..2n"),
                                 ("in_distribution", "x:", "lengths 1..n")):
            # several seeds: the mean, and the min-max range shaded
            spread.line(ax, ns, [_over_seeds(records, task, n, lambda m: m[key]) for n in ns],
                        style, f"C{color}", label=f"{name}, {what}")
        for key, style in (("limit", "o-"), ("translation", "s--")):
            spread.line(ax_products, ns, [_over_seeds(records, task, n, lambda m: sum(
                h[key] for h in m["products"]) / len(m["products"])) for n in ns], style,
                f"C{color}", label=f"{name}: {key}")
    ax.set_ylabel("sequence accuracy")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(f"APE decoders, up to {config['steps']} steps (stop at 100% in-distribution)\n"
                 + spread.seeds_label(records, lambda r: (r["params"]["task"], r["params"]["train_length"])),
                 fontsize=9)
    ax_products.set_ylabel("distance of first-layer positional products")
    ax_products.set_ylim(0, 1.03)
    ax_products.set_title(f"limit: from periodic(Δ = {_PRODUCT_PERIOD}) + "
                          f"local(τ = {_PRODUCT_TAU}); translation: from any f(i - j)", fontsize=9)
    for axis in (ax, ax_products):
        axis.set_xlabel("training length n (train on 1..n)")
        axis.set_xscale("log", base=2)
        axis.set_xticks(lengths)
        axis.get_xaxis().set_major_formatter(plt.ScalarFormatter())
        axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    return fig
