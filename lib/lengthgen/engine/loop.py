"""The one training loop: a group of runs, stepped together until each has stopped.

Every trainer of the library comes here: `train` is a group of one (`ModuleGroup`),
`train_jobs` trains stacked groups. Per step the loop sets each member's
learning rate, takes a batch from the feed, and asks the group for one step, keeping each
member's loss on the device (no sync). At a member's evaluation (every `eval_every` steps,
and at its own step cap) it checks that the loss stayed finite, evaluates, appends to the
member's history and applies the member's stop rule (accuracy or loss reached) and give-up
rule (`abandon_below`). Members that finish leave the group at once, so a group does no work
for them; the loop ends when none is left, or at a deadline (slices), when the caller keeps
the state of the unfinished members.

Members of one group share the step counter, the batch size, the evaluation period and the
precision (`TrainConfig.precision`); each has its own step cap and rules.
"""
import time
from dataclasses import dataclass, field

import torch

from lengthgen.errors import LengthgenError
from lengthgen.engine.settings import TrainResult, history_metrics, learning_rate, should_stop


@dataclass
class MemberState:
    """The loop's bookkeeping for one member (what a checkpoint must keep besides weights)."""
    history: list = field(default_factory=list)   # one dict per evaluation (step, metrics, ...)
    stopped: bool = False      # a target met, given up or diverged (the cap leaves it False)
    abandoned: bool = False    # left without a fit: given up (abandon_below) or diverged
    result: TrainResult | None = None   # set when the member leaves (`finish`)


def check_group(configs) -> None:
    for name in ("eval_every", "batch_size", "length_chunks", "precision"):
        if len({getattr(c, name) for c in configs}) > 1:
            raise LengthgenError(f"the members of a group must share {name}")


def first_non_finite(recent: list[torch.Tensor]) -> list[int | None]:
    """Per member, the index in `recent` of its first non-finite loss (None: all finite)."""
    if not recent:
        return []
    values = torch.stack(recent)                                    # [n, S]
    bad = ~torch.isfinite(values)
    first = torch.where(bad.any(dim=0), bad.float().argmax(dim=0), -1).tolist()
    return [None if i < 0 else i for i in first]


