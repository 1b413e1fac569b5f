"""Several small training runs at once: one model per seed, stacked (`lengthgen.engine`).

On a GPU a 1-layer, width-16 model uses a sliver of the device and each step is dominated by
kernel launches; stacking S seeds along a leading dimension runs S models for about the cost of
one. Each seed keeps everything a separate `train` run has: its own initialization, its own
data stream (the same batches and APE offsets, from the same seeded generator), its own AdamW
moments, gradient clipping by its own norm, its own early stop and give-up rule. So
train_seeds(...)[i] matches train(...) with seed i up to float rounding (batches are padded to
a common length). A front door to the engine's one loop; not checkpointed (`train` is, and the
engine's `train_jobs` runs in slices that resume).
"""
from dataclasses import replace

import torch

from lengthgen.engine.feeds import HostFeed
from lengthgen.engine.groups import StackedGroup
from lengthgen.engine.loop import run
from lengthgen.errors import LengthgenError
from lengthgen.tasks.base import Task
from lengthgen.engine.settings import TrainConfig, TrainResult
from lengthgen.engine.single import decoder_for_task, preamble


def train_seeds(task: Task, cfg: TrainConfig, seeds, device="cpu", make_model=None,
                **model_options) -> list[tuple[torch.nn.Module, TrainResult]]:
    """Train one model per seed (cfg.seed is replaced by each seed) in one stacked group.

    The models are `make_model(seed)` (any TrainableModel; Decoders run through the batched
    forward, others through vmap), or decoders from `decoder_for_task(task, seed,
    **model_options)`. Returns [(model, result)] in the order of seeds, each as building that
    model and calling `train` with that seed would give it. Loss, metric and stopping follow the
    task's objective, as in `train`.
    """
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise LengthgenError(f"train_seeds needs distinct seeds, got {seeds}")
    if cfg.checkpoint_path is not None:
        raise LengthgenError("train_seeds does not checkpoint; use train() for resumable runs")
    device = torch.device(device)
    build = make_model or (lambda seed: decoder_for_task(task, seed=seed, **model_options))
    models = [build(seed) for seed in seeds]
    configs = [replace(cfg, seed=seed) for seed in seeds]
    for model, member in zip(models, configs):
        objective, lo, hi, ape = preamble(model, task, member)
    if getattr(models[0].cfg, "dropout", 0.0) > 0:
        raise LengthgenError("train_seeds needs dropout=0 (dropout streams would differ from "
                             "separate runs)")
    group = StackedGroup(models, [task] * len(seeds), configs, device)
    feed = HostFeed([task] * len(seeds), configs, [m.cfg.n_positions for m in models],
                    [m.cfg.pe.absolute for m in models], objective.target_dtype, device)
    results, _ = run(group, feed, [task] * len(seeds), configs, device)
    trained = group.finished_models()
    return [(trained[i], results[i]) for i in range(len(seeds))]
