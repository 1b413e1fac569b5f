"""Slices: a sweep's jobs trained by the engine in stacked groups until a deadline, by one
process or by several sharing a records folder, so that no job is lost, trained twice or
recorded from nothing.

- One slice per records folder: the lock of `figure run` (`folders.sweep_lock`), held by the
  slice's parent and inherited by its workers (an orphaned worker keeps the folder locked
  until it is gone). Workers share the jobs by claims (`.claims/<job>`), cleared only by the
  lock's holder at the start.
- Before anything is trained, every folder the slice writes is checked; a write that fails
  later stops the slice in one line, after the group's other finished members are recorded.
- States (`<job>.pt`: weights, AdamW moments, step, history) are read from a hand-off folder and
  a local one; temp files, non-files and states that do not fit their job's decoder are named
  in one line and ignored (the job starts fresh). A state at or past its job's step cap is
  scored, not trained again.
- Trained weights that planned figures share (`runs.trained`): a job of the work's
  `shared_key` whose training is in the store is scored from it, neither planned nor trained
  again; one trained to its end is stored for the next figure that studies the same model.
- A job starts only if it can finish in the time left (this call and a chained one whose
  states stay on the local disk), at the measured rates of `runs.rates`, or at the rate this
  slice measured on the shape; with neither, it starts (the old behaviour). The exception:
  a job with a stop rule whose cap no allotment holds starts open-ended while its small state
  fits in the call's part of the hand-off (`runs.planner.OpenBudget`).
- SIGTERM or SIGINT stops a slice at the next step: finished jobs are recorded and unfinished
  states kept. A parent forwards them to its workers, which die with it (PR_SET_PDEATHSIG) and
  write nothing once it is gone.
"""
from __future__ import annotations

import io
import json
import math
import os
import signal
import stat
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lengthgen.errors import LengthgenError
from lengthgen.runs.cost import job_flops, job_shape
# what comes back from a GPU machine (runs.allotment): 8 files of 16 MiB, 64 MiB in all
from lengthgen.runs.allotment import HANDOFF_BYTES, HANDOFF_FILE_BYTES, HANDOFF_FILES
from lengthgen.runs.planner import (GROUP_OVERHEAD_S, OPEN_GROUP_S, OPEN_MIN_S, OpenBudget,
                                    Planner, state_estimate)
from lengthgen.runs.rates import state_bytes as state_size

STATE_BYTES = 15 * 2 ** 20       # the old hand-off of `--states-out`, in all
PACK_KEY = "lengthgen_slice_states"  # a file holding several states (`pack_states`)
MAX_STATE_FILE = 8 * 2 ** 30
PARENT_ENV = "LENGTHGEN_SLICE_PARENT"


# ---- lock and claims ---------------------------------------------------------------------
@contextmanager
def slice_lock(folder: Path, inherited: int | None = None):
    """Hold the records folder's lock (a worker passes the descriptor its parent locked)."""
    if inherited is not None:
        yield inherited
        return
    from lengthgen.runs.folders import sweep_lock
    with sweep_lock(Path(folder)) as handle:
        yield handle.fileno()


def clear_claims(folder: Path) -> None:
    """Remove the claims of an earlier slice (only the lock's holder may)."""
    claims = Path(folder) / ".claims"
    if claims.is_dir():
        for path in claims.iterdir():
            if path.is_file() or path.is_symlink():
                path.unlink(missing_ok=True)


def claim(folder: Path, name: str) -> bool:
    """Take a job for this process (several workers share one folder)."""
    claims = Path(folder) / ".claims"
    claims.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(claims / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def check_outputs(folders: dict) -> None:
    """{what: folder or None}: one line naming the first folder the slice cannot write."""
    from lengthgen.results import check_writable
    for what, folder in folders.items():
        if folder is not None:
            check_writable(Path(folder), what)


# ---- stopping ------------------------------------------------------------------------------
class Stop:
    """Why a slice stops now: a signal it caught, or its parent gone (a worker)."""

    def __init__(self, parent: int | None = None):
        self.signal: int | None = None
        self.parent = parent

    def install(self) -> "Stop":
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._caught)
        return self

    def _caught(self, signum, frame) -> None:
        self.signal = signum

    @property
    def orphaned(self) -> bool:
        return self.parent is not None and os.getppid() != self.parent

    @property
    def requested(self) -> bool:
        return self.signal is not None or self.orphaned


