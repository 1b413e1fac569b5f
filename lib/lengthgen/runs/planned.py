"""Planned figures: runs that a plan calls for from the records, trained by the engine in slices
(`lengthgen.runs.slices`), each finished one written at once as an ordinary record of the figure.

A planned figure (`lengthgen.runs.contract`) offers

    plan(config, records) -> jobs    what the records ({run name: record}) call for now,
                                     cheapest first; a job has `.name` and `.params()` (a dict
                                     with that "name"); recorded ones are left out here
    spec(params) -> job              the job of a record's params: a record is a registered
                                     run of the figure when `spec(params).params() == params`
    engine_job(job, config)          the engine's Job that trains it (lengthgen.engine.jobs),
                                     or None for a job that trains nothing (a closed-form
                                     reference beside the trained models): a slice scores it
                                     at its start, `score(None, job, None, config, device, 0)`
                                     (`record_untrained`), and no queue bills it
    score(model, job, result, config, device, group_size) -> dict   a finished job's metrics

and, optionally,

    deferred(config, records) -> jobs   what the records call for but no slice can train (too
                                     long for one): left, so the figure is not complete
    shared_key(job, config) -> str | None   the key of a training that other planned figures'
                                     jobs call for too (equal keys: the same training), or
                                     None for a job of its own; a slice then scores a job whose
                                     weights another figure's slice (or an earlier one) has
                                     trained, and stores those it trains (`runs.trained`: what
                                     the store adds to the key, where it lives). Its
                                     `trainings(config)` key the same trainings by the same
                                     string, so that a GPU queue counts them once
                                     (`runs.queue`); a record scored on weights another run
                                     trained says so in its metric `shared_weights`

so a plan may depend on what earlier jobs found (the paper-budget sweep selects a setting from
its seed-0 trainings, then trains its seeds). A figure that runs its own fixed runs becomes
planned with `plan = planned.plan_runs(runs)` and `spec = planned.Run`: its runs not yet
recorded. Its records, the folder they live in (results/<FIGURE_ID>/<scale>/), their provenance
and the sweep marker are those of every figure: while the plan still calls for jobs, the folder's
SWEEP_IN_PROGRESS marker lists the records done (rewritten by the slice that holds the folder's
lock, at its start and its end), and once the plan is empty and nothing is deferred it is
removed.

Scales: a planned figure's CONFIGS has "test" and any of "book", "paper" and "gpu" (the
paper's budget on a GPU, for a figure whose GPU protocol is not its paper config: the
APE vs NoPE sweep). A GPU queue runs each figure at `gpu_scale`.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from lengthgen.errors import LengthgenError
from lengthgen.runs.registry import experiment


def is_planned(module) -> bool:
    return callable(getattr(module, "plan", None))


@dataclass(frozen=True)
class Run:
    """A job of a figure that plans by its fixed runs: one dict of params with a "name"."""
    run: dict

    @property
    def name(self) -> str:
        return self.run["name"]

    def params(self) -> dict:
        return dict(self.run)

    def __hash__(self):
        return hash(self.name)


def plan_runs(runs):
    """The plan of a figure with fixed runs: `runs(config)` not yet recorded, as `Run`s."""
    def plan(config: dict, records: dict) -> list[Run]:
        return [Run(p) for p in runs(config) if p["name"] not in records]
    return plan


def gpu_scale(module) -> str:
    """The scale a GPU queue runs a planned figure at: its "gpu" config where it has one,
    else its "paper" config."""
    return "gpu" if "gpu" in module.CONFIGS else "paper"


def folder(figure_id: str, scale: str, root=None) -> Path:
    from lengthgen.results import results_dir
    return Path(root if root is not None else results_dir()) / figure_id / scale


def job_records(figure_id: str, scale: str, root=None) -> dict:
    """{run name: record} of a planned figure at a scale (each checked as it loads)."""
    from lengthgen.results import load_records
    module = experiment(figure_id)
    return {r["run_name"]: r for r in load_records(figure_id, scale, root,
                                                  getattr(module, "check_record", None))}


def pending(figure_id: str, scale: str, root=None, records: dict | None = None) -> list:
    """The jobs the records call for now and that have none, in the plan's order."""
    module = experiment(figure_id)
    records = job_records(figure_id, scale, root) if records is None else records
    return [j for j in module.plan(module.CONFIGS[scale], records) if j.name not in records]


def deferred(figure_id: str, scale: str, root=None, records: dict | None = None) -> list:
    """The jobs the records call for that no slice can train (the figure's `deferred`, where it
    has one) and that have no record: left, not done."""
    module = experiment(figure_id)
    if not callable(getattr(module, "deferred", None)):
        return []
    records = job_records(figure_id, scale, root) if records is None else records
    return [j for j in module.deferred(module.CONFIGS[scale], records) if j.name not in records]


