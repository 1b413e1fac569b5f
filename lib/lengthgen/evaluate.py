"""Accuracy per length bin, as the papers measure it.

A sequence counts as correct only if the argmax prediction is right at every masked position
(teacher forcing): for sequence-to-sequence tasks that is the whole answer, for languages it is
the set of legal next symbols at every position. Free-running greedy generation (the model reads
its own answer tokens) is measured separately by generation_accuracy.

Models are Decoders or modules like them (`lengthgen.models.protocol.TrainableModel`).
What counts as the loss and whether there is an accuracy is the task's objective
(`lengthgen.objectives`): regression tasks report their mean squared error as the loss.
"""
import contextlib

import numpy as np
import torch

from lengthgen.engine.settings import PRECISIONS
from lengthgen.errors import LengthgenError, check_choice
from lengthgen.objectives import objective_of
from lengthgen.tasks.base import Batch, Task, bin_name


# Evaluation sets are drawn in batches of this size: the batches decide the random stream, so
# every place that draws an evaluation set (evaluate, the engine's stacked groups) uses it.
EVAL_BATCH_SIZE = 256


def low_precision(device, precision: str = "auto") -> torch.dtype | None:
    """The dtype a run of this precision (`TrainConfig.precision`) autocasts to on `device`:
    bf16 under "auto" on a CUDA card that has bf16 (fast, and safe for these small models),
    None (full precision) otherwise. A card without bf16 (a Colab T4) trains in fp32: fp16
    would need loss scaling, and these models are small enough that fp32 costs little. "fp32"
    never autocasts: bf16 keeps 8 bits of mantissa, about 0.4% per rounding, too coarse for a
    regression read at a mean squared error of 1e-5 (Izzo et al.'s stop rule)."""
    check_choice("autocast", "precision", precision, PRECISIONS)
    device = torch.device(device)
    if precision == "auto" and device.type == "cuda" and bf16_supported(device):
        return torch.bfloat16
    return None


def autocast(device, precision: str = "auto") -> contextlib.AbstractContextManager:
    """The context every training step and evaluation of a run computes in: autocast to
    `low_precision`'s dtype, or nothing (full precision). The one place the library enters
    autocast: each trainer passes its run's precision."""
    dtype = low_precision(device, precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=dtype)


def bf16_supported(device) -> bool:
    """Whether the CUDA card computes in bf16 natively (compute capability 8.0 and later)."""
    return torch.cuda.get_device_capability(torch.device(device))[0] >= 8