class Deadline:
    """The engine's deadline, which the training loop compares with time.perf_counter() at
    every step (`now < deadline` asks `deadline.__gt__(now)`): it also passes at once when a
    stop is requested, so a signal ends a group at its next step with its state kept."""

    def __init__(self, at: float, stop: Stop):
        self.at, self.stop = at, stop

    def __gt__(self, now) -> bool:
        return not self.stop.requested and now < self.at

    def __lt__(self, now) -> bool:
        return not self.__gt__(now)


# ---- states ----------------------------------------------------------------------------------
def read_states(folders, say=print) -> dict:
    """{job name: (state, file)} from folders of `<job>.pt` files and packs (`pack_states`),
    a later folder's state winning where a job has several (the local folder is the newest).
    Temp files (`.tmp-*`) and what is not a regular file (a FIFO, a folder) are skipped
    unopened; a file that cannot be read is named in one line and skipped."""
    from lengthgen.engine.checkpoints import load_checkpoint
    found: dict = {}
    for folder in folders:
        if folder is None or not Path(folder).is_dir():
            continue
        try:
            paths = sorted(Path(folder).iterdir())
        except OSError as e:
            say(f"states: cannot list {folder} ({e.strerror}); its states are not used")
            continue
        for path in paths:
            if path.name.startswith(".") or path.suffix != ".pt":
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue   # a FIFO would block the reader: never opened
            if info.st_size > MAX_STATE_FILE:
                say(f"states: {path} is {info.st_size:,} bytes, not a state; ignored")
                continue
            try:
                loaded = load_checkpoint(path)
            except LengthgenError as e:
                say(f"states: {str(e).splitlines()[0][:300]}; ignored, the job starts fresh")
                continue
            if isinstance(loaded, dict) and PACK_KEY in loaded:
                items = loaded.get("states")
                if not isinstance(items, dict):
                    say(f"states: {path} is a pack without states; ignored")
                    continue
            else:
                items = {path.stem: loaded}
            for name, state in items.items():
                found[str(name)] = (state, path)
    return found


def keep_state(folder: Path, name: str, state: dict) -> None:
    from lengthgen.engine.checkpoints import save_checkpoint
    save_checkpoint(Path(folder) / f"{name}.pt", state)   # atomic


def serialized_size(state) -> int:
    import torch
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.tell()


def held_bytes(found: dict, names) -> int:
    """The bytes of the states found (`read_states`) that a call may hand on again: those of
    the jobs `names` still calls for, each once (its newest copy), small enough for a hand-off
    file (`runs.planner.OpenBudget`)."""
    sizes = (serialized_size(state) for name, (state, _) in found.items() if name in names)
    return sum(size for size in sizes if size <= HANDOFF_FILE_BYTES)


def save_states(folder: Path, states: dict, budget_bytes: int) -> list[str]:
    """Write unfinished jobs' states as `<job name>.pt`, smallest first, while the total stays
    within `budget_bytes`. Returns the names written."""
    written, used = [], 0
    for size, name in sorted((serialized_size(s), n) for n, s in states.items()):
        if used + size > budget_bytes:
            break
        keep_state(folder, name, states[name])
        written.append(name)
        used += size
    return written


def pack_states(states: dict, out: Path, files: int = HANDOFF_FILES,
                file_bytes: int = HANDOFF_FILE_BYTES, total_bytes: int = HANDOFF_BYTES) -> dict:
    """Pack states into at most `files` files `slice-states-K.pt` of at most `file_bytes` each,
    `total_bytes` in all, smallest first (what a GPU machine can hand to the next allotment).
    Returns {file name: [job names]}; states too large for a file are left out."""
    from lengthgen.engine.checkpoints import save_checkpoint
    room = 64 * 1024   # the pack's own bytes beside its states'
    sized = sorted((serialized_size(s), n) for n, s in states.items())
    packs: list[list] = []
    used = 0
    for size, name in sized:
        if size + room > file_bytes or used + size + room > total_bytes:
            break   # smallest first: no later state fits either
        if packs and sum(s for s, _ in packs[-1]) + size + room <= file_bytes:
            packs[-1].append((size, name))
        elif len(packs) < files and used + size + 2 * room <= total_bytes:
            packs.append([(size, name)])
            used += room
        else:
            break
        used += size
    written = {}
    for k, pack in enumerate(packs):
        path = Path(out) / f"slice-states-{k}.pt"
        save_checkpoint(path, {PACK_KEY: 1, "states": {n: states[n] for _, n in pack}})
        written[path.name] = [n for _, n in pack]
    return written



