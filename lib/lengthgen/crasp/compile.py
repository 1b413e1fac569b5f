"""Compile a C-RASP program into a Limit Transformer with explicit weights.

The construction of Huang et al. (2025, Thm. 9, App. B.6), after Yang and Chiang (2024). The
input is prefixed with a start symbol at position 0 (token id 0), where every predicate is false.
Every operation owns one dimension of the residual stream:
  * a Boolean holds 0 or 1;
  * a count C holds C(i)/(i+1): uniform attention over positions 0..i averages a 0/1 value.
Helper dimensions: `@one` (1 everywhere), `@start` (1 at the start symbol), `@unit` (1/(i+1),
the average of @start), `@pos{r}` (one-hot of i mod Delta, only for periodic programs), and
scratch dimensions of local counts. Each operation kind has one small function below returning
the attention heads or MLP units that write its dimension; a scheduler stacks them into layers.

Comparisons are sign tests of z = (C2 - C1 + 1/2)/(i+1), whose margin is 1/(2(i+1)). A Heaviside
unit reads the sign exactly at every length. A ReLU ramp of slope k = max_length + 1 is exact
only while i + 1 <= k: that is the ReLU-only compile's limit, shown by `verify` beyond it.

Bound used by conditionals and by the start-symbol mask: |C(i)|/(i+1) <= M(C) at every position
(start included), with M = 1 for a count, |c| for a constant c, M1 + M2 for a sum or difference,
max(M1, M2) for a conditional.
"""
import math
from dataclasses import dataclass, field
from functools import reduce

import numpy as np
import torch

from lengthgen.crasp import ir
from lengthgen.crasp.interpret import run_batch, tokens_of
from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitHead, LimitLayer, LimitMLP, LimitTransformer

MLP_MODES = ("heaviside", "relu")
START_TOKEN = 0

# Local counts: logit log N * (LOCAL_PEAK at distance k, START_BOOST on the start symbol, 0 else).
# With N >= 2 the average of P then lies >= 4/7 when P(i-k) holds and <= 1/3 when it does not
# (also when i < k: the start symbol soaks up the weight), so a threshold at 1/2 with margin
# LOCAL_MARGIN = 1/14 is exact at every length (derivation in `local_count`).
LOCAL_PEAK = 3.0
START_BOOST = 2.0
LOCAL_MARGIN = 1.0 / 14.0


# ---------------------------------------------------------------- building blocks
@dataclass
class Head:
    """Attention head writing sum_j a_ij * (value . x_j) into dimension `out`."""
    value: dict
    out: str
    local: dict | None = None        # distance -> phi
    start_boost: float = 0.0         # logit bonus on the start symbol


@dataclass
class Unit:
    """One hidden MLP unit: x[out] += w_out * act(w_in . x + bias)."""
    w_in: dict
    bias: float
    w_out: dict


@dataclass
class Stage:
    """A sublayer's worth of work for one operation: heads ("attn") or MLP units ("mlp").

    build(activation) returns the heads or units; `needs` is the MLP activation the units
    require, None when they work with either.
    """
    kind: str
    reads: list
    writes: list
    build: object
    needs: str | None = None


def _scaled(weights: dict, s: float) -> dict:
    return {name: s * w for name, w in weights.items()}


def _linear(*terms) -> dict:
    """Sum of (coefficient, dimension) pairs as a weight dict (a dimension may repeat)."""
    out = {}
    for coef, name in terms:
        out[name] = out.get(name, 0.0) + coef
    return out


def step(w_in: dict, bias: float, margin: float, out: dict, activation: str) -> list[Unit]:
    """Units adding out * [z >= 0] for z = w_in . x + bias; exact whenever |z| >= margin.

    Heaviside: one unit H(z). ReLU: the ramp relu(z/2m + 1/2) - relu(z/2m - 1/2), which is 0
    for z <= -m and 1 for z >= m.
    """
    if activation == "heaviside":
        return [Unit(w_in, bias, out)]
    s = 1.0 / (2.0 * margin)
    return [Unit(_scaled(w_in, s), s * bias + 0.5, out),
            Unit(_scaled(w_in, s), s * bias - 0.5, _scaled(out, -1.0))]


