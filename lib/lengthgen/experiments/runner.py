"""How a figure's runs are executed: one description of a run, several ways to execute it.

A `RunSpec` names everything a run needs (figure id, scale, the run's params, the figure's
config, device, torch threads). `execute(unit)` computes one unit (a run, or the runs of one
"group" trained together) and writes its records atomically, with provenance read at the start.
Whoever calls `execute` (this process, a pool of worker processes, a cluster) produces the same
records: only the provenance fields that say where it ran (host, workers, dates) can differ.

The sweep as a whole (`run`):
- holds a lock per figure and scale, so two sweeps of the same figure do not both do the work;
- checks that the results folder is writable before computing anything;
- skips runs whose record exists with the same params and config (a killed sweep resumes:
  records are renamed into place whole, so nothing is half-written; stale temp files of a
  killed writer are removed);
- sets torch's thread count in every run (float rounding depends on it) and refuses to resume
  a sweep whose records were computed with another thread count;
- records a run that raises as a failure, goes on with the others, and reports every failure
  with its run's name at the end.
"""
import fcntl
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lengthgen.config import get_device, get_scale, torch_threads
from lengthgen.errors import LengthgenError

DEFAULT_THREADS = 1  # tiny models: one thread per run, parallelism across runs (README)
THREADS_PER_CORE = 4  # the most torch threads per run on this machine, per CPU core


@dataclass(frozen=True)
class RunSpec:
    """One run, described completely enough to execute anywhere."""
    figure_id: str
    scale: str
    params: dict
    config: dict
    device: str = "cpu"
    threads: int = DEFAULT_THREADS
    workers: int = 1
    root: str | None = None  # results folder (None: the default results_dir())
    # --force: caches written before this time (time.time()) are not reused by the run
    fresh_after: float | None = None

    @property
    def name(self) -> str:
        return self.params["name"]


@dataclass
class Outcome:
    """What executing one unit gave: records written, or the error of each of its runs."""
    records: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # (run name, one-line message)


def plan(figure_id: str, scale: str, device: str = "cpu", threads: int = DEFAULT_THREADS,
         workers: int = 1, root=None, fresh_after: float | None = None) -> list[RunSpec]:
    """The runs of a figure at a scale, in the module's order."""
    from lengthgen.experiments import experiment
    module = experiment(figure_id)
    config = module.CONFIGS[scale]
    return [RunSpec(figure_id, scale, params, config, str(device), threads, workers,
                    None if root is None else str(root), fresh_after)
            for params in module.runs(config)]


_fresh_after: float | None = None
PREFLIGHT: dict = {}   # module name -> check(): what a module's runs need, checked before any run


def preflight(check):
    """Register check() (raising LengthgenError) to run before any run of a figure whose module
    uses a name of check's module: e.g. the Dyck model cache must be writable before hours of
    training, not after."""
    PREFLIGHT[check.__module__] = check
    return check


def _preflight(module) -> None:
    used = {getattr(value, "__module__", None) for value in vars(module).values()}
    for owner, check in PREFLIGHT.items():
        if owner in used or owner == module.__name__:
            check()


def cache_fresh_after() -> float | None:
    """For caches shared between runs (the trained Dyck models): a time (time.time()) before
    which a cache entry must not be reused, because the sweep runs with --force; else None."""
    return _fresh_after


@contextmanager
def _freshness(when: float | None):
    global _fresh_after
    before, _fresh_after = _fresh_after, when
    try:
        yield
    finally:
        _fresh_after = before


def units(specs: list[RunSpec]) -> list[list[RunSpec]]:
    """Runs that share params["group"] form one unit (in first-seen order); others stand alone."""
    grouped, order = {}, []
    for spec in specs:
        key = spec.params.get("group")
        key = ("run", spec.name) if key is None else ("group", key)
        if key not in grouped:
            grouped[key] = []
            order.append(key)
        grouped[key].append(spec)
    return [grouped[key] for key in order]