def to_tensors(batch: Batch, device, target_dtype: torch.dtype = torch.long
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(inputs, targets, loss_mask) on the device; targets in the objective's dtype."""
    return (torch.as_tensor(batch.inputs, dtype=torch.long).to(device, non_blocking=True),
            torch.as_tensor(batch.targets, dtype=target_dtype).to(device, non_blocking=True),
            torch.as_tensor(batch.loss_mask, dtype=torch.bool).to(device, non_blocking=True))


def bin_rng(seed: int, lo: int, hi: int) -> np.random.Generator:
    """The same seed and bin always give the same test examples, whatever else is evaluated."""
    return np.random.default_rng([seed, lo, hi])


def _chunks(total: int, size: int):
    for start in range(0, total, size):
        yield min(size, total - start)


def _check_bins(task: Task, bins, samples_per_bin: int):
    bins = [tuple(int(v) for v in b) for b in (task.test_bins if bins is None else bins)]
    for lo, hi in bins:
        task.check_length_range(lo, hi)
    if samples_per_bin < 1:
        raise LengthgenError(f"samples_per_bin must be at least 1, got {samples_per_bin}")
    return bins


def _offsets(model, batch_size: int, offset: int, device):
    if offset == 0 or not model.cfg.pe.absolute:
        return None
    return torch.full((batch_size,), offset, dtype=torch.long, device=device)


@contextlib.contextmanager
def _eval_mode(model):
    """The model in eval mode for the block, back in the mode it was in afterwards."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def bin_batches(task: Task, lo: int, hi: int, samples_per_bin: int, seed: int,
                 batch_size: int):
    """The bin's fixed examples (one random stream per seed and bin), in batches."""
    rng = bin_rng(seed, lo, hi)
    for size in _chunks(samples_per_bin, batch_size):
        yield size, task.sample(rng, size, lo, hi)


@torch.no_grad()
def evaluate(model, task: Task, bins=None, samples_per_bin: int = 2000, seed: int = 0,
             device="cpu", batch_size: int = EVAL_BATCH_SIZE, offset: int = 0,
             precision: str = "auto") -> dict:
    """{"lo-hi": {"accuracy", "loss", "n"}} for each bin (default: the task's test bins).

    accuracy: fraction of sequences right at every masked position (teacher-forced argmax);
    loss: mean cross-entropy over all masked positions of the bin. For a regression task there
    is no accuracy and the loss is the mean squared error over the masked positions. APE models
    see positions from `offset` on (0 unless asked). precision: the run's
    (`TrainConfig.precision`, `autocast`).
    """
    bins = _check_bins(task, bins, samples_per_bin)
    objective = objective_of(task)
    results = {}
    with _eval_mode(model):
        for lo, hi in bins:
            correct = torch.zeros((), device=device)
            loss_sum = torch.zeros((), device=device)
            positions = torch.zeros((), device=device)
            for size, batch in bin_batches(task, lo, hi, samples_per_bin, seed, batch_size):
                inputs, targets, mask = to_tensors(batch, device, objective.target_dtype)
                with autocast(device, precision):
                    logits = model(inputs, _offsets(model, size, offset, device))
                if objective.metric == "accuracy":
                    correct += objective.correct(logits, targets, mask).sum()
                loss_sum += objective.losses(logits, targets, mask).sum()
                positions += mask.sum()
            point = {"loss": loss_sum.item() / max(positions.item(), 1.0), "n": samples_per_bin}
            if objective.metric == "accuracy":
                point = {"accuracy": correct.item() / samples_per_bin, **point}
            results[bin_name(lo, hi)] = point
    return results


@torch.no_grad()
def greedy_predictions(model, inputs: torch.Tensor, prompt_lengths: torch.Tensor,
                       offsets: torch.Tensor | None = None, precision: str = "auto"
                       ) -> torch.Tensor:
    """Free-running greedy decoding: the argmax prediction at every position [B,T], where each
    sequence reads its own prompt and then its own earlier predictions (never the reference
    answer). Runs one forward pass per generated position: slow, but exact and simple."""
    b, t = inputs.shape
    tokens = inputs.clone()
    predictions = torch.zeros_like(inputs)
    start = int(prompt_lengths.min()) - 1
    if start < 0:
        raise LengthgenError("every sequence needs a prompt of at least one token")
    if start > 0:  # the prompt part of every sequence is read as given
        with autocast(inputs.device, precision):
            predictions[:, :start] = model(tokens[:, :start], offsets).argmax(-1)
    for p in range(start, t):
        with autocast(inputs.device, precision):
            predicted = model(tokens[:, : p + 1], offsets)[:, p].argmax(-1)
        predictions[:, p] = predicted
        if p + 1 < t:
            generating = p + 1 >= prompt_lengths
            tokens[:, p + 1] = torch.where(generating, predicted, tokens[:, p + 1])
    return predictions


@torch.no_grad()
def generation_accuracy(model, task: Task, bins=None, samples_per_bin: int = 2000,
                        seed: int = 0, device="cpu", batch_size: int = EVAL_BATCH_SIZE,
                        offset: int = 0, precision: str = "auto") -> dict:
    """{"lo-hi": {"accuracy", "n"}}: the fraction of sequences whose greedily generated answer
    (after the prompt) matches the reference at every masked position. Same examples as
    evaluate() for the same seed (and precision). Sequence-to-sequence tasks only."""
    bins = _check_bins(task, bins, samples_per_bin)
    results = {}
    with _eval_mode(model):
        for lo, hi in bins:
            correct = torch.zeros((), device=device)
            for size, batch in bin_batches(task, lo, hi, samples_per_bin, seed, batch_size):
                if batch.prompt_lengths is None:
                    raise LengthgenError(f"{task.id}: generation accuracy needs a "
                                         f"sequence-to-sequence task (batches with prompts)")
                inputs, targets, mask = to_tensors(batch, device)
                prompts = torch.as_tensor(batch.prompt_lengths, dtype=torch.long).to(device)
                offsets = _offsets(model, size, offset, device)
                model.check_positions(inputs, offsets)
                predicted = greedy_predictions(model, inputs, prompts, offsets, precision)
                correct += ((predicted == targets) | ~mask).all(dim=1).sum()
            results[bin_name(lo, hi)] = {"accuracy": correct.item() / samples_per_bin,
                                         "n": samples_per_bin}
    return results