# ---- the slice loop --------------------------------------------------------------------------
@dataclass
class SliceWork:
    """What a sweep gives the slice loop. Its specs have `.name` and `.params()`."""
    folder: Path                     # the records folder (lock, claims)
    pending: Callable                # () -> the specs to train now, none recorded, cheapest first
    engine_job: Callable             # spec -> lengthgen.engine.jobs.Job
    record: Callable                 # (spec, job, model, result, group_size, started, seconds,
                                     # weights) -> None; job: the spec's engine Job, as trained;
                                     # weights: the `shared_weights` metric (runs.trained.Shared)
                                     # of a job the store shares, else None
    sampler: str = "auto"
    shared_key: Callable | None = None   # spec -> str | None: the key of a training another
                                         # work may share through the store (runs.trained)
    label: str = ""                  # who trains (a figure id): stored weights name it


class _Writes:
    """Writes that may fail: the first failure is kept, the others of a group still tried."""

    def __init__(self):
        self.failed: str | None = None

    def attempt(self, what: str, write) -> bool:
        try:
            write()
            return True
        except OSError as e:
            self.failed = self.failed or f"cannot write {what} ({e.strerror or e})"
            return False


def _usable_states(found: dict, specs: list, jobs: dict, checked: dict, say) -> dict:
    """{job name: state} for the specs whose state belongs to them and fits their decoder."""
    from lengthgen.engine.checkpoints import state_problem
    for spec in specs:
        if spec.name in checked or spec.name not in found:
            continue
        state, path = found[spec.name]
        problem = None
        if isinstance(state, dict) and "job" in state and state["job"] != spec.params():
            problem = "belongs to another job"
        else:
            problem = state_problem(state, jobs[spec.name].build()[1])
        if problem:
            say(f"states: {path} ({spec.name}) {problem}; ignored, the job starts fresh")
        # a state at step 0 (a slice stopped before its first step) is a fresh job: it trains
        # with the fresh jobs of its shape, whose group starts no member from a state
        checked[spec.name] = None if problem or state["step"] == 0 else state
    return {s.name: checked[s.name] for s in specs if checked.get(s.name) is not None}


def _score_state(spec, job, state):
    """A state at or past its job's cap: the decoder it holds and its training's result."""
    from lengthgen.engine.settings import TrainResult
    _, model = job.build()
    model.load_state_dict(state["model"])
    history = list(state["history"])
    last = history[-1] if history else {}
    return model, TrainResult(steps=state["step"], stopped_early=False,
                              final_accuracy=last.get("accuracy"),
                              wall_time_s=float(state["elapsed"]), history=history)


def _choose(pending, jobs, resumable, worker, left, planner, max_group, until_step, take,
            open_ended=lambda job, available, resumed: 0):
    """The next group this worker trains: (its specs, the step it starts at, how many planned
    jobs were refused as unable to finish in `left` seconds (or `left(job)`, by the group's
    first job), whether the group is open-ended).
    Jobs group by the engine's key and their start step; resumed groups come first (their work
    is half done), then fresh ones cheapest first from this worker's own shape; of a group, the
    most jobs (fewest steps first) that finish together, each taken by a claim (`take`), or,
    where none can, as many as `open_ended(job, available, resumed)` allows (runs.planner:
    jobs with a stop rule whose cap no allotment holds, their states handed on)."""
    from lengthgen.engine.jobs import group_key
    groups: dict = {}
    for spec in pending:
        start = resumable[spec.name]["step"] if spec.name in resumable else 0
        groups.setdefault(group_key(jobs[spec.name]) + (start,), []).append(spec)
    resumed = [k for k in groups if k[-1] > 0]
    fresh = [k for k in groups if k[-1] == 0]
    at = worker % len(fresh) if fresh else 0
    # jobs whose host work this process keeps first (a set of words drawn already), so that
    # each set is drawn once (`Planner.keeps`)
    fresh = sorted(fresh[at:] + fresh[:at],
                   key=lambda k: not planner.keeps(jobs[groups[k][0].name]))
    refused = 0
    for key in resumed + fresh:
        first = key[-1]   # the step the group starts at (its members share it)
        specs = sorted(groups[key], key=lambda s: jobs[s.name].train.steps)
        remaining = [jobs[s.name].train.steps - first for s in specs]
        if until_step is not None:
            remaining = [min(r, until_step - first) for r in remaining]
        # a job alone is a group of its own (engine.jobs.group_key); its host work (drawing
        # its words) is done once per process and word set (a resumed job in a new process
        # draws again)
        head = jobs[specs[0].name]
        flops = max(job_flops(jobs[s.name]) for s in specs)   # a group pads to its longest
        room = left(head) if callable(left) else left
        n = planner.largest(job_shape(head), remaining, room, max_group, head.alone,
                            planner.host_seconds(head), flops)
        opened = n == 0
        if opened:
            n = open_ended(head, min(len(specs), max_group), first > 0)
        refused += len(specs) - n
        chosen = [spec for spec in specs[:n] if take(spec.name)]
        if chosen:
            return chosen, first, refused, opened
    return [], 0, refused, False


