"""Several small training runs at once: one model per seed, stacked and run through torch.func.vmap.

On a GPU a 1-layer, width-16 model uses a sliver of the device and each step is dominated by
kernel launches; stacking S seeds along a leading dimension runs S models for about the cost of
one. Each seed keeps everything a separate `train` run has: its own initialization, its own
data stream (the same batches and APE offsets, from the same seeded generator), its own AdamW
moments, gradient clipping by its own norm, its own early stop. So train_seeds(...)[i] matches
train(...) with seed i up to float rounding (batches are padded to a common length). Not
checkpointed: meant for short runs; use `train` for long ones.
"""
import copy
import time

import numpy as np
import torch
from torch.func import functional_call, stack_module_state, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from lengthgen.errors import LengthgenError
from lengthgen.evaluate import autocast, evaluate
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.base import Task
from lengthgen.train import (EVAL_SEED_OFFSET, TrainConfig, TrainResult, adamw,
                             decoder_for_task, history_metrics, learning_rate, parameter_groups,
                             preamble, sample_offsets, set_learning_rates, should_stop)


def _pad_to(array: np.ndarray, width: int) -> np.ndarray:
    return np.pad(array, ((0, 0), (0, width - array.shape[1])))


def _stacked_batches(task, rngs, cfg, lo, hi, n_positions, ape, device, target_dtype):
    """One batch per seed (drawn exactly as `train` draws it), padded to a common length."""
    batches = [task.sample(rng, cfg.batch_size, lo, hi) for rng in rngs]
    offsets = [sample_offsets(rng, b.inputs, n_positions) if ape else None
               for rng, b in zip(rngs, batches)]
    width = max(b.inputs.shape[1] for b in batches)
    stack = lambda name: np.stack([_pad_to(getattr(b, name), width) for b in batches])
    tensors = [torch.as_tensor(stack(name), dtype=dtype).to(device) for name, dtype in
               (("inputs", torch.long), ("targets", target_dtype), ("loss_mask", torch.bool))]
    offsets = torch.as_tensor(np.stack(offsets)).to(device) if ape else None
    return (*tensors, offsets)


def train_seeds(task: Task, cfg: TrainConfig, seeds, device="cpu", make_model=None,
                **model_options) -> list[tuple[torch.nn.Module, TrainResult]]:
    """Train one model per seed (cfg.seed is replaced by each seed) in one vmapped model.

    The models are `make_model(seed)` (any TrainableModel whose forward vmap can batch), or
    decoders from `decoder_for_task(task, seed, **model_options)`. Returns [(model, result)] in
    the order of seeds, each as building that model and calling `train` with that seed would
    give it. Loss, metric and stopping follow the task's objective, as in `train`.
    """
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise LengthgenError(f"train_seeds needs distinct seeds, got {seeds}")
    if cfg.checkpoint_path is not None:
        raise LengthgenError("train_seeds does not checkpoint; use train() for resumable runs")
    device = torch.device(device)
    if cfg.abandon_below is not None:
        raise LengthgenError("train_seeds does not give up on single seeds (abandon_below): "
                             "train them one by one with train()")
    build = make_model or (lambda seed: decoder_for_task(task, seed=seed, **model_options))
    models = [build(seed).to(device) for seed in seeds]
    for model in models:
        objective, lo, hi, ape = preamble(model, task, cfg)
    mcfg = models[0].cfg
    if getattr(mcfg, "dropout", 0.0) > 0:
        raise LengthgenError("train_seeds needs dropout=0 (dropout streams would differ from "
                             "separate runs)")
    params, buffers = stack_module_state(models)
    template = copy.deepcopy(models[0]).to("meta")

    def one_model(p, b, inputs, offsets):
        return functional_call(template, (p, b), (inputs, offsets), {"check": False})

    forward = vmap(one_model, in_dims=(0, 0, 0, 0 if ape else None))
    dims = {n: p.dim() for n, p in models[0].named_parameters()}
    roles = models[0].parameter_roles()
    groups = parameter_groups({n: params[n] for n in params if n in roles}, roles, dims, cfg)
    optimizer = adamw(groups, cfg, device)
    rngs = [np.random.default_rng(seed) for seed in seeds]
    histories = [[] for _ in seeds]
    finished: list[TrainResult | None] = [None] * len(seeds)
    start, step = time.perf_counter(), 0
    loss_sums, steps_since_eval = torch.zeros(len(seeds), device=device), 0
    while step < cfg.steps and not all(finished):
        set_learning_rates(optimizer, cfg, step)
        inputs, targets, mask, offsets = _stacked_batches(task, rngs, cfg, lo, hi,
                                                          mcfg.n_positions, ape, device,
                                                          objective.target_dtype)
        with autocast(device), sdpa_kernel(SDPBackend.MATH):  # the kernel vmap batches
            logits = forward(params, buffers, inputs, offsets)
        per_seed = (objective.losses(logits.flatten(0, 1), targets.flatten(0, 1),
                                     mask.flatten(0, 1)).view(mask.shape).sum(dim=(1, 2))
                    / mask.sum(dim=(1, 2)).clamp(min=1))
        optimizer.zero_grad(set_to_none=True)
        per_seed.sum().backward()  # seeds share no parameters: each gets its own gradient
        if cfg.grad_clip is not None:
            _clip_per_seed(list(params.values()), cfg.grad_clip)
        optimizer.step()
        loss_sums += per_seed.detach()
        step += 1
        steps_since_eval += 1
        if step % cfg.eval_every == 0 or step == cfg.steps:
            train_losses = (loss_sums / steps_since_eval).tolist()
            loss_sums.zero_()
            steps_since_eval = 0
            for i, seed in enumerate(seeds):
                if finished[i] is not None:
                    continue
                _unstack_into(models[i], params, i)
                point = evaluate(models[i], task, [(lo, hi)], cfg.eval_samples,
                                 seed + EVAL_SEED_OFFSET, device)[bin_name(lo, hi)]
                histories[i].append({"step": step, **history_metrics(point),
                                     "train_loss": train_losses[i],
                                     "lr": learning_rate(cfg, step - 1)})
                stop = should_stop(cfg, point)
                if stop or step == cfg.steps:
                    finished[i] = TrainResult(steps=step, stopped_early=stop and step < cfg.steps,
                                              final_accuracy=point.get("accuracy"),
                                              wall_time_s=time.perf_counter() - start,
                                              history=histories[i])
    return list(zip(models, finished))


def _clip_per_seed(stacked: list[torch.Tensor], max_norm: float) -> None:
    """clip_grad_norm_ applied to each seed's own gradients (dim 0 indexes seeds)."""
    grads = [p.grad for p in stacked if p.grad is not None]
    squares = torch.stack([g.float().pow(2).flatten(1).sum(dim=1) for g in grads]).sum(dim=0)
    scale = (max_norm / (squares.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *[1] * (g.dim() - 1)).to(g.dtype))


@torch.no_grad()
def _unstack_into(model: torch.nn.Module, params: dict, index: int) -> None:
    for name, param in model.named_parameters():
        param.copy_(params[name][index])
