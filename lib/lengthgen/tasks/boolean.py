"""Nested Boolean expressions and their simplified forms (Richard 2024, Sec. 2 and App. 5.1.2).

An expression joins k random clauses; a clause of depth q joins two clauses of depth q-1 or
q-2 (each picked at random) with & or |, and a clause of depth <= 0 is a literal: true,
false, a variable or its negation. Every join inside a clause is parenthesized; the k clauses
are joined at the top level without parentheses, read with the usual precedence (not over and
over or). The depth of an expression is its deepest parenthesis nesting.

The oracle is sympy's simplify_logic; an answer is graded by sympy's equivalence test. Each
example is one equality: <start> expression = simplified <end>. Two ways to train on them:
`BooleanTask`, one padded equality per sequence with the loss on the answer, and
`BooleanWindowTask`, the paper's (Sec. 2.2): equalities concatenated into one long stream, cut
into windows of W tokens that each begin at a <start> (and need not end at an <end>), with the
loss on every next token. `paper_answer` is the paper's decoding rule.
"""
import numpy as np
from sympy import Not, Symbol, false, true
from sympy.logic.boolalg import And, Equivalent, Or, simplify_logic
from sympy.logic.inference import satisfiable

from lengthgen.errors import LengthgenError
from lengthgen.tasks import register
from lengthgen.tasks.base import PAD, Batch, Task

VARIABLES = ("p0", "p1", "p2", "p3")
LITERALS = ("true", "false") + VARIABLES + tuple("¬" + v for v in VARIABLES)
START, END, EQUALS, NOT, AND, OR = "<start>", "<end>", "=", "¬", "&", "|"
VOCAB = (PAD, START, END) + VARIABLES + (AND, OR, NOT, EQUALS, "false", "true", "(", ")")
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}


# ---- generation (Algorithm 1) ----------------------------------------------------------------
def random_clause(rng: np.random.Generator, q: int) -> list[str]:
    """Tokens of one random clause of maximum depth q."""
    if q <= 0:
        literal = LITERALS[rng.integers(len(LITERALS))]
        return [NOT, literal[1:]] if literal.startswith(NOT) else [literal]
    left = random_clause(rng, q - 1 if rng.random() < 0.5 else q - 2)
    right = random_clause(rng, q - 1 if rng.random() < 0.5 else q - 2)
    return ["("] + left + [AND if rng.random() < 0.5 else OR] + right + [")"]


def random_expression(rng: np.random.Generator, clauses: int, depth: int,
                      max_tries: int = 1000) -> list[str]:
    """Tokens of k = clauses random clauses of maximum depth q, randomly joined at the top.

    Algorithm 1 only bounds the depth (both children may come out shallower), so draws are
    repeated until the deepest clause has depth exactly q: the data is stratified by depth.
    """
    if clauses < 1 or depth < 0:
        raise LengthgenError(f"need clauses >= 1 and depth >= 0, got {clauses}, {depth}")
    for _ in range(max_tries):
        tokens = random_clause(rng, depth)
        for _ in range(clauses - 1):
            tokens += [AND if rng.random() < 0.5 else OR] + random_clause(rng, depth)
        if expression_depth(tokens) == depth:
            return tokens
    raise LengthgenError(f"could not draw an expression of depth {depth}")


def expression_depth(tokens: list[str]) -> int:
    """Deepest parenthesis nesting."""
    level = deepest = 0
    for t in tokens:
        level += (t == "(") - (t == ")")
        deepest = max(deepest, level)
    return deepest


def clause_count(tokens: list[str]) -> int:
    """Top-level operands: one more than the & and | outside every parenthesis."""
    level, joins = 0, 0
    for t in tokens:
        level += (t == "(") - (t == ")")
        joins += level == 0 and t in (AND, OR)
    return joins + 1


# ---- parsing and meaning --------------------------------------------------------------------
def parse(tokens: list[str]):
    """A syntax tree of nested tuples: ("var", name), ("const", bool), ("not", x),
    ("and" | "or", [operands]). Precedence: ¬ over & over |. Bad input raises LengthgenError."""
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take(expected=None):
        nonlocal pos
        t = peek()
        if t is None or (expected is not None and t != expected):
            raise LengthgenError(f"malformed Boolean expression at token {pos}: expected "
                                 f"{expected or 'more input'}, got {t!r}")
        pos += 1
        return t

    def chain(kind, symbol, operand):
        """operand (symbol operand)*: one node with every operand ("or" and "and" alike)."""
        terms = [operand()]
        while peek() == symbol:
            take()
            terms.append(operand())
        return terms[0] if len(terms) == 1 else (kind, terms)

    def disjunction():
        return chain("or", OR, conjunction)

    def conjunction():
        return chain("and", AND, unary)

    def unary():
        t = take()
        if t == NOT:
            return ("not", unary())
        if t == "(":
            inner = disjunction()
            take(")")
            return inner
        if t in VARIABLES:
            return ("var", t)
        if t in ("true", "false"):
            return ("const", t == "true")
        raise LengthgenError(f"malformed Boolean expression: unexpected token {t!r}")

    tree = disjunction()
    if pos != len(tokens):
        raise LengthgenError(f"malformed Boolean expression: trailing tokens from {tokens[pos]!r}")
    return tree


