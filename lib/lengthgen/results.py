"""The results store: one JSON record per run, with provenance, written atomically.

Records are written only by `lengthgen.runs.runner.run_experiment` (or the `train` command),
never by hand. Each record carries a digest of its own content, so an edited file is caught.
"""
import functools
import hashlib
import json
import math
import os
import platform
import re
import stat
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from lengthgen.errors import LengthgenError

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_ENV = "LENGTHGEN_RESULTS"
MAX_RECORD_BYTES = 64 * 2 ** 20   # the largest committed record is well under 1 MB

REQUIRED_FIELDS = {
    "figure_id": str,
    "run_name": str,
    "task": (str, type(None)),
    "config": dict,
    "params": dict,
    "scale": str,
    "seed": (int, type(None)),
    "metrics": dict,
    "git_commit": str,
    "command": str,
    "device": str,
    "torch_version": str,
    "python_version": str,
    "lengthgen_version": str,
    "wall_time_s": (int, float),
    "date": str,
    "digest": str,
}


# Written by the runner since these fields were introduced; older records may lack them.
OPTIONAL_FIELDS = {
    "started": str,           # when the run began (date is when it ended)
    "git_dirty_files": list,  # files under lib/ that differed from the commit at the start
    "torch_threads": int,     # torch's intra-op thread count: float rounding depends on it
    "workers": int,           # worker processes of the sweep (1 = in process)
    "host": str,              # the machine that computed it
    "cpu_model": str,         # the processor (float rounding of a training differs between
    "cpu_capability": str,    # processors: torch's kernel set, e.g. AVX2 or AVX512)
    "numpy_version": str,
    "lib_digest": str,        # sha256 of the library's files as they ran (a copied tree too)
    "gpu_model": str,         # the card, for runs on a GPU
    "lock_digest": str,       # sha256 of requirements.lock, the package set it was meant to run on
    "lock_differs": list,     # the lock's pins this environment did not have ([] = all of them)
}


def cpu_description() -> tuple[str, str]:
    """The processor's model name (from /proc/cpuinfo, else platform) and torch's CPU kernel
    set: a re-run on another processor rounds differently and may land elsewhere in the
    spread."""
    import torch  # here, not at the top: reading records needs no torch
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        capability = str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # an old torch without it
        capability = "unknown"
    return model or platform.processor() or "unknown", capability


def results_dir() -> Path:
    """Where records live: $LENGTHGEN_RESULTS, else results/ at the repository root."""
    path = Path(os.environ.get(RESULTS_ENV) or REPO_ROOT / "results")
    try:
        is_other = path.exists() and not path.is_dir()
    except OSError as e:   # a name too long for the file system, a loop of links ...
        raise LengthgenError(f"{RESULTS_ENV}: cannot use {_short(path)} as the results folder "
                             f"({e.strerror or e.__class__.__name__})") from None
    if is_other:
        raise LengthgenError(f"{RESULTS_ENV}={_short(path)} is not a folder; point it at a "
                             f"folder for results records (it is created if missing)")
    return path


def _short(path) -> str:
    """A path for a one-line message: long ones keep their start and end."""
    text = str(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-50:]} ({len(text)} characters)"


def check_writable(folder: Path, what: str = "results") -> None:
    """Fail before hours of computing, not after: write a small file where `folder` is (or, if
    it does not exist yet, in the nearest folder above it that does), then delete it. Nothing
    is created that stays: a command refused later (a missing device, say) leaves no empty
    folder behind. `what` names what will be written there (for the message)."""
    folder = Path(folder)
    try:
        existing = folder
        while not existing.exists():
            if existing.parent == existing:
                break
            existing = existing.parent
        if not existing.is_dir():
            raise LengthgenError(f"cannot write {what} into {_short(folder)} (Not a "
                                 f"directory: {_short(existing)} is not a folder)")
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".tmp-probe-")
        try:   # a full disk refuses the bytes, not the empty file
            os.write(fd, b"probe\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise LengthgenError(f"cannot write {what} into {_short(folder)} "
                             f"({e.strerror or e.__class__.__name__})") from None