def identity_units(w_in: dict, out: str) -> list[Unit]:
    """ReLU units copying a linear form into `out`: relu(z) - relu(-z) = z."""
    return [Unit(w_in, 0.0, {out: 1.0}), Unit(_scaled(w_in, -1.0), 0.0, {out: -1.0})]


# ---------------------------------------------------------------- one function per operation
def initial_embedding(op: ir.Initial, alphabet) -> dict:
    """Q_s: token embedding 1 on symbol s (never on the start symbol)."""
    return {1 + alphabet.index(op.symbol): 1.0}


def bool_const_embedding(op: ir.BoolConst, alphabet) -> dict:
    """true: 1 on every symbol of the alphabet, 0 on the start symbol; false: 0."""
    return {1 + t: 1.0 for t in range(len(alphabet))} if op.value else {}


def boolean_op(name: str, op) -> Stage:
    """not / and / or as a step of a linear form with margin 1/2. `not` is masked at the start
    symbol; `and` and `or` are 0 there because their inputs are."""
    if isinstance(op, ir.Not):
        w_in, bias, reads = {op.arg: -1.0, "@start": -1.0}, 0.5, [op.arg]
    elif isinstance(op, ir.And):
        w_in, bias, reads = _linear((1, op.left), (1, op.right)), -1.5, [op.left, op.right]
    else:
        w_in, bias, reads = _linear((1, op.left), (1, op.right)), -0.5, [op.left, op.right]
    return Stage("mlp", reads + ["@start"], [name],
                 lambda act: step(w_in, bias, 0.5, {name: 1.0}, act))


def periodic(name: str, op: ir.Periodic, delta: int) -> Stage:
    """i mod period in residues: the sum of the matching one-hot positional dimensions."""
    rows = [f"@pos{r}" for r in range(delta) if r % op.period in op.residues]
    w_in = {**{row: 1.0 for row in rows}, "@start": -1.0}
    return Stage("mlp", rows + ["@start"], [name],
                 lambda act: step(w_in, -0.5, 0.5, {name: 1.0}, act) if rows else [])


# Which step units a comparison C1 op C2 adds up, with D = C2 - C1:
# a = [D >= 0], b = [D <= 0], s = [not start]; all three are 0 at the start symbol.
COMPARE_UNITS = {"<=": {"a": 1}, ">=": {"b": 1}, "=": {"a": 1, "b": 1, "s": -1},
                 "!=": {"a": -1, "b": -1, "s": 2}, "<": {"s": 1, "b": -1}, ">": {"s": 1, "a": -1}}


def compare(name: str, op: ir.Compare, bounds: dict, max_length: int, mlp: str) -> Stage:
    """Sign test of (C2 - C1 +- 1/2)/(i+1): margin 1/(2(i+1)), exact with Heaviside at every
    length and with the ReLU ramp of slope max_length + 1 up to position max_length.

    The start symbol is masked by subtracting big * @start with big > |C2 - C1| there.
    """
    big = bounds[op.left] + bounds[op.right] + 1.0
    margin = 1.0 / (2.0 * (max_length + 1))
    d = _linear((1, op.right), (-1, op.left))
    forms = {"a": ({**d, "@unit": 0.5, "@start": -big}, 0.0),
             "b": ({**_scaled(d, -1.0), "@unit": 0.5, "@start": -big}, 0.0),
             "s": ({"@start": -1.0}, 0.5)}

    def build(act):
        units = []
        for key, coef in COMPARE_UNITS[op.op].items():
            w_in, bias = forms[key]
            units += step(w_in, bias, margin if key != "s" else 0.5, {name: float(coef)}, act)
        return units
    return Stage("mlp", [op.left, op.right, "@unit", "@start"], [name], build, needs=mlp)


def count(name: str, op: ir.Count) -> Stage:
    """#P: uniform attention (query = key = 0) averages P over 0..i, and P(0) = 0."""
    return Stage("attn", [op.arg], [name], lambda act: [Head({op.arg: 1.0}, name)])


