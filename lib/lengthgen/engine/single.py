"""One model's optimizer, batch offsets and training step, as `train` has always run them
(the engine's `ModuleGroup` runs exactly these), and the decoder a task gets."""
import numpy as np
import torch

from lengthgen.engine.settings import TrainConfig, learning_rate
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import autocast
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.protocol import ROLES, check_trainable
from lengthgen.objectives import OBJECTIVES, Objective, objective_of
from lengthgen.tasks.base import Task

def parameter_groups(named_params: dict, roles: dict[str, str], dims: dict[str, int],
                     cfg: TrainConfig) -> list[dict]:
    """AdamW groups: weight decay on matrices and embeddings (dims[name] >= 2), not on biases
    and LayerNorm gains; with cfg.group_lr, also one group per role, whose "lr_scale" (its lr
    over cfg.lr) the schedule multiplies. `named_params` maps names to the tensors to optimize
    (stacked ones in engine.groups), `dims` to each one's dimension in a single model. Both
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
    """The optimizer of one model (`train`, ModuleGroup); stacked groups use
    engine.optim.StackedAdamW, the same update written per member."""
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
    if ape and cfg.ape_offsets == "half" \
            and task.max_tokens(hi) + _half(model.cfg.n_positions) - 1 > model.cfg.n_positions:
        raise LengthgenError(f"{task.id}: ape_offsets='half' shifts inputs by up to "
                             f"{_half(model.cfg.n_positions) - 1} positions, too many for inputs "
                             f"of {task.max_tokens(hi)} tokens in a table of "
                             f"{model.cfg.n_positions} (give the model a table of at least "
                             f"twice the longest input)")
    return objective, lo, hi, ape


def set_learning_rates(optimizer: torch.optim.Optimizer, cfg: TrainConfig, step: int) -> None:
    """The schedule's rate for this step, times each group's lr_scale (1 without group_lr)."""
    rate = learning_rate(cfg, step)
    for group in optimizer.param_groups:
        group["lr"] = rate * group["lr_scale"] if "lr_scale" in group else rate


def _fused_supported(device) -> bool:
    return torch.device(device).type in ("cuda", "cpu")


def _half(n_positions: int) -> int:
    """How many shifts ape_offsets="half" draws from: [0, n_positions // 2)."""
    return max(1, n_positions // 2)


def sample_offsets(rng: np.random.Generator, inputs: np.ndarray, n_positions: int,
                   scheme: str = "table") -> np.ndarray:
    """Per sequence, an offset uniform in [0, n_positions - T] with T its real (non-PAD) length
    ("table"), or uniform in [0, n_positions // 2) whatever T ("half"; TrainConfig.ape_offsets)."""
    real = (inputs != 0).sum(axis=1)
    longest = real.max(initial=0) + (_half(n_positions) - 1 if scheme == "half" else 0)
    if longest > n_positions:
        raise LengthgenError(f"a training sequence of {real.max()} tokens does not fit the "
                             f"position table of {n_positions} with ape_offsets={scheme!r}")
    if scheme == "half":
        return rng.integers(0, _half(n_positions), size=len(real))
    return rng.integers(0, n_positions - real + 1)


# ---- one step ------------------------------------------------------------------------------
def sequence_extent(inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """How many leading positions of each sequence matter (its tokens, or its last masked
    position if that is later), along the last dimension: [B, T] -> [B], [S, B, T] -> [S, B].
    PAD is token id 0 and only follows a sequence."""
    width = inputs.shape[-1]
    real = (inputs != 0).sum(dim=-1)
    masked_to = torch.where(mask.any(dim=-1), width - mask.flip(-1).int().argmax(dim=-1), 0)
    return torch.maximum(real, masked_to)


def length_chunks(inputs, targets, mask, offsets=None, chunks: int = 1):
    """Yield (inputs, targets, mask, offsets) for `chunks` groups of the batch sorted by length,
    each cut after its longest sequence. Padding only ever follows a sequence and attention is
    causal, so the cut columns change nothing at the positions that remain."""
    if chunks <= 1:
        yield inputs, targets, mask, offsets
        return
    extent = sequence_extent(inputs, mask)
    order = torch.argsort(extent, stable=True)
    for rows in order.tensor_split(chunks):
        if len(rows) == 0:
            continue
        cut = int(extent[rows].max())
        yield (inputs[rows, :cut], targets[rows, :cut], mask[rows, :cut],
               None if offsets is None else offsets[rows])


def training_step(model, optimizer, inputs, targets, mask, offsets=None,
                  grad_clip: float | None = None, chunks: int = 1,
                  objective: Objective = OBJECTIVES["classification"],
                  precision: str = "auto") -> torch.Tensor:
    """One AdamW step on the objective's mean masked loss; returns the detached loss (no sync).

    With chunks > 1 the batch is cut into length-sorted, trimmed chunks whose gradients are
    accumulated (see `length_chunks`): the same step, with less work spent on padding.
    precision: the run's (`TrainConfig.precision`; `lengthgen.evaluate.autocast`)."""
    optimizer.zero_grad(set_to_none=True)
    total = mask.sum().clamp(min=1)
    loss = torch.zeros((), device=inputs.device)
    for part in length_chunks(inputs, targets, mask, offsets, chunks):
        with autocast(inputs.device, precision):
            logits = model(part[0], part[3], check=False)
        part_loss = objective.losses(logits, part[1], part[2]).sum() / total
        part_loss.backward()
        loss += part_loss.detach()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss


def decoder_config_for_task(task: Task, bins=None, **options) -> DecoderConfig:
    """The config of a decoder sized for the task: vocabulary, output classes, and an APE table
    long enough for the longest test bin unless n_positions is given."""
    bins = task.test_bins if bins is None else bins
    longest = max([task.max_tokens(hi) for _, hi in bins] + [task.max_tokens(task.train_range[1])])
    options.setdefault("n_positions", longest)
    return DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes, **options)


def decoder_for_task(task: Task, seed: int = 0, bins=None, **options) -> Decoder:
    """A freshly initialized decoder (seeded) of `decoder_config_for_task`."""
    cfg = decoder_config_for_task(task, bins, **options)
    torch.manual_seed(seed)
    return Decoder(cfg)
