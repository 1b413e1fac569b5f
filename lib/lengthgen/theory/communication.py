"""Communication matrices, built exhaustively: the lower-bound side of Huang et al. Cor. 13.

For a function f(x, y) of Alice's part x and Bob's part y, the communication matrix has a row
per x, a column per y and the entry f(x, y). Two standard facts (Kushilevitz and Nisan 1997,
ch. 1 and 4) turn it into bit counts:
  * one-way (Alice speaks, Bob answers): exactly ceil(log2 #distinct rows) bits are needed and
    enough; Alice can only send the row's index, and Bob can tell two rows apart only if they
    differ somewhere;
  * any deterministic protocol, even with many rounds, needs >= log2 rank(M) bits, and >= log2 |S|
    bits for a fooling set S (pairs with f = 1 whose crossings are not all 1).
Equality of two m-bit strings has the identity matrix: rank 2^m, fooling set {(x, x)}, so m bits
for deterministic protocols (a randomized protocol with private coins tests equality with
O(log m) bits, so these rank bounds are about deterministic protocols, which is what the
Limit Transformer's protocol is). Copying and adding 0 contain it. C-RASP languages such as
majority and Dyck-1 have only polynomially many distinct rows (a count, a depth), and so does
PARITY (two rows: 1 bit), which is why communication complexity cannot rule PARITY out.

One cut is not enough: "inner_equality" (is the first quarter of the word equal to the second?)
has two distinct rows at the middle cut, where Alice holds both quarters, and is equality of
m/2 symbols at the cut after the first quarter ("inner_equality_early"). Theorem 12 is stated
for the middle cut; its proof does not use where the cut is, and read at the cut after the first
quarter (the book's extension, not the paper's statement) it gives a short protocol there too,
so that cut rules the function out.
Ranks are exact (over the rationals, with sympy), not floating-point.
"""
import itertools
import math
from dataclasses import dataclass

import numpy as np

from lengthgen.crasp import accepts, run_batch
from lengthgen.crasp.library import get_program
from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.tasks.algorithmic import get_algorithmic

MAX_CELLS = 2 ** 22   # largest matrix built exhaustively (rows x columns)


def strings(alphabet, length: int) -> list[str]:
    """Every string of this length over the alphabet (characters), in lexicographic order."""
    return ["".join(p) for p in itertools.product(alphabet, repeat=length)]


def matrix(f, rows: list, columns: list) -> np.ndarray:
    """The communication matrix [f(x, y)] as 0/1 int64, rows x, columns y."""
    if len(rows) * len(columns) > MAX_CELLS:
        raise LengthgenError(f"a {len(rows)} x {len(columns)} matrix is above the limit of "
                             f"{MAX_CELLS} cells: use shorter parts")
    return np.array([[1 if f(x, y) else 0 for y in columns] for x in rows], dtype=np.int64)


def distinct_rows(m: np.ndarray) -> int:
    return len(np.unique(m, axis=0))


def one_way_bits(m: np.ndarray) -> int:
    """Bits Alice must send so that Bob can answer: ceil(log2 #distinct rows)."""
    return math.ceil(math.log2(distinct_rows(m))) if len(m) else 0


def exact_rank(m: np.ndarray) -> int:
    """Rank over the rationals (exact: sympy's domain matrices over QQ); duplicate rows and
    columns are removed first, which keeps the rank."""
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix
    m = np.unique(np.unique(m, axis=0), axis=1)
    if m.size == 0:
        return 0
    rows = [[QQ(int(v)) for v in row] for row in m]
    return DomainMatrix(rows, m.shape, QQ).rank()


def is_fooling_set(f, pairs: list) -> bool:
    """f(x, y) = 1 on every pair, and for two pairs (x, y), (x', y') f(x, y') or f(x', y) is 0."""
    if not all(f(x, y) for x, y in pairs):
        return False
    return all(not (f(x, y2) and f(x2, y)) for (x, y), (x2, y2) in itertools.combinations(pairs, 2))


# ----------------------------------------------------------------------------- the functions
def equality(x: str, y: str) -> bool:
    return x == y


def copying(x: str, y: str) -> bool:
    """Bob's part continues `x <sep>` as a correct copy (the copy task's own solver)."""
    return get_algorithmic("copy_repeat").solve(list(x)) == list(y)


def adding_zero(x: str, y: str) -> bool:
    """`x + 0 =` followed by Bob's answer y is a correct sum (the addition task's solver): adding
    0 copies x, leading zeros aside. Rows: x in {0,1}^m with a leading 1."""
    return get_algorithmic("addition").solve(list(x) + ["+", "0", "="]) == list(y)


def dyck2_mirror(x: str, y: str) -> bool:
    """Remark 21: Alice holds opening brackets, Bob closing ones; x y is in Dyck-2 (two bracket
    types, unbounded depth) exactly when y closes x in reverse, an equality test."""
    return dyck_member(x + y, pairs=("()", "[]"))


def dyck_member(word: str, pairs=("()", "[]")) -> bool:
    """Membership in the Dyck language over the given bracket pairs (a stack)."""
    closing = {p[1]: p[0] for p in pairs}
    stack = []
    for s in word:
        if s in closing:
            if not stack or stack.pop() != closing[s]:
                return False
        else:
            stack.append(s)
    return not stack


def parity(x: str, y: str) -> bool:
    return (x + y).count("1") % 2 == 1


