"""Run a C-RASP program: the value of every operation at every position, vectorized.

Positions run 0..n: position 0 is the start position (the <bos> of a transformer), where no
symbol is read (every Q(s) is false) and which no count ever counts; positions 1..n hold the
input. So a count #P at i is the number of j in 1..i with P(j), and the value of the output at
position i is the program's verdict on the prefix of length i (the empty prefix included).
Counts are cumulative sums and local counts are shifts, so a batch of inputs of one length costs
a few numpy operations per program operation.

The browser playground's engine (book/_static/crasp_engine.js) computes the same values; the
contract between the two is tests/test_crasp_playground.py (see syntax/).
"""
import numpy as np

from lengthgen.crasp import ir
from lengthgen.errors import LengthgenError

INT64_SAFE = 2 ** 62   # counts stay below this in absolute value (no int64 overflow)
_COMPARE = {"<": np.less, "<=": np.less_equal, "=": np.equal, "!=": np.not_equal,
            ">=": np.greater_equal, ">": np.greater}


def tokens_of(program: ir.Program, text) -> list[str]:
    """An input as a list of symbols: a list is kept; a string is split into characters when
    every symbol is one character long, else on whitespace."""
    if isinstance(text, str):
        if all(len(s) == 1 for s in program.alphabet):
            return list(text.replace(" ", ""))
        return text.split()
    return list(text)


def shown_alphabet(alphabet, most: int = 12) -> str:
    """The alphabet for a message: its first symbols only when it is long."""
    more = f" ... ({len(alphabet)} symbols)" if len(alphabet) > most else ""
    return " ".join(alphabet[:most]) + more


def encode(program: ir.Program, inputs: list) -> np.ndarray:
    """A batch of inputs of one length as alphabet indices, int64 [B, n]."""
    index = {s: k for k, s in enumerate(program.alphabet)}
    rows = [tokens_of(program, x) for x in inputs]
    if len({len(r) for r in rows}) > 1:
        raise LengthgenError("a batch must hold inputs of one length")
    try:
        ids = [[index[s] for s in r] for r in rows]
    except KeyError as e:
        raise LengthgenError(f"symbol {e.args[0]!r} is not in the program's alphabet "
                             f"{shown_alphabet(program.alphabet)}") from None
    return np.array(ids, dtype=np.int64).reshape(len(rows), -1)


def run_ids(program: ir.Program, ids: np.ndarray) -> dict[str, np.ndarray]:
    """Values of every operation on a batch of encoded inputs: name -> array [B, n + 1]
    (bool for Boolean operations, int64 for counts); column 0 is the start position."""
    ids = np.asarray(ids, dtype=np.int64)
    batch, n = ids.shape
    _check_range(program, n)
    sym = np.concatenate([np.full((batch, 1), -1, dtype=np.int64), ids], axis=1)
    positions = np.arange(n + 1)
    index = {s: k for k, s in enumerate(program.alphabet)}
    v: dict[str, np.ndarray] = {}
    for name, op in program.ops.items():
        if isinstance(op, ir.Initial):
            val = sym == index.get(op.symbol, -2)
        elif isinstance(op, ir.Not):
            val = ~v[op.arg]
        elif isinstance(op, ir.And):
            val = v[op.left] & v[op.right]
        elif isinstance(op, ir.Or):
            val = v[op.left] | v[op.right]
        elif isinstance(op, ir.BoolConst):
            val = np.full((batch, n + 1), op.value)
        elif isinstance(op, ir.Periodic):
            row = np.isin(positions % op.period, list(op.residues))
            val = np.broadcast_to(row, (batch, n + 1))
        elif isinstance(op, ir.Compare):
            val = _COMPARE[op.op](v[op.left], v[op.right])
        elif isinstance(op, ir.Count):
            val = _count(v[op.arg], op.offsets)
        elif isinstance(op, ir.Cond):
            val = np.where(v[op.cond], v[op.then], v[op.otherwise])
        elif isinstance(op, ir.Add):
            val = v[op.left] + v[op.right]
        elif isinstance(op, ir.Sub):
            val = v[op.left] - v[op.right]
        elif isinstance(op, ir.CountConst):
            val = np.full((batch, n + 1), op.value, dtype=np.int64)
        else:
            raise LengthgenError(f"unknown operation {op!r} in {name!r}")
        v[name] = val
    return v


def _check_range(program: ir.Program, n: int) -> None:
    """Refuse inputs on which a count could leave int64 (|C(i)| <= M(C) (i+1), ir.count_bound),
    instead of wrapping around silently."""
    bounds = ir.count_bounds(program)
    if not bounds:
        return
    name = max(bounds, key=bounds.get)
    if bounds[name] * (n + 1) >= INT64_SAFE:
        raise LengthgenError(f"count {name!r} may exceed the 64-bit integers of the interpreter "
                             f"on inputs of length {n} (it is bounded only by "
                             f"{bounds[name]:.3g} x (length + 1))")


def _count(pred: np.ndarray, offsets) -> np.ndarray:
    """#[j <= i, i - j in offsets] P(j), over j >= 1 (the start position is never counted)."""
    p = pred.astype(np.int64)
    p[:, 0] = 0
    if offsets is None:
        return np.cumsum(p, axis=1)
    out = np.zeros_like(p)
    for k in offsets:
        if k == 0:
            out += p
        elif k < p.shape[1]:
            out[:, k:] += p[:, :-k]
    return out


def run_program(program: ir.Program, text) -> dict[str, np.ndarray]:
    """Values of every operation at positions 0..n of one input (a string or a list of
    symbols): name -> array [n + 1]."""
    return {k: a[0] for k, a in run_ids(program, encode(program, [text])).items()}


def run_batch(program: ir.Program, inputs: list) -> dict[str, np.ndarray]:
    """Values on a batch of inputs of one length: name -> array [B, n + 1]."""
    return run_ids(program, encode(program, inputs))


def accepts(program: ir.Program, text) -> bool:
    """The program's verdict: its output operation at the last position."""
    return bool(run_ids(program, encode(program, [text]))[program.output][0, -1])


def accept_batch(program: ir.Program, ids: np.ndarray) -> np.ndarray:
    """Verdicts on every prefix of every encoded input: bool [B, n + 1], column k = prefix of
    length k."""
    return run_ids(program, ids)[program.output]