def evaluate(tree, assignment: dict[str, bool]) -> bool:
    """Truth value of a parsed expression (plain Python, independent of sympy)."""
    kind = tree[0]
    if kind == "var":
        return assignment[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "not":
        return not evaluate(tree[1], assignment)
    values = [evaluate(x, assignment) for x in tree[1]]
    return all(values) if kind == "and" else any(values)


def to_sympy(tree):
    kind = tree[0]
    if kind == "var":
        return Symbol(tree[1])
    if kind == "const":
        return true if tree[1] else false
    if kind == "not":
        return Not(to_sympy(tree[1]))
    operands = [to_sympy(x) for x in tree[1]]
    return And(*operands) if kind == "and" else Or(*operands)


def tokenize(text: str) -> list[str]:
    """Tokens of an expression written with our symbols or sympy's (~, True, False)."""
    text = text.replace("~", NOT).replace("True", "true").replace("False", "false")
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()&|=" or c == NOT:
            out.append(c)
            i += 1
        else:
            for word in VARIABLES + ("true", "false"):
                if text.startswith(word, i):
                    out.append(word)
                    i += len(word)
                    break
            else:
                raise LengthgenError(f"cannot tokenize Boolean expression at {text[i:i + 10]!r}")
    return out


def render(tokens: list[str]) -> str:
    """A readable string: spaces around & and |."""
    return "".join(f" {t} " if t in (AND, OR) else t for t in tokens)


def simplify(tokens: list[str]) -> list[str]:
    """The oracle: sympy's simplify_logic, written back in our tokens."""
    return tokenize(str(simplify_logic(to_sympy(parse(tokens)))))


def equivalent(answer: list[str], expression: list[str]) -> bool:
    """Grade an answer: True iff it parses and sympy proves it equivalent to the expression
    (no assignment makes them differ). An answer that does not parse is simply wrong.

    sympy's Boolean .equals is not used: it answers False whenever the two sides mention
    different variables, even when one of them is irrelevant (p3 | ~p3 vs true)."""
    try:
        a = to_sympy(parse(answer))
    except LengthgenError:
        return False
    return satisfiable(Not(Equivalent(a, to_sympy(parse(expression))))) is False


# ---- the task -------------------------------------------------------------------------------
def example_tokens(expression: list[str], answer: list[str]) -> list[str]:
    return [START] + expression + [EQUALS] + answer + [END]


class BooleanTask(Task):
    """Simplification as next-token prediction on a fixed pool of (expression, answer) pairs.

    Len is the expression's depth; the loss covers the answer and <end>. The pool is built
    once by the caller (sympy is too slow to call per training step).
    """

    def __init__(self, pool: list[tuple[list[str], list[str]]], task_id: str = "boolean"):
        if not pool:
            raise LengthgenError("a Boolean task needs a non-empty pool of examples")
        self.pool = pool
        self.depths = np.array([expression_depth(e) for e, _ in pool])
        self.id = task_id
        self.vocab = VOCAB
        self.n_classes = len(VOCAB)
        self.train_range = (int(self.depths.min()), int(self.depths.max()))
        self.test_bins = (self.train_range,)
        self.longest = max(len(example_tokens(e, a)) for e, a in pool) - 1

    def max_tokens(self, length: int) -> int:
        return self.longest

    def examples_of_depth(self, min_len: int, max_len: int) -> np.ndarray:
        """Pool indices of the examples whose depth is in [min_len, max_len] (never empty)."""
        self.check_length_range(min_len, max_len, smallest=0)
        allowed = np.flatnonzero((self.depths >= min_len) & (self.depths <= max_len))
        if allowed.size == 0:
            raise LengthgenError(f"{self.id}: no example of depth in [{min_len}, {max_len}]")
        return allowed

    def sample(self, rng, batch_size, min_len, max_len) -> Batch:
        picks = rng.choice(self.examples_of_depth(min_len, max_len), batch_size)
        seqs = [[TOKEN_ID[t] for t in example_tokens(*self.pool[i])] for i in picks]
        width = max(len(s) for s in seqs) - 1
        inputs = np.zeros((batch_size, width), dtype=np.int64)
        targets = np.zeros_like(inputs)
        mask = np.zeros((batch_size, width), dtype=bool)
        prompts = np.zeros(batch_size, dtype=np.int64)
        for row, s in enumerate(seqs):
            inputs[row, : len(s) - 1] = s[:-1]
            targets[row, : len(s) - 1] = s[1:]
            prompts[row] = s.index(TOKEN_ID[EQUALS]) + 1
            mask[row, prompts[row] - 1: len(s) - 1] = True
        return Batch(inputs=inputs, targets=targets, loss_mask=mask,
                     lengths=self.depths[picks].astype(np.int64), prompt_lengths=prompts)


def window_starts(stream: list[int], window: int) -> list[int]:
    """Where the windows of a concatenated stream of equalities begin.

    A window is `window` input tokens, stream[s : s + window], with the next tokens,
    stream[s + 1 : s + window + 1], as targets. The first begins at 0 (a <start>); each next one
    begins at the last <start> inside the previous window's targets, that is at the equality the
    previous window cut (or right after it, when it ended exactly on an <end>). So every window
    begins at a <start>, consecutive windows overlap by at most the cut equality, and together
    they cover the stream up to its last whole window. An equality longer than the window would
    never fit one: that raises LengthgenError.
    """
    start_id = TOKEN_ID[START]
    if window < 1:
        raise LengthgenError(f"a window needs at least one token, got {window}")
    if not stream or stream[0] != start_id:
        raise LengthgenError("a stream of equalities must begin with <start>")
    starts, s = [], 0
    while s + window + 1 <= len(stream):
        starts.append(s)
        following = max(i for i in range(s, s + window + 1) if stream[i] == start_id)
        if following == s:
            raise LengthgenError(f"an equality of more than {window} tokens does not fit a "
                                 f"window of {window}")
        s = following
    return starts


class BooleanWindowTask(BooleanTask):
    """The paper's training data: windows of `window` tokens cut from a concatenation of random
    equalities of the pool, each window beginning at a <start>; the loss covers every position.

    Each batch is cut from a fresh stream of equalities drawn at random (with replacement) from
    the examples of the requested depths, just long enough for batch_size windows. Len is the
    deepest expression that starts in the window. No PAD: every window is full.
    """

    def __init__(self, pool: list[tuple[list[str], list[str]]], window: int,
                 task_id: str = "boolean-windows"):
        super().__init__(pool, task_id)  # the pool, its depths and the vocabulary, as above
        self.sequences = [[TOKEN_ID[t] for t in example_tokens(e, a)] for e, a in pool]
        longest = max(len(s) for s in self.sequences)
        if longest > window:
            raise LengthgenError(f"the longest equality of the pool has {longest} tokens, more "
                                 f"than the window of {window}")
        self.window = window

    def max_tokens(self, length: int) -> int:
        return self.window

    def stream(self, rng, min_tokens: int, allowed: np.ndarray) -> tuple[list[int], list[int]]:
        """A concatenation of random equalities (ids in `allowed`) of at least min_tokens
        tokens, and the pool index of each equality in it."""
        tokens, picks = [], []
        while len(tokens) < min_tokens:
            i = int(allowed[rng.integers(allowed.size)])
            tokens += self.sequences[i]
            picks.append(i)
        return tokens, picks

    def sample(self, rng, batch_size, min_len, max_len) -> Batch:
        allowed = self.examples_of_depth(min_len, max_len)
        # each window advances the stream by at least window - (longest equality) + 1 tokens;
        # drawing whole windows' worth and topping up keeps this simple and exact
        tokens, picks = self.stream(rng, batch_size * self.window + 1, allowed)
        starts = window_starts(tokens, self.window)
        while len(starts) < batch_size:
            more, more_picks = self.stream(rng, self.window + 1, allowed)
            tokens, picks = tokens + more, picks + more_picks
            starts = window_starts(tokens, self.window)
        starts = starts[:batch_size]
        stream = np.array(tokens, dtype=np.int64)
        inputs = np.stack([stream[s: s + self.window] for s in starts])
        targets = np.stack([stream[s + 1: s + self.window + 1] for s in starts])
        # the depth of the deepest equality that begins inside each window
        begins = np.cumsum([0] + [len(self.sequences[i]) for i in picks[:-1]])
        depth_of = self.depths[picks]
        lengths = np.array([depth_of[(begins >= s) & (begins < s + self.window)].max()
                            for s in starts], dtype=np.int64)
        return Batch(inputs=inputs, targets=targets,
                     loss_mask=np.ones(inputs.shape, dtype=bool), lengths=lengths)


def paper_answer(generated: list[str], lhs_tokens: int) -> list[str] | None:
    """The paper's decoding rule (Sec. 2.2, "Evaluation data and metrics"): generation stops at
    <end>, and an answer counts only if it has fewer tokens than the left-hand side. So the
    model gets lhs_tokens generated tokens of room; the answer is what precedes an <end> among
    them (at most lhs_tokens - 1 tokens), and None (wrong, whatever it says) if no <end> comes
    within the room."""
    room = list(generated[:lhs_tokens])
    return room[: room.index(END)] if END in room else None


def make_pool(rng: np.random.Generator, count: int, clauses: int, depth: int):
    """count (expression, simplified answer) pairs of one depth."""
    pool = []
    for _ in range(count):
        expression = random_expression(rng, clauses, depth)
        pool.append((expression, simplify(expression)))
    return pool


register("boolean-2x3", lambda: BooleanTask(make_pool(np.random.default_rng(0), 256, 2, 3),
                                            task_id="boolean-2x3"))