def run_slice(work: SliceWork, device, deadline: float, *, worker: int = 0,
              max_group: int = 256, graphs: bool = False, compile: bool | str = False,
              states: Path | None = None,
              states_in: Path | None = None, states_out: Path | None = None,
              state_bytes: int = STATE_BYTES, chain_s: float = 0.0, rates=None,
              until_step: int | None = None, share: int = 1, stop: Stop | None = None,
              trained: Path | None = None, open_budget: OpenBudget | None = None,
              log=print) -> dict:
    """Train the work's jobs until `deadline` (a time.time() value), a stop, or nothing is
    left; record each finished job at once. states: the local folder of every unfinished
    state (read, and written without a size limit); states_in: states handed on from an
    earlier allotment; states_out: the old hand-off, `state_bytes` in all. chain_s: seconds of
    a chained call after this one (counted only with `states`). rates: a `runs.rates` table;
    share: the slice's workers on the card (`Planner`). until_step ends every group at that
    step (tests). compile: each step through torch.compile (`engine.compiled`; the prepared
    GPU script passes it only where the card's compile tests pass). trained: the folder of
    the store of trained weights (`runs.trained`; by default its `default_folder`), for work
    with a `shared_key`. open_budget: the hand-off bytes open-ended jobs may fill
    (`runs.planner.OpenBudget`; a queue passes one to all its figures; by default this call's
    own). Returns counts."""
    import torch

    from lengthgen.engine.jobs import train_jobs
    from lengthgen.results import run_started
    from lengthgen.runs.trained import Shared
    stop = stop or Stop()
    folder = Path(work.folder)

    def say(text):
        log(json.dumps({"worker": worker, "note": text}), flush=True)
    counts = {"recorded": 0, "unfinished": 0, "groups": 0, "resumed": 0, "from_states": 0,
              "not_started": 0}
    found = read_states([states_in, states], say)
    checked: dict = {}
    unfinished: dict = {}
    writes = _Writes()
    cuda = torch.device(device).type == "cuda"
    last = states is None or chain_s <= 0   # no chained call after this one

    # a job whose state no hand-off file can hold must finish in this allotment: every call
    # plans it at the rate divided among the workers (a chained call plans it so too)
    def careful(shape) -> bool:
        return state_size(shape) > HANDOFF_FILE_BYTES

    def left_for(head) -> float:   # the seconds a group of this first job may train
        here = deadline - time.time()
        if last:
            return here
        if careful(job_shape(head)):   # the chained call, a new process, draws its host work
            #                            and starts its group again before it resumes it
            return here + max(0.0, chain_s - head.host_seconds - GROUP_OVERHEAD_S)
        return here + chain_s
    planner = Planner(rates, graphs and cuda, share, careful)
    # open-ended jobs (runs.planner) start while the states this worker would hand on fit in
    # its part of the hand-off (a queue's figures share one budget); resumed ones go on
    budget = open_budget if open_budget is not None else OpenBudget.of_call(
        states, states_out, state_bytes, share,
        held_bytes(found, {s.name for s in work.pending()}))

    def open_ended(job, available: int, resumed: bool) -> int:
        if deadline - time.time() < OPEN_MIN_S:   # a new group would train next to nothing
            return 0
        return planner.open_ended(job, available, math.inf if resumed else budget.left(),
                                  HANDOFF_FILE_BYTES if budget.total > 0 else 0)
    shared = Shared(work.shared_key, work.label, trained, device, say)

    def take(name: str) -> bool:   # a claim that cannot be written stops the slice
        taken = []
        writes.attempt(f"the claim of {name} into {folder / '.claims'}",
                       lambda: taken.append(claim(folder, name)))
        return bool(taken and taken[0])

    def take_to_train(name: str) -> bool:   # a shared training: none that another trains now
        if writes.failed or not shared.lock(name):
            return False
        # stored by another worker since this one looked: scored next time round, not trained
        if shared.found(name, jobs[name]):
            shared.unlock(name)
            return False
        if take(name):
            return True
        shared.unlock(name)
        return False

    def handed_on(name: str) -> None:   # a finished job's state is handed on to nobody
        if states is not None and name in found:
            try:
                (Path(states) / f"{name}.pt").unlink(missing_ok=True)
            except OSError:
                pass
    while not stop.requested and not writes.failed and time.time() < deadline:
        pending = [s for s in work.pending() if s.name not in unfinished]
        if not pending:
            break
        jobs = {s.name: work.engine_job(s) for s in pending}
        resumable = _usable_states(found, pending, jobs, checked, say)
        done = next((s for s in pending if s.name in resumable
                     and resumable[s.name]["step"] >= jobs[s.name].train.steps
                     and take(s.name)), None)
        if done is not None:   # trained to its cap already: scored, not trained again
            model, result = _score_state(done, jobs[done.name], resumable[done.name])
            started = run_started(str(device), torch.get_num_threads())
            weights = shared.keep(done, jobs[done.name], model, result)
            if not stop.orphaned and writes.attempt(
                    f"the record of {done.name} into {folder}",
                    lambda: work.record(done, jobs[done.name], model, result, 1, started,
                                        0.0, weights)):
                counts["recorded"] += 1
                counts["from_states"] += 1
            continue
        # trained already, by this work or another (runs.trained): scored, not planned
        # (scoring may need the job's host work too, its words, drawn again where this process
        # no longer keeps them: it starts only with that time left in this call, and a stored
        # job left for want of it is never trained again; nor is it counted as drawn after)
        reused, waiting = shared.first(
            pending, jobs, lambda name: (folder / ".claims" / name).exists(), take,
            fits=lambda job: planner.host_seconds(job) <= deadline - time.time(),
            kept=planner.keeps)
        if reused is not None:
            spec, (model, result, weights) = reused
            started, t0 = run_started(str(device), torch.get_num_threads()), time.perf_counter()
            if not stop.orphaned and writes.attempt(
                    f"the record of {spec.name} into {folder}",
                    lambda: work.record(spec, jobs[spec.name], model, result, 1, started,
                                        time.perf_counter() - t0, weights)):
                counts["recorded"] += 1
                counts["reused_weights"] = counts.get("reused_weights", 0) + 1
                handed_on(spec.name)
            continue
        if waiting:   # (their count: the most left at once)
            counts["stored_left"] = max(counts.get("stored_left", 0), len(waiting))
            pending = [s for s in pending if s.name not in waiting]
        left = deadline - time.time() + (chain_s if states is not None else 0.0)
        chosen, first, refused, opened = _choose(pending, jobs, resumable, worker, left_for,
                                                 planner, max_group, until_step,
                                                 take_to_train, open_ended)
        if writes.failed:
            break
        if not chosen:
            if refused:
                counts["not_started"] = refused
                say(f"{refused} planned job(s) not started: they cannot finish in the "
                    f"{max(left, 0):.0f} s left at the measured rates")
            break   # every planned job is taken by another worker, or cannot finish
        resume = {i: resumable[s.name] for i, s in enumerate(chosen) if s.name in resumable}
        resume_names = {s.name for s in chosen if s.name in resumable}
        counts["resumed"] += len(resume)
        started = run_started(str(device), torch.get_num_threads())
        t0 = time.perf_counter()
        try:
            # the host work first (a Dyck job's words), timed apart: the rate measured below
            # is the steps' alone, host work being counted by Job.host_seconds, once a key
            for spec in chosen:
                if jobs[spec.name].host_work is not None:
                    jobs[spec.name].host_work()
            host_s = time.perf_counter() - t0
            outcomes = train_jobs([jobs[s.name] for s in chosen], device,
                                  sampler=work.sampler, until_step=until_step, resume=resume,
                                  deadline=Deadline(time.perf_counter() + min(
                                      deadline - time.time(),
                                      OPEN_GROUP_S if opened else math.inf), stop),
                                  max_group=max_group, graphs=graphs, compile=compile)
        except Exception as e:   # one failed group costs its jobs, not the slice's other work
            counts["failed_groups"] = counts.get("failed_groups", 0) + 1
            say(f"{type(e).__name__}: {e}"[:300] + f" (jobs {[s.name for s in chosen]})")
            if cuda and "out of memory" in str(e).lower():
                torch.cuda.empty_cache()
            shared.unlock_all(chosen)
            continue
        seconds = time.perf_counter() - t0
        counts["groups"] += 1
        reached = max([o.result.steps if o.result is not None else o.state["step"]
                       for o in outcomes if o.result is not None or o.state is not None],
                      default=first)
        planner.measure(job_shape(jobs[chosen[0].name]), len(chosen), reached - first,
                        seconds - host_s, jobs[chosen[0].name].alone)
        for spec in chosen:   # their host work (a Dyck job's words) is done in this process
            planner.started(jobs[spec.name])
        if stop.orphaned:   # the parent is gone: whoever ran it has packed what it had
            break
        for spec, outcome in zip(chosen, outcomes):
            if outcome.result is not None:
                weights = shared.keep(spec, jobs[spec.name], outcome.model, outcome.result)

                def write(spec=spec, outcome=outcome, weights=weights):
                    work.record(spec, jobs[spec.name], outcome.model, outcome.result,
                                outcome.group_size, started, time.perf_counter() - t0, weights)
                if writes.attempt(f"the record of {spec.name} into {folder}", write):
                    counts["recorded"] += 1
                    handed_on(spec.name)
                continue
            counts["unfinished"] += 1
            if outcome.state is not None:
                unfinished[spec.name] = {**outcome.state, "job": spec.params()}
                if opened:
                    counts["open_ended_left"] = counts.get("open_ended_left", 0) + 1
                    if spec.name not in resume_names:   # a found state is counted already
                        budget.keep((work.label, spec.name), max(
                            serialized_size(unfinished[spec.name]),
                            state_estimate(jobs[spec.name])))
                if states is not None:
                    writes.attempt(f"the state of {spec.name} into {states}",
                                   lambda spec=spec: keep_state(states, spec.name,
                                                                unfinished[spec.name]))
            # its claim stays: no other worker starts it again from nothing (the next slice,
            # holding the lock, clears the claims and resumes it from its state)
        shared.unlock_all(chosen)   # their weights are in the store: no other need wait
        log(json.dumps({"worker": worker, "shape": job_shape(jobs[chosen[0].name]),
                        "jobs": len(chosen), **counts, "seconds": round(seconds, 1)}),
            flush=True)
    if states_out is not None and unfinished and not stop.orphaned:
        kept: list = []
        writes.attempt(f"states into {states_out}", lambda: kept.extend(
            save_states(states_out, unfinished, state_bytes)))
        counts["states_kept"] = len(kept)
    if writes.failed:
        raise LengthgenError(f"{writes.failed}; the slice stopped there: {counts['recorded']} "
                             f"job(s) recorded by it are kept; free space (or make the folder "
                             f"writable) and run the slice again")
    if stop.signal is not None:
        counts["stopped_by"] = signal.Signals(stop.signal).name
    return counts


