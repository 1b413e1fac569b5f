"""A GPU queue: the planned figures (`runs.planned`) that one slice of device time trains, in
order, each filling the time the ones before it left.

The order (`order`): the figures that say QUEUE_FIRST (the Fig. 1 paper-budget sweep) first;
then the others, cheapest per reproduced id first. A figure's cost is the H200 engine minutes
of the config the queue runs (`runs.cost.estimate` of its `trainings(config)`: the same
estimate as `figure cost`), and the ids it reproduces are its own and every figure that draws
its records (SOURCE); a figure with no `trainings` has no estimate and goes last. Ties by id.

Shared trainings count once. A figure with a `shared_key` (`runs.planned`) shares trainings
with the others that have one through the store of trained weights (`runs.trained`): the
trainings of equal `Training.key` among such figures are one training, which the first of
them in the queue pays for and the later ones only score. So the order is built one figure at
a time: next is the figure whose cost, less the shared trainings the figures before it train,
is the least per id, counting the ids of the figures whose every training it then completes;
those follow it at once (their cost is only scoring), billed at its rate per id. Richard's
Fig. 4, Fig. 5 and Table 1 study the same two models: 5.8 H200 minutes for three ids, 1.9 an
id, the three adjacent, so that the store is warm for the second and third. Without shared
trainings it is the order of each figure's own minutes per id. A row's "minutes" is what the
queue spends on the figure in that order (the sum of the rows is `figure cost`'s total,
shared runs once), "own_minutes" the figure's own estimate (`figure cost`'s row, less the
trainings no slice can train: a figure's `deferred` jobs, marked `Training.deferred` in its
trainings, are left by every slice, so the queue neither bills nor ranks the figure by them;
richard-fig1-ladder's three long rungs).

A queue's slice runs figure after figure until its deadline (`run_queue`). Each figure's slice
starts only jobs that can finish by then (`runs.slices`: at the measured rates), so once the
head figure has nothing left that fits, the next figures' jobs fill the tail of the slice. A
stop (a signal, a parent gone) ends the whole queue at the next step, with every finished job
recorded. The states of unfinished jobs live in one folder per figure under `states` (the
chained call's hand-off), so two figures never share a state file.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

from lengthgen.errors import LengthgenError
from lengthgen.runs import planned
from lengthgen.runs.registry import EXPERIMENTS, experiment, source_ids

QUEUE_SCALES = ("test", "gpu")   # test: every figure's test config; gpu: planned.gpu_scale


def planned_figures() -> list[str]:
    """Every planned figure id (each figure module imported once)."""
    return sorted(f for f in EXPERIMENTS if planned.is_planned(experiment(f)))


def figure_scale(figure_id: str, scale: str) -> str:
    """The scale a queue at `scale` runs a figure at."""
    if scale not in QUEUE_SCALES:
        raise LengthgenError(f"a queue's scale is one of {', '.join(QUEUE_SCALES)}, got {scale!r}")
    return "test" if scale == "test" else planned.gpu_scale(experiment(figure_id))


def reproduced_ids(figure_id: str) -> list[str]:
    """The figure ids a figure's records make: its own and those that draw them."""
    return sorted({figure_id} | {f for f in EXPERIMENTS
                                 if f != figure_id and figure_id in source_ids(f)})


def _trainings(figure_id: str, scale: str) -> list | None:
    """The figure's trainings at the queue's scale (None: it has no `trainings`)."""
    module = experiment(figure_id)
    if not callable(getattr(module, "trainings", None)):
        return None
    return list(module.trainings(module.CONFIGS[figure_scale(figure_id, scale)]))


class _Candidate:
    """A figure as `order` weighs it: its trainings, and the keys of those it shares."""

    def __init__(self, figure_id: str, scale: str):
        module = experiment(figure_id)
        if not planned.is_planned(module):
            raise LengthgenError(f"{figure_id} is not a planned figure (no plan: see "
                                 f"lengthgen.runs.planned); planned: "
                                 f"{', '.join(planned_figures())}")
        self.figure_id, self.ids = figure_id, reproduced_ids(figure_id)
        self.first = bool(getattr(module, "QUEUE_FIRST", False))
        trainings = _trainings(figure_id, scale)
        # those no slice can train (`Training.deferred`) are not the queue's to bill
        self.trainings = None if trainings is None else [t for t in trainings if not t.deferred]
        self.deferred = [t for t in trainings or () if t.deferred]
        shares = callable(getattr(module, "shared_key", None)) and self.trainings is not None
        self.shared = {t.key for t in self.trainings if t.key} if shares else set()

    def minutes(self, trained: set) -> float | None:
        """H200 engine minutes of its trainings that `trained` (shared keys) leaves."""
        from lengthgen.runs import cost
        if self.trainings is None:
            return None
        left = [t for t in self.trainings if not (t.key in self.shared and t.key in trained)]
        return cost.estimate(self.figure_id, left).minutes() if left else 0.0

    def deferred_minutes(self) -> float:
        """H200 engine minutes of the trainings no slice can train (not billed)."""
        from lengthgen.runs import cost
        return cost.estimate(self.figure_id, self.deferred).minutes() if self.deferred else 0.0

    def completes(self, trained: set) -> bool:
        """Whether `trained` holds every training it has (all shared): it only scores."""
        return bool(self.shared) and all(t.key in trained for t in self.trainings)


