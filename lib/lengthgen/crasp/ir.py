"""The C-RASP program representation shared by the parser, the interpreter and the compiler.

A program is an ordered list of named operations over positions i = 1..n of the input
(the compiled transformer adds a start symbol at position 0, where every predicate is false).
Operands refer to earlier operations by name, so a program is a DAG in definition order.
Definitions follow Yang and Chiang (2024) and Huang et al. (2025, Def. 8) with the periodic
and local relations of C-RASP[periodic, local].
"""
from dataclasses import dataclass, field
from enum import Enum


class Sort(Enum):
    BOOL = "Boolean"
    COUNT = "Count"


@dataclass(frozen=True)
class Where:
    """Source position of a definition, for error messages (line and column start at 1)."""
    line: int = 0
    col: int = 0


# ----- Boolean-valued operations -----
@dataclass(frozen=True)
class Initial:
    """Q_s(i): the symbol at position i is s."""
    symbol: str


@dataclass(frozen=True)
class Not:
    arg: str


@dataclass(frozen=True)
class And:
    left: str
    right: str


@dataclass(frozen=True)
class Or:
    left: str
    right: str


@dataclass(frozen=True)
class BoolConst:
    value: bool


@dataclass(frozen=True)
class Periodic:
    """A periodic unary relation: true iff i mod period is in residues (C-RASP[periodic, .])."""
    period: int
    residues: frozenset


@dataclass(frozen=True)
class Compare:
    """C1(i) op C2(i) for op in <, <=, =, !=, >=, >."""
    left: str
    op: str
    right: str


# ----- Count-valued operations -----
@dataclass(frozen=True)
class Count:
    """#[j <= i, psi(i, j)] P(j).

    offsets=None counts every j <= i. Otherwise psi is the local, translation-invariant
    relation "i - j is in offsets" (C-RASP[., local]); its locality tau is max(offsets).
    """
    arg: str
    offsets: frozenset | None = None


@dataclass(frozen=True)
class Cond:
    """P(i) ? C1(i) : C2(i)."""
    cond: str
    then: str
    otherwise: str


@dataclass(frozen=True)
class Add:
    left: str
    right: str


@dataclass(frozen=True)
class Sub:
    left: str
    right: str


@dataclass(frozen=True)
class CountConst:
    value: int


BOOL_OPS = (Initial, Not, And, Or, BoolConst, Periodic, Compare)
COUNT_OPS = (Count, Cond, Add, Sub, CountConst)
COMPARISONS = ("<", "<=", "=", "!=", ">=", ">")


def sort_of(op) -> Sort:
    return Sort.BOOL if isinstance(op, BOOL_OPS) else Sort.COUNT


def operands(op) -> list[str]:
    """Names of the operations an operation reads."""
    if isinstance(op, (Not, Count)):
        return [op.arg]
    if isinstance(op, (And, Or, Compare, Add, Sub)):
        return [op.left, op.right]
    if isinstance(op, Cond):
        return [op.cond, op.then, op.otherwise]
    return []


@dataclass
class Program:
    """Named operations in definition order; `output` is the Boolean operation whose value at
    the last position decides acceptance (its value at every position is the prefix verdict).

    alphabet: the input symbols. token_outputs: for next-token programs of the algorithmic
    tasks, token -> Boolean operation that is true where that token comes next.
    """
    alphabet: tuple[str, ...]
    ops: dict[str, object]
    output: str
    where: dict[str, Where] = field(default_factory=dict)
    token_outputs: dict[str, str] = field(default_factory=dict)
    name: str = ""

    def uses_periodic(self) -> bool:
        return any(isinstance(op, Periodic) for op in self.ops.values())

    def uses_local(self) -> bool:
        return any(isinstance(op, Count) and op.offsets is not None for op in self.ops.values())

    def fragment(self) -> str:
        """The smallest fragment the program lies in: C-RASP[], [periodic], [local], [periodic,local]."""
        parts = [p for p, used in (("periodic", self.uses_periodic()),
                                   ("local", self.uses_local())) if used]
        return f"C-RASP[{','.join(parts)}]"


def count_bound(op, bounds: dict) -> float:
    """M(op): a bound on |C(i)|/(i+1) over all positions i (the start position included), from
    the bounds of its operands: 1 for a count, |c| for a constant c, M1 + M2 for a sum or
    difference, max(M1, M2) for a conditional. So |C(i)| <= M(C) (n+1) on inputs of length n."""
    if isinstance(op, Count):
        return 1.0
    if isinstance(op, CountConst):
        return float(abs(op.value))
    if isinstance(op, (Add, Sub)):
        return bounds[op.left] + bounds[op.right]
    return max(bounds[op.then], bounds[op.otherwise])


def count_bounds(program: Program) -> dict[str, float]:
    """M(C) of every count operation of a program (see count_bound)."""
    bounds: dict[str, float] = {}
    for name, op in program.ops.items():
        if sort_of(op) is Sort.COUNT:
            bounds[name] = count_bound(op, bounds)
    return bounds
