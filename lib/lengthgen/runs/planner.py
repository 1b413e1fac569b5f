"""How long a slice's group of jobs takes, before and after the slice has timed its shape: the
`Planner` the slice loop (`runs.slices`) starts jobs by, so that it starts only jobs that can
finish in the time it has, and `budget plan --estimate` counts the rest of the sweep by.

Its rates have one home each in `runs.cost` (a stacked group's `group_steps_per_s`, one model's
`one_model_steps_per_s`), read from a `runs.rates` table; what a slice measures on a shape is
added here, and so is the host's work before a job's first step (`Job.host_seconds`, once per
`Job.host_key` while the process keeps it: HOST_KEYS_KEPT).
"""
from __future__ import annotations

from lengthgen.errors import LengthgenError
from lengthgen.runs.allotment import HANDOFF_FILE_BYTES, SLICE_S, WORKERS
from lengthgen.runs.cost import (HOST_KEYS_KEPT, group_steps_per_s, job_flops, job_shape,
                                 job_training, one_model_steps_per_s)

# On estimates from a rate table: a group's start (graph capture) and evaluations take
# GROUP_OVERHEAD_S, and its steps MARGIN times the table's rate. On the card's own clock
# (benchmarks/check_cost.py: the 15 stacked groups the 2026-11-28 H200 run of the paper-budget
# sweep timed, 3 workers sharing the card) 7 groups took longer than so planned, by up to 1.35x
# (small shapes, one to six models: launches and the other workers). That costs no training:
# a job still running at the end is handed on (its state kept, and packed where the hand-off
# holds it), and a job whose state cannot be handed on is planned at the rate divided among
# the workers (`Planner`'s `careful`), which covers every group timed (tests/test_slice_rates.py).
MARGIN, GROUP_OVERHEAD_S = 1.05, 30.0

# Open-ended jobs. A job with a stop rule (it ends once its loss or accuracy is reached:
# Izzo et al.'s runs stop at a loss of 1e-5, in a few thousand of their 200,000 steps) is
# planned at its step cap, which may be longer than any allotment: such a job would never
# start. So where no allotment could hold its cap, it starts all the same when its state is
# small, and what it has trained when the time runs out is handed on (`Planner.open_ended`),
# never thrown away. New ones start only while the states the call would hand on fit in its
# `OpenBudget` (OPEN_HANDOFF_SHARE of the hand-off, less the states of pending jobs the call
# found on coming in, divided among its workers and shared by a queue's figures; none where
# the call keeps no states), with at least OPEN_MIN_S left; unfinished ones found on coming in go on whatever
# the budget. A group of them trains at most OPEN_GROUP_S a call before its unfinished
# members are handed on, so that one whose members never meet their rule cannot hold a
# worker for the rest of the allotment.
OPEN_HANDOFF_SHARE, OPEN_GROUP_S, OPEN_MIN_S = 0.25, 180.0, 60.0
HISTORY_POINT_BYTES = 64   # a state's history holds one point an evaluation (torch.save: ~53)


