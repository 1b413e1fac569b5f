"""A figure's sweep: every run of a figure at a scale, each recorded once.

`run_experiment` (what `figure run` calls):
- holds a lock per figure and scale, so two sweeps of the same figure do not both do the work;
- checks that the results folder is writable before computing anything;
- skips runs whose record exists with the same params and config (a killed sweep resumes:
  records are renamed into place whole, so nothing is half-written; stale temp files of a
  killed writer are removed);
- sets torch's thread count in every run (float rounding depends on it) and refuses to resume
  a sweep whose records were computed with another thread count;
- records a run that raises as a failure, goes on with the others, and reports every failure
  with its run's name at the end.
Units are computed by `execute.execute`: here in process, in worker processes (`pool`), or on
a Ray cluster (`ray_backend`, imported only when asked for).
"""
import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError
from lengthgen.runs.execute import (DEFAULT_THREADS, RunSpec, execute, host_units, plan,
                                     run_preflight)
from lengthgen.runs.folders import (IN_PROGRESS, _done, _mark, in_progress,  # noqa: F401
                                    marker_problems, refresh_marker, sweep_lock)
from lengthgen.runs.pool import run_pool
from lengthgen.runs.registry import experiment, module_runs

THREADS_PER_CORE = 4  # the most torch threads per run on this machine, per CPU core


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


def pending_runs(figure_id: str, scale: str, root=None) -> list[str]:
    """The runs of a figure at a scale that `run_experiment` (without force) would compute: those
    with no record under `root` (default results/) matching their params and config."""
    root = None if root is None else Path(root)  # a str root is fine too
    return [spec.name for spec in plan(figure_id, get_scale(scale), root=root)
            if _existing(spec, root) is None]


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise LengthgenError(f"workers must be a positive integer, got {workers!r}")
    return workers


def _check_local_parallelism(workers: int, threads: int) -> None:
    """On this machine: at most THREADS_PER_CORE torch threads per core, over all workers
    (more processes or threads only wait for each other; an absurd count would try to start
    that many processes)."""
    cores = os.cpu_count() or 1
    if threads > THREADS_PER_CORE * cores:
        raise LengthgenError(f"{threads} torch threads per run is more than {THREADS_PER_CORE} "
                             f"per core of this machine ({cores} cores): use --threads "
                             f"{cores} or less (more threads only wait for each other)")
    if workers * threads > THREADS_PER_CORE * cores:
        raise LengthgenError(f"--workers {workers} x --threads {threads} is more than "
                             f"{THREADS_PER_CORE} threads per core of this machine ({cores} "
                             f"cores): use --workers {max(1, cores // threads)} or less (more "
                             f"processes only wait for each other)")


BACKENDS = ("local", "ray")  # local: in process or --workers processes; ray: a Ray cluster


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