def write_job_record(figure_id: str, scale: str, root, job, config: dict, metrics: dict,
                     started: dict, wall_time_s: float) -> Path:
    """A finished job's record, as `figure run` writes a run's (runs.execute)."""
    from lengthgen.results import run_finished, write_record
    params = job.params()
    record = {"figure_id": figure_id, "run_name": job.name, "task": params.get("task"),
              "config": config, "params": params, "scale": scale, "seed": params.get("seed"),
              "metrics": metrics, **run_finished(started, wall_time_s)}
    return write_record(record, root)


def slice_work(figure_id: str, scale: str, root, device, graphs: bool = False,
               compile: bool | str = False):
    """A planned figure as the slice loop's work: jobs planned from the records, each
    finished one scored by the figure and written as its record."""
    import torch

    from lengthgen.runs.slices import SliceWork
    module = experiment(figure_id)
    config = module.CONFIGS[scale]

    def record(job, trained, model, result, group_size, started, seconds, weights=None):
        metrics = module.score(model, job, result, config, device, group_size)
        if weights is not None:   # the store's key, the run that trained them, and whether
            metrics["shared_weights"] = weights   # this record read them from the store
        # a job trained alone (engine.jobs) steps eagerly, as train() does: neither applies
        # (`trained`: the engine Job the slice built for it, not built again here)
        stacked = not trained.alone
        metrics["cuda_graphs"] = bool(graphs) and torch.device(device).type == "cuda" \
            and stacked
        if compile and stacked:   # which step ran: torch.compile rounds a little differently
            metrics["compiled"] = True
        write_job_record(figure_id, scale, root, job, config, metrics, started, seconds)
    shared_key = getattr(module, "shared_key", None)
    # a job that trains nothing is no slice's to train (record_untrained scores it)
    return SliceWork(folder(figure_id, scale, root),
                     lambda: [j for j in pending(figure_id, scale, root)
                              if module.engine_job(j, config) is not None],
                     lambda job: module.engine_job(job, config), record,
                     sampler=config.get("sampler", "auto"),
                     shared_key=None if shared_key is None else
                     (lambda job: shared_key(job, config)), label=figure_id)


def record_untrained(figure_id: str, scale: str, root, device, deadline: float = math.inf,
                     stop=None, log=print) -> dict:
    """Score and record the pending jobs that train nothing (`engine_job` None: a closed-form
    reference), each taken by a claim so that one worker of several scores it, until
    `deadline` or a stop. Counts: "recorded", and "failed_groups" for one whose scoring
    failed (its claim stays: the next slice, holding the lock, clears it and tries again)."""
    import time

    import torch

    from lengthgen.results import run_started
    from lengthgen.runs import slices
    module = experiment(figure_id)
    config = module.CONFIGS[scale]
    where = folder(figure_id, scale, root)
    counts = {"recorded": 0}
    for job in pending(figure_id, scale, root):
        if (stop is not None and stop.requested) or time.time() >= deadline:
            break
        if module.engine_job(job, config) is not None:
            continue
        try:
            if not slices.claim(where, job.name):
                continue   # another worker scores it
            started, t0 = run_started(str(device), torch.get_num_threads()), time.perf_counter()
            metrics = module.score(None, job, None, config, device, 0)
        except Exception as e:   # one job's failure, not the slice's: said, and counted
            counts["failed_groups"] = counts.get("failed_groups", 0) + 1
            log(json.dumps({"note": f"{type(e).__name__}: {e}"[:300] + f" (job {job.name}, "
                                    f"which trains nothing)"}), flush=True)
            continue
        try:
            write_job_record(figure_id, scale, root, job, config, metrics, started,
                             time.perf_counter() - t0)
        except OSError as e:
            raise LengthgenError(f"cannot write the record of {job.name} into {where} "
                                 f"({e.strerror or e}); free space (or make the folder "
                                 f"writable) and run the slice again") from None
        counts["recorded"] += 1
    return counts


def _merged(counts: dict, untrained: dict) -> dict:
    """A slice's counts with those of its jobs that train nothing added."""
    out = {**counts, "recorded": counts.get("recorded", 0) + untrained["recorded"]}
    if untrained.get("failed_groups"):
        out["failed_groups"] = out.get("failed_groups", 0) + untrained["failed_groups"]
    return out


