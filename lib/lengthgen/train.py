"""Training on fresh batches sampled online from a task, with the papers' protocol.

No fixed training set: every step samples a new batch (Huang et al. 2025 App. E.3; Izzo et al.
App. B). APE models see each sequence at a random offset, uniform in [0, n_positions - T], so
every row of the position table gets trained. AdamW with weight decay, warmup then a constant,
linear or cosine schedule, periodic evaluation on a fixed in-distribution set, early stop once
its accuracy reaches a threshold (or its loss falls below one).

The loss is the task's objective (`lengthgen.objectives`: masked cross-entropy for
classification, masked squared error for regression). The model is anything that meets
`lengthgen.models.protocol.TrainableModel`; its parameter roles let `group_lr` give embeddings,
vectors, hidden matrices and the readout their own learning rates (muP's Adam rule). A
checkpoint is the run's state in the library's one resume format (`engine.checkpoints`: weights
and AdamW moments by name, step, history, and its random-generator states under "feed"; the
slices of `train_jobs` hand back the same), so a killed run resumes to the same result
(bit-identical on CPU).

A seed fixes the data stream and (through torch's global generator, which train() seeds) any
dropout. On CPU a run is deterministic for a given seed and number of torch threads; a
different thread count changes float rounding, and so, eventually, the trajectory.

The pieces live in `lengthgen.engine` (settings, one model's step, checkpoints, the loop) and
are re-exported here, the name every experiment imports.
"""
from pathlib import Path

import torch

from lengthgen.engine.checkpoints import (_resumable_fields, checkpoint_problem,
                                          load_checkpoint, member_state, restore_feed,
                                          restore_member, restoring, save_checkpoint)
from lengthgen.engine.settings import (EVAL_SEED_OFFSET, SCHEDULES, TrainConfig,  # noqa: F401
                                       TrainResult, history_metrics, learning_rate, should_stop)
from lengthgen.engine.single import (adamw, decoder_for_task, length_chunks,  # noqa: F401
                                     make_optimizer, parameter_groups, preamble, sample_offsets,
                                     set_learning_rates, training_step)
from lengthgen.engine.feeds import HostFeed
from lengthgen.engine.groups import ModuleGroup
from lengthgen.engine.loop import MemberState, first_non_finite
from lengthgen.engine.loop import run as run_loop
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import evaluate, generation_accuracy
from lengthgen.models.decoder import Decoder
from lengthgen.tasks import get_task
from lengthgen.tasks.base import Task

__all__ = ["EVAL_SEED_OFFSET", "SCHEDULES", "TrainConfig", "TrainResult", "adamw",
           "decoder_for_task", "history_metrics", "learning_rate", "length_chunks",
           "load_checkpoint", "make_optimizer", "parameter_groups", "preamble", "sample_offsets",
           "save_checkpoint", "set_learning_rates", "should_stop", "train", "train_and_evaluate",
           "training_step"]


def train(model: Decoder, task: Task, cfg: TrainConfig, device="cpu",
          progress: bool = False) -> TrainResult:
    """Train in place; resume from cfg.checkpoint_path when it exists.

    `model` is a Decoder or any module that meets lengthgen.models.protocol.TrainableModel.
    The loss and the metric are the task's objective. This is a group of one in the library's
    one training loop (`lengthgen.engine.loop`): the model steps through torch's AdamW with the
    host's sampler, as it always has, and checkpoints as below.
    """
    from tqdm.auto import tqdm

    device = torch.device(device)
    objective, lo, hi, ape = preamble(model, task, cfg)
    group = ModuleGroup(model, task, cfg, device)
    feed = HostFeed([task], [cfg], [model.cfg.n_positions], [ape], objective.target_dtype,
                    device)
    torch.manual_seed(cfg.seed)
    member, step, elapsed, recent = MemberState(), 0, 0.0, []
    checkpoint = Path(cfg.checkpoint_path) if cfg.checkpoint_path else None
    run = {"task": task.id, "model": model.cfg.to_dict(), "train": _resumable_fields(cfg)}
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint)
        problem = checkpoint_problem(state, cfg.steps)
        if problem:
            raise LengthgenError(f"{checkpoint}: not a checkpoint of a training ({problem}); "
                                 f"delete it or choose another checkpoint_path")
        if state["run"] != run:
            raise LengthgenError(f"{checkpoint}: this checkpoint belongs to a different run "
                                 f"(task, model or training settings differ); delete it or "
                                 f"choose another checkpoint_path")
        with restoring(checkpoint):
            restore_member(group, 0, state, member)
            # its generators (the host's, torch's for dropout) and the task's place in its data
            # (a fixed set's epoch)
            restore_feed(feed, 0, state, device)
        step, elapsed, member.stopped = state["step"], state["elapsed"], state["stopped"]
        member.abandoned = state.get("abandoned", False)
        # the losses since the last evaluation, so a resumed run logs the same train_loss
        recent = [torch.tensor([v], device=device) for v in state["recent"]]

    def kept() -> str:
        return (f"; the last good checkpoint {checkpoint} is kept" if checkpoint is not None
                and checkpoint.exists() else "")

    def save(state: dict) -> None:
        """Checkpoint every checkpoint_every steps and at the end (never a diverged state)."""
        at = state["step"]
        if checkpoint is None or not (at % cfg.checkpoint_every == 0 or member.stopped
                                      or at == cfg.steps):
            return
        bad = first_non_finite(state["recent"])
        if bad and bad[0] is not None:
            first = at - len(state["recent"]) + bad[0] + 1
            raise LengthgenError(f"{task.id}: training diverged: the loss became "
                                 f"{float(state['recent'][bad[0]][0]):g} at step {first} "
                                 f"(lr {cfg.lr:g}); lower the learning rate{kept()}")
        try:
            save_checkpoint(checkpoint, {
                **member_state(group, 0, member, state, feed, device), "run": run,
                "stopped": member.stopped, "abandoned": member.abandoned})
        except OSError as e:   # a full disk, a folder turned read-only
            kept_one = " (the last one written is kept)" if checkpoint.exists() else ""
            raise LengthgenError(f"cannot write the checkpoint {checkpoint} "
                                 f"({e.strerror or e}); training stopped at step "
                                 f"{at}{kept_one}") from None

    bar = tqdm(total=cfg.steps, initial=step, disable=not progress, desc=task.id, leave=False)
    _, state = run_loop(group, feed, [task], [cfg], device, step=step, members=[member],
                        recent=recent, elapsed=elapsed, on_step=save, progress=bar,
                        diverged_note=kept)
    bar.close()
    step, history = state["step"], member.history
    if not history or history[-1]["step"] != step:  # e.g. resumed from a finished checkpoint
        point = group.evaluate()[0]
        history.append({"step": step, **history_metrics(point),
                        "train_loss": None, "lr": learning_rate(cfg, max(step - 1, 0))})
    return TrainResult(steps=step, stopped_early=member.stopped and not member.abandoned
                       and step < cfg.steps, final_accuracy=history[-1].get("accuracy"),
                       wall_time_s=state["elapsed"], history=history,
                       abandoned=member.abandoned)


# ---- one call for experiment modules -------------------------------------------------------
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
        "bins": evaluate(model, task, bins, samples_per_bin, test_seed, device,
                         precision=train_cfg.precision),
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
                                                    test_seed, device,
                                                    precision=train_cfg.precision)
    return metrics
