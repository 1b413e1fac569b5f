"""The two global switches: the scale of every experiment, and the device.

Both are read here and nowhere else, so a reader changes one environment variable
(LENGTHGEN_SCALE, LENGTHGEN_DEVICE) and every chapter follows.
"""
import os
from contextlib import contextmanager

from lengthgen.errors import LengthgenError

SCALE_ENV = "LENGTHGEN_SCALE"
DEVICE_ENV = "LENGTHGEN_DEVICE"
DRAW_WORKERS_ENV = "LENGTHGEN_DRAW_WORKERS"   # processes that draw the book's figures
MEMORY_ENV = "LENGTHGEN_MEMORY_LIMIT"   # e.g. 2G or 512M: what a command may plan to use
DEFAULT_MEMORY_LIMIT = 4 * 2 ** 30      # bytes, or half the machine's memory if that is less
SCALES = ("test", "book", "paper")
DEFAULT_SCALE = "book"


def cache_dir(name: str):
    """A folder of the library's caches (never committed): $XDG_CACHE_HOME/lengthgen/NAME, else
    ~/.cache/lengthgen/NAME. The trained Dyck models and the checkpoints of unfinished sweep
    trainings live there."""
    from pathlib import Path
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "lengthgen" / name


def get_scale(scale: str | None = None) -> str:
    """The scale to run at: the argument, else $LENGTHGEN_SCALE, else 'book'."""
    value = scale if scale is not None else os.environ.get(SCALE_ENV, DEFAULT_SCALE)
    value = value.strip().lower()
    if value not in SCALES:
        raise LengthgenError(
            f"invalid scale {value!r} (from {'argument' if scale is not None else SCALE_ENV}); "
            f"valid scales: {', '.join(SCALES)}"
        )
    return value


def draw_workers() -> int:
    """How many processes draw a chapter's figures and slider frames (`viz.parallel`):
    $LENGTHGEN_DRAW_WORKERS, else two where this process may run on two cores or more and the
    system is Linux (the others are workers started by a fork server, `viz.parallel`), else
    one."""
    import sys
    text = os.environ.get(DRAW_WORKERS_ENV, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise LengthgenError(f"{DRAW_WORKERS_ENV}={text!r}: expected a whole number of "
                                 f"processes, 1 or more")
        return int(text)
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    return min(2, len(os.sched_getaffinity(0)))


def memory_limit() -> tuple[int, str]:
    """(bytes, where that number comes from): the memory a command may plan to use. Commands
    estimate the memory of their work from their arguments and refuse above this, before
    allocating anything. $LENGTHGEN_MEMORY_LIMIT (bytes, or with a K, M or G suffix) sets it."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        units = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
        number, factor = (text[:-1], units[text[-1].upper()]) if text[-1].upper() in units \
            else (text, 1)
        try:
            value = int(float(number) * factor)
        except (ValueError, OverflowError):
            value = 0
        if value < 1:
            raise LengthgenError(f"{MEMORY_ENV}={text!r}: expected a positive size such as 2G "
                                 f"or 512M")
        return value, f"{MEMORY_ENV}={text}"
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 2 * DEFAULT_MEMORY_LIMIT
    if physical // 2 < DEFAULT_MEMORY_LIMIT:
        return physical // 2, f"half of this machine's memory; set {MEMORY_ENV} to change it"
    return DEFAULT_MEMORY_LIMIT, f"set {MEMORY_ENV} to change it"


def _mps_available() -> bool:
    import torch
    return hasattr(torch.backends, "mps") and torch.backends.mps.is_available()


def requested_device(device: str | None = None) -> str | None:
    """The device asked for (the argument, else $LENGTHGEN_DEVICE), checked by name only, or None
    for "choose the best available". A cluster's driver checks the name here and lets the
    cluster say whether it has the device (get_device checks this machine)."""
    requested = device if device is not None else os.environ.get(DEVICE_ENV)
    if requested is None or requested.strip() == "" or requested.strip().lower() == "auto":
        return None
    requested = requested.strip().lower()
    kind, colon, index = requested.partition(":")
    if kind not in ("cuda", "mps", "cpu"):
        raise LengthgenError(f"unknown device {requested!r}; valid: auto, cuda, mps, cpu")
    if colon and not (index.isascii() and index.isdigit()):
        raise LengthgenError(f"device {requested!r}: after ':' comes a device number, "
                             f"e.g. cuda:0")
    return requested


def get_device(device: str | None = None) -> "torch.device":
    """cuda, then mps, then cpu; the argument or $LENGTHGEN_DEVICE overrides.

    Asking for a device that is not there is an error, never a silent fallback.
    """
    import torch  # here, not at the top: `--help`, `figure list` and `figure data` need no torch
    requested = requested_device(device)
    if requested is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    kind, _, index = requested.partition(":")
    if kind == "cuda" and not torch.cuda.is_available():
        raise LengthgenError(
            f"device {requested!r} was asked for but no CUDA GPU is available here; "
            f"use 'cpu' or unset {DEVICE_ENV}"
        )
    if kind == "cuda" and index and int(index) >= torch.cuda.device_count():
        raise LengthgenError(f"device {requested!r} was asked for but this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    if kind == "mps" and not _mps_available():
        raise LengthgenError(f"device {requested!r} was asked for but MPS is not available here")
    try:
        return torch.device(requested)
    except RuntimeError as e:   # a form torch refuses that the checks above let through
        raise LengthgenError(f"invalid device {requested!r}: {e}") from None


@contextmanager
def torch_threads(n: int):
    """Run the enclosed tensor work on n CPU threads (float rounding depends on n, so the sweep
    runner fixes it per run), then restore the previous count."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def one_thread():
    """Run tiny tensor work on one CPU thread: on a small shared machine, threads spinning on
    each other make it 10x slower or worse (benchmarks/bench_train.py measures this)."""
    return torch_threads(1)