def execute(unit: list[RunSpec], write: bool = True) -> Outcome:
    """Compute one unit and write its records; errors are caught per unit, never raised.

    write=False returns the records unwritten, for an executor whose workers cannot see the
    results folder (a cluster): the caller then writes them with `save`.
    """
    from lengthgen.experiments import experiment
    from lengthgen.results import run_finished, run_started, write_record
    first = unit[0]
    module = experiment(first.figure_id)
    root = None if first.root is None else Path(first.root)
    outcome = Outcome()
    try:
        with torch_threads(first.threads), _freshness(first.fresh_after):
            started = run_started(first.device, first.threads, first.workers)
            start = time.perf_counter()
            if len(unit) > 1 and hasattr(module, "run_group"):
                metrics = module.run_group([s.params for s in unit], first.config, first.device)
                if len(metrics) != len(unit):
                    raise LengthgenError(f"run_group returned {len(metrics)} results for "
                                         f"{len(unit)} runs")
            else:
                metrics = []
                for spec in unit:
                    metrics.append(module.run_one(spec.params, spec.config, spec.device))
            wall = (time.perf_counter() - start) / len(unit)
        for spec, values in zip(unit, metrics):
            record = {"figure_id": spec.figure_id, "run_name": spec.name,
                      "task": spec.params.get("task"), "config": spec.config,
                      "params": spec.params, "scale": spec.scale, "seed": spec.params.get("seed"),
                      "metrics": values, **run_finished(started, wall)}
            if write:
                write_record(record, root)
            outcome.records.append(record)
    except Exception as e:  # one failing run must not sink the sweep: report it by name
        message = str(e).splitlines()[0] if str(e) else ""
        if not isinstance(e, LengthgenError):
            message = f"{e.__class__.__name__}: {message}"
            if os.environ.get("LENGTHGEN_DEBUG"):
                traceback.print_exc()
        outcome.errors.extend((spec.name, message) for spec in unit)
    return outcome


def save(outcome: Outcome, unit: list[RunSpec]) -> Outcome:
    """Write the records an `execute(unit, write=False)` returned, as execute would have: a
    record that cannot be written becomes an error of its run."""
    from lengthgen.results import write_record
    root = None if unit[0].root is None else Path(unit[0].root)
    saved = Outcome(errors=list(outcome.errors))
    for record in outcome.records:
        try:
            write_record(record, root)
            saved.records.append(record)
        except (OSError, LengthgenError) as e:
            saved.errors.append((record["run_name"], f"record not written: {e}"))
    return saved