def count_const(name: str, op: ir.CountConst) -> Stage:
    """c/(i+1): the average of a value that is c at the start symbol and 0 elsewhere."""
    return Stage("attn", ["@start"], [name], lambda act: [Head({"@start": float(op.value)}, name)])


def add_sub(name: str, op) -> Stage:
    """C1 +- C2 is linear in the stored values; ReLU units copy it into the new dimension."""
    sign = 1.0 if isinstance(op, ir.Add) else -1.0
    w_in = _linear((1, op.left), (sign, op.right))
    return Stage("mlp", [op.left, op.right], [name], lambda act: identity_units(w_in, name),
                 needs="relu")


def conditional(name: str, op: ir.Cond, bounds: dict) -> Stage:
    """P ? C1 : C2 by ReLU gates: relu(x1 - B(1-P)) - relu(-x1 - B(1-P)) is x1 when P = 1 and 0
    when P = 0 because |x1| <= B; likewise for x2 with P. B = max of the two bounds."""
    big = max(bounds[op.then], bounds[op.otherwise])
    gates = ((op.then, big, -big), (op.otherwise, -big, 0.0))  # (value, weight on P, bias)

    def build(act):
        return [Unit(_linear((sign, value), (w, op.cond)), bias, {name: sign})
                for value, w, bias in gates for sign in (1.0, -1.0)]
    return Stage("mlp", [op.cond, op.then, op.otherwise], [name], build, needs="relu")


def local_count(name: str, op: ir.Count) -> list[Stage]:
    """#[j <= i, i - j in K] P: one head per distance k in K, then a threshold, then a gate.

    Head k has logit log N * (3 [j = i - k] + 2 [j = 0]). Writing N >= 2 for the input length
    and using i + 1 <= N, its output v is the weighted average of P with P(0) = 0:
      P(i-k) true:  v >= N^3 / (N^3 + N^2 + N) >= 4/7;
      P(i-k) false: v <= N / (N^3 + N^2) <= 1/3   (and v = 0 when i - k = 0);
      i < k:        v <= i / (N^2 + i) < 1/(N+1) <= 1/3.
    So b_k = [v >= 1/2] (margin 1/14) is exact at every length; the gate relu(@unit + b_k - 1)
    turns it into b_k/(i+1), and the stored count is the sum over k.
    """
    offsets = sorted(op.offsets)
    raw = [f"{name}@v{k}" for k in offsets]
    bits = [f"{name}@b{k}" for k in offsets]
    attend = Stage("attn", [op.arg, "@start", "@one"], raw,
                   lambda act: [Head({op.arg: 1.0}, v, {k: LOCAL_PEAK}, START_BOOST)
                                for k, v in zip(offsets, raw)])

    def threshold(act):
        return [u for v, b in zip(raw, bits)
                for u in step({v: 1.0}, -0.5, LOCAL_MARGIN, {b: 1.0}, act)]
    gate = Stage("mlp", bits + ["@unit"], [name],
                 lambda act: [Unit({"@unit": 1.0, b: 1.0}, -1.0, {name: 1.0}) for b in bits],
                 needs="relu")
    return [attend, Stage("mlp", raw, bits, threshold), gate]


def bound(op, bounds: dict) -> float:
    """M(op): a bound on |C(i)|/(i+1) over all positions, start symbol included."""
    if isinstance(op, ir.Count):
        return 1.0
    if isinstance(op, ir.CountConst):
        return float(abs(op.value))
    if isinstance(op, (ir.Add, ir.Sub)):
        return bounds[op.left] + bounds[op.right]
    return max(bounds[op.then], bounds[op.otherwise])


# ---------------------------------------------------------------- scheduling into layers
@dataclass
class _LayerPlan:
    heads: list = field(default_factory=list)
    stages: list = field(default_factory=list)
    activation: str | None = None