def program_language(name: str):
    """f(x, y) = the library C-RASP program accepts x y."""
    program = get_program(name)
    return lambda x, y: accepts(program, x + y)


def _program_matrix(name: str, rows: list, columns: list) -> np.ndarray:
    """matrix(program_language(name), rows, columns), with all x y run as one batch."""
    if len(rows) * len(columns) > MAX_CELLS:
        raise LengthgenError(f"a {len(rows)} x {len(columns)} matrix is above the limit of "
                             f"{MAX_CELLS} cells: use shorter parts")
    program = get_program(name)
    verdicts = run_batch(program, [x + y for x in rows for y in columns])[program.output][:, -1]
    return verdicts.reshape(len(rows), len(columns)).astype(np.int64)


@dataclass
class Problem:
    """A function with its parts: Alice's rows and Bob's columns for parts of m symbols."""
    name: str
    f: object
    rows: object       # m -> list of Alice's parts
    columns: object    # m -> list of Bob's parts
    note: str


def _mirror(x: str) -> str:
    return x[::-1].translate(str.maketrans("([", ")]"))


PROBLEMS = {
    "equality": Problem("equality", equality, lambda m: strings("01", m),
                        lambda m: strings("01", m), "x = y"),
    "copy": Problem("copy", copying, lambda m: strings("ab", m), lambda m: strings("ab", m),
                    "copy with repeats: x <sep> y with y = x"),
    "addition": Problem("addition", adding_zero, lambda m: ["1" + s for s in strings("01", m - 1)],
                        lambda m: [s for k in range(1, m + 1) for s in strings("01", k)],
                        "x + 0 = y"),
    "dyck2": Problem("dyck2", dyck2_mirror, lambda m: strings("([", m),
                     lambda m: strings(")]", m), "Remark 21: x y in Dyck-2"),
    "inner_equality": Problem("inner_equality", lambda x, y: x[:len(x) // 2] == x[len(x) // 2:],
                              lambda m: strings("01", m), lambda m: strings("01", m),
                              "w[:m/2] = w[m/2:m], cut at m (Alice holds both quarters)"),
    "inner_equality_early": Problem("inner_equality_early",
                                    lambda x, y: x == y[:len(x)],
                                    lambda m: strings("01", m // 2),
                                    lambda m: strings("01", m + m // 2),
                                    "the same function, cut at m/2"),
    "parity": Problem("parity", parity, lambda m: strings("01", m), lambda m: strings("01", m),
                      "odd number of 1s in x y"),
    "majority_ab": Problem("majority_ab", None, lambda m: strings("ab", m),
                           lambda m: strings("ab", m), "C-RASP program: #a >= #b"),
    "dyck1": Problem("dyck1", None, lambda m: strings("ab", m), lambda m: strings("ab", m),
                     "C-RASP program: Dyck-1 (a opens, b closes)"),
}


def problem(name: str) -> Problem:
    if name not in PROBLEMS:
        raise unknown_name("communication problem", name, PROBLEMS)
    p = PROBLEMS[name]
    if p.f is None:
        p = Problem(p.name, program_language(name), p.rows, p.columns, p.note)
    return p


def problem_matrix(name: str, m: int) -> tuple[np.ndarray, list, list]:
    """The matrix of a named problem with parts of m symbols, and its rows and columns."""
    if m < 1:
        raise LengthgenError(f"parts need at least one symbol, got m={m}")
    if name.startswith("inner_equality") and m % 2:
        raise LengthgenError(f"{name} splits Alice's part in two quarters: m must be even, "
                             f"got m={m}")
    p = problem(name)
    rows, columns = p.rows(m), p.columns(m)
    if PROBLEMS[name].f is None:    # a C-RASP program: one vectorized run
        return _program_matrix(name, rows, columns), rows, columns
    return matrix(p.f, rows, columns), rows, columns


def summary(name: str, m: int) -> dict:
    """Rows, distinct rows, exact rank and the bits they force, for parts of m symbols; for the
    problems that contain equality, the diagonal fooling set is checked too."""
    p = problem(name)
    mat, rows, columns = problem_matrix(name, m)
    rank = exact_rank(mat)
    out = {"problem": name, "m": m, "rows": len(rows), "columns": len(columns),
           "distinct_rows": distinct_rows(mat), "rank": rank, "one_way_bits": one_way_bits(mat),
           "rank_bits": math.log2(rank) if rank else 0.0, "fooling_set": None}
    if name in ("equality", "copy", "inner_equality_early"):
        pairs = [(x, x + "0" * (len(columns[0]) - len(x))) for x in rows]
        out["fooling_set"] = len(rows) if is_fooling_set(p.f, pairs) else 0
    elif name == "dyck2":
        out["fooling_set"] = len(rows) if is_fooling_set(p.f, [(x, _mirror(x)) for x in rows]) \
            else 0
    elif name == "addition":
        out["fooling_set"] = len(rows) if is_fooling_set(p.f, [(x, x) for x in rows]) else 0
    return out


def distinct_messages(send, parts: list) -> int:
    """How many different messages a one-way protocol `send(part) -> bits` produces over
    Alice's parts: if fewer than the distinct rows of a problem, the protocol cannot solve it
    (two parts with different rows get the same message, so Bob answers both alike)."""
    return len({send(x) for x in parts})
