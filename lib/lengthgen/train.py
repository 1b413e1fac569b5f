"""Training on fresh batches sampled online from a task, with the papers' protocol.

No fixed training set: every step samples a new batch (Huang et al. 2025 App. E.3; Izzo et al.
App. B). APE models see each sequence at a random offset, uniform in [0, n_positions - T], so
every row of the position table gets trained. AdamW with weight decay, warmup then a constant,
linear or cosine schedule, periodic evaluation on a fixed in-distribution set, early stop once
its accuracy reaches a threshold (or its loss falls below one).

The loss is the task's objective (`lengthgen.objectives`: masked cross-entropy for
classification, masked squared error for regression). The model is anything that meets
`lengthgen.models.protocol.TrainableModel`; its parameter roles let `group_lr` give embeddings,
vectors, hidden matrices and the readout their own learning rates (muP's Adam rule). Checkpoints hold model, optimizer, RNG
states and step, so a killed run resumes to the same result (bit-identical on CPU).

A seed fixes the data stream and (through torch's global generator, which train() seeds) any
dropout. On CPU a run is deterministic for a given seed and number of torch threads; a
different thread count changes float rounding, and so, eventually, the trajectory.
"""
import errno
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from lengthgen.errors import LengthgenError
from lengthgen.evaluate import autocast, evaluate, generation_accuracy, to_tensors
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.protocol import ROLES, check_trainable
from lengthgen.objectives import OBJECTIVES, Objective, objective_of
from lengthgen.tasks import get_task
from lengthgen.tasks.base import Task, bin_name

SCHEDULES = ("constant", "linear", "cosine")
EVAL_SEED_OFFSET = 7919  # eval sets come from seed + this (test: + 2x), apart from training data


@dataclass
class TrainConfig:
    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 0
    schedule: str = "constant"      # after warmup: constant, linear to 0, or cosine to 0
    min_len: int | None = None      # training lengths; default: the task's train_range
    max_len: int | None = None
    eval_every: int = 100
    eval_samples: int = 512         # size of the fixed in-distribution evaluation set
    stop_accuracy: float | None = 1.0  # stop once in-distribution accuracy reaches this
    seed: int = 0
    grad_clip: float | None = 1.0
    checkpoint_path: str | None = None
    checkpoint_every: int = 500
    # Split each batch, sorted by length, into this many chunks trimmed to their longest
    # sequence, and accumulate their gradients: about half of a batch is padding otherwise.
    # The gradient is the same up to float rounding (tests/test_train.py checks it).
    length_chunks: int = 1
    # Learning rate per parameter role (lengthgen.models.protocol.ROLES), e.g. muP with Adam:
    # {"hidden": lr / d, "readout": lr / d}; roles not named use lr. The schedule scales all.
    group_lr: dict | None = None
    stop_loss: float | None = None  # stop once the in-distribution loss is below this
    # The schedule's horizon: the step at which a linear or cosine decay reaches 0 (default:
    # `steps`). Huang et al.'s code decays over its whole 30k-step budget while early stopping
    # ends most runs far sooner, so a run capped at 6k steps still sees their rates.
    schedule_steps: int | None = None
    # Give up at an evaluation whose in-distribution accuracy is below this: a run that far
    # from fitting will not fit by the step cap, and its remaining steps are the costliest of
    # a CPU sweep. None: never give up.
    abandon_below: float | None = None

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every", "eval_samples", "checkpoint_every",
                     "length_chunks"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise LengthgenError(f"train config: {name} must be a positive integer, "
                                     f"got {value!r}")
        if self.schedule not in SCHEDULES:
            raise LengthgenError(f"train config: unknown schedule {self.schedule!r}; "
                                 f"valid: {', '.join(SCHEDULES)}")
        for name in ("lr", "weight_decay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise LengthgenError(f"train config: {name} must be a finite number, "
                                     f"got {value!r}")
        if self.grad_clip is not None and not math.isfinite(self.grad_clip):
            raise LengthgenError(f"train config: grad_clip must be finite or None, "
                                 f"got {self.grad_clip}")
        if self.lr <= 0 or self.weight_decay < 0 or self.warmup_steps < 0:
            raise LengthgenError("train config: lr must be positive, weight_decay and "
                                 "warmup_steps non-negative")
        if self.grad_clip is not None and self.grad_clip <= 0:
            raise LengthgenError(f"train config: grad_clip must be positive or None, "
                                 f"got {self.grad_clip}")
        if self.group_lr is not None:
            if not isinstance(self.group_lr, dict):
                raise LengthgenError(f"train config: group_lr must be a dict of role -> lr, "
                                     f"got {self.group_lr!r}")
            for role, value in self.group_lr.items():
                if role not in ROLES:
                    raise LengthgenError(f"train config: group_lr names unknown role "
                                         f"{role!r}; valid: {', '.join(ROLES)}")
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not math.isfinite(value) or value <= 0:
                    raise LengthgenError(f"train config: group_lr[{role!r}] must be a positive "
                                         f"finite number, got {value!r}")
        if self.schedule_steps is not None and (isinstance(self.schedule_steps, bool) or not
                isinstance(self.schedule_steps, int) or self.schedule_steps < self.steps):
            raise LengthgenError(f"train config: schedule_steps must be an integer of at least "
                                 f"steps={self.steps} (the decay must not end before training "
                                 f"does), got {self.schedule_steps!r}")
        if self.abandon_below is not None and (isinstance(self.abandon_below, bool) or not
                isinstance(self.abandon_below, (int, float)) or not 0 < self.abandon_below <= 1):
            raise LengthgenError(f"train config: abandon_below must be in (0, 1] or None, "
                                 f"got {self.abandon_below!r}")
        if self.stop_loss is not None and (isinstance(self.stop_loss, bool) or not isinstance(
                self.stop_loss, (int, float)) or not self.stop_loss > 0):
            raise LengthgenError(f"train config: stop_loss must be a positive number or None, "
                                 f"got {self.stop_loss!r}")

    def length_range(self, task: Task) -> tuple[int, int]:
        lo = task.train_range[0] if self.min_len is None else self.min_len
        hi = task.train_range[1] if self.max_len is None else self.max_len
        task.check_length_range(lo, hi)
        return lo, hi

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainResult:
    steps: int                      # optimizer steps taken in total
    stopped_early: bool             # reached stop_accuracy (or stop_loss) before cfg.steps
    final_accuracy: float | None    # in-distribution accuracy at the last evaluation (None for
                                    # objectives without accuracy, such as regression)
    wall_time_s: float              # training time, summed over resumed sessions
    # {step, accuracy (classification only), loss, train_loss, lr}
    history: list[dict] = field(default_factory=list)
    abandoned: bool = False         # gave up below cfg.abandon_below at an evaluation

    def to_dict(self) -> dict:
        return asdict(self)