class Planner:
    """How long a group of a shape takes: the slower of a rate table's estimate (with a margin: a
    stacked group of runs of `flops` FLOPs per step each at `figure cost`'s rate,
    `runs.cost.group_steps_per_s`) and what this slice measured on the shape (which counts the
    other workers on the card); None where neither knows the shape (the job then starts, as
    slices did before rates). A table's rates are of one process on the card: for shapes in
    `careful` (jobs that must finish in this allotment, their states too large to hand on) they
    are divided among the `share` workers of the slice. A job trained alone (`alone`: one model,
    eagerly, as train() steps it) goes at the one-model rate of `figure cost`
    (`runs.cost.one_model_steps_per_s`, of its shape and its step's `flops`), never at a stacked
    group's, and is measured apart from the stacked groups of its shape. `host_s`, the host's
    work before its first step (a Dyck job's training words), is added to either estimate (the
    slice times that work apart from the steps it measures, `Job.host_work`, so it is counted
    once, here): `host_seconds` gives it once per `Job.host_key` in this process while the
    process keeps that key's work (the words are drawn once per set while the last
    HOST_KEYS_KEPT sets are kept, `runs.cost`), after `started`; the slice loop
    (`runs.slices._choose`) takes jobs whose work is kept first, so that a set is drawn once,
    as `figure cost` counts it."""

    def __init__(self, table=None, graphs: bool = False, share: int = 1,
                 careful=lambda shape: False):
        self.table, self.graphs, self.share, self.careful = table, graphs, share, careful
        self.measured: dict = {}   # (shape, alone) -> (group size, seconds a step)
        # the host_keys of the jobs started in this process whose work it keeps, least
        # recently used first (dict order)
        self.drawn: dict = {}

    def seconds(self, shape, n: int, steps: int, alone: bool = False,
                host_s: float = 0.0, flops: float | None = None) -> float | None:
        if steps <= 0:
            return 0.0
        estimates = []
        if (shape, alone) in self.measured:   # steps timed without host work: it is added
            size, per_step = self.measured[shape, alone]
            estimates.append(steps * per_step * max(1.0, n / size) + host_s)
        if self.table is not None:
            if flops is None:
                raise LengthgenError("a job is planned from the FLOPs of its step "
                                     "(runs.cost.job_flops)")
            if alone:
                per_step = 1 / one_model_steps_per_s(flops, shape, self.table)
            else:   # figure cost's rate of that group (its one home)
                per_step = n / group_steps_per_s(flops, n, self.table, self.graphs)
            if self.careful(shape):
                per_step *= self.share
            estimates.append(steps * per_step * MARGIN + GROUP_OVERHEAD_S + host_s)
        return max(estimates) if estimates else None

    def host_seconds(self, job) -> float:
        """The host work a job still has to do in this process: none where a job of its
        `host_key` started here and its work is still kept (`started`, `keeps`)."""
        return 0.0 if self.keeps(job) else job.host_seconds

    def keeps(self, job) -> bool:
        """Whether this process keeps the host work of the job's `host_key`."""
        return bool(job.host_key) and job.host_key in self.drawn

    def started(self, job) -> None:
        if job.host_key:
            self.drawn.pop(job.host_key, None)
            self.drawn[job.host_key] = True   # (the most recently used, last)
            while len(self.drawn) > HOST_KEYS_KEPT:
                del self.drawn[next(iter(self.drawn))]

    def measure(self, shape, n: int, steps: int, seconds: float, alone: bool = False) -> None:
        if steps > 0 and seconds > 0:
            self.measured[shape, alone] = (n, seconds / steps)

    def open_ended(self, job, available: int, bytes_left: float, file_bytes: float) -> int:
        """How many of `available` jobs like `job` (a group none of which can finish in the
        time left) start all the same as open-ended jobs (OPEN_HANDOFF_SHARE): none unless the
        job has a stop rule, its cap is longer than any slice gives a job (SLICE_S, at the
        rates here: a shorter job waits for a slice that can finish it) and its state fits in
        `file_bytes`; then as many as `bytes_left` of hand-off holds their states (a job
        alone: one; infinite `bytes_left`: a resumed group, whose states are held already)."""
        train = job.train
        if train.stop_loss is None and train.stop_accuracy is None:
            return 0
        whole = self.seconds(job_shape(job), 1, train.steps, job.alone, job.host_seconds,
                             job_flops(job))
        if whole is None or whole <= SLICE_S:
            return 0
        each = state_estimate(job)
        if each > file_bytes:
            return 0
        held = available if bytes_left == float("inf") else int(bytes_left // each)
        return max(0, min(available, 1 if job.alone else available, held))

    def largest(self, shape, remaining: list[int], left: float, cap: int,
                alone: bool = False, host_s: float = 0.0, flops: float | None = None) -> int:
        """The most jobs (in order, `remaining` steps each) that finish together in `left`
        (a job alone: at most one)."""
        best = 0
        for n in range(1, min(len(remaining), 1 if alone else cap) + 1):
            need = self.seconds(shape, n, max(remaining[:n]), alone, host_s, flops)
            if need is None or need <= left:
                best = n
        return best


def in_an_allotment(job, table=None, workers: int = WORKERS) -> bool:
    """Whether some slice can ever train a job, as the slices plan it: alone it finishes within
    the most a slice gives a job (SLICE_S) at the rates of `table` (a `runs.rates` table; the
    built-in H200 table by default, steps as CUDA graphs: `figure cost`'s rates, with
    `Planner.seconds`' margin, group start and host work), at the rate divided among the
    prepared script's `workers` where its state is too large for a hand-off file (`careful`,
    as every call plans it); or it has a stop rule and its small state lets it start
    open-ended (`Planner.open_ended`). A job that is neither is never started by a slice:
    its figure lists it as `deferred` (the figure contract), left, not done."""
    from lengthgen.runs.rates import H200, state_bytes
    planner = Planner(table if table is not None else H200, graphs=True, share=workers,
                      careful=lambda shape: state_bytes(shape) > HANDOFF_FILE_BYTES)
    whole = planner.seconds(job_shape(job), 1, job.train.steps, job.alone, job.host_seconds,
                            job_flops(job))
    if whole <= SLICE_S:
        return True
    stops = job.train.stop_loss is not None or job.train.stop_accuracy is not None
    return stops and state_estimate(job) <= HANDOFF_FILE_BYTES


def state_estimate(job) -> float:
    """About the bytes of a job's state once handed on at its cap: weights and two AdamW
    moments (4 bytes each) and its history's points (one an evaluation)."""
    points = job.train.steps // max(1, job.train.eval_every) + 1
    return 12 * job_training(job).n_params + HISTORY_POINT_BYTES * points


class OpenBudget:
    """The hand-off bytes new open-ended jobs of one worker's call may fill (OPEN_HANDOFF_SHARE
    above): `total` less the states found on coming in (`found`, counted whole until the call
    ends, though some finish) and those its open-ended jobs leave (`keep`, each at its real
    size or its estimate at the cap, the larger: a state grows as its history does). One
    budget serves every figure of a queue."""

    def __init__(self, total: float, found: float = 0.0):
        self.total, self.found = total, found
        self.kept: dict = {}   # (figure, job name) -> bytes

    @classmethod
    def of_call(cls, states, states_out, state_bytes: float, share: int,
                found: float = 0.0) -> "OpenBudget":
        """A call's budget for one of its `share` workers: none where it keeps no unfinished
        state (no `states`, no `states_out`); at most `state_bytes` (the old hand-off's, given
        per worker) where only `states_out` takes them; less `found`, the bytes of the states
        found on coming in that the call may hand on again (`runs.slices.held_bytes`)."""
        from lengthgen.runs.allotment import HANDOFF_BYTES
        if states is None and states_out is None:
            return cls(0.0)
        total = HANDOFF_BYTES * OPEN_HANDOFF_SHARE / max(1, share)
        if states is None:
            total = min(total, state_bytes)
        return cls(total, found / max(1, share))

    def left(self) -> float:
        return self.total - self.found - sum(self.kept.values())

    def keep(self, key, size: float) -> None:
        self.kept[key] = size