def order(figure_ids: list[str], scale: str) -> list[dict]:
    """The queue's rows in the order it runs them (the module docstring): figure id, its
    scale, whether it goes first, the minutes the queue spends on it there and its own
    estimate, the ids it reproduces, the minutes per id, and the figure whose trainings it
    scores ("scores_for": None where it trains its own), and the runs it defers (no slice can
    train them: "deferred", and their "deferred_minutes", not billed)."""
    left = [_Candidate(f, scale) for f in dict.fromkeys(figure_ids)]
    rows: list[dict] = []
    trained: set = set()

    def row(c, spent, per_id, scores_for=None):
        return {"figure_id": c.figure_id, "scale": figure_scale(c.figure_id, scale),
                "first": c.first, "minutes": spent, "own_minutes": c.minutes(set()),
                "reproduces": c.ids, "per_id": per_id, "scores_for": scores_for,
                "deferred": sum(t.count for t in c.deferred),
                "deferred_minutes": c.deferred_minutes()}

    def weigh(c):   # (minutes per id, the figures it completes, its minutes)
        spent = c.minutes(trained)
        then = trained | c.shared
        done = [o for o in left if o is not c and not o.first and o.completes(then)]
        ids = set(c.ids).union(*(o.ids for o in done))
        return (math.inf if spent is None else spent / len(ids)), done, spent
    while left:
        heads = [c for c in left if c.first] or left
        weighed = {c.figure_id: weigh(c) for c in heads}
        best = min(heads, key=lambda c: (weighed[c.figure_id][0], c.figure_id))
        per_id, done, spent = weighed[best.figure_id]
        per_id = None if spent is None else per_id
        rows.append(row(best, spent, per_id))
        trained |= best.shared
        left.remove(best)
        for other in sorted(done, key=lambda o: o.figure_id):   # only scoring: at once
            rows.append(row(other, other.minutes(trained), per_id, best.figure_id))
            left.remove(other)
    return rows


def states_of(states: Path | None, figure_id: str) -> Path | None:
    """A figure's own folder of unfinished states under a queue's `states` folder."""
    return None if states is None else Path(states) / figure_id


def run_queue(rows: list[dict], root, device, deadline: float, *, states: Path | None = None,
              states_out: Path | None = None, lock_fd: int | None = None, stop=None,
              log=print, **options) -> dict:
    """Train the queue's figures (rows of `order`) one after another until `deadline` (a
    time.time() value) or a stop, each through `planned.run_slice` (its options pass
    through: worker, workers, graphs, compile, states_in, max_group, state_bytes, chain_s,
    rates, until_step, open_budget: by default one `runs.planner.OpenBudget` for the call's
    figures). `lock_fd`: the queue's parent holds every figure's lock (workers);
    without it each figure's slice takes its own. Returns {figure id: counts}."""
    from lengthgen.runs.planner import OpenBudget
    from lengthgen.runs.slices import STATE_BYTES, Stop, held_bytes, read_states
    stop = stop or Stop()
    done = {}
    # one hand-off budget for the open-ended jobs of every figure (runs.planner), less the
    # states of their pending jobs this call found on coming in
    if options.get("open_budget") is None:
        found = read_states([options.get("states_in")]
                            + [states_of(states, row["figure_id"]) for row in rows],
                            say=lambda *a, **k: None)
        names = {job.name for row in rows
                 for job in planned.pending(row["figure_id"], row["scale"], root)}
        options["open_budget"] = OpenBudget.of_call(
            states, states_out, options.get("state_bytes", STATE_BYTES),
            options.get("workers", 1), held_bytes(found, names))
    for row in rows:
        if stop.requested or time.time() >= deadline:
            break
        figure_id = row["figure_id"]
        done[figure_id] = planned.run_slice(
            figure_id, row["scale"], root, device, deadline, lock_fd=lock_fd, stop=stop,
            states=states_of(states, figure_id), states_out=states_of(states_out, figure_id),
            log=log, **options)
        log(json.dumps({"figure": figure_id, "scale": row["scale"], **done[figure_id]}),
            flush=True)
    return done
