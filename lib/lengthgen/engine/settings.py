"""A training run's settings and outcome, and the rules that read them: the learning-rate
schedule, the stop rule and what a history entry keeps. Shared by every trainer
(`lengthgen.train`, `lengthgen.engine`) and re-exported by `lengthgen.train`."""
import math
from dataclasses import asdict, dataclass, field, fields

from lengthgen.errors import LengthgenError, check_choice
from lengthgen.models.protocol import ROLES
from lengthgen.tasks.base import Task

SCHEDULES = ("constant", "linear", "cosine")
# Where an APE model's training sequences sit in its position table (tests always start at 0).
# "table": a shift uniform in [0, n_positions - T] for a sequence of T tokens, so every row of
# the table is trained (Huang et al.'s algorithmic code; the book's rule for every task).
# "half": a shift uniform in [0, n_positions // 2) whatever T, in a table at least twice the
# longest sequence (their languages' code), so short and long sequences see the same shifts.
APE_OFFSETS = ("table", "half")
# What a run's steps and evaluations compute in (`lengthgen.evaluate.autocast`, the one place
# that reads it). "auto": bf16 autocast on a CUDA card that has bf16, full precision elsewhere
# (every run before the field existed). "fp32": full precision on every device, never
# autocast: for a run whose numbers must be finer than bf16's 8 bits of mantissa (Izzo et al.'s
# regression, trained until its MSE is below 1e-5). Torch's float32 matmul precision is left at
# its default ("highest", no TF32), which the library never changes.
PRECISIONS = ("auto", "fp32")
# Registered configs that call a training setting by another name. Their keys stay as they are
# (a record's config digest depends on them), so the one translation reads both names.
CONFIG_ALIASES = {"max_steps": "steps"}
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
    ape_offsets: str = "table"      # APE_OFFSETS: how training shifts APE positions
    precision: str = "auto"         # PRECISIONS: bf16 autocast on a card ("auto") or "fp32"

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every", "eval_samples", "checkpoint_every",
                     "length_chunks"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise LengthgenError(f"train config: {name} must be a positive integer, "
                                     f"got {value!r}")
        check_choice("train config", "ape_offsets", self.ape_offsets, APE_OFFSETS)
        check_choice("train config", "schedule", self.schedule, SCHEDULES)
        check_choice("train config", "precision", self.precision, PRECISIONS)
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

    @classmethod
    def from_config(cls, config: dict, **fixed) -> "TrainConfig":
        """The training settings a figure's registered config names, read in one place: every
        key that is a field here (or an alias of one, CONFIG_ALIASES) is taken; other keys
        (model sizes, test samples, ...) belong to the figure. `fixed` holds the experiment's
        own choices for this run (its seed, a step count chosen per setting, a rule the paper
        fixes) and wins over the dict. A key given under both its name and an alias is refused:
        which one counts would be a guess."""
        names = {f.name for f in fields(cls)}
        taken = {}
        for key, value in config.items():
            name = CONFIG_ALIASES.get(key, key)
            if name not in names:
                continue
            if name in taken:
                raise LengthgenError(f"train config: {name!r} is given twice (as {name!r} and "
                                     f"as its alias {key!r}); keep one")
            taken[name] = value
        return cls(**{**taken, **fixed})

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


def history_metrics(point: dict) -> dict:
    """The evaluation numbers a history entry keeps: accuracy (if any), then loss."""
    return {k: point[k] for k in ("accuracy", "loss") if k in point}


def should_stop(cfg: TrainConfig, point: dict) -> bool:
    """Early stop on the in-distribution evaluation: accuracy reached, or loss low enough."""
    if cfg.stop_accuracy is not None and point.get("accuracy", -1.0) >= cfg.stop_accuracy:
        return True
    return cfg.stop_loss is not None and point["loss"] < cfg.stop_loss
