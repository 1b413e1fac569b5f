"""The training protocol of Izzo et al. (2026, App. B), shared by the izzo-* figure modules.

One attention head and an MLP (d = 16, width 256) in Limit-Transformer form
(`LimitStyleTransformer`), muP initialization, Adam (AdamW with weight decay 0) at 1e-2 for
embeddings and vectors and 1e-2 / d for hidden matrices and the readout, a fresh batch of 1024
every step, training until the in-distribution loss falls below 1e-5, regression (MSE) on the
task's real-valued target. Training strings have lengths uniform in [min_len, N]; the test loss
at length T' is measured on strings of exactly T'.

Not stated in the paper, chosen here: the positional encoding (none for SimpleTask, a learned
table of period p for ModPTask, i.e. the Delta = p of its construction), log-length scaling of
the logits (the Limit Transformer's log N), and the step cap `max_steps` that book scale needs.
"""
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import evaluate
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.train import EVAL_SEED_OFFSET, TrainConfig, train

D_MODEL = 16
PAPER_PROTOCOL = {"d_model": D_MODEL, "mlp_width": 256, "init": "mup", "lr": 1e-2,
                  "hidden_lr": 1e-2 / D_MODEL, "batch_size": 1024, "stop_loss": 1e-5,
                  "max_steps": 200_000, "eval_every": 100, "eval_samples": 1024,
                  "test_samples": 1024}


def build_model(task, config: dict, seed: int, **options) -> LimitStyleTransformer:
    import torch
    torch.manual_seed(seed)
    cfg = LimitStyleConfig(vocab_size=len(task.vocab), n_outputs=task.n_classes,
                           d_model=config["d_model"], mlp_width=config["mlp_width"],
                           init=config["init"], **options)
    return LimitStyleTransformer(cfg)


def train_config(config: dict, seed: int, train_length: int, min_len: int) -> TrainConfig:
    hidden = config["hidden_lr"]
    return TrainConfig(steps=config["max_steps"], batch_size=config["batch_size"],
                       lr=config["lr"], weight_decay=0.0, grad_clip=None,
                       min_len=min_len, max_len=train_length, eval_every=config["eval_every"],
                       eval_samples=config["eval_samples"], stop_accuracy=None,
                       stop_loss=config["stop_loss"], seed=seed,
                       group_lr={"hidden": hidden, "readout": hidden})


def check_train_length(model, train_length: int) -> None:
    """A train length above an absolute position table is refused before any training."""
    if model.cfg.pe == "ape" and train_length > model.cfg.n_positions:
        raise LengthgenError(f"train length {train_length} is above the position table "
                             f"({model.cfg.n_positions} rows)")


def train_and_test(task, model, config: dict, seed: int, train_length: int,
                   test_lengths, device) -> dict:
    """Train with the protocol, then the test MSE at each test length; JSON-able metrics."""
    check_train_length(model, train_length)
    cfg = train_config(config, seed, train_length, task.min_len)
    result = train(model, task, cfg, device)
    test_seed = seed + 2 * EVAL_SEED_OFFSET
    losses = evaluate(model, task, [(n, n) for n in test_lengths], config["test_samples"],
                      test_seed, device, batch_size=512)
    return {"test_loss": {str(n): losses[f"{n}-{n}"]["loss"] for n in test_lengths},
            "train_loss": result.history[-1]["loss"], "steps": result.steps,
            "reached_stop_loss": result.stopped_early,
            "train_wall_time_s": round(result.wall_time_s, 3),
            "n_params": model.num_parameters()}


def plateau(record: dict) -> float:
    """The test loss at the longest test length: where the curves have flattened."""
    losses = record["metrics"]["test_loss"]
    return losses[max(losses, key=int)]


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def required_length(lengths, losses, eps: float) -> float | None:
    """Smallest train length whose mean plateau is <= eps, interpolating log-loss linearly in
    the train length between the two grid points around the crossing; None if never reached."""
    import math
    pairs = sorted(zip(lengths, losses))
    for i, (n, loss) in enumerate(pairs):
        if loss <= eps:
            if i == 0:
                return float(n)
            n0, l0 = pairs[i - 1]
            t = (math.log(l0) - math.log(eps)) / (math.log(l0) - math.log(loss))
            return n0 + t * (n - n0)
    return None
