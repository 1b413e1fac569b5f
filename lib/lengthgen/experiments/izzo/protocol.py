"""The training protocol of Izzo et al. (2026, App. B), shared by the izzo-* figure modules.

One attention head and an MLP (d = 16, width 256) in Limit-Transformer form
(`LimitStyleTransformer`), muP initialization, Adam (AdamW with weight decay 0) at 1e-2 for
embeddings and vectors and 1e-2 / d for hidden matrices and the readout, a fresh batch of 1024
every step, training until the in-distribution loss falls below 1e-5, regression (MSE) on the
task's real-valued target. Training strings have lengths uniform in [min_len, N]; the test loss
at length T' is measured on strings of exactly T'.

Not stated in the paper, chosen here: the positional encoding (none for SimpleTask, a learned
table of period p for ModPTask, i.e. the Delta = p of its construction) and a step cap
`max_steps`, a safety that a run reaching the stop loss never meets (`reached_stop_loss` in each
record says which runs met it). The logits follow the paper's scaling: only the tau-suffix term
is multiplied by log i (`logit_scaling="suffix"`, which for a head without a local term means no
scaling); `logit_scaling="all"` multiplies every logit by log i as the Limit Transformer of
Huang et al. does, and ModPTask runs it beside the paper's for comparison.

Every step and every measurement is in fp32 (`TrainConfig.precision = "fp32"`), on a card too:
the stop rule and the test losses are mean squared errors of order 1e-5, and bf16 autocast (the
library's default on a card) leaves the model's outputs about 1.5% off, an error floor far
above 1e-5: every run would go to its step cap and the test losses would measure rounding. On
the CPU, which never autocasts, this changes nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from lengthgen.errors import LengthgenError

if TYPE_CHECKING:   # annotations only: the figures' data() and runs() need no torch
    from lengthgen.engine.jobs import Job
    from lengthgen.models.limit_style import LimitStyleTransformer
    from lengthgen.train import TrainConfig

D_MODEL = 16
PAPER_PROTOCOL = {"d_model": D_MODEL, "mlp_width": 256, "init": "mup", "lr": 1e-2,
                  "hidden_lr": 1e-2 / D_MODEL, "batch_size": 1024, "stop_loss": 1e-5,
                  "max_steps": 200_000, "eval_every": 100, "eval_samples": 1024,
                  "test_samples": 1024, "logit_scaling": "suffix"}


# What the `paper` configs of Figures 1-3 take from the paper (App. B) and what they choose
# (`figure cost --notes`; the contract's PAPER_SCALE).
PAPER_SCALE = (
    "From the paper (App. B): one layer, one head and an MLP (d = 16, width 256), muP, Adam at "
    "1e-2 and 1e-2 / d for the hidden layers, a fresh batch of 1024 every step, training until "
    "the loss is below 1e-5, 8 seeds. Chosen here: the positional encoding (the paper names "
    "none), the grid of train and test lengths, a cap of 200,000 steps, and fp32 on the card "
    "(bf16 would leave the outputs about 1.5% off, an error floor far above the 1e-5 stop "
    "rule); the cost counts the cap, an upper bound (runs that meet the stop rule end far "
    "earlier).")


def job(task, config: dict, seed: int, train_length: int, layers: int = 1,
        **options) -> Job:
    """One run of an Izzo figure as the engine's typed Job: the protocol's limit-style model of
    `layers` layers (the one place its size is spelled: width, MLP width, initialization and
    logit scaling from the config; `options`: what the figure chooses, its encoding, period or
    local bias, or another logit scaling) on strings of lengths min_len..train_length, trained
    with `train_config`."""
    from lengthgen.engine.jobs import Job
    model = {"n_layers": layers, "d_model": config["d_model"], "mlp_width": config["mlp_width"],
             "init": config["init"], "logit_scaling": config["logit_scaling"], **options}
    return Job(task, model, train_config(config, seed, train_length, task.min_len),
               kind="limit-style")


def build_model(task, config: dict, seed: int, **options) -> LimitStyleTransformer:
    """A freshly initialized (seeded) model of the protocol (`job`'s), for a task's strings up
    to its training range."""
    return job(task, config, seed, task.train_range[1], **options).build_model()


def train_config(config: dict, seed: int, train_length: int, min_len: int) -> TrainConfig:
    from lengthgen.train import TrainConfig
    hidden = config["hidden_lr"]
    # the paper's optimizer: plain Adam, no clipping, a smaller rate for the hidden layers;
    # fp32 everywhere (the module docstring: bf16's error floor is far above the 1e-5 stop rule)
    return TrainConfig.from_config(config, weight_decay=0.0, grad_clip=None, min_len=min_len,
                                   max_len=train_length, stop_accuracy=None, seed=seed,
                                   group_lr={"hidden": hidden, "readout": hidden},
                                   precision="fp32")


def check_train_length(model, train_length: int) -> None:
    """A train length above an absolute position table is refused before any training."""
    if model.cfg.pe.absolute and train_length > model.cfg.n_positions:
        raise LengthgenError(f"train length {train_length} is above the position table "
                             f"({model.cfg.n_positions} rows)")


def train_and_test(run: Job, config: dict, device) -> tuple[dict, LimitStyleTransformer]:
    """Train a run's model (`job`) alone with train(), then `measure` it; JSON-able metrics,
    and the trained model."""
    from lengthgen.train import train
    task, model = run.build()
    check_train_length(model, run.train.max_len)
    result = train(model, task, run.train, device)
    return measure(run, model, result, config, device), model


def planned_hooks(job_of, readings=None):
    """(engine_job, score, run_one) of an Izzo figure, which a figure module assigns at its top
    level (lengthgen.runs.planned), built from its `job_of(params, config)` (its `_job`) and,
    where its records hold more than `measure` gives, `readings(metrics, run, model, config,
    device)` (its own readings of the model, added to the metrics). `run_one` trains the run
    alone with train(); `score` measures a model a slice trained in a stacked group, the same
    way: a slice's record is `run_one`'s."""
    def add(metrics, run, model, config, device):
        return metrics if readings is None else readings(metrics, run, model, config, device)

    def engine_job(planned, config):
        return job_of(planned.params(), config)

    def score(model, planned, result, config, device, group_size):
        run = job_of(planned.params(), config)
        return add(measure(run, model, result, config, device), run, model, config, device)

    def run_one(params, config, device):
        run = job_of(params, config)
        metrics, model = train_and_test(run, config, device)
        return add(metrics, run, model, config, device)
    return engine_job, score, run_one


def measure(run: Job, model, result, config: dict, device) -> dict:
    """The metrics of a run's trained model, however it trained (train() alone, or a slice of
    the engine's stacked groups, which hands its models back on the CPU): the test MSE at each
    of the config's test lengths, the last in-distribution loss, the steps, whether the stop
    loss was met, the training's wall time and the parameter count. The one home of what an
    Izzo record measures; a figure adds its own readings of the model."""
    from lengthgen.evaluate import evaluate
    from lengthgen.train import EVAL_SEED_OFFSET
    model = model.to(device)
    test_seed = run.seed + 2 * EVAL_SEED_OFFSET
    test_lengths = config["test_lengths"]
    losses = evaluate(model, run.get_task(), [(n, n) for n in test_lengths],
                      config["test_samples"], test_seed, device, batch_size=512,
                      precision=run.train.precision)
    return {"test_loss": {str(n): losses[f"{n}-{n}"]["loss"] for n in test_lengths},
            "train_loss": result.history[-1]["loss"], "steps": result.steps,
            "reached_stop_loss": result.stopped_early,
            "train_wall_time_s": round(result.wall_time_s, 3),
            "n_params": model.num_parameters()}


def trainings(runs: list[dict], config: dict, job_for) -> list:
    """For `figure cost` (`lengthgen.runs.cost`): one training per run, of the model of
    `job_for(params, config)` (a figure's `_job`; its layers, width and MLP read from the model's
    config), on strings of its train length, a batch of config["batch_size"], for
    config["max_steps"] steps: the cap, not the steps the stop rule takes (most runs stop well
    before it)."""
    from lengthgen.runs.cost import Training, count_parameters
    out = []
    for params in runs:
        run = job_for(params, config)
        cfg = run.model_config()
        out.append(Training(f"{cfg.n_layers}L d{cfg.d_model} MLP {cfg.mlp_width}",
                            count_parameters(run.build_model), cfg.n_layers, cfg.d_model,
                            config["batch_size"], params["train_length"], config["max_steps"]))
    return out
