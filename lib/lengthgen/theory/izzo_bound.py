"""Izzo, Nichani and Lee (2026), Theorem 4.1, as numbers, and the simulation argument of its
proof (App. A.1) run on the one-layer Limit Transformers of App. A.2.

Theorem 4.1: for one-layer Limit Transformers f, g that are tau-local, Delta-periodic and
translation-invariant, with attention computed at p bits (terms exp(log N (a - a_max)) <= 2^-p
round to 0), logit margin gamma and norm L = max_s ||A||_F ||B||_F ||V E_s||, agreement within
delta on all inputs of length <= N implies agreement within O(delta + eps) on every input, for

    N = O(max(2^(p / gamma), tau Delta L^2 / eps^2)).

The first term is the length past which softmax is a hardmax (section 3.2); the second is the
length of the short string z the proof builds. The O hides constants the paper does not give:
`theorem41_length` uses 1 for both, so its N is the shape of the bound, not a certified value.

The simulation (proof of Thm 4.1, first step, for one model): past the hardmax length, the
last token's attention is uniform over the positions of maximal logit, so the output depends on
x only through the frequencies of the (symbol, position mod Delta) types among those positions,
plus the last tau + 1 tokens. `simulate` builds a short z that keeps the suffix and rescales the
counts of the attended types to about tau/eps in total, with non-attended filler tokens to put
each one at its residue mod Delta, and reports how far the frequencies and outputs moved.
"""
import math
from dataclasses import dataclass

import numpy as np
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitHead, LimitLayer, LimitMLP, LimitTransformer, round_to_bits


# ---- the bound -----------------------------------------------------------------------------
def _positive(name, value, integer=False, minimum=None):
    bad = isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
    if not bad:
        bad = not math.isfinite(value) or (integer and int(value) != value)
    if bad or (minimum is None and value <= 0) or (minimum is not None and value < minimum):
        need = f">= {minimum}" if minimum is not None else "> 0"
        raise LengthgenError(f"Theorem 4.1: {name} must be a finite "
                             f"{'integer' if integer else 'number'} {need}, got {value!r}")


def theorem41_length(delta: int, tau: int, L: float, eps: float, p: int,
                     gamma: float) -> dict:
    """The two terms of Theorem 4.1's N (constants set to 1), their max and which one wins.

    delta: period of the positional encodings (1 = none); tau: locality of phi; L: the norm of
    the theorem; eps: target error; p: bits of precision; gamma: logit margin.
    """
    _positive("the period Delta", delta, integer=True, minimum=1)
    _positive("the locality tau", tau, integer=True, minimum=1)
    _positive("the norm L", L)
    _positive("the error eps", eps)
    _positive("the precision p", p, integer=True, minimum=0)
    _positive("the margin gamma", gamma)
    exponent = p / gamma
    hardmax = math.inf if exponent > 1023 else 2.0 ** exponent
    statistics = tau * delta * L ** 2 / eps ** 2
    return {"hardmax": hardmax, "statistics": statistics, "N": max(hardmax, statistics),
            "regime": "hardmax" if hardmax >= statistics else "statistics"}


# ---- the constructions of App. A.2 ---------------------------------------------------------
@dataclass
class Construction:
    """A one-layer Limit Transformer with its readout and the facts the theorem needs."""
    model: LimitTransformer
    readout: torch.Tensor          # U: the output is U . y_N
    vocab: tuple[str, ...]         # token ids of the task (0 = PAD, unused)
    delta: int                     # period of the positional encodings (1: none)
    tau: int                       # phi is zero, which is tau-local for every tau; we use 1,
                                   # the smallest the bound's tau Delta L^2 / eps^2 accepts
    bits: int                      # p: logits rounded to p fractional bits, terms <= 2^-p to 0


def _eye(d, i):
    v = torch.zeros(d, dtype=torch.float64)
    v[i] = 1.0
    return v