def _worker_init(threads: int, notes: str) -> None:
    """Start-up of a worker process. A failure here would break the pool with only "a process
    in the initializer failed" and a traceback on stderr: its reason is written to
    <notes>/startup-failed for the driver to report, and the worker exits quietly."""
    try:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        import torch

        import lengthgen.experiments  # noqa: F401  (a library that cannot load says so here)
        torch.set_num_threads(threads)
    except BaseException as e:
        try:
            Path(notes, "startup-failed").write_text(
                f"{e.__class__.__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        except OSError:
            pass
        os._exit(3)


def _execute_noted(unit: list[RunSpec], notes: str, index: int) -> Outcome:
    """execute(unit) in a worker, after leaving a note that it started (so that, if the worker
    dies, the driver knows which units were in flight and which never began)."""
    try:
        Path(notes, f"{index}.started").touch()
    except OSError:
        pass
    return execute(unit)


@contextmanager
def sweep_lock(folder: Path):
    """One sweep per figure and scale at a time: an exclusive lock on <folder>/.lock."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / ".lock", "a+")
    except OSError as e:
        raise LengthgenError(f"cannot open the sweep's lock file {folder / '.lock'} "
                             f"({e.strerror or e.__class__.__name__}); check its permissions, "
                             f"or delete it if no sweep of {folder.parent.name} is "
                             f"running") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise LengthgenError(f"another sweep ({holder}) is running {folder.parent.name} at "
                             f"scale {folder.name}; wait for it to finish") from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _existing(spec: RunSpec, root):
    """The record of a run if it exists and matches its params and config, else None."""
    from lengthgen.results import load_record, record_path
    path = record_path(spec.figure_id, spec.scale, spec.name, root)
    if not path.exists():
        return None
    old = load_record(path)
    if old["params"] == spec.params and old["config"] == spec.config:
        return old
    return None


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise LengthgenError(f"workers must be a positive integer, got {workers!r}")
    return workers


BACKENDS = ("local", "ray")  # local: in process or --workers processes; ray: a Ray cluster

# Executors other than the local one plug in here (name -> a function (address, device,
# threads) that opens a context yielding an executor with .device and .slots); a backend
# module registers itself when imported (ray_backend), so this module imports none of them.
BACKEND_OPENERS: dict = {}


def _check_backend(backend, address, workers) -> None:
    if callable(backend):
        return
    if backend not in BACKENDS:
        raise LengthgenError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    if backend != "ray" and address is not None:
        raise LengthgenError("an address is for --backend ray (a Ray cluster's HOST:PORT or auto)")
    if backend == "ray" and workers != 1:
        raise LengthgenError("--workers is for the local backend; on Ray, the cluster's CPUs "
                             "(or GPUs) set how many runs go at once")


def run(figure_id: str, scale: str | None = None, device=None, *, force: bool = False,
        root=None, progress: bool = False, workers: int = 1,
        threads: int | None = None, backend="local", address: str | None = None) -> list[dict]:
    """Run every run of a figure at a scale; return the records in the module's order.

    Runs with a matching record are skipped unless force=True. workers > 1 executes units in
    that many worker processes (CPU: each with `threads` torch threads). backend="ray" hands
    the units to a Ray cluster (`address`: HOST:PORT, "auto", or None for a Ray started on
    this machine; see ray_backend). `backend` may also be a callable(list of units) ->
    iterator of Outcomes whose records are written, for other executors.
    """
    from lengthgen.experiments import experiment
    from lengthgen.results import check_file_size, check_writable, results_dir
    scale = get_scale(scale)
    workers = _check_workers(workers)
    threads = DEFAULT_THREADS if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise LengthgenError(f"threads must be a positive integer, got {threads!r}")
    _check_backend(backend, address, workers)
    cores = os.cpu_count() or 1
    if backend == "local" and threads > THREADS_PER_CORE * cores:
        raise LengthgenError(f"{threads} torch threads per run is more than {THREADS_PER_CORE} "
                             f"per core of this machine ({cores} cores): use --threads "
                             f"{cores} or less (more threads only wait for each other)")
    module = experiment(figure_id)
    if getattr(module, "SOURCE", figure_id) != figure_id:
        raise LengthgenError(f"{figure_id} draws the records of {module.SOURCE}: run that "
                             f"figure id instead")
    root = None if root is None else Path(root)  # a str root is fine too
    base = root if root is not None else results_dir()
    folder = base / figure_id / scale
    check_writable(folder)
    check_file_size(_record_size(base, figure_id), f"a record of {figure_id}")
    _preflight(module)
    with ExitStack() as stack:
        if isinstance(backend, str) and backend != "local":
            if backend not in BACKEND_OPENERS:
                raise LengthgenError(f"the {backend} backend is not loaded (import its module, "
                                     f"as run_experiment does)")
            # the cluster, not this machine, says which device there is and how many slots
            backend = stack.enter_context(BACKEND_OPENERS[backend](address, device, threads))
        if isinstance(backend, str):  # "local"
            device, backend = str(get_device(device)), None
        else:  # an executor: a ray_backend.Cluster (opened above or by the caller) says its
            # device and size
            device = getattr(backend, "device", None) or str(get_device(device))
            workers = getattr(backend, "slots", workers)
        return _sweep(figure_id, scale, device, force, root, progress, workers, threads,
                      backend, folder)


def _record_size(base: Path, figure_id: str) -> int:
    """The size a record of this figure may take: its largest record at any scale (they grow
    with the scale), and at least 64 KiB."""
    sizes = [65_536]
    for scale in ("test", "book", "paper"):
        try:
            sizes += [p.stat().st_size for p in (base / figure_id / scale).glob("[!.]*.json")]
        except OSError:
            pass
    from lengthgen.results import REPO_ROOT
    committed = REPO_ROOT / "results" / figure_id
    if committed.is_dir():
        sizes += [p.stat().st_size for p in committed.glob("*/[!.]*.json")]
    return max(sizes)


IN_PROGRESS = "SWEEP_IN_PROGRESS"  # a sweep's marker while registered runs have no record


def in_progress(folder: Path) -> dict | None:
    """The marker of an unfinished sweep in a records folder (what it ran, from which commit),
    or None. A sweep longer than a session is committed in batches: its folder then holds some
    of the registered runs and this marker, and captions say INCOMPLETE."""
    import json
    path = Path(folder) / IN_PROGRESS
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LengthgenError(f"{path}: unreadable sweep marker ({e.__class__.__name__}); "
                             f"delete it and run the sweep again") from None


def _mark(folder: Path, figure_id: str, scale: str, total: int, threads: int) -> None:
    import json
    import tempfile
    from datetime import datetime, timezone

    from lengthgen.results import git_commit
    marker = {"figure_id": figure_id, "scale": scale, "runs": total, "git_commit": git_commit(),
              "torch_threads": threads,
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    old = in_progress(folder)
    if old is not None:
        marker["started"] = old.get("started", marker["started"])
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(marker, f, indent=1)
        f.write("\n")
    os.replace(tmp, folder / IN_PROGRESS)


def _sweep(figure_id, scale, device, force, root, progress, workers, threads, backend, folder):
    from lengthgen.results import remove_stale_temp_files
    specs = plan(figure_id, scale, device, threads, workers, root,
                 fresh_after=time.time() if force else None)
    with sweep_lock(folder):
        remove_stale_temp_files(folder)
        done, todo = {}, []
        for spec in specs:
            old = None if force else _existing(spec, root)
            if old is not None:
                done[spec.name] = old
            else:
                todo.append(spec)
        if todo:
            used = {r.get("torch_threads") for r in done.values()} - {None}
            if used and used != {threads}:
                raise LengthgenError(
                    f"the existing records of {figure_id}/{scale} were computed with "
                    f"{', '.join(map(str, sorted(used)))} torch thread(s), this sweep would use "
                    f"{threads}; float rounding depends on it: resume with --threads "
                    f"{min(used)} (or --force to re-run everything)")
        failures = []
        start = time.perf_counter()
        if todo:
            _mark(folder, figure_id, scale, len(specs), threads)
        for outcome in _execute_all(units(todo), workers, progress, backend, figure_id, scale):
            for record in outcome.records:
                done[record["run_name"]] = record
            failures.extend(outcome.errors)
        if all(spec.name in done for spec in specs):
            (folder / IN_PROGRESS).unlink(missing_ok=True)
        if progress:
            print(f"{figure_id}/{scale}: {len(specs)} runs, {len(specs) - len(todo)} already "
                  f"recorded, {len(todo) - len(failures)} computed, {len(failures)} failed, "
                  f"{time.perf_counter() - start:.0f} s with {workers} "
                  f"{'worker' if backend is None else 'cluster slot'}(s) x {threads} "
                  f"thread(s)", file=sys.stderr, flush=True)
    if failures:
        listed = "; ".join(f"{name}: {message}" for name, message in failures[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        raise LengthgenError(f"{len(failures)} of {len(specs)} runs of {figure_id}/{scale} "
                             f"failed, the others are recorded: {listed}{more}")
    return [done[spec.name] for spec in specs]


def _execute_all(all_units, workers, progress, backend, figure_id, scale):
    from tqdm.auto import tqdm
    bar = tqdm(total=sum(len(u) for u in all_units), disable=not progress or not all_units,
               desc=f"{figure_id}/{scale}", unit="run", file=sys.stderr)
    try:
        if backend is not None:
            outcomes = backend(all_units)
        elif workers == 1 or len(all_units) <= 1:
            outcomes = (execute(unit) for unit in all_units)
        else:
            outcomes = _pool(all_units, workers)
        for outcome in outcomes:
            bar.update(len(outcome.records) + len(outcome.errors))
            for name, message in outcome.errors:
                bar.write(f"failed: {name}: {message}", file=sys.stderr)
            yield outcome
    finally:
        bar.close()


MAX_WORKER_LOSSES = 2  # a unit in flight when its worker died this often is reported failed
QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def _pool(all_units, workers):
    """Worker processes (spawned: a fresh interpreter each, safe with torch's threads).

    A worker that dies (killed, out of memory) breaks the whole pool; a new pool then takes the
    units that were not done, so only the unit(s) the dead worker was computing are at risk: one
    whose worker died MAX_WORKER_LOSSES times is reported as failed, the others go on (as on
    Ray). A worker that cannot start says why, once, instead of failing every run alike."""
    import multiprocessing
    import tempfile
    from concurrent.futures.process import BrokenProcessPool
    threads = all_units[0][0].threads
    context = multiprocessing.get_context("spawn")
    # a killed worker leaves the pool's semaphores to multiprocessing's resource tracker, which
    # warns about them at exit in several lines; it takes its warning filters from ours
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)
    pending = list(range(len(all_units)))
    losses, barren = {}, 0
    with tempfile.TemporaryDirectory(prefix="lengthgen-workers-") as notes:
        while pending:
            broken, finished = [], 0
            for note in Path(notes).iterdir():
                note.unlink()
            try:   # the pool's queues need semaphores (/dev/shm) and pipes
                pool = ProcessPoolExecutor(max_workers=min(workers, len(pending)),
                                           mp_context=context, initializer=_worker_init,
                                           initargs=(threads, notes))
            except OSError as e:
                raise LengthgenError(f"cannot start worker processes ({e.__class__.__name__}: "
                                     f"{e.strerror or e}); run with --workers 1") from None
            with pool:
                futures = {}
                for index in pending:
                    try:
                        futures[pool.submit(_execute_noted, all_units[index], notes,
                                            index)] = index
                    except BrokenProcessPool:   # broke while submitting: the rest waits
                        broken.append(index)
                    except OSError as e:   # no process could be started (memory, limits)
                        raise LengthgenError(f"cannot start worker processes "
                                             f"({e.__class__.__name__}: {e.strerror or e}); "
                                             f"run with fewer --workers") from None
                for future in as_completed(futures):
                    index = futures[future]
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        broken.append(index)
                        continue
                    except Exception as e:  # e.g. a result that cannot be sent back
                        outcome = Outcome(errors=[(spec.name, f"worker error: "
                                                              f"{e.__class__.__name__}: "
                                                              f"{str(e)[:200]}")
                                                  for spec in all_units[index]])
                    finished += 1
                    yield outcome
            startup = Path(notes, "startup-failed")
            if broken and startup.exists():
                reason = f"a worker process could not start ({startup.read_text()[:300]})"
                for index in broken:
                    yield Outcome(errors=[(spec.name, reason) for spec in all_units[index]])
                return
            started = any(note.name.endswith(".started") for note in Path(notes).iterdir())
            barren = 0 if finished or started else barren + 1
            if barren >= MAX_WORKER_LOSSES + 1:   # workers die before they begin any run
                reason = (f"worker processes died {barren} times in a row before starting a run "
                          f"(killed, or out of memory while starting; try fewer --workers)")
                for index in broken:
                    yield Outcome(errors=[(spec.name, reason) for spec in all_units[index]])
                return
            pending = []
            for index in sorted(broken):
                if Path(notes, f"{index}.started").exists():   # in flight when a worker died
                    losses[index] = losses.get(index, 0) + 1
                if losses.get(index, 0) >= MAX_WORKER_LOSSES:
                    reason = (f"its worker process died {losses[index]} times (killed, or out "
                              f"of memory)")
                    yield Outcome(errors=[(spec.name, reason) for spec in all_units[index]])
                else:
                    pending.append(index)
            if pending:
                print(f"a worker process died; restarting the pool for the {len(pending)} "
                      f"unit(s) not done", file=sys.stderr, flush=True)