def check_file_size(need: int, what: str) -> None:
    """A file-size limit (ulimit -f) below what will be written is refused before computing:
    `need` bytes for one file (an estimate), `what` names it."""
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and need > soft:
        raise LengthgenError(f"{what} needs files of about {need:,} bytes but files are limited "
                             f"to {soft:,} bytes here (ulimit -f); raise the limit")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True).stdout


COMMIT_ENV = "LENGTHGEN_GIT_COMMIT"   # read only where no git repository is found


def git_state() -> tuple[str, list[str]]:
    """The commit of the code that runs, and the files under lib/ that differ from it (modified
    or untracked). The commit is marked +dirty when that list is not empty."""
    try:
        head = _git("rev-parse", "--short=12", "HEAD").strip()
        changed = sorted(line[3:] for line in _git("status", "--porcelain", "lib").splitlines()
                         if line.strip())
    except (OSError, subprocess.CalledProcessError):
        # a copy of a clean checkout without its .git (a GPU machine gets the working tree
        # only): the commit it was copied from, as whoever copied it says
        copied = os.environ.get(COMMIT_ENV, "")
        if copied and all(c in "0123456789abcdef" for c in copied) and 7 <= len(copied) <= 40:
            return copied[:12], []
        return "unknown", []
    return head + ("+dirty" if changed else ""), changed


def git_commit() -> str:
    """The commit of the code that ran, marked +dirty when lib/ had uncommitted changes."""
    return git_state()[0]