def simple_task_model(omega: float, knots: int = 64, margin: float = 2.0,
                      bits: int = 8, pair: tuple = (0, 1)) -> Construction:
    """SimpleTask (App. A.2): E_0, E_1, E_2 orthogonal, no positions; the logit is `margin`
    on 0s and 1s and 0 on 2s, so attention is uniform over the 0s and 1s; V E_0 = -V E_1
    writes (c0 - c1)/(c0 + c1) to one coordinate and a ReLU MLP interpolates sin(omega z) on
    [-1, 1] at `knots` evenly spaced points. Its output weights are the changes of slope between
    knots, about omega^2 / knots each, so L = ||A||_F ||B||_F max_s ||V E_s|| grows faster than
    the Theta(omega) the paper states for its construction: at 64 knots L is 4.5, 8.7, 30.7,
    89.5 and 373 for omega = 1, 2, 4, 8, 16 (x1.9, 3.5, 2.9, 4.2 per doubling; the ragged
    factors come from where the knots fall on the sine), between omega and omega^2.
    The Lipschitz constant of the function itself is omega.
    `pair` = (a, b) builds the same model for the symbols a and b in place of 0 and 1,
    sin(omega (c_a - c_b) / (c_a + c_b)): a second model for the two-model simulation."""
    if len(pair) != 2 or set(pair) - {0, 1, 2} or pair[0] == pair[1]:
        raise LengthgenError(f"SimpleTask: pair must be two different symbols of 0, 1, 2, "
                             f"got {pair!r}")
    if not (math.isfinite(omega) and 0 < omega <= 100):
        raise LengthgenError(f"SimpleTask: omega must be in (0, 100], got {omega!r}")
    d = 6  # 0..2 token one-hots, 3 constant, 4 the ratio z, 5 the output
    emb = torch.zeros(4, d, dtype=torch.float64)
    for token in range(3):
        emb[token + 1, token] = 1.0
        emb[token + 1, 3] = 1.0
    query = torch.zeros(d, 1, dtype=torch.float64)
    query[3, 0] = 1.0
    key = torch.zeros(d, 1, dtype=torch.float64)
    a, b = pair
    key[a, 0] = key[b, 0] = margin
    value = torch.zeros(d, 1, dtype=torch.float64)
    value[a, 0], value[b, 0] = 1.0, -1.0
    output = _eye(d, 4)[None, :]
    head = LimitHead(query, key, value, output)
    # piecewise-linear interpolation of sin(omega z): sum_k a_k relu(z - t_k) + sin(omega t_0)
    t = torch.linspace(-1.0, 1.0, knots + 1, dtype=torch.float64)
    f = torch.sin(omega * t)
    slopes = (f[1:] - f[:-1]) / (t[1:] - t[:-1])
    a = torch.cat([slopes[:1], slopes[1:] - slopes[:-1]])
    w_in = torch.zeros(d, knots, dtype=torch.float64)
    w_in[4] = 1.0
    b_in = -t[:-1]
    w_out = torch.zeros(knots, d, dtype=torch.float64)
    w_out[:, 5] = a
    b_out = torch.zeros(d, dtype=torch.float64)
    b_out[5] = f[0]
    mlp = LimitMLP(w_in, b_in, w_out, b_out)
    model = LimitTransformer(emb, None, [LimitLayer([head], mlp)], precision_bits=bits,
                             round_softmax=True)
    return Construction(model, _eye(d, 5), ("<pad>", "0", "1", "2"), 1, 1, bits)


def modp_task_model(p: int, k: int = 0, margin: float = 2.0, bits: int = 8) -> Construction:
    """ModPTask (App. A.2): orthogonal periodic positions q_r (Delta = p); the logit is
    `margin` at positions = k mod p and 0 elsewhere, V reads the token (V E_1 = e, V E_0 = 0,
    V q_r = 0), so the attention output is the mean of x_t over t = k mod p; no MLP needed."""
    if not (isinstance(p, int) and 1 <= p <= 64) or not (isinstance(k, int) and 0 <= k < p):
        raise LengthgenError(f"ModPTask: need an integer period p in [1, 64] and 0 <= k < p, "
                             f"got p={p!r}, k={k!r}")
    d = 4 + p  # 0..1 token one-hots, 2 constant, 3 the output, 4.. positional one-hots
    emb = torch.zeros(3, d, dtype=torch.float64)
    for token in range(2):
        emb[token + 1, token] = 1.0
        emb[token + 1, 2] = 1.0
    positional = torch.zeros(p, d, dtype=torch.float64)
    for r in range(p):
        positional[r, 4 + r] = 1.0
    query = torch.zeros(d, 1, dtype=torch.float64)
    query[2, 0] = 1.0
    key = torch.zeros(d, 1, dtype=torch.float64)
    key[4 + k, 0] = margin
    value = torch.zeros(d, 1, dtype=torch.float64)
    value[1, 0] = 1.0
    head = LimitHead(query, key, value, _eye(d, 3)[None, :])
    model = LimitTransformer(emb, positional, [LimitLayer([head])], period=p,
                             precision_bits=bits, round_softmax=True)
    return Construction(model, _eye(d, 3), ("<pad>", "0", "1"), p, 1, bits)