class _Schedule:
    """Places stages greedily: the residual stream at time 2l is read by layer l's heads, at
    2l+1 by its MLP; a dimension written there is ready at 2l+1 (heads) or 2l+2 (MLP)."""

    def __init__(self):
        self.layers: list[_LayerPlan] = []
        self.ready: dict[str, int] = {}

    def _layer(self, index: int) -> _LayerPlan:
        while len(self.layers) <= index:
            self.layers.append(_LayerPlan())
        return self.layers[index]

    def place(self, stage: Stage) -> None:
        time = max((self.ready[r] for r in stage.reads), default=0)
        if stage.kind == "attn":
            index = (time + 1) // 2
            self._layer(index).heads.append(stage)
            done = 2 * index + 1
        else:
            index = time // 2
            while stage.needs and self._layer(index).activation not in (None, stage.needs):
                index += 1  # that layer's MLP already has the other activation
            layer = self._layer(index)
            layer.activation = layer.activation or stage.needs
            layer.stages.append(stage)
            done = 2 * index + 2
        for name in stage.writes:
            self.ready[name] = done


# ---------------------------------------------------------------- the compiled model
@dataclass
class CompiledModel:
    """A program compiled into a LimitTransformer, with the dimension of every operation.

    Inputs are strings over the program's alphabet; the start symbol is added here.
    """
    program: ir.Program
    model: LimitTransformer
    dims: dict
    max_length: int
    mlp: str
    bounds: dict

    def tokens(self, string) -> torch.Tensor:
        """Token ids: the start symbol (0), then 1 + the index of each symbol in the alphabet."""
        alphabet = self.program.alphabet
        string = tokens_of(self.program, string)
        bad = sorted({s for s in string if s not in alphabet})
        if bad:
            raise LengthgenError(f"symbol(s) {', '.join(map(repr, bad))} not in the alphabet "
                                 f"{{{', '.join(alphabet)}}} of program {self.program.name!r}")
        return torch.tensor([START_TOKEN] + [1 + alphabet.index(s) for s in string])

    def residual(self, strings, allow_longer: bool = False) -> np.ndarray:
        """Final residual streams [B, n+1, d] for strings of one length n."""
        strings = [tokens_of(self.program, s) for s in strings]
        lengths = {len(s) for s in strings}
        if len(lengths) != 1:
            raise LengthgenError("residual() needs strings of one length; use run() otherwise")
        n = lengths.pop()
        if n > self.max_length and self.mlp == "relu" and not allow_longer:
            raise LengthgenError(
                f"input length {n} exceeds max_length={self.max_length} of this ReLU-only "
                f"compile, which is exact only up to that length (recompile with a larger "
                f"max_length, or use mlp='heaviside', exact at every length)")
        batch = torch.stack([self.tokens(s) for s in strings])
        with torch.no_grad():
            return self.model(batch.to(self.model.token_embedding.device)).cpu().numpy()

    def decode(self, stream: np.ndarray) -> dict:
        """Per operation, its values at positions 1..n: Booleans thresholded at 1/2, counts
        multiplied by i+1 and rounded."""
        scale = np.arange(stream.shape[-2], dtype=np.float64) + 1.0
        out = {}
        for name, op in self.program.ops.items():
            column = stream[..., self.dims[name]]
            if ir.sort_of(op) is ir.Sort.BOOL:
                out[name] = (column > 0.5)[..., 1:]
            else:
                out[name] = np.rint(column * scale).astype(np.int64)[..., 1:]
        return out

    def run(self, string, allow_longer: bool = False) -> dict:
        """Decoded value of every operation at every position 1..n of one string."""
        return self.decode(self.residual([string], allow_longer)[0])

    def accept_bits(self, string, allow_longer: bool = False) -> np.ndarray:
        """The prefix verdicts: the output operation at every position 1..n."""
        return self.run(string, allow_longer)[self.program.output]

    def size(self) -> dict:
        return {"mlp": self.mlp, "max_length": self.max_length, **self.model.summary()}

    def summary(self) -> str:
        s = self.size()
        return (f"{self.program.name or 'program'} -> Limit Transformer ({s['mlp']} MLPs): "
                f"{s['layers']} layers, width {s['width']}, heads {sum(s['heads_per_layer'])}, "
                f"{s['parameters']} parameters, positional parameters "
                f"{s['positional_parameters']}, period {s['period']}, tau {s['tau']}")


