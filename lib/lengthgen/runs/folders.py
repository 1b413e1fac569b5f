"""A records folder's state between runs: the lock that lets one sweep (or slice) at a time
write it, and the SWEEP_IN_PROGRESS marker of a sweep committed in batches, which lists the
records done so far (name and digest), so that a deleted or replaced record fails the tests.
`figure run` (runs.runner) and the slices of planned figures (runs.planned) share both.
"""
import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from lengthgen.errors import LengthgenError


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
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
        except OSError as e:   # a full disk, say: nothing of the sweep could be kept either
            raise LengthgenError(f"cannot write the sweep's lock file {folder / '.lock'} "
                                 f"({e.strerror or e.__class__.__name__}); free space in (or "
                                 f"fix) {folder} first") from None
        yield handle   # (a slice passes its descriptor to its workers: runs.slices)
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        try:
            handle.close()
        except OSError:   # the pid that could not be written: nothing to keep
            pass


IN_PROGRESS = "SWEEP_IN_PROGRESS"  # a sweep's marker while registered runs have no record


def in_progress(folder: Path) -> dict | None:
    """The marker of an unfinished sweep in a records folder (what it ran, from which commit,
    and under "done" the name and digest of every run recorded so far), or None. A sweep
    longer than a session is committed in batches: its folder then holds some of the
    registered runs and this marker, and captions say INCOMPLETE."""
    import json
    path = Path(folder) / IN_PROGRESS
    if not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        raise LengthgenError(f"{path}: unreadable sweep marker ({e.__class__.__name__}); "
                             f"delete it and run the sweep again") from None
    if not isinstance(marker, dict):
        raise LengthgenError(f"{path}: unreadable sweep marker (not a JSON object); delete it "
                             f"and run the sweep again")
    return marker


def _done(records) -> dict:
    """name -> digest of records (written records carry their digest; the runner's copies of
    the records it has just written do not, and get the same one computed)."""
    from lengthgen.results import _digest
    return {r["run_name"]: r.get("digest") or _digest(r) for r in records}


def _mark(folder: Path, figure_id: str, scale: str, total: int, threads: int,
          done: dict, commit: str | None = None) -> None:
    """Write the marker of an unfinished sweep, listing the runs recorded so far (raises
    OSError if it cannot be written, leaving no temporary file). `commit`: the code's commit
    as the sweep read it when it started (read here when not given)."""
    import json
    from datetime import datetime, timezone

    from lengthgen.results import git_commit, write_text_atomic
    marker = {"figure_id": figure_id, "scale": scale, "runs": total,
              "git_commit": commit or git_commit(),
              "torch_threads": threads,
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        old = in_progress(folder)
    except LengthgenError:
        old = None   # an unreadable marker is replaced
    if old is not None:
        marker["started"] = old.get("started", marker["started"])
    marker["done"] = dict(sorted(done.items()))
    write_text_atomic(folder / IN_PROGRESS, json.dumps(marker, indent=1) + "\n")


def marker_problems(folder: Path, records: list[dict]) -> list[str]:
    """How the records of a folder with a sweep marker differ from the runs the marker lists
    as done (a deleted, replaced or unlisted record), one line each; [] when they agree or the
    folder has no marker. A marker that lists no runs is a problem too: refresh it with
    `refresh_marker`."""
    marker = in_progress(folder)
    if marker is None:
        return []
    done = marker.get("done")
    if not isinstance(done, dict):
        return [f"{Path(folder) / IN_PROGRESS} does not list the runs it has done; rewrite it "
                f"with lengthgen.runs.runner.refresh_marker"]
    have = _done(records)
    problems = [f"{name}: the marker lists it as done but it has no record"
                for name in done if name not in have]
    problems += [f"{name}: its record is not the one the marker lists (another digest)"
                 for name in done if name in have and have[name] != done[name]]
    problems += [f"{name}: a record the marker does not list as done"
                 for name in have if name not in done]
    return problems


def refresh_marker(folder, create: bool = False) -> dict:
    """Rewrite the marker of an unfinished sweep so that it lists the records the folder holds
    now (name and digest of each, every record validated on the way), keeping what it says
    about the sweep (runs, commit, threads, start). For markers written before they listed
    their runs; after a deliberate deletion, the marker must say so too. create=True starts
    a marker that lists the records where there is none: a planned figure's slices
    (`runs.planned.refresh`) keep theirs so, and the tests compare the committed records with
    it, so a deleted one fails them. Returns the marker."""
    import json

    from lengthgen.results import load_records, write_text_atomic
    folder = Path(folder)
    marker = in_progress(folder)
    if marker is None and create:
        marker = {"figure_id": folder.parent.name, "scale": folder.name}
    if marker is None:
        raise LengthgenError(f"{folder}: no {IN_PROGRESS} marker to refresh")
    records = load_records(folder.parent.name, folder.name, folder.parents[1])
    marker["done"] = dict(sorted(_done(records).items()))
    write_text_atomic(folder / IN_PROGRESS, json.dumps(marker, indent=1) + "\n")
    return marker