# ---- quantities of the theorem -------------------------------------------------------------
def _head(c: Construction) -> LimitHead:
    return c.model.layers[0].heads[0]


def _types(c: Construction) -> list[tuple[int, int]]:
    """(token id, residue mod Delta) pairs: the proof's enlarged vocabulary."""
    return [(tok, r) for tok in range(1, len(c.vocab)) for r in range(c.delta)]


def _type_vectors(c: Construction, types) -> torch.Tensor:
    m = c.model
    rows = [m.token_embedding[tok] + (m.positional[r] if m.positional is not None else 0)
            for tok, r in types]
    return torch.stack(rows)


def logit_margin(c: Construction) -> float:
    """gamma(f) of section 3.2: the smallest positive gap between two logits one query type
    can see (over all key types; phi is zero here), after rounding to the model's bits."""
    types = _types(c)
    vectors = _type_vectors(c, types)
    head = _head(c)
    logits = (vectors @ head.query) @ (vectors @ head.key).T  # [query type, key type]
    logits = round_to_bits(logits, c.bits)
    gaps = []
    for row in logits:
        values = torch.unique(row)
        if len(values) > 1:
            gaps.append(float((values[1:] - values[:-1]).min()))
    return min(gaps) if gaps else math.inf


def theorem_norm(c: Construction) -> float:
    """L = ||A||_F ||B||_F max_s ||V E_s|| (||A||_F ||B||_F = 1 when there is no MLP)."""
    head = _head(c)
    mlp = c.model.layers[0].mlp
    lip = 1.0 if mlp is None else float(mlp.w_in.norm() * mlp.w_out.norm())
    vectors = _type_vectors(c, _types(c))
    return lip * float(((vectors @ head.value) @ head.output).norm(dim=1).max())


# ---- one layer, last position only (inputs of 10^5 tokens) ----------------------------------
def last_attention(c: Construction, tokens: np.ndarray) -> np.ndarray:
    """The finite-precision attention weights of the last token on every position [n]."""
    m = c.model
    head = _head(c)
    if head.local is not None or head.phi is not None:
        raise LengthgenError("last_attention covers heads without phi (the App. A.2 "
                             "constructions); this head has a positional term")
    with torch.no_grad():
        stream = m.embed(torch.as_tensor(tokens, dtype=torch.long)[None])[0]
        a = round_to_bits((stream @ head.key) @ (stream[-1] @ head.query), c.bits)
        n = len(tokens)
        scores = math.log(n) * (a - a.max()) if m.log_length_scaling else a - a.max()
        terms = torch.exp(scores)
        terms = terms.masked_fill((terms <= 2.0 ** -c.bits) & (terms < 1), 0.0)
        return (terms / terms.sum()).numpy()


def last_output(c: Construction, tokens: np.ndarray) -> float:
    """f(x): the readout of the last position, computed from that position alone."""
    m = c.model
    head = _head(c)
    weights = torch.as_tensor(last_attention(c, tokens))
    with torch.no_grad():
        stream = m.embed(torch.as_tensor(tokens, dtype=torch.long)[None])[0]
        y = stream[-1] + (weights @ (stream @ head.value)) @ head.output
        mlp = m.layers[0].mlp
        if mlp is not None:
            y = y + mlp(y)
        return float(y @ c.readout)


def attended_frequencies(c: Construction, tokens: np.ndarray) -> dict:
    """Attention mass per (token, residue) type: the statistics the output depends on."""
    weights = last_attention(c, tokens)
    residues = np.arange(len(tokens)) % c.delta
    out = {}
    for tok, r in _types(c):
        mass = float(weights[(tokens == tok) & (residues == r)].sum())
        if mass > 0:
            out[(tok, r)] = mass
    return out


# ---- the simulation ------------------------------------------------------------------------
def _fillers(types, delta: int, avoid) -> dict:
    """Per residue, the token of a type not in `avoid` (a position no hardmax looks at)."""
    fillers = {}
    for r in range(delta):
        options = [s for s in types if s[1] == r and s not in avoid]
        if options:
            fillers[r] = options[0][0]
    return fillers