# ---- worker processes -------------------------------------------------------------------------
def _die_with_parent() -> None:   # runs in the child between fork and exec
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):   # not Linux: the workers' own check of the parent
        pass


def run_workers(argv: list, workers: int, lock_fd: int) -> tuple[list, int | None]:
    """Start `workers` processes `argv + ["--worker", w, "--lock-fd", fd]` that inherit the
    locked descriptor, forward SIGTERM and SIGINT to them, and wait for all. Returns (exit
    codes, the signal that stopped the slice or None)."""
    stop = Stop().install()
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    procs = [subprocess.Popen(argv + ["--worker", str(w), "--lock-fd", str(lock_fd)],
                              pass_fds=(lock_fd,), env=env, preexec_fn=_die_with_parent)
             for w in range(workers)]
    forwarded = None
    while any(p.poll() is None for p in procs):
        if stop.signal is not None and forwarded != stop.signal:
            forwarded = stop.signal
            for p in procs:
                if p.poll() is None:
                    p.send_signal(stop.signal)
        time.sleep(0.1)
    return [p.returncode for p in procs], stop.signal


def worker_stop() -> Stop:
    """The Stop of a worker process: its signals, and its parent's pid (PARENT_ENV)."""
    parent = os.environ.get(PARENT_ENV)
    stop = Stop(int(parent) if parent and parent.isdigit() else None).install()
    if stop.orphaned:   # the parent died before this worker started
        stop.signal = signal.SIGTERM
    return stop
