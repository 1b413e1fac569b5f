"""Verification: the compiled model against the interpreter, at every position of every string.

`sample_strings` draws test strings (noise and members of the book's counting languages),
`verify` compares every operation's decoded value with the interpreter's, batched by length.
"""
from dataclasses import dataclass, field

import numpy as np

from lengthgen.crasp import ir
from lengthgen.crasp.compile.model import CompiledModel
from lengthgen.crasp.interpret import run_batch, tokens_of
from lengthgen.crasp.limits import MAX_VERIFY_LENGTH, MAX_VERIFY_SAMPLES
from lengthgen.errors import LengthgenError


def sample_strings(alphabet, lengths, rng: np.random.Generator) -> list[list[str]]:
    """One random string per requested length, including members of the book's counting
    languages, not only noise.

    Cycles through five kinds: uniform; equal symbol counts shuffled; equal counts in sorted
    blocks (a^k b^k c^k); a short random word repeated; a random well-nested word over the first
    two symbols (open, close).
    """
    symbols = list(alphabet)
    out = []
    for number, length in enumerate(lengths):
        kind = number % 5
        if kind == 0:
            word = list(rng.choice(symbols, length))
        elif kind in (1, 2):
            word = [symbols[t % len(symbols)] for t in range(length)]
            word = sorted(word, key=symbols.index) if kind == 2 else list(rng.permutation(word))
        elif kind == 3:
            unit = list(rng.choice(symbols, rng.integers(1, 4)))
            word = (unit * length)[:length]
        else:
            word = _nested(symbols, length, rng)
        out.append([str(s) for s in word])
    return out


def _nested(symbols, length: int, rng) -> list[str]:
    """A random balanced word over symbols[0] (open) and symbols[1] (close)."""
    if len(symbols) < 2:
        return [symbols[0]] * length
    word, depth = [], 0
    for left in range(length, 0, -1):
        must_close = depth >= left - (left % 2 == 1 and depth == 0)
        if depth > 0 and (must_close or rng.random() < 0.5):
            word.append(symbols[1])
            depth -= 1
        else:
            word.append(symbols[0])
            depth += 1
    return word


@dataclass
class Verification:
    """Compiled model vs interpreter at every position 1..n of every string checked.

    max_error: the largest distance between a stored value and its exact representation
    (0/1 for a Boolean, C(i)/(i+1) for a count): about 1e-16 where the construction is exact.
    """
    program: str
    mlp: str
    max_length: int
    strings: int = 0
    members: int = 0
    positions: int = 0
    value_mismatches: int = 0       # positions where some operation decodes wrongly
    accept_mismatches: int = 0      # positions where the accept bit is wrong
    max_error: float = 0.0
    first_mismatch: str | None = None
    by_length: dict = field(default_factory=dict)  # n -> {strings, positions, accept_agree,
    #                                                     value_agree, max_error}

    @property
    def ok(self) -> bool:
        return self.strings > 0 and self.value_mismatches == 0

    def __str__(self) -> str:
        verdict = "AGREES" if self.ok else "DISAGREES"
        lengths = sorted(self.by_length)
        text = (f"{self.program} ({self.mlp} MLPs, max_length {self.max_length}): {verdict} with "
                f"the interpreter on {self.strings} strings of lengths {lengths[0]}..{lengths[-1]} "
                f"({self.members} members), {self.positions} positions; wrong values at "
                f"{self.value_mismatches} positions, wrong accept bits at "
                f"{self.accept_mismatches}; max deviation from the exact representation "
                f"{self.max_error:.1e}") if lengths else f"{self.program}: nothing checked"
        return text + (f"\n  first mismatch: {self.first_mismatch}" if self.first_mismatch else "")


def verify(program: ir.Program, compiled: CompiledModel, strings, allow_longer: bool = False
           ) -> Verification:
    """Compare every operation at every position with the interpreter (strings batched by length)."""
    report = Verification(program.name or "program", compiled.mlp, compiled.max_length)
    by_length = {}
    for s in strings:
        s = tokens_of(program, s)
        by_length.setdefault(len(s), []).append(s)
    for n, batch in sorted(by_length.items()):
        if n == 0:
            continue
        want = run_batch(program, batch)   # first: it refuses counts that would overflow
        stream = compiled.residual(batch, allow_longer)
        got = compiled.decode(stream)
        _compare_batch(program, compiled, batch, stream, got, want, report)
    return report


def _compare_batch(program, compiled, batch, stream, got, want, report: Verification) -> None:
    n = len(batch[0])
    scale = np.arange(1, n + 1, dtype=np.float64) + 1.0
    wrong = np.zeros((len(batch), n), dtype=bool)
    error = 0.0
    for name, op in program.ops.items():
        exact = want[name][:, 1:].astype(np.float64)
        if ir.sort_of(op) is ir.Sort.COUNT:
            exact = exact / scale
        error = max(error, float(np.abs(stream[:, 1:, compiled.dims[name]] - exact).max()))
        bad = got[name] != want[name][:, 1:]
        if bad.any() and report.first_mismatch is None:
            b, i = map(int, np.argwhere(bad)[0])
            report.first_mismatch = (f"{name!r} at position {i + 1} of "
                                     f"{' '.join(batch[b]) if n <= 60 else f'a string of length {n}'}"
                                     f": interpreter {want[name][b, i + 1]}, model {got[name][b, i]}")
        wrong |= bad
    accept_wrong = got[program.output] != want[program.output][:, 1:]
    report.strings += len(batch)
    report.members += int(want[program.output][:, -1].sum())
    report.positions += wrong.size
    report.value_mismatches += int(wrong.sum())
    report.accept_mismatches += int(accept_wrong.sum())
    report.max_error = max(report.max_error, error)
    entry = report.by_length.setdefault(n, dict(strings=0, positions=0, accept_agree=0,
                                                 value_agree=0, max_error=0.0))
    entry["strings"] += len(batch)
    entry["positions"] += wrong.size
    entry["accept_agree"] += int((~accept_wrong).sum())
    entry["value_agree"] += int((~wrong).sum())
    entry["max_error"] = max(entry["max_error"], error)


def check_verify_range(n: int, samples: int) -> None:
    """verify_up_to's arguments, refused before any work: the longest string costs
    O(n^2) per attention head (float64 [n, n] weights), and every sample is one forward pass."""
    if not 1 <= n <= MAX_VERIFY_LENGTH:
        raise LengthgenError(f"max_length must be in 1..{MAX_VERIFY_LENGTH} to verify, got {n}")
    if not 1 <= samples <= MAX_VERIFY_SAMPLES:
        raise LengthgenError(f"the number of verification samples must be in "
                             f"1..{MAX_VERIFY_SAMPLES}, got {samples}")


def verify_up_to(program: ir.Program, compiled: CompiledModel, n: int, samples: int = 20,
                 seed: int = 0, allow_longer: bool = False) -> Verification:
    """Verify on `samples` random strings (see `sample_strings`), lengths evenly spread over
    n down to 1 (so the longest is always checked)."""
    check_verify_range(n, samples)
    lengths = np.linspace(1, n, samples).round().astype(int)[::-1]
    strings = sample_strings(program.alphabet, lengths, np.random.default_rng(seed))
    return verify(program, compiled, strings, allow_longer)