def _write_prefix(wanted: dict, fillers: dict, delta: int, start: int, length: int,
                  fallback, wrote=None) -> list[int]:
    """The prefix of z, one position at a time: at residue r the (token, residue) type of
    `wanted` furthest from its quota (which keeps the running ratios even), else the filler of
    r, else `fallback(r)`; it ends once every quota is met, it is at least `length` long and
    the next position has residue `start` (where the kept suffix must begin). `wrote(s)` is
    told of every type written (fillers aside)."""
    pending = {s: v for s, v in wanted.items() if v > 0}
    z: list[int] = []

    def place() -> None:
        r = len(z) % delta
        here = [s for s in pending if s[1] == r]
        if here:
            s = max(here, key=lambda s: pending[s])
            pending[s] -= 1
            if pending[s] == 0:
                del pending[s]
        elif r in fillers:
            z.append(fillers[r])
            return
        else:
            s = fallback(r)
        z.append(s[0])
        if wrote is not None:
            wrote(s)

    while pending or len(z) % delta != start:
        place()
    while len(z) < length or len(z) % delta != start:
        place()
    return z


def _statistic_error(c: Construction, tokens: np.ndarray, z_tokens: np.ndarray) -> float:
    """The largest change of an attended type's share of the hardmax between x and z."""
    fx, fz = attended_frequencies(c, tokens), attended_frequencies(c, z_tokens)
    return max((abs(fx.get(s, 0.0) - fz.get(s, 0.0)) for s in set(fx) | set(fz)), default=0.0)


def simulate(c: Construction, tokens: np.ndarray, eps: float, min_length: int = 1) -> dict:
    """Build the proof's short string z for x = tokens and compare f on both.

    The last tau + 1 tokens of x are kept (at the same residue mod Delta). Before them, each
    attended type s (maximal logit for the last token) with n_s occurrences among the |A|
    attended positions is written m_s = floor(n_s / |A| * tau / eps) times, or copied exactly
    when |A| <= tau / eps; every other slot gets a filler, a type of lower logit at that
    residue. z is padded with fillers to at least `min_length` (the hardmax length
    2^(p/gamma)). Returns |x|, |z|, the largest change in an attended type's attention mass,
    |f(x) - f(z)|, and both outputs.
    """
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise LengthgenError(f"simulation: eps must be a positive number, got {eps!r}")
    tokens = np.asarray(tokens, dtype=np.int64)
    n, delta, tau = len(tokens), c.delta, c.tau
    if n <= tau + 1:
        raise LengthgenError(f"simulation: x must be longer than tau + 1 = {tau + 1}")
    types = _types(c)
    head = _head(c)
    vectors = _type_vectors(c, types)
    last_type = types.index((int(tokens[-1]), (n - 1) % delta))
    logits = round_to_bits((vectors @ head.key) @ (vectors[last_type] @ head.query), c.bits)
    present = {(int(t), i % delta) for i, t in enumerate(tokens)}
    best = max(float(logits[types.index(s)]) for s in present)
    attended = {s for s in types if float(logits[types.index(s)]) == best}
    prefix, suffix = tokens[: n - tau - 1], tokens[n - tau - 1:]
    residues = np.arange(len(prefix)) % delta
    counts = {s: int(((prefix == s[0]) & (residues == s[1])).sum()) for s in attended}
    total = sum(counts.values())
    budget = tau / eps
    if total <= budget:
        wanted = dict(counts)
    else:
        wanted = {s: math.floor(v / total * budget) for s, v in counts.items()}
    def commonest(r):  # every type at this residue is attended: one more of the commonest
        return max((s for s in attended if s[1] == r), key=lambda s: counts[s])

    z = _write_prefix(wanted, _fillers(types, delta, attended), delta,
                      start=(n - tau - 1) % delta, length=min_length - len(suffix),
                      fallback=commonest)
    z_tokens = np.array(z + list(suffix), dtype=np.int64)
    stat = _statistic_error(c, tokens, z_tokens)
    out_x, out_z = last_output(c, tokens), last_output(c, z_tokens)
    return {"x_length": n, "z_length": len(z_tokens), "statistic_error": stat,
            "output_x": out_x, "output_z": out_z, "output_error": abs(out_x - out_z),
            "z": z_tokens}


# ---- the second half of the proof: one string for two models ---------------------------------
def attended_types(c: Construction, tokens: np.ndarray) -> set:
    """The (token, residue) types of maximal rounded logit for the last token among the types
    present in x: the positions the hardmax of c averages over."""
    types = _types(c)
    head = _head(c)
    vectors = _type_vectors(c, types)
    n = len(tokens)
    last = types.index((int(tokens[-1]), (n - 1) % c.delta))
    logits = round_to_bits((vectors @ head.key) @ (vectors[last] @ head.query), c.bits)
    present = {(int(t), i % c.delta) for i, t in enumerate(tokens)}
    best = max(float(logits[types.index(s)]) for s in present)
    return {s for s in types if float(logits[types.index(s)]) == best}


