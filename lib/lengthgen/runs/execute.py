"""One run, described completely enough to execute anywhere, and the computing of it.

A `RunSpec` names everything a run needs (figure id, scale, the run's params, the figure's
config, device, torch threads). `execute(spec)` computes one run with its module's run_one and
writes its record atomically, with provenance read at the start.
Whoever calls `execute` (this process, a pool of worker processes, a cluster) produces the same
records: only the provenance fields that say where it ran (host, workers, dates) can differ.
"""
import os
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lengthgen.config import torch_threads
from lengthgen.errors import LengthgenError
from lengthgen.runs.registry import experiment, module_runs

DEFAULT_THREADS = 1  # tiny models: one thread per run, parallelism across runs (README)


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
    """What executing a run gave: its record written, or its error. (A list, so that a sweep
    adds up outcomes alike whichever backend computed them.)"""
    records: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # (run name, one-line message)
    # a record that could not be written (a full disk, a folder turned read-only): one line
    # saying which and why; the sweep stops there instead of computing runs it cannot keep
    unwritten: str = ""


def plan(figure_id: str, scale: str, device: str = "cpu", threads: int = DEFAULT_THREADS,
         workers: int = 1, root=None, fresh_after: float | None = None) -> list[RunSpec]:
    """The runs of a figure at a scale, in the module's order."""
    module = experiment(figure_id)
    config = module.CONFIGS[scale]
    return [RunSpec(figure_id, scale, params, config, str(device), threads, workers,
                    None if root is None else str(root), fresh_after)
            for params in module_runs(module, scale)]


def host_units(specs: list[RunSpec]) -> list[list[RunSpec]]:
    """The runs in the units a sweep takes whole, one after another and in one worker: the
    runs of one host key (the figure's optional `host_key(params, config)`, read without
    torch: work on the host that runs share in a process, such as a set of Dyck words drawn once
    while the process keeps it, richard.protocol), at the place of the first of them; a run
    without a key is a unit of its own. Only the order changes: each run's params, name and
    record stay as they are (a plain CPU sweep of Fig. 6 in its runs' order cycles through 12
    sets of words a variant, more than a process keeps, and drew each set five times)."""
    units: list[list[RunSpec]] = []
    at: dict = {}
    for spec in specs:
        key_of = getattr(experiment(spec.figure_id), "host_key", None)
        key = None if key_of is None else key_of(spec.params, spec.config)
        if key is None:
            units.append([spec])
            continue
        key = (spec.figure_id, spec.scale, key)
        if key not in at:
            at[key] = len(units)
            units.append([])
        units[at[key]].append(spec)
    return units


_fresh_after: float | None = None
PREFLIGHT: dict = {}   # module name -> check(): what a module's runs need, checked before any run


def preflight(check):
    """Register check() (raising LengthgenError) to run before any run of a figure whose module
    uses a name of check's module: e.g. the Dyck model cache must be writable before hours of
    training, not after."""
    PREFLIGHT[check.__module__] = check
    return check


def run_preflight(module) -> None:
    """Run the registered checks of every module whose names a figure module uses."""
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


def execute(spec: RunSpec, write: bool = True) -> Outcome:
    """Compute one run and write its record; an error is caught and reported, never raised.

    write=False returns the record unwritten, for an executor whose workers cannot see the
    results folder (a cluster): the caller then writes it with `save`.
    """
    from lengthgen.results import run_finished, run_started, write_record
    module = experiment(spec.figure_id)
    root = None if spec.root is None else Path(spec.root)
    outcome = Outcome()
    try:
        with torch_threads(spec.threads), _freshness(spec.fresh_after):
            started = run_started(spec.device, spec.threads, spec.workers)
            start = time.perf_counter()
            metrics = module.run_one(spec.params, spec.config, spec.device)
            wall = time.perf_counter() - start
        record = {"figure_id": spec.figure_id, "run_name": spec.name,
                  "task": spec.params.get("task"), "config": spec.config,
                  "params": spec.params, "scale": spec.scale, "seed": spec.params.get("seed"),
                  "metrics": metrics, **run_finished(started, wall)}
        if write:
            try:
                write_record(record, root)
            except OSError as e:
                return _unwritten(outcome, spec, record, e, root)
        outcome.records.append(record)
    except Exception as e:  # one failing run must not sink the sweep: report it by name
        message = str(e).splitlines()[0] if str(e) else ""
        if not isinstance(e, LengthgenError):
            message = f"{e.__class__.__name__}: {message}"
            if os.environ.get("LENGTHGEN_DEBUG"):
                traceback.print_exc()
        outcome.errors.append((spec.name, message))
    return outcome


def _unwritten(outcome: Outcome, spec: RunSpec, record: dict, error: OSError,
               root) -> Outcome:
    """The outcome of a run whose record could not be written: the run is an error, and
    `unwritten` says why (the sweep stops there)."""
    from lengthgen.results import _short, record_path
    folder = record_path(record["figure_id"], record["scale"], record["run_name"], root).parent
    outcome.unwritten = (f"cannot write the record of {record['run_name']} into "
                         f"{_short(folder)} ({error.strerror or error.__class__.__name__})")
    outcome.errors.append((spec.name, "record not written: " + outcome.unwritten))
    return outcome


def save(outcome: Outcome, spec: RunSpec) -> Outcome:
    """Write the record an `execute(spec, write=False)` returned, as execute would have: a
    record that cannot be written becomes the run's error."""
    from lengthgen.results import write_record
    root = None if spec.root is None else Path(spec.root)
    saved = Outcome(errors=list(outcome.errors))
    for record in outcome.records:
        try:
            write_record(record, root)
            saved.records.append(record)
        except LengthgenError as e:
            saved.errors.append((record["run_name"], f"record not written: {e}"))
        except OSError as e:   # the folder takes no more records: the sweep stops
            return _unwritten(saved, spec, record, e, root)
    return saved