def lib_digest() -> str:
    """sha256 over the library's source and data files (paths and bytes, in path order): which
    code ran, also where git cannot tell (a copy of the tree on another machine)."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()
                       and p.suffix in (".py", ".csv", ".crasp")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


LOCK_FILE = REPO_ROOT / "requirements.lock"   # every package's version (tools/lock.sh)
_LOCK_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _distribution_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them (PyYAML, pyyaml; typing_extensions)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=1)
def _installed_versions() -> dict:
    """{distribution name: version} of this environment, read once per process: reading every
    package's metadata takes tens of milliseconds, once per run of a sweep of many runs. A
    package installed while the process runs is not the one it imported, so the first reading
    is also the one that describes the code that runs."""
    import importlib.metadata
    return {_distribution_name(d.metadata["Name"] or ""): d.version
            for d in importlib.metadata.distributions()}


def lock_state(lock: Path | None = None) -> dict:
    """Which package set a run had: {"lock_digest": sha256 of the lock file's bytes,
    "lock_differs": ["numpy 2.5.0 (lock 2.4.6)", "ray missing (lock 2.9.0)", ...]}, one entry per
    pin the running environment does not have (empty when it was installed from the lock; a
    reader who installed requirements.txt's ranges gets the versions it does have). {} where
    there is no lock (the library installed without its repository)."""
    lock = LOCK_FILE if lock is None else lock
    try:
        data = lock.read_bytes()
    except OSError:
        return {}
    installed = _installed_versions()
    differs = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        pin = _LOCK_PIN.match(line.split("#", 1)[0].strip())
        if pin:
            name, version = _distribution_name(pin.group(1)), pin.group(2)
            have = installed.get(name)
            if have != version:
                differs.append(f"{name} {have or 'missing'} (lock {version})")
    return {"lock_digest": hashlib.sha256(data).hexdigest(), "lock_differs": differs}


def run_started(device: str, threads: int | None = None, workers: int = 1) -> dict:
    """Provenance read when a run starts: the code's commit and state, the device, threads."""
    import torch  # here, not at the top: reading records needs no torch
    import numpy

    from lengthgen import __version__
    commit, changed = git_state()
    cpu_model, cpu_capability = cpu_description()
    card = {}
    if str(device).startswith("cuda") and torch.cuda.is_available():
        card = {"gpu_model": torch.cuda.get_device_name(torch.device(device))}
    return {**card,
        "git_commit": commit,
        "git_dirty_files": changed,
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]) if sys.argv else "",
        "device": device,
        "torch_threads": int(threads if threads is not None else torch.get_num_threads()),
        "workers": int(workers),
        "host": platform.node(),
        "cpu_model": cpu_model,
        "cpu_capability": cpu_capability,
        "torch_version": torch.__version__,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "lengthgen_version": __version__,
        "lib_digest": lib_digest(),
        **lock_state(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def run_finished(started: dict, wall_time_s: float) -> dict:
    """The start provenance completed with the wall time and the end date."""
    return {**started, "wall_time_s": round(float(wall_time_s), 3),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def provenance(device: str, wall_time_s: float) -> dict:
    """Everything a reader needs to know about where and how a run happened (read at the end;
    the runner uses run_started/run_finished so that the commit is the one at the start)."""
    return run_finished(run_started(device), wall_time_s)


def _digest(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def record_file_name(run_name: str) -> str:
    """The file of a run's record: its name with every character but letters, digits, '-',
    '_' and '.' made '_' (so names that differ only there share a file: the figure contract
    refuses them), and a leading '.' made '_' too (the record would be hidden)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_name)
    return ("_" + safe[1:] if safe.startswith(".") else safe) + ".json"


def record_path(figure_id: str, scale: str, run_name: str, root: Path | None = None) -> Path:
    return (root or results_dir()) / figure_id / scale / record_file_name(run_name)


def write_record(record: dict, root: Path | None = None) -> Path:
    """Seal the record with its digest, validate it, and write it atomically (temp file + rename)."""
    record = dict(record)
    record["digest"] = _digest(record)
    validate_record(record, source="<new record>")
    path = record_path(record["figure_id"], record["scale"], record["run_name"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n", ".json")
    return path


def _umask() -> int:
    """The process's umask: from /proc where there is one (reading it through os.umask means
    setting it, for a moment, under every thread of the process)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shared_mode(fd: int) -> None:
    """Give a temp file (mkstemp makes it 0600, for the owner alone) the mode of any file the
    user writes: 0644 under the usual umask, so records and states are readable by the group
    and by the copy that packs them for a commit."""
    os.fchmod(fd, 0o666 & ~_umask())


def write_text_atomic(path: Path, text: str, suffix: str = "") -> None:
    """Write a file whole or not at all: a temp file in the same folder, renamed into place.
    A failure (a full disk, a folder turned read-only) raises OSError and leaves no temp file."""
    fd, tmp = tempfile.mkstemp(dir=Path(path).parent, prefix=".tmp-", suffix=suffix)
    try:
        shared_mode(fd)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def validate_record(record, source: str) -> dict:
    """Check fields, types and the digest; one clear error naming the file and the problem."""
    if not isinstance(record, dict):
        raise LengthgenError(f"{source}: a results record must be a JSON object")
    for name, kind in REQUIRED_FIELDS.items():
        if name not in record:
            raise LengthgenError(f"{source}: results record is missing the field {name!r}")
        if isinstance(record[name], bool) or not isinstance(record[name], kind):  # no field is a bool
            raise LengthgenError(f"{source}: field {name!r} has the wrong type "
                                 f"({type(record[name]).__name__})")
    for name, kind in OPTIONAL_FIELDS.items():
        if name in record and (isinstance(record[name], bool)
                               or not isinstance(record[name], kind)):
            raise LengthgenError(f"{source}: field {name!r} has the wrong type "
                                 f"({type(record[name]).__name__})")
    if not (math.isfinite(record["wall_time_s"]) and record["wall_time_s"] >= 0):
        raise LengthgenError(f"{source}: wall_time_s must be a finite number of seconds >= 0, "
                             f"got {record['wall_time_s']}")
    if "torch_threads" in record and record["torch_threads"] < 1:
        raise LengthgenError(f"{source}: torch_threads must be >= 1, got "
                             f"{record['torch_threads']}")
    problem = _metric_problem(record["metrics"]) or _bins_problem(record["metrics"])
    if problem:
        raise LengthgenError(f"{source}: not a results record the runner wrote ({problem}); "
                             f"re-run the experiment instead of editing results")
    if record["digest"] != _digest(record):
        raise LengthgenError(f"{source}: digest mismatch: the record was edited after the runner "
                             f"wrote it; re-run the experiment instead of editing results")
    return record


LENGTH_BIN = re.compile(r"\d+-\d+")   # a bin of test lengths, "1-50": its accuracy
BINS = "bins"                          # a dict of a training's results per length bin


def _is_accuracy(key: str) -> bool:
    """A metric that is a fraction of examples: 'accuracy', 'train_accuracy', 'acc' ..."""
    key = key.lower()
    return key in ("acc", "accuracy") or key.endswith(("_acc", "_accuracy", " accuracy"))


def _metric_problem(metrics, path: str = "metrics", accuracy: bool = False) -> str | None:
    """What is wrong with a record's accuracies, or None: every accuracy (a value under a key
    such as 'accuracy' or 'train_accuracy', nested or listed; a number under a length bin such
    as '1-50', alone or in a 'bins' dict) is a finite number in [0, 1], and a 'bins' dict
    names length bins, at least one. Other metrics may be infinite or NaN on purpose (a gap
    over a zero, a ratio of nothing). The digest is not a key (anyone can recompute it), so
    this check is what stops accuracies no evaluation can produce."""
    if isinstance(metrics, bool) or metrics is None or isinstance(metrics, str):
        # a length bin's value is its accuracy (or a dict of its numbers): never text or None
        binned = LENGTH_BIN.fullmatch(path.rpartition(".")[2]) is not None
        return f"{path} is {metrics!r}, not an accuracy" if binned else None
    if isinstance(metrics, (int, float)):
        if accuracy and not (math.isfinite(metrics) and 0 <= metrics <= 1):
            return f"{path} is {metrics}, not an accuracy (a finite number in [0, 1])"
        return None
    if isinstance(metrics, dict):
        bins = metrics.get(BINS)
        if BINS in metrics and not (isinstance(bins, dict) and bins
                                    and all(LENGTH_BIN.fullmatch(str(k)) for k in bins)):
            return f"{path}.{BINS} is not a dict of accuracies per length bin ('1-50': ...)"
        # a bin's number is an accuracy; a bin's dict ({"accuracy", "n", "loss"}) is read by
        # its keys' names
        items = ((f"{path}.{key}", value,
                  accuracy or _is_accuracy(str(key)) or (LENGTH_BIN.fullmatch(str(key))
                                                         is not None
                                                         and not isinstance(value, dict)))
                 for key, value in metrics.items())
    elif isinstance(metrics, list):
        items = ((f"{path}[{k}]", value, accuracy) for k, value in enumerate(metrics))
    else:
        return None
    for where, value, acc in items:
        problem = _metric_problem(value, where, acc)
        if problem:
            return problem
    return None


def _bin_sets(metrics, path: str = "metrics"):
    """(path, the length bins it names) of every dict of per-bin accuracies in the metrics."""
    if isinstance(metrics, dict):
        if metrics and all(LENGTH_BIN.fullmatch(str(k)) for k in metrics):
            yield path, frozenset(metrics)
            return
        for key, value in metrics.items():
            yield from _bin_sets(value, f"{path}.{key}")
    elif isinstance(metrics, list):
        for k, value in enumerate(metrics):
            yield from _bin_sets(value, f"{path}[{k}]")


def _bins_problem(metrics) -> str | None:
    """One record evaluates every model it holds on the same length bins: a dict of per-bin
    accuracies that lacks a bin the others name (a bin deleted by hand) is refused."""
    sets = list(_bin_sets(metrics))
    everyone = frozenset().union(*(bins for _, bins in sets)) if sets else frozenset()
    for where, bins in sets:
        if bins != everyone:
            return f"{where} lacks the length bin(s) {', '.join(sorted(everyone - bins))}"
    return None


def _read_capped(path: Path) -> str:
    """The text of a record file: a regular file (not a device, a pipe or a link to one) of at
    most MAX_RECORD_BYTES, read without following it further than that."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below)
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise LengthgenError(f"{path}: not a results record (not a regular file: a device, "
                                 f"a pipe or a link to one); delete it")
        data = f.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise LengthgenError(f"{path}: not a results record (larger than "
                             f"{MAX_RECORD_BYTES // 2 ** 20} MiB); delete it")
    return data.decode("utf-8")


def load_record(path: Path, check=None) -> dict:
    """A record file, validated (fields, types, digest, accuracies, its name and folder);
    check(record) -> None or what is wrong: what the folder's readers need beyond that (the
    keys they index). Any problem is one LengthgenError naming the file."""
    path = Path(path)
    try:
        record = json.loads(_read_capped(path))
    except LengthgenError:
        raise
    except json.JSONDecodeError as e:
        raise LengthgenError(f"{path}: malformed JSON results record ({e.msg} at line {e.lineno})")
    except UnicodeDecodeError:
        raise LengthgenError(f"{path}: not a results record (the file is not UTF-8 text)")
    except RecursionError:
        raise LengthgenError(f"{path}: not a results record (JSON nested too deeply to "
                             f"read); delete it") from None
    except ValueError as e:   # e.g. an integer of thousands of digits (Python's limit)
        raise LengthgenError(f"{path}: not a results record ({str(e).splitlines()[0][:120]}); "
                             f"delete it") from None
    except OSError as e:
        raise LengthgenError(f"{path}: cannot read results record ({e.strerror})")
    try:
        record = validate_record(record, source=str(path))
    except RecursionError:   # a structure deep enough to exhaust the stack while checked
        raise LengthgenError(f"{path}: not a results record (nested too deeply); "
                             f"delete it") from None
    expected = record_path(record["figure_id"], record["scale"], record["run_name"], path.parents[2])
    if expected.name != path.name or path.parent.name != record["scale"] \
            or path.parents[1].name != record["figure_id"]:
        raise LengthgenError(f"{path}: this file holds the record of "
                             f"{record['figure_id']}/{record['scale']}/{record['run_name']}: a "
                             f"copied or renamed record; delete it")
    problem = check(record) if check is not None else None
    if problem:
        raise LengthgenError(f"{path}: not a record its readers can use ({problem}); re-run "
                             f"it instead of editing results")
    return record


def record_files(folder: Path) -> list[Path]:
    """The record files of a folder: *.json without the runner's temporary dot-files."""
    try:
        return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))
    except OSError as e:
        raise LengthgenError(f"cannot list the records in {_short(folder)} "
                             f"({e.strerror or e.__class__.__name__})") from None


def remove_stale_temp_files(folder: Path, older_than_s: float | None = None) -> int:
    """Delete temp files a killed writer left behind: every one (call only while holding the
    folder's lock), or, in a folder that several processes write without one lock (the store
    of trained weights), those last written more than `older_than_s` seconds ago (a writer
    renames its temp file within seconds, so a file that old has none left)."""
    import time
    now = time.time()
    stale = []
    for p in Path(folder).glob(".tmp-*"):
        try:
            info = p.lstat()
        except OSError:
            continue   # renamed or removed by its writer meanwhile
        if stat.S_ISREG(info.st_mode) and (older_than_s is None
                                           or now - info.st_mtime > older_than_s):
            stale.append(p)
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def load_records(figure_id: str, scale: str, root: Path | None = None,
                 check=None) -> list[dict]:
    """All records of one figure at one scale, sorted by run name (check: as in load_record)."""
    folder = (root or results_dir()) / figure_id / scale
    try:
        if not folder.is_dir():
            return []
    except OSError as e:
        raise LengthgenError(f"cannot read the records in {_short(folder)} "
                             f"({e.strerror or e.__class__.__name__})") from None
    return [load_record(p, check) for p in record_files(folder)]
