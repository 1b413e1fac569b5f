"""The local backend: a figure's runs in worker processes on this machine (`--workers N`)."""
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from lengthgen.errors import LengthgenError
from lengthgen.runs.execute import Outcome, execute


def _worker_init(threads: int, notes: str) -> None:
    """Start-up of a worker process. A failure here would break the pool with only "a process
    in the initializer failed" and a traceback on stderr: its reason is written to
    <notes>/startup-failed for the driver to report, and the worker exits quietly."""
    try:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        import torch

        import lengthgen.runs.registry  # noqa: F401  (a library that cannot load says so here)
        torch.set_num_threads(threads)
    except BaseException as e:
        # written whole, then renamed: several workers fail alike, and the driver reads the
        # note as soon as the first has exited (a note written in place could be read empty,
        # truncated by the next worker's write)
        mine = Path(notes, f"startup-failed.{os.getpid()}")
        try:
            mine.write_text(f"{e.__class__.__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            os.replace(mine, Path(notes, "startup-failed"))
        except OSError:
            pass
        os._exit(3)


def _execute_noted(unit: list, notes: str, index: int) -> Outcome:
    """execute() of each run of a unit in a worker, one after another, after leaving a note
    that it started (so that, if the worker dies, the driver knows which units were in flight
    and which never began). One Outcome for the unit; a record that cannot be written stops
    it there."""
    try:
        Path(notes, f"{index}.started").touch()
    except OSError:
        pass
    outcome = Outcome()
    for k, spec in enumerate(unit):
        done = execute(spec)
        outcome.records += done.records
        outcome.errors += done.errors
        if done.unwritten:
            outcome.unwritten = done.unwritten
            break
        if done.records:   # recorded: if the worker dies later in the unit, it is not lost
            _note_done(notes, index, k, done.records)
    return outcome


def _note_done(notes: str, index: int, k: int, records: list) -> None:
    """Leave the records of run k of unit `index` (written already) where the driver finds
    them if this worker dies before the unit ends: written whole, then renamed."""
    import json
    mine = Path(notes, f"{index}.{k}.done.{os.getpid()}")
    try:
        mine.write_text(json.dumps(records))
        os.replace(mine, Path(notes, f"{index}.{k}.done"))
    except OSError:   # without the note the run is only computed again
        pass


def _done_in(notes: str, index: int) -> dict:
    """{k: records} of the runs of unit `index` that its dead worker recorded before it died."""
    import json
    out = {}
    for note in Path(notes).glob(f"{index}.*.done"):
        try:
            out[int(note.name.split(".")[1])] = json.loads(note.read_text())
        except (OSError, ValueError):
            pass
    return out


def spread(units: list, workers: int) -> list:
    """Units for `workers` processes: as given (runs of one host key to one worker) where there
    are at least as many as workers, else the largest split in halves until there are (or
    every unit is one run): a worker idle costs more than drawing a set of words twice."""
    units = [list(unit) for unit in units]
    while len(units) < workers and max(len(unit) for unit in units) > 1:
        big = max(range(len(units)), key=lambda i: len(units[i]))
        half = (len(units[big]) + 1) // 2
        units[big:big + 1] = [units[big][:half], units[big][half:]]
    return units


def _stop(pool, futures) -> None:
    """Cancel the runs not started and end the workers computing the others."""
    for future in futures:
        future.cancel()
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.terminate()
        except (OSError, ValueError):   # ended meanwhile
            pass


MAX_WORKER_LOSSES = 2  # a run in flight when its worker died this often is reported failed
QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def run_pool(specs, workers, units=None):
    """Worker processes (spawned: a fresh interpreter each, safe with torch's threads).

    units: lists of the specs a worker takes whole, one after another (runs sharing host work,
    `execute.host_units`; `spread` over the workers); default, each run alone. A worker that
    dies (killed, out of memory) breaks the whole pool; a new pool then takes the units that
    were not done, so only the unit(s) the dead worker was computing are at risk: the runs it
    had recorded are kept (each leaves a note), the rest of its unit is computed again, and
    one whose worker died MAX_WORKER_LOSSES times is reported as failed, the others go on (as
    on Ray). A worker that cannot start says why, once, instead of failing
    every run alike."""
    import multiprocessing
    import tempfile
    from concurrent.futures.process import BrokenProcessPool
    threads = specs[0].threads
    units = spread(units if units is not None else [[spec] for spec in specs], workers)

    def failed(index, reason):   # every run of a unit, failed for one reason
        return Outcome(errors=[(spec.name, reason) for spec in units[index]])
    context = multiprocessing.get_context("spawn")
    # a killed worker leaves the pool's semaphores to multiprocessing's resource tracker, which
    # warns about them at exit in several lines; it takes its warning filters from ours
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)
    pending = list(range(len(units)))
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
                try:
                    for index in pending:
                        try:
                            futures[pool.submit(_execute_noted, units[index], notes,
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
                            outcome = failed(index, f"worker error: {e.__class__.__name__}: "
                                                    f"{str(e)[:200]}")
                        finished += 1
                        yield outcome
                except GeneratorExit:   # the driver stops the sweep (its records cannot be
                    _stop(pool, futures)   # written): nothing more is computed
                    raise
            # the runs a dead worker recorded before it died are done: their records are
            # yielded, and only the rest of its unit is computed again (or reported failed)
            for index in list(broken):
                kept = _done_in(notes, index)
                if kept:
                    yield Outcome(records=[r for k in sorted(kept) for r in kept[k]])
                    units[index] = [s for k, s in enumerate(units[index]) if k not in kept]
                    if not units[index]:
                        broken.remove(index)
            startup = Path(notes, "startup-failed")
            if broken and startup.exists():
                reason = f"a worker process could not start ({startup.read_text()[:300]})"
                for index in broken:
                    yield failed(index, reason)
                return
            started = any(note.name.endswith(".started") for note in Path(notes).iterdir())
            barren = 0 if finished or started else barren + 1
            if barren >= MAX_WORKER_LOSSES + 1:   # workers die before they begin any run
                reason = (f"worker processes died {barren} times in a row before starting a run "
                          f"(killed, or out of memory while starting; try fewer --workers)")
                for index in broken:
                    yield failed(index, reason)
                return
            pending = []
            for index in sorted(broken):
                if Path(notes, f"{index}.started").exists():   # in flight when a worker died
                    losses[index] = losses.get(index, 0) + 1
                if losses.get(index, 0) >= MAX_WORKER_LOSSES:
                    reason = (f"its worker process died {losses[index]} times (killed, or out "
                              f"of memory)")
                    yield failed(index, reason)
                else:
                    pending.append(index)
            if pending:
                print(f"a worker process died; restarting the pool for the "
                      f"{sum(len(units[i]) for i in pending)} run(s) not done", file=sys.stderr,
                      flush=True)
