"""The results store: one JSON record per run, with provenance, written atomically.

Records are written only by `lengthgen.experiments.run_experiment` (or the `train` command),
never by hand. Each record carries a digest of its own content, so an edited file is caught.
"""
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import torch

from lengthgen.errors import LengthgenError

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_ENV = "LENGTHGEN_RESULTS"

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


def results_dir() -> Path:
    """Where records live: $LENGTHGEN_RESULTS, else results/ at the repository root."""
    return Path(os.environ.get(RESULTS_ENV, REPO_ROOT / "results"))


def git_commit() -> str:
    """The commit of the code that ran, marked +dirty when the tree had uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO_ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "lib"],
                               cwd=REPO_ROOT, capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(device: str, wall_time_s: float) -> dict:
    """Everything a reader needs to know about where and how a run happened."""
    from lengthgen import __version__
    return {
        "git_commit": git_commit(),
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]) if sys.argv else "",
        "device": device,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "lengthgen_version": __version__,
        "wall_time_s": round(float(wall_time_s), 3),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _digest(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def record_path(figure_id: str, scale: str, run_name: str, root: Path | None = None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_name)
    return (root or results_dir()) / figure_id / scale / f"{safe}.json"


def write_record(record: dict, root: Path | None = None) -> Path:
    """Seal the record with its digest, validate it, and write it atomically (temp file + rename)."""
    record = dict(record)
    record["digest"] = _digest(record)
    validate_record(record, source="<new record>")
    path = record_path(record["figure_id"], record["scale"], record["run_name"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
    if record["digest"] != _digest(record):
        raise LengthgenError(f"{source}: digest mismatch: the record was edited after the runner "
                             f"wrote it; re-run the experiment instead of editing results")
    return record


def load_record(path: Path) -> dict:
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise LengthgenError(f"{path}: malformed JSON results record ({e.msg} at line {e.lineno})")
    except OSError as e:
        raise LengthgenError(f"{path}: cannot read results record ({e.strerror})")
    return validate_record(record, source=str(path))


def load_records(figure_id: str, scale: str, root: Path | None = None) -> list[dict]:
    """All records of one figure at one scale, sorted by run name."""
    folder = (root or results_dir()) / figure_id / scale
    if not folder.is_dir():
        return []
    return [load_record(p) for p in sorted(folder.glob("*.json"))]