def learning_rate(cfg: TrainConfig, step: int) -> float:
    """Linear warmup over warmup_steps, then the schedule's decay until the horizon
    (schedule_steps, default steps)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return cfg.lr
    horizon = cfg.steps if cfg.schedule_steps is None else cfg.schedule_steps
    progress = (step - cfg.warmup_steps) / max(1, horizon - cfg.warmup_steps)
    if cfg.schedule == "linear":
        return cfg.lr * (1.0 - progress)
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def parameter_groups(named_params: dict, roles: dict[str, str], dims: dict[str, int],
                     cfg: TrainConfig) -> list[dict]:
    """AdamW groups: weight decay on matrices and embeddings (dims[name] >= 2), not on biases
    and LayerNorm gains; with cfg.group_lr, also one group per role, whose "lr_scale" (its lr
    over cfg.lr) the schedule multiplies. `named_params` maps names to the tensors to optimize
    (stacked ones in train_many), `dims` to each one's dimension in a single model. Both
    trainers build their groups here."""
    names = list(named_params)
    if cfg.group_lr is None:  # the groups (and their order) every earlier run used
        return [{"params": [named_params[n] for n in names if dims[n] >= 2],
                 "weight_decay": cfg.weight_decay},
                {"params": [named_params[n] for n in names if dims[n] < 2],
                 "weight_decay": 0.0}]
    groups = []
    for role in ROLES:
        scale = cfg.group_lr.get(role, cfg.lr) / cfg.lr
        for decay in (True, False):
            params = [named_params[n] for n in names
                      if roles[n] == role and (dims[n] >= 2) == decay]
            if params:
                groups.append({"params": params, "lr_scale": scale, "role": role,
                               "weight_decay": cfg.weight_decay if decay else 0.0})
    return groups


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig, device) -> torch.optim.AdamW:
    """AdamW over `parameter_groups` (Adam when weight_decay is 0)."""
    named = {n: p for n, p in model.named_parameters() if p.requires_grad}
    return adamw(parameter_groups(named, model.parameter_roles(),
                                  {n: p.dim() for n, p in named.items()}, cfg), cfg, device)


def adamw(groups: list[dict], cfg: TrainConfig, device) -> torch.optim.AdamW:
    """The one optimizer of both trainers (train, and train_many's stacked seeds)."""
    return torch.optim.AdamW(groups, lr=cfg.lr, fused=_fused_supported(device))


def preamble(model, task: Task, cfg: TrainConfig) -> tuple:
    """What both trainers check before a step: a trainable model, an objective that has what
    the stop rule reads, and a position table long enough for the training lengths. Returns
    (objective, lo, hi, ape)."""
    check_trainable(model)
    objective = objective_of(task)
    if cfg.stop_accuracy is not None and objective.metric != "accuracy":
        raise LengthgenError(f"{task.id}: a {objective.name} task has no accuracy to stop on; "
                             f"set stop_accuracy=None (and stop_loss to stop early)")
    lo, hi = cfg.length_range(task)
    ape = model.cfg.pe.absolute   # an absolute table: offsets drawn, lengths must fit
    if ape and task.max_tokens(hi) > model.cfg.n_positions:
        raise LengthgenError(f"{task.id}: inputs of Len {hi} take {task.max_tokens(hi)} "
                             f"positions but the model has n_positions={model.cfg.n_positions}")
    return objective, lo, hi, ape


def set_learning_rates(optimizer: torch.optim.Optimizer, cfg: TrainConfig, step: int) -> None:
    """The schedule's rate for this step, times each group's lr_scale (1 without group_lr)."""
    rate = learning_rate(cfg, step)
    for group in optimizer.param_groups:
        group["lr"] = rate * group["lr_scale"] if "lr_scale" in group else rate


def _fused_supported(device) -> bool:
    return torch.device(device).type in ("cuda", "cpu")


def sample_offsets(rng: np.random.Generator, inputs: np.ndarray, n_positions: int) -> np.ndarray:
    """Per sequence, an offset uniform in [0, n_positions - T] with T its real (non-PAD) length."""
    real = (inputs != 0).sum(axis=1)
    if real.max(initial=0) > n_positions:
        raise LengthgenError(f"a training sequence of {real.max()} tokens does not fit the "
                             f"position table of {n_positions}")
    return rng.integers(0, n_positions - real + 1)


# ---- checkpoints ---------------------------------------------------------------------------
def save_checkpoint(path, state: dict) -> None:
    """torch.save to a temp file in the same folder, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pt")
    os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except RuntimeError as e:   # torch's writer reports a full disk as a RuntimeError
        Path(tmp).unlink(missing_ok=True)
        first = str(e).strip().splitlines()[-1][:160] if str(e).strip() else "no reason given"
        raise OSError(errno.EIO, f"torch could not write the file: {first}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path) -> dict:
    import warnings
    try:
        with warnings.catch_warnings():   # torch warns at length about foreign files: one line
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a corrupt or foreign file: say which, never a pickle traceback
        text = str(e).splitlines()[0] if str(e) else ""
        raise LengthgenError(f"{path}: cannot load checkpoint: not one this library wrote, or "
                             f"a damaged one ({e.__class__.__name__}: {text[:120]}); delete it "
                             f"or choose another file") from e


def _rng_state(rng: np.random.Generator, device) -> dict:
    state = {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}
    if torch.device(device).type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(torch.device(device))
    return state


def _restore_rng(rng: np.random.Generator, state: dict, device) -> None:
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.device(device).type == "cuda":
        torch.cuda.set_rng_state(state["cuda"], torch.device(device))


def _resumable_fields(cfg: TrainConfig) -> dict:
    """The settings a checkpoint must share with the run resuming it (not where it is saved)."""
    fields = cfg.to_dict()
    del fields["checkpoint_path"], fields["checkpoint_every"]
    return fields


# ---- one step ------------------------------------------------------------------------------
def length_chunks(inputs, targets, mask, offsets=None, chunks: int = 1):
    """Yield (inputs, targets, mask, offsets) for `chunks` groups of the batch sorted by length,
    each cut after its longest sequence. Padding only ever follows a sequence and attention is
    causal, so the cut columns change nothing at the positions that remain."""
    if chunks <= 1:
        yield inputs, targets, mask, offsets
        return
    width = inputs.shape[1]
    real = (inputs != 0).sum(dim=1)  # PAD is token id 0 and only follows a sequence
    masked_to = torch.where(mask.any(dim=1), width - mask.flip(1).int().argmax(dim=1), 0)
    extent = torch.maximum(real, masked_to)
    order = torch.argsort(extent, stable=True)
    for rows in order.tensor_split(chunks):
        if len(rows) == 0:
            continue
        cut = int(extent[rows].max())
        yield (inputs[rows, :cut], targets[rows, :cut], mask[rows, :cut],
               None if offsets is None else offsets[rows])


def training_step(model, optimizer, inputs, targets, mask, offsets=None,
                  grad_clip: float | None = None, chunks: int = 1,
                  objective: Objective = OBJECTIVES["classification"]) -> torch.Tensor:
    """One AdamW step on the objective's mean masked loss; returns the detached loss (no sync).

    With chunks > 1 the batch is cut into length-sorted, trimmed chunks whose gradients are
    accumulated (see `length_chunks`): the same step, with less work spent on padding."""
    optimizer.zero_grad(set_to_none=True)
    total = mask.sum().clamp(min=1)
    loss = torch.zeros((), device=inputs.device)
    for part in length_chunks(inputs, targets, mask, offsets, chunks):
        with autocast(inputs.device):
            logits = model(part[0], part[3], check=False)
        part_loss = objective.losses(logits, part[1], part[2]).sum() / total
        part_loss.backward()
        loss += part_loss.detach()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss


# ---- the loop ------------------------------------------------------------------------------
def train(model: Decoder, task: Task, cfg: TrainConfig, device="cpu",
          progress: bool = False) -> TrainResult:
    """Train in place; resume from cfg.checkpoint_path when it exists.

    `model` is a Decoder or any module that meets lengthgen.models.protocol.TrainableModel.
    The loss and the metric are the task's objective.
    """
    from tqdm.auto import tqdm

    device = torch.device(device)
    objective, lo, hi, ape = preamble(model, task, cfg)
    model.to(device).train()
    optimizer = make_optimizer(model, cfg, device)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    step, history, elapsed, stopped, abandoned = 0, [], 0.0, False, False
    recent_losses: list[torch.Tensor] = []  # detached per-step losses since the last evaluation
    checkpoint = Path(cfg.checkpoint_path) if cfg.checkpoint_path else None
    run = {"task": task.id, "model": model.cfg.to_dict(), "train": _resumable_fields(cfg)}
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint)
        if state.get("run") != run:
            raise LengthgenError(f"{checkpoint}: this checkpoint belongs to a different run "
                                 f"(task, model or training settings differ); delete it or "
                                 f"choose another checkpoint_path")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        _restore_rng(rng, state["rng"], device)
        step, history = state["step"], list(state["history"])
        elapsed, stopped = state["elapsed"], state["stopped"]
        abandoned = state.get("abandoned", False)
        # the losses since the last evaluation, so a resumed run logs the same train_loss
        recent_losses = [torch.tensor(v, device=device) for v in state.get("recent_losses", [])]

    def snapshot() -> dict:
        return {"run": run, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": _rng_state(rng, device), "step": step, "history": history,
                "elapsed": elapsed, "stopped": stopped, "abandoned": abandoned,
                "recent_losses": [float(v) for v in recent_losses]}

    def check_finite() -> None:
        """Stop with the step where the loss first stopped being a number (no sync per step:
        checked at evaluations and before checkpoints, so a saved checkpoint is always good)."""
        if not recent_losses:
            return
        values = torch.stack(recent_losses)
        bad = (~torch.isfinite(values)).nonzero()
        if len(bad):
            first = step - len(recent_losses) + int(bad[0]) + 1
            kept = (f"; the last good checkpoint {checkpoint} is kept" if checkpoint is not None
                    and checkpoint.exists() else "")
            raise LengthgenError(f"{task.id}: training diverged: the loss became "
                                 f"{float(values[bad[0]]):g} at step {first} (lr {cfg.lr:g}); "
                                 f"lower the learning rate{kept}")

    def in_distribution() -> dict:
        return evaluate(model, task, [(lo, hi)], cfg.eval_samples, cfg.seed + EVAL_SEED_OFFSET,
                        device)[bin_name(lo, hi)]

    bar = tqdm(total=cfg.steps, initial=step, disable=not progress, desc=task.id, leave=False)
    start = time.perf_counter()
    while step < cfg.steps and not stopped:
        set_learning_rates(optimizer, cfg, step)
        batch = task.sample(rng, cfg.batch_size, lo, hi)
        offsets = None
        if ape:
            offsets = torch.as_tensor(sample_offsets(rng, batch.inputs, model.cfg.n_positions))
            offsets = offsets.to(device, non_blocking=True)
        inputs, targets, mask = to_tensors(batch, device, objective.target_dtype)
        recent_losses.append(training_step(model, optimizer, inputs, targets, mask, offsets,
                                           cfg.grad_clip, cfg.length_chunks, objective))
        step += 1
        bar.update(1)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            check_finite()
            point = in_distribution()
            history.append({"step": step, **history_metrics(point),
                            # summed in order, as a running total would be
                            "train_loss": sum(recent_losses, torch.zeros((), device=device))
                            .item() / len(recent_losses), "lr": learning_rate(cfg, step - 1)})
            recent_losses.clear()
            bar.set_postfix(loss=f"{point['loss']:.3g}", **(
                {"acc": f"{point['accuracy']:.3f}"} if "accuracy" in point else {}))
            stopped = should_stop(cfg, point)
            if not stopped and step < cfg.steps and cfg.abandon_below is not None \
                    and point.get("accuracy", 1.0) < cfg.abandon_below:
                stopped = abandoned = True
        if checkpoint is not None and (step % cfg.checkpoint_every == 0 or stopped
                                       or step == cfg.steps):
            check_finite()
            elapsed_now = elapsed + time.perf_counter() - start
            elapsed, start = elapsed_now, time.perf_counter()
            try:
                save_checkpoint(checkpoint, snapshot())
            except OSError as e:   # a full disk, a folder turned read-only
                kept = " (the last one written is kept)" if checkpoint.exists() else ""
                raise LengthgenError(f"cannot write the checkpoint {checkpoint} "
                                     f"({e.strerror or e}); training stopped at step "
                                     f"{step}{kept}") from None
    bar.close()
    elapsed += time.perf_counter() - start
    if not history or history[-1]["step"] != step:  # e.g. resumed from a finished checkpoint
        point = in_distribution()
        history.append({"step": step, **history_metrics(point),
                        "train_loss": None, "lr": learning_rate(cfg, max(step - 1, 0))})
    return TrainResult(steps=step, stopped_early=stopped and not abandoned and step < cfg.steps,
                       final_accuracy=history[-1].get("accuracy"), wall_time_s=elapsed,
                       history=history, abandoned=abandoned)


def history_metrics(point: dict) -> dict:
    """The evaluation numbers a history entry keeps: accuracy (if any), then loss."""
    return {k: point[k] for k in ("accuracy", "loss") if k in point}


def should_stop(cfg: TrainConfig, point: dict) -> bool:
    """Early stop on the in-distribution evaluation: accuracy reached, or loss low enough."""
    if cfg.stop_accuracy is not None and point.get("accuracy", -1.0) >= cfg.stop_accuracy:
        return True
    return cfg.stop_loss is not None and point["loss"] < cfg.stop_loss


# ---- one call for experiment modules -------------------------------------------------------
def decoder_for_task(task: Task, seed: int = 0, bins=None, **options) -> Decoder:
    """A freshly initialized decoder (seeded) sized for the task: vocabulary, output classes,
    and an APE table long enough for the longest test bin unless n_positions is given."""
    bins = task.test_bins if bins is None else bins
    longest = max([task.max_tokens(hi) for _, hi in bins] + [task.max_tokens(task.train_range[1])])
    options.setdefault("n_positions", longest)
    cfg = DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes, **options)
    torch.manual_seed(seed)
    return Decoder(cfg)


def train_and_evaluate(task: Task | str, train_cfg: TrainConfig, device="cpu", *, bins=None,
                       samples_per_bin: int = 2000, generation: bool = False,
                       progress: bool = False, **model_options) -> dict:
    """Build a decoder (model_options go to DecoderConfig), train it, evaluate on the test bins
    (or `bins`). `task` is a Task or a task id.

    Returns a JSON-able metrics dict: per-bin accuracy/loss/n under "bins" (and free-running
    generation accuracy under "generation" if asked), steps, early stop, final in-distribution
    accuracy, train wall time, parameter count, the model config and the eval history.
    """
    if isinstance(task, str):
        task = get_task(task)
    model = decoder_for_task(task, seed=train_cfg.seed, bins=bins, **model_options)
    result = train(model, task, train_cfg, device, progress=progress)
    test_seed = train_cfg.seed + 2 * EVAL_SEED_OFFSET
    metrics = {
        "bins": evaluate(model, task, bins, samples_per_bin, test_seed, device),
        "steps": result.steps,
        "stopped_early": result.stopped_early,
        "train_accuracy": result.final_accuracy,
        "train_wall_time_s": round(result.wall_time_s, 3),
        "n_params": model.num_parameters(),
        "model": model.cfg.to_dict(),
        "history": result.history,
    }
    if generation:
        metrics["generation"] = generation_accuracy(model, task, bins, samples_per_bin,
                                                    test_seed, device)
    return metrics
