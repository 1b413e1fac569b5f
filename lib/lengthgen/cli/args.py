"""What every command group shares: argument types that refuse bad numbers at parse time, and
the loops that read stdin and write stdout.

A bad value of an option is an argparse error (usage line, `error: argument --x: ...`, exit 2);
a bad line of stdin is `error: line N: ...` on stderr while the other lines go on (exit 2).
"""
import argparse
import math
import sys

from lengthgen.errors import LengthgenError

MAX_SEED = 2 ** 32 - 1   # seeds are offset for evaluation streams; torch takes < 2^64
CHUNK_SYMBOLS = 100_000  # symbols generated and printed at a time (so `| head` returns at once)
MAX_LINE_BYTES = 1_000_000  # one line of stdin; a longer one (or </dev/zero) ends the input
MAX_THREADS = 1024          # --threads at parse time (the runner allows 4 per core here)
MAX_WORKERS = 1024          # --workers at parse time (the runner allows 4 threads per core here)


class DefaultsFormatter(argparse.HelpFormatter):
    """Help that ends each option's line with its default, unless the option has none to show
    (None, a flag) or its help already says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False \
                or action.default == argparse.SUPPRESS or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def seed(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed must be in 0..{MAX_SEED}, got {text}")
    return value


def count(text: str) -> int:
    """A non-negative integer."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def finite(text: str) -> float:
    """A real number, neither NaN nor infinite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def positive_finite(text: str) -> float:
    value = finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def threads(text: str) -> int:
    """A torch thread count in 1..MAX_THREADS (torch crashes or overflows on absurd counts; the
    local runner further allows at most 4 per core of this machine)."""
    value = _integer(text)
    if not 1 <= value <= MAX_THREADS:
        raise argparse.ArgumentTypeError(f"must be in 1..{MAX_THREADS}, got {text}")
    return value


def workers(text: str) -> int:
    """A worker process count in 1..MAX_WORKERS (the local runner further allows at most 4
    threads per core of this machine over all workers)."""
    value = _integer(text)
    if not 1 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be in 1..{MAX_WORKERS}, got {text}")
    return value


def device(text: str) -> str:
    """A --device value every command checks the same way: its name here, at parse time (auto,
    cuda, cuda:N, mps or cpu, any case); whether this machine has it, in
    lengthgen.config.get_device when the command starts (`figure run`, `train` and `budget
    slice` all call it: one check, one message)."""
    from lengthgen.config import requested_device
    try:
        requested_device(text)
    except LengthgenError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def gib(n_bytes: float) -> str:
    """A byte count for a message: '3.2 GiB'."""
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{n_bytes / 2 ** 10:.3g} KiB"


def check_memory(estimate: float, what: str, hint: str = "") -> None:
    """Refuse, before allocating, work whose estimated memory is over the limit (one line
    naming both; lengthgen.config.memory_limit says where the limit comes from)."""
    from lengthgen.config import memory_limit
    limit, source = memory_limit()
    if not estimate <= limit:   # also catches NaN
        raise LengthgenError(f"{what} needs about {gib(estimate)} of memory, over the limit of "
                             f"{gib(limit)} ({source}){'; ' + hint if hint else ''}")


def check_seconds(estimate: float, limit: float, what: str, hint: str = "") -> None:
    """Refuse work whose estimated time on one core is over a command's stated limit."""
    if not estimate <= limit:
        raise LengthgenError(f"{what} takes about {estimate:,.0f} s on one core, over this "
                             f"command's limit of {limit:g} s{'; ' + hint if hint else ''}")


def check_length(length: int, longest: int, what: str = "--length") -> None:
    """A length that the command can generate: 0..longest (the limit is stated)."""
    if not 0 <= length <= longest:
        raise LengthgenError(f"{what} must be in 0..{longest}, got {length}")


def sample_options(sample, id_name: str, longest: int) -> None:
    """The options every `... sample ID` command takes (language and task alike), so that their
    limits and defaults stay one."""
    sample.add_argument(id_name)
    sample.add_argument("--length", type=count, required=True, help=f"N, at most {longest}")
    sample.add_argument("--count", type=count, default=1)
    sample.add_argument("--seed", type=seed, default=0)


def print_chunks(samples, to_line) -> None:
    """Print to_line(sample) for every sample of an iterable of lists, one chunk at a time."""
    for chunk in samples:
        sys.stdout.write("".join(to_line(x) + "\n" for x in chunk))
        sys.stdout.flush()


def chunked(total: int, length: int, draw):
    """draw(k) for pieces k of `total` samples of `length` symbols, each piece about
    CHUNK_SYMBOLS symbols (at least one sample)."""
    size = max(1, CHUNK_SYMBOLS // max(1, length))
    for start in range(0, total, size):
        yield draw(min(size, total - start))


class LineTooLong(LengthgenError):
    """A line of stdin over MAX_LINE_BYTES: the rest of stdin is not read."""


def _bounded(read_line):
    """Lines from read_line(limit) (a readline), each at most MAX_LINE_BYTES long without its
    line ending; a longer line (a binary file, /dev/zero) is a LineTooLong in its place and
    ends the lines (reading on to its end could take forever)."""
    number = 0
    while True:
        line = read_line(MAX_LINE_BYTES + 2)   # room for the line ending
        if not line:
            return
        number += 1
        ending = line[-1:] in ("\n", b"\n")
        if not ending and len(line) > MAX_LINE_BYTES:
            yield number, LineTooLong(f"longer than {MAX_LINE_BYTES:,} bytes, the limit of one "
                                      f"input line; the rest of stdin is not read")
            return
        yield number, line


def stdin_lines():
    """(line number, text) of every line of stdin, without its line ending; a line that is not
    UTF-8 or too long gives (line number, LengthgenError) instead (a too-long line is the last)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:   # a text stream (tests replace stdin with io.StringIO): already decoded
        for number, line in _bounded(sys.stdin.readline):
            yield number, line if isinstance(line, LengthgenError) else \
                line.rstrip("\n").rstrip("\r")
        return
    for number, raw in _bounded(stream.readline):
        if isinstance(raw, LengthgenError):
            yield number, raw
            return
        raw = raw.rstrip(b"\n").rstrip(b"\r")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as e:
            yield number, LengthgenError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column "
                                         f"{e.start + 1})")


def each_line(answer) -> int:
    """Print answer(text) for every line of stdin. A bad line (not UTF-8, or answer raises
    LengthgenError) prints an empty line, so outputs stay aligned with inputs, and
    `error: line N: ...` on stderr; the next lines go on. Exit status 2 if any line was bad."""
    status = 0
    for number, text in stdin_lines():
        try:
            if isinstance(text, LengthgenError):
                raise text
            out = answer(text)
        except LengthgenError as e:
            print(f"error: line {number}: {e}", file=sys.stderr, flush=True)
            out, status = "", 2
            if isinstance(e, LineTooLong):
                break
        print(out, flush=True)
    return status