def simulate_pair(f: Construction, g: Construction, tokens: np.ndarray, eps: float,
                  min_length: int = 1) -> dict:
    """The proof's string z for two models at once (App. A.1, both halves).

    Name the model whose attended positions in x's tau-prefix are fewer "f" (|A_f| <= |A_g|).
    Its attended types are written as in `simulate` (m_s = floor(n_s / |A_f| * tau / eps), or
    copied when |A_f| <= tau / eps). Then the types only g attends to are added without
    touching f's proportions: when A_f and A_g overlap in at most an eps share of A_g, m_s = floor(n_s /
    |A_g| * tau / eps^2) (the step that costs tau / eps^2 tokens and gives the bound its
    eps^2); otherwise m_s = floor(m_s* / n_s* * n_s) with s* f's most frequent type, so g's
    proportions follow f's scale. If both |A| are at most tau / eps, x's attended tokens are
    copied. Fillers are types neither model attends to; at a residue where both models
    attend to every type (ModPTask's), the slot gets the attended type furthest below its
    proportion in x, which keeps the proportions. Returns |z|, the case, and for both
    models the largest change of an attended type's weight and |model(x) - model(z)|.
    """
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and 0 < eps < 1):
        raise LengthgenError(f"simulation: eps must be a number in (0, 1), got {eps!r}")
    if f.delta != g.delta or f.vocab != g.vocab:
        raise LengthgenError("simulate_pair needs two models over the same vocabulary and "
                             f"period (got Delta {f.delta} and {g.delta})")
    tokens = np.asarray(tokens, dtype=np.int64)
    n, delta, tau = len(tokens), f.delta, max(f.tau, g.tau)
    if n <= tau + 1:
        raise LengthgenError(f"simulation: x must be longer than tau + 1 = {tau + 1}")
    attended = {"f": attended_types(f, tokens), "g": attended_types(g, tokens)}
    prefix, suffix = tokens[: n - tau - 1], tokens[n - tau - 1:]
    residues = np.arange(len(prefix)) % delta
    counts = {s: int(((prefix == s[0]) & (residues == s[1])).sum()) for s in _types(f)}
    size = {k: sum(counts[s] for s in v) for k, v in attended.items()}
    first, second = ("f", "g") if size["f"] <= size["g"] else ("g", "f")
    s_f, s_g = attended[first], attended[second]
    a_f, a_g = size[first], size[second]
    budget = tau / eps
    if a_f <= budget and a_g <= budget:
        case = "copy"
        wanted = {s: counts[s] for s in s_f | s_g}
    else:
        wanted = ({s: counts[s] for s in s_f} if a_f <= budget else
                  {s: math.floor(counts[s] / a_f * budget) for s in s_f})
        overlap = sum(counts[s] for s in s_f & s_g)
        if overlap <= eps * a_g:
            case = "eps^2"
            for s in s_g - s_f:
                wanted[s] = math.floor(counts[s] / a_g * tau / eps ** 2)
        else:
            case = "rescaled"
            star = max(s_f, key=lambda s: counts[s])
            factor = wanted[star] / counts[star] if counts[star] else 0.0
            for s in s_g - s_f:
                wanted[s] = math.floor(factor * counts[s])
    either = s_f | s_g
    written: dict = {}

    def furthest_below(r):  # every type at this residue is attended: the one furthest below
        here = [s for s in either if s[1] == r and counts[s] > 0]   # x's proportion
        if not here:
            raise LengthgenError(f"simulate_pair: no type of x to write at residue {r}")
        return min(here, key=lambda s: written.get(s, 0) / counts[s])

    def count(s):
        written[s] = written.get(s, 0) + 1

    z = _write_prefix(wanted, _fillers(_types(f), delta, either), delta,
                      start=(n - tau - 1) % delta, length=min_length - len(suffix),
                      fallback=furthest_below, wrote=count)
    z_tokens = np.array(z + list(suffix), dtype=np.int64)
    out = {"x_length": n, "z_length": len(z_tokens), "case": case, "smaller": first}
    for name, c in (("f", f), ("g", g)):
        out[f"statistic_error_{name}"] = _statistic_error(c, tokens, z_tokens)
        out[f"output_error_{name}"] = abs(last_output(c, tokens) - last_output(c, z_tokens))
    return out