def run(group, feed, tasks, configs, device, *, step: int = 0, members=None,
        recent: list | None = None, elapsed: float = 0.0, on_step=None, deadline=None,
        until_step: int | None = None, diverged: str = "raise", diverged_note=None,
        progress=None) -> tuple[list[TrainResult | None], dict]:
    """Train `group` until every member has stopped (or `deadline`, a time.perf_counter() value,
    has passed, or the step counter has reached `until_step`: then unfinished members have no
    result and the returned state lets the caller keep them).

    tasks, configs: each member's task and TrainConfig, in the group's order. step, members,
    recent, elapsed: where a resumed group stands. on_step(state) is called after every step
    (checkpoints). diverged: "raise" (a LengthgenError naming the step, as `train` always did)
    or "stop" (the member stops, with its history ending at the divergence); diverged_note()
    adds to the error (where a checkpoint was kept). Returns
    (results in the original member order, the loop's final state)."""
    device = torch.device(device)
    check_group(configs)
    n = len(configs)
    members = members or [MemberState() for _ in range(n)]
    # `alive` maps the group's rows to original member indices: row j trains member alive[j].
    # A resumed group starts with only the members that have neither a result nor a stop.
    alive = [i for i in range(n) if members[i].result is None and not members[i].stopped]
    # `recent` holds one [rows] loss tensor per step since the last evaluation, on the device
    recent = list(recent or [])
    eval_every = configs[0].eval_every
    start = time.perf_counter()
    state = {}

    def snapshot():
        # what a resumed `run` takes back (step, members, recent, elapsed; elapsed counts the
        # earlier slices too); `alive` is for the caller, a resumed run derives it from members
        state.update(step=step, members=members, recent=recent, alive=alive,
                     elapsed=elapsed + time.perf_counter() - start)
        return state

    def finish(i: int) -> None:
        cfg, m = configs[i], members[i]
        # a stop rule met before the cap is "early"; a give-up (abandoned) or a divergence is not
        m.result = TrainResult(
            steps=m.history[-1]["step"] if m.history else step,
            stopped_early=m.stopped and not m.abandoned and m.history[-1]["step"] < cfg.steps,
            final_accuracy=m.history[-1].get("accuracy") if m.history else None,
            wall_time_s=elapsed + time.perf_counter() - start, history=m.history,
            abandoned=m.abandoned)

    while alive and (deadline is None or time.perf_counter() < deadline) \
            and (until_step is None or step < until_step):
        caps = [configs[i].steps for i in alive]
        if step >= min(caps):   # resumed at or past a cap (a finished checkpoint)
            break
        group.set_rates(step)   # each member's learning rate at this step (its own schedule)
        batch = feed.batch(step)   # one batch per row, stacked
        recent.append(group.train_step(*batch))   # [rows] losses, left on the device (no sync)
        step += 1
        if progress is not None:
            progress.update(1)
        # members are evaluated every eval_every steps and at their own step cap; `alive[j]`
        # is the original index of the group's j-th row (rows leave as members finish)
        due = [j for j, i in enumerate(alive) if step % eval_every == 0
               or step == configs[i].steps]
        if due:
            # the one sync of an evaluation period: losses stayed on the device until now
            bad = first_non_finite(recent)
            points = group.evaluate()   # one point per row, in row order
            # each row's summed loss over the steps kept in `recent` (its mean goes to history)
            totals = sum(recent, torch.zeros(len(alive), device=device)).tolist()
            leaving = []   # rows that stop now
            for j in due:
                i = alive[j]
                cfg, m = configs[i], members[i]
                if bad and bad[j] is not None:   # the step where its loss first went non-finite
                    # recent[-1] is the loss of step `step`, so recent[k] is of step
                    # step - len(recent) + k + 1 (steps count from 1 in history)
                    at = step - len(recent) + bad[j] + 1
                    value = float(torch.stack(recent)[bad[j], j])
                    if diverged == "raise":
                        raise LengthgenError(f"{tasks[i].id}: training diverged: the loss "
                                             f"became {value:g} at step {at} (lr {cfg.lr:g}); "
                                             f"lower the learning rate"
                                             f"{diverged_note() if diverged_note else ''}")
                    # "stop": the member leaves, marked abandoned (its result is no fit)
                    m.history.append({"step": step, "diverged_at": at, "lr": cfg.lr})
                    m.stopped = m.abandoned = True
                    leaving.append(j)
                    continue
                point = points[j]
                m.history.append({"step": step, **history_metrics(point),
                                  "train_loss": totals[j] / len(recent),
                                  "lr": learning_rate(cfg, step - 1)})   # the rate just used
                m.stopped = should_stop(cfg, point)   # the member's accuracy or loss target
                # give up: still below `abandon_below` at an evaluation before the cap
                if not m.stopped and step < cfg.steps and cfg.abandon_below is not None \
                        and point.get("accuracy", 1.0) < cfg.abandon_below:
                    m.stopped = m.abandoned = True
                if m.stopped or step >= cfg.steps:   # a target met, given up, or the cap
                    leaving.append(j)
            if len(due) == len(alive):   # every row was read: start the next period afresh
                recent.clear()
            if leaving:   # drop the finished rows from the group, the feed and the losses kept
                keep = [j for j in range(len(alive)) if j not in leaving]
                finished = [alive[j] for j in leaving]
                if keep:
                    group.retain(keep)
                    feed.retain(keep)
                    index = torch.tensor(keep, device=device)
                    recent = [r.index_select(0, index) for r in recent]
                alive = [alive[j] for j in keep]
                for i in finished:
                    finish(i)
                if not keep:   # the last rows left: report the final state once, then end
                    snapshot()
                    if on_step is not None:
                        on_step(state)
                    break
        if on_step is not None:
            on_step(snapshot())
    snapshot()   # the state of the unfinished members when a deadline or until_step ended it
    return [m.result for m in members], state