def _check_program(program: ir.Program) -> None:
    names = set()
    for name, op in program.ops.items():
        if name.startswith("@"):
            raise LengthgenError(f"operation name {name!r}: names starting with '@' are reserved "
                                 "for the compiler's helper dimensions")
        if not isinstance(op, ir.BOOL_OPS + ir.COUNT_OPS):
            raise LengthgenError(f"operation {name!r} has an unknown kind {type(op).__name__}")
        for arg in ir.operands(op):
            if arg not in names:
                raise LengthgenError(f"operation {name!r} reads {arg!r}, which is not defined "
                                     "before it")
        if isinstance(op, ir.Initial) and op.symbol not in program.alphabet:
            raise LengthgenError(
                f"operation {name!r} tests symbol {op.symbol!r}, which is not in the alphabet "
                f"{{{', '.join(program.alphabet)}}} of program {program.name!r}")
        if isinstance(op, ir.Count) and op.offsets is not None and (
                not op.offsets or min(op.offsets) < 0):
            raise LengthgenError(f"local count {name!r} needs a non-empty set of distances >= 0")
        names.add(name)
    if program.output not in names or ir.sort_of(program.ops[program.output]) is not ir.Sort.BOOL:
        raise LengthgenError(f"output {program.output!r} is not a Boolean operation of the program")


def _stages(program: ir.Program, bounds: dict, max_length: int, mlp: str, delta: int):
    """The stages of every operation in program order (embedded operations have none)."""
    for name, op in program.ops.items():
        if isinstance(op, (ir.Initial, ir.BoolConst)):
            continue
        if isinstance(op, (ir.Not, ir.And, ir.Or)):
            yield boolean_op(name, op)
        elif isinstance(op, ir.Periodic):
            yield periodic(name, op, delta)
        elif isinstance(op, ir.Compare):
            yield compare(name, op, bounds, max_length, mlp)
        elif isinstance(op, ir.Count) and op.offsets is not None:
            yield from local_count(name, op)
        elif isinstance(op, ir.Count):
            yield count(name, op)
        elif isinstance(op, ir.CountConst):
            yield count_const(name, op)
        elif isinstance(op, (ir.Add, ir.Sub)):
            yield add_sub(name, op)
        else:
            yield conditional(name, op, bounds)


def compile_program(program: ir.Program, max_length: int, mlp: str = "heaviside") -> CompiledModel:
    """The Limit Transformer computing every operation of `program` at every position.

    mlp="heaviside": exact at every input length (max_length is then only a declared range);
    mlp="relu": ReLU units only, exact for inputs of length <= max_length.
    """
    if mlp not in MLP_MODES:
        raise LengthgenError(f"unknown MLP mode {mlp!r}; valid: {', '.join(MLP_MODES)}")
    if int(max_length) < 1:
        raise LengthgenError(f"max_length must be a positive integer, got {max_length}")
    _check_program(program)
    bounds = {}
    for name, op in program.ops.items():
        if ir.sort_of(op) is ir.Sort.COUNT:
            bounds[name] = bound(op, bounds)
    periods = [op.period for op in program.ops.values() if isinstance(op, ir.Periodic)]
    delta = reduce(math.lcm, periods, 1) if periods else None

    schedule = _Schedule()
    for name in ["@one", "@start"] + [f"@pos{r}" for r in range(delta or 0)]:
        schedule.ready[name] = 0
    for name, op in program.ops.items():
        if isinstance(op, (ir.Initial, ir.BoolConst)):
            schedule.ready[name] = 0
    stages = list(_stages(program, bounds, int(max_length), mlp, delta or 1))
    if any("@unit" in s.reads for s in stages):
        schedule.place(Stage("attn", ["@start"], ["@unit"],
                             lambda act: [Head({"@start": 1.0}, "@unit")]))
    for stage in stages:
        schedule.place(stage)

    dims = {name: i for i, name in enumerate(schedule.ready)}
    model = _materialize(program, schedule, dims, delta)
    return CompiledModel(program, model, dims, int(max_length), mlp, bounds)


