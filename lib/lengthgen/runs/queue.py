"""A GPU queue: the planned figures (`runs.planned`) that one slice of device time trains, in
order, each filling the time the ones before it left.

The order (`order`): the figures that say QUEUE_FIRST (the Fig. 1 paper-budget sweep) first;
then the others, cheapest per reproduced id first. A figure's cost is the H200 engine minutes
of the config the queue runs (`runs.cost.estimate` of its `trainings(config)`: the same
estimate as `figure cost`), and the ids it reproduces are its own and every figure that draws
its records (SOURCE); a figure with no `trainings` has no estimate and goes last. Ties by id.

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


def minutes(figure_id: str, scale: str) -> float | None:
    """H200 engine minutes of the figure's config at the queue's scale (None: no estimate)."""
    from lengthgen.runs import cost
    module = experiment(figure_id)
    if not callable(getattr(module, "trainings", None)):
        return None
    config = module.CONFIGS[figure_scale(figure_id, scale)]
    return cost.estimate(figure_id, module.trainings(config)).minutes()


def order(figure_ids: list[str], scale: str) -> list[dict]:
    """The queue's rows in the order it runs them: figure id, its scale, whether it goes
    first, its estimated minutes, the ids it reproduces and the minutes per id."""
    rows = []
    for figure_id in figure_ids:
        module = experiment(figure_id)
        if not planned.is_planned(module):
            raise LengthgenError(f"{figure_id} is not a planned figure (no plan: see "
                                 f"lengthgen.runs.planned); planned: "
                                 f"{', '.join(planned_figures())}")
        spent = minutes(figure_id, scale)
        ids = reproduced_ids(figure_id)
        rows.append({"figure_id": figure_id, "scale": figure_scale(figure_id, scale),
                     "first": bool(getattr(module, "QUEUE_FIRST", False)), "minutes": spent,
                     "reproduces": ids,
                     "per_id": None if spent is None else spent / len(ids)})
    return sorted(rows, key=lambda r: (not r["first"],
                                       math.inf if r["per_id"] is None else r["per_id"],
                                       r["figure_id"]))


def states_of(states: Path | None, figure_id: str) -> Path | None:
    """A figure's own folder of unfinished states under a queue's `states` folder."""
    return None if states is None else Path(states) / figure_id


def run_queue(rows: list[dict], root, device, deadline: float, *, states: Path | None = None,
              states_out: Path | None = None, lock_fd: int | None = None, stop=None,
              log=print, **options) -> dict:
    """Train the queue's figures (rows of `order`) one after another until `deadline` (a
    time.time() value) or a stop, each through `planned.run_slice` (its options pass
    through: worker, workers, graphs, compile, states_in, max_group, state_bytes, chain_s,
    rates, until_step). `lock_fd`: the queue's parent holds every figure's lock (workers);
    without it each figure's slice takes its own. Returns {figure id: counts}."""
    from lengthgen.runs.slices import Stop
    stop = stop or Stop()
    done = {}
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
