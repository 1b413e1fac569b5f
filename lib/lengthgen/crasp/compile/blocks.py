"""Building blocks: what each C-RASP operation writes into the residual stream.

Every operation owns one dimension of the residual stream:
  * a Boolean holds 0 or 1;
  * a count C holds C(i)/(i+1): uniform attention over positions 0..i averages a 0/1 value.
Helper dimensions: `@one` (1 everywhere), `@start` (1 at the start symbol), `@unit` (1/(i+1),
the average of @start), `@pos{r}` (one-hot of i mod Delta, only for periodic programs), and
scratch dimensions of local counts.

Each operation kind has one small function here returning a Stage: the attention heads or MLP
units that write its dimension, as weight dictionaries keyed by dimension *names*. The blocks know
nothing of layers (schedule.py places them) or of tensors (weights.py writes them down).

Comparisons are sign tests of z = (C2 - C1 + 1/2)/(i+1), whose margin is 1/(2(i+1)). A Heaviside
unit reads the sign exactly at every length. A ReLU ramp of slope k = max_length + 1 is exact
only while i + 1 <= k: that is the ReLU-only compile's limit, shown by `verify` beyond it.

Conditionals and the start-symbol mask use the bound |C(i)|/(i+1) <= M(C) of ir.count_bound.
"""
from dataclasses import dataclass

from lengthgen.crasp import ir

START_TOKEN = 0   # token id of the start symbol; symbol k of the alphabet has id 1 + k

# Local counts: logit log N * (LOCAL_PEAK at distance k, START_BOOST on the start symbol, 0 else).
# With N >= 2 the average of P then lies >= 4/7 when P(i-k) holds and <= 1/3 when it does not
# (also when i < k: the start symbol soaks up the weight), so a threshold at 1/2 with margin
# LOCAL_MARGIN = 1/14 is exact at every length (derivation in `local_count`).
LOCAL_PEAK = 3.0
START_BOOST = 2.0
LOCAL_MARGIN = 1.0 / 14.0


# ---------------------------------------------------------------- weights by dimension name
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




def unit() -> Stage:
    """@unit = 1/(i+1): uniform attention averages @start, which is 1 only at position 0."""
    return Stage("attn", ["@start"], ["@unit"], lambda act: [Head({"@start": 1.0}, "@unit")])


# ---------------------------------------------------------------- every operation of a program
EMBEDDED = (ir.Initial, ir.BoolConst)   # read off the token embedding: no stage


def program_stages(program: ir.Program, bounds: dict, max_length: int, mlp: str,
                   delta: int) -> list[Stage]:
    """The stages of every operation in program order, led by @unit when something reads it."""
    stages = []
    for name, op in program.ops.items():
        if isinstance(op, EMBEDDED):
            continue
        if isinstance(op, (ir.Not, ir.And, ir.Or)):
            stages.append(boolean_op(name, op))
        elif isinstance(op, ir.Periodic):
            stages.append(periodic(name, op, delta))
        elif isinstance(op, ir.Compare):
            stages.append(compare(name, op, bounds, max_length, mlp))
        elif isinstance(op, ir.Count) and op.offsets is not None:
            stages += local_count(name, op)
        elif isinstance(op, ir.Count):
            stages.append(count(name, op))
        elif isinstance(op, ir.CountConst):
            stages.append(count_const(name, op))
        elif isinstance(op, (ir.Add, ir.Sub)):
            stages.append(add_sub(name, op))
        else:
            stages.append(conditional(name, op, bounds))
    if any("@unit" in s.reads for s in stages):
        stages.insert(0, unit())
    return stages


def footprint(program: ir.Program, delta: int | None) -> tuple[int, int]:
    """(width of the residual stream, number of attention heads) that program_stages and the
    helpers will need, counted without building anything (to refuse a huge model early)."""
    width, heads = 3 + (delta or 0), 1     # @one, @start, @unit, @pos*; the @unit head
    for op in program.ops.values():
        width += 1
        if isinstance(op, ir.Count) and op.offsets is not None:
            width += 2 * len(op.offsets)   # the scratch dimensions @v, @b per distance
            heads += len(op.offsets)
        elif isinstance(op, (ir.Count, ir.CountConst)):
            heads += 1
    return width, heads