def _materialize(program: ir.Program, schedule: _Schedule, dims: dict, delta) -> LimitTransformer:
    """Turn the placed heads and units into weight tensors (float64)."""
    d, f64 = len(dims), torch.float64
    vocab = 1 + len(program.alphabet)
    embedding = torch.zeros(vocab, d, dtype=f64)
    embedding[:, dims["@one"]] = 1.0
    embedding[START_TOKEN, dims["@start"]] = 1.0
    for name, op in program.ops.items():
        if isinstance(op, ir.Initial):
            rows = initial_embedding(op, program.alphabet)
        elif isinstance(op, ir.BoolConst):
            rows = bool_const_embedding(op, program.alphabet)
        else:
            continue
        for token, value in rows.items():
            embedding[token, dims[name]] = value
    positional = None
    if delta:
        positional = torch.zeros(delta, d, dtype=f64)
        for r in range(delta):
            positional[r, dims[f"@pos{r}"]] = 1.0

    layers = []
    for plan in schedule.layers:
        activation = plan.activation or "relu"
        heads = [_head_tensors(h, dims, d) for stage in plan.heads for h in stage.build(activation)]
        units = [u for stage in plan.stages for u in stage.build(activation)]
        layers.append(LimitLayer(heads, _mlp_tensors(units, activation, dims, d) if units else None))
    return LimitTransformer(embedding, positional, layers, period=delta, check=True)


def _head_tensors(head: Head, dims: dict, d: int) -> LimitHead:
    f64 = torch.float64
    query, key = torch.zeros(d, 1, dtype=f64), torch.zeros(d, 1, dtype=f64)
    value, output = torch.zeros(d, 1, dtype=f64), torch.zeros(1, d, dtype=f64)
    for name, w in head.value.items():
        value[dims[name], 0] = w
    output[0, dims[head.out]] = 1.0
    if head.start_boost:
        query[dims["@one"], 0] = head.start_boost
        key[dims["@start"], 0] = 1.0
    local = None
    if head.local:
        local = torch.zeros(max(head.local) + 1, dtype=f64)
        for distance, phi in head.local.items():
            local[distance] = phi
    return LimitHead(query, key, value, output, local)


def _mlp_tensors(units: list[Unit], activation: str, dims: dict, d: int) -> LimitMLP:
    f64, m = torch.float64, len(units)
    w_in, b_in = torch.zeros(d, m, dtype=f64), torch.zeros(m, dtype=f64)
    w_out = torch.zeros(m, d, dtype=f64)
    for j, unit in enumerate(units):
        for name, w in unit.w_in.items():
            w_in[dims[name], j] += w
        b_in[j] = unit.bias
        for name, w in unit.w_out.items():
            w_out[j, dims[name]] += w
    return LimitMLP(w_in, b_in, w_out, torch.zeros(d, dtype=f64), activation)


# ---------------------------------------------------------------- checking against the interpreter
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
        stream = compiled.residual(batch, allow_longer)
        got = compiled.decode(stream)
        want = run_batch(program, batch)
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


def verify_up_to(program: ir.Program, compiled: CompiledModel, n: int, samples: int = 20,
                 seed: int = 0, allow_longer: bool = False) -> Verification:
    """Verify on `samples` random strings (see `sample_strings`), lengths evenly spread over
    n down to 1 (so the longest is always checked)."""
    if n < 1 or samples < 1:
        raise LengthgenError(f"need n >= 1 and samples >= 1, got n={n}, samples={samples}")
    lengths = np.linspace(1, n, samples).round().astype(int)[::-1]
    strings = sample_strings(program.alphabet, lengths, np.random.default_rng(seed))
    return verify(program, compiled, strings, allow_longer)


@dataclass
class CompileReport:
    """What a notebook cell shows: the model's size and its agreement with the interpreter."""
    compiled: CompiledModel
    verification: Verification

    @property
    def ok(self) -> bool:
        return self.verification.ok

    def __str__(self) -> str:
        return f"{self.compiled.summary()}\n{self.verification}"


def compile_and_verify(program: ir.Program, max_length: int, mlp: str = "heaviside",
                       samples: int = 20, seed: int = 0) -> CompileReport:
    """Compile, then check against the interpreter on random strings up to max_length."""
    compiled = compile_program(program, max_length, mlp)
    return CompileReport(compiled, verify_up_to(program, compiled, max_length, samples, seed))