def run_experiment(figure_id: str, scale: str | None = None, device=None,
                   force: bool = False, root=None, progress: bool = False, workers: int = 1,
                   threads: int | None = None, backend="local",
                   address: str | None = None) -> list[dict]:
    """Run every run of a figure at a scale, write one record per run, and return the records
    in the module's order.

    Runs with a matching record are skipped unless force=True. workers > 1 executes runs in
    that many worker processes (CPU: each with `threads` torch threads). backend="ray" hands
    the runs to a Ray cluster (`address`: HOST:PORT, "auto", or None for a Ray started on
    this machine; see ray_backend). `backend` may also be a callable(list of RunSpecs) ->
    iterator of Outcomes whose records are written, for other executors.
    """
    from lengthgen.results import check_file_size, check_writable, results_dir
    scale = get_scale(scale)
    workers = _check_workers(workers)
    threads = DEFAULT_THREADS if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise LengthgenError(f"threads must be a positive integer, got {threads!r}")
    _check_backend(backend, address, workers)
    if backend == "local":
        _check_local_parallelism(workers, threads)
    module = experiment(figure_id)
    if getattr(module, "SOURCE", figure_id) != figure_id:
        raise LengthgenError(f"{figure_id} draws the records of {module.SOURCE}: run that "
                             f"figure id instead")
    root = None if root is None else Path(root)  # a str root is fine too
    if scale not in module.CONFIGS:
        raise LengthgenError(f"{figure_id} has no {scale} config (its scales: "
                             f"{', '.join(sorted(module.CONFIGS))})")
    if not hasattr(module, "run_one"):   # planned, with no runs of its own: one slice to the end
        from lengthgen.runs.planned import run_to_end
        return run_to_end(figure_id, scale, str(get_device(device)), root)
    module_runs(module, scale)   # run names that break the contract: one line before torch loads
    base = root if root is not None else results_dir()
    folder = base / figure_id / scale
    check_writable(folder)
    check_file_size(_record_size(base, figure_id), f"a record of {figure_id}")
    run_preflight(module)
    with ExitStack() as stack:
        if backend == "ray":
            from lengthgen.runs.ray_backend import ray_cluster
            # the cluster, not this machine, says which device there is and how many slots
            backend = stack.enter_context(ray_cluster(address, device, threads))
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
    for scale in ("test", "book", "paper", "gpu"):
        try:
            sizes += [p.stat().st_size for p in (base / figure_id / scale).glob("[!.]*.json")]
        except OSError:
            pass
    from lengthgen.results import REPO_ROOT
    committed = REPO_ROOT / "results" / figure_id
    if committed.is_dir():
        sizes += [p.stat().st_size for p in committed.glob("*/[!.]*.json")]
    return max(sizes)


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
        failures, stopped = [], ""
        start = time.perf_counter()
        commit = None   # the sweep's commit, read once: the marker is rewritten at every record
        if todo:
            from lengthgen.results import git_commit
            commit = git_commit()
            try:
                _mark(folder, figure_id, scale, len(specs), threads, _done(done.values()),
                      commit)
            except OSError as e:
                raise LengthgenError(f"cannot write the sweep's marker into {folder} "
                                     f"({e.strerror or e.__class__.__name__}); free space in "
                                     f"(or fix) the folder first") from None
        # runs that share host work (a set of Dyck words) one after another, in one worker
        units = host_units(todo)
        outcomes = _execute_all(units, workers, progress, backend, figure_id, scale)
        try:
            for outcome in outcomes:
                for record in outcome.records:
                    done[record["run_name"]] = record
                failures.extend(outcome.errors)
                stopped = outcome.unwritten
                if outcome.records:
                    try:   # the marker lists every record as it lands
                        _mark(folder, figure_id, scale, len(specs), threads,
                              _done(done.values()), commit)
                    except OSError as e:
                        stopped = stopped or (f"cannot update the sweep's marker in {folder} "
                                              f"({e.strerror or e.__class__.__name__})")
                if stopped:   # nothing more could be kept: compute nothing more
                    break
        finally:
            outcomes.close()
        if stopped:
            raise LengthgenError(f"{stopped}; the sweep stopped there: {len(done)} of "
                                 f"{len(specs)} runs of {figure_id}/{scale} are recorded and "
                                 f"kept; free space (or make the folder writable) and run the "
                                 f"same command again to compute the rest")
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


def _execute_all(units, workers, progress, backend, figure_id, scale):
    """The outcomes of the runs of `units` (lists of RunSpecs, `host_units`), in that order
    (in process), or as they finish (workers: a unit to one worker where there are enough)."""
    from tqdm.auto import tqdm
    specs = [spec for unit in units for spec in unit]
    bar = tqdm(total=len(specs), disable=not progress or not specs,
               desc=f"{figure_id}/{scale}", unit="run", file=sys.stderr)
    outcomes = ()
    try:
        if backend is not None:
            outcomes = backend(specs)
        elif workers == 1 or len(specs) <= 1:
            outcomes = (execute(spec) for spec in specs)
        else:
            outcomes = run_pool(specs, workers, units)
        for outcome in outcomes:
            bar.update(len(outcome.records) + len(outcome.errors))
            for name, message in outcome.errors:
                if not outcome.unwritten:   # the sweep stops with that one line instead
                    bar.write(f"failed: {name}: {message}", file=sys.stderr)
            yield outcome
    finally:
        if hasattr(outcomes, "close"):   # a pool or a cluster stops what it started
            outcomes.close()
        bar.close()
