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


def check_length(length: int, longest: int, what: str = "--length") -> None:
    """A length that the command can generate: 0..longest (the limit is stated)."""
    if not 0 <= length <= longest:
        raise LengthgenError(f"{what} must be in 0..{longest}, got {length}")


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


def stdin_lines():
    """(line number, text) of every line of stdin, without its line ending; a line that is not
    UTF-8 gives (line number, LengthgenError) instead."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:   # a text stream (tests replace stdin with io.StringIO): already decoded
        for number, line in enumerate(sys.stdin, start=1):
            yield number, line.rstrip("\n").rstrip("\r")
        return
    for number, raw in enumerate(stream, start=1):
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
        print(out, flush=True)
    return status