def refresh(figure_id: str, scale: str, root=None) -> bool:
    """The folder's sweep marker, as every figure's: listing the records done while the plan
    still calls for jobs or defers some, gone once neither is left. Only the lock's holder
    calls it. Returns whether the figure is complete: every job it calls for recorded."""
    from lengthgen.runs.folders import IN_PROGRESS, refresh_marker
    where = folder(figure_id, scale, root)
    records = job_records(figure_id, scale, root)
    complete = bool(records) and not pending(figure_id, scale, root, records) \
        and not deferred(figure_id, scale, root, records)
    if complete:
        (where / IN_PROGRESS).unlink(missing_ok=True)
    elif records:
        refresh_marker(where, create=True)
    return complete


def run_slice(figure_id: str, scale: str, root, device, deadline: float, *, worker: int = 0,
              workers: int = 1, lock_fd: int | None = None, graphs: bool = False,
              compile: bool | str = False, **options) -> dict:
    """Train a planned figure's jobs until `deadline` (a time.time() value) or until nothing is
    left that can finish by then, writing each finished job's record as soon as its group
    ends (`runs.slices.run_slice`, whose options pass through: states, states_in, states_out,
    max_group, state_bytes, chain_s, rates, until_step, stop, trained, log). Worker w of `workers`
    starts at the w-th cheapest shape. A whole slice (no `lock_fd`: the descriptor a worker's
    parent locked) checks its outputs, takes the records folder's lock, clears an earlier
    slice's claims and refreshes the folder's marker at its start and end. Returns counts,
    with "deferred": the jobs left that no slice can train, where there are any."""
    from lengthgen.runs import slices
    work = slice_work(figure_id, scale, root, device, graphs, compile)
    train = functools.partial(slices.run_slice, work, device, deadline, worker=worker,
                              share=workers, graphs=graphs, compile=compile, **options)

    def run():   # the jobs that train nothing first: seconds on the host
        untrained = record_untrained(figure_id, scale, root, device, deadline,
                                     options.get("stop"), options.get("log", print))
        return _merged(train(), untrained)
    if lock_fd is not None:
        return _with_deferred(run(), figure_id, scale, root)
    slices.check_outputs({"the slice's records": work.folder, "states": options.get("states"),
                          "the states to hand on": options.get("states_out")})
    with held(figure_id, scale, root):
        return _with_deferred(run(), figure_id, scale, root)


def _with_deferred(counts: dict, figure_id: str, scale: str, root) -> dict:
    left = deferred(figure_id, scale, root)
    return {**counts, "deferred": len(left)} if left else counts


class held:
    """The lock of a planned figure's records folder, taken by a whole slice (or queue): its
    earlier slice's claims cleared and stale temp files removed at the start, the marker
    refreshed at the start and the end."""

    def __init__(self, figure_id: str, scale: str, root=None):
        self.figure_id, self.scale, self.root = figure_id, scale, root
        self._lock = None

    def __enter__(self) -> int:
        from lengthgen.results import remove_stale_temp_files
        from lengthgen.runs import slices
        where = folder(self.figure_id, self.scale, self.root)
        self._lock = slices.slice_lock(where)
        fd = self._lock.__enter__()
        try:
            slices.clear_claims(where)
            remove_stale_temp_files(where)
            refresh(self.figure_id, self.scale, self.root)
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return fd

    def __exit__(self, *exc):
        try:
            refresh(self.figure_id, self.scale, self.root)
        finally:
            self._lock.__exit__(*exc)


def run_to_end(figure_id: str, scale: str, device, root=None, log=None) -> list[dict]:
    """Every job the plan calls for, trained until the plan is empty (what `figure run` does
    for a planned figure without runs of its own); the records, by run name."""
    from lengthgen.runs import slices
    quiet = log or (lambda *a, **k: None)
    slices.check_outputs({"the figure's records": folder(figure_id, scale, root)})
    with held(figure_id, scale, root):
        untrained = record_untrained(figure_id, scale, root, device, log=quiet)
        counts = _merged(slices.run_slice(slice_work(figure_id, scale, root, device), device,
                                          math.inf, log=quiet), untrained)
    if counts.get("failed_groups"):
        raise LengthgenError(f"{figure_id}/{scale}: {counts['failed_groups']} group(s) of "
                             f"jobs failed; the others are recorded (run it again to retry)")
    left = pending(figure_id, scale, root)
    if left:
        raise LengthgenError(f"{figure_id}/{scale}: {len(left)} planned job(s) not trained "
                             f"(first: {left[0].name})")
    left = deferred(figure_id, scale, root)
    if left:
        raise LengthgenError(f"{figure_id}/{scale}: {len(left)} job(s) deferred, too long for "
                             f"a slice (first: {left[0].name}); the others are recorded, and "
                             f"the figure is not complete")
    records = job_records(figure_id, scale, root)
    return [records[name] for name in sorted(records)]

