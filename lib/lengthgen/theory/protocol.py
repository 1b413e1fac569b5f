"""The communication protocol of Huang et al. (2025, Thm. 12, App. B.3), played for real.

The paper states the split at the middle (Alice holds the first half); its proof does not use
where the cut is, so this module plays the protocol at any cut c (the book's reading).

Split the input of a Limit Transformer at a cut point c: Alice holds positions 0..c-1 (the start
symbol and the first part), Bob holds c..N-1. The input length N and the cut are public. Alice
writes one message, an actual bit string; Bob reads it and computes every activation of his
positions, layer by layer, without ever seeing Alice's tokens.

Why a short message suffices when the model is Periodic and Local. In one head, query position i
weighs key position j by exp(s * a_ij) with a_ij = round_p(q_i . k_j + phi(i - j)) and s = log N.
For j < i - tau (tau: the largest distance where some head's phi is nonzero) phi vanishes, so
the logit depends on j only through its key vector k_j. Group Alice's positions by their keys in
every head of the layer (a "class"): all positions of a class get the same rounded logit from
any query, so Bob needs per class only the key, the number of positions, and the sum of their
value vectors. Alice's last tau positions can be close to Bob's queries; for those she sends key
and value individually. Positions enter keys only through p_{j mod Delta}, so in a model whose
keys come from finitely many vectors (every compiled C-RASP program: keys read the start symbol
only) the number of classes is bounded independently of N and the message holds O(1) numbers,
each at most N: O(log N) bits. A model whose keys take many values (random or trained weights,
from the second layer on) needs the theorem's p-bit attention for that: with the model's
key_bits set, keys are rounded to key_bits fractional bits (LimitTransformer.key_bits) and a
class is a rounded key; bounded activations then leave finitely many classes whatever N is.

The same decomposition is how both parties compute: a causal sweep keeps, per layer, the class
table of the positions that are already "far" and a buffer of the last tau positions. Alice's
message is exactly that state at the cut; Bob continues the sweep from it. Nothing here calls
the model's forward pass; `forward_activations` (the model's own attention and MLPs) is the
independent reference that `run_protocol` compares Bob's activations against.

The message format (per layer, in order; gamma = Elias gamma code of a positive integer):
    gamma(C + 1)                                        C = number of classes
    per class: per head its key (k floats), gamma(count), per head its value sum (k floats)
    per buffered position (the last min(tau, c) of Alice's): per head key, then value (floats)
A float x is written exactly as its dyadic form x = +-m * 2^e with m odd: "0" for zero, else
"1", a sign bit, gamma((m + 1) / 2) and gamma(zigzag(e) + 1). A count or a sum of 0/1 values is
an integer <= N, so it costs about 2 log2 N bits.
"""
import math
from dataclasses import dataclass, field

import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitTransformer, round_to_bits, translation_invariant_values

# Everything the protocol (and its check against the forward pass) allocates is estimated first;
# a run needing more than this is refused with the length that would fit.
MAX_BYTES = 2 * 2 ** 30
FLOAT_MANTISSA_BITS = 53  # a float64 mantissa: a decoded odd part above 2^53 cannot be Alice's


# ----------------------------------------------------------------------------- bit strings
class BitWriter:
    """Appends self-delimiting codes to a bit string ('0'/'1' characters)."""

    def __init__(self):
        self.parts: list[str] = []

    def gamma(self, k: int) -> None:
        """Elias gamma code of k >= 1: len(bin(k)) - 1 zeros, then k in binary."""
        if k < 1:
            raise ValueError(f"gamma code needs k >= 1, got {k}")
        binary = bin(k)[2:]
        self.parts.append("0" * (len(binary) - 1) + binary)

    def float(self, x: float) -> None:
        """x exactly, as sign, odd mantissa and exponent (see the module docstring)."""
        if x == 0.0:
            self.parts.append("0")
            return
        if not math.isfinite(x):
            raise LengthgenError(f"cannot send a non-finite activation ({x})")
        num, den = abs(x).as_integer_ratio()        # den is a power of 2
        exponent = -(den.bit_length() - 1)
        while num % 2 == 0:
            num //= 2
            exponent += 1
        self.parts.append("1" + ("1" if x < 0 else "0"))
        self.gamma((num + 1) // 2)
        self.gamma(2 * exponent + 1 if exponent >= 0 else -2 * exponent)  # zigzag, then + 1

    @property
    def bits(self) -> str:
        return "".join(self.parts)


class BitReader:
    """Reads the codes of BitWriter back; a malformed string is a LengthgenError."""

    def __init__(self, bits: str):
        if set(bits) - {"0", "1"}:
            raise LengthgenError("a message is a string of '0' and '1' characters")
        self.bits, self.pos = bits, 0

    def _take(self, count: int) -> str:
        if self.pos + count > len(self.bits):
            raise LengthgenError(f"corrupted message: it ends after {len(self.bits)} bits, "
                                 "in the middle of a number")
        out = self.bits[self.pos:self.pos + count]
        self.pos += count
        return out

    def gamma(self) -> int:
        zeros = 0
        while self._take(1) == "0":
            zeros += 1
        return int("1" + self._take(zeros), 2) if zeros else 1

    def float(self) -> float:
        if self._take(1) == "0":
            return 0.0
        negative = self._take(1) == "1"
        mantissa = 2 * self.gamma() - 1
        z = self.gamma() - 1
        exponent = z // 2 if z % 2 == 0 else -(z + 1) // 2
        if mantissa.bit_length() > FLOAT_MANTISSA_BITS:
            raise LengthgenError("corrupted message: a number has more mantissa bits than a float")
        try:
            value = math.ldexp(mantissa, exponent)
        except OverflowError:
            raise LengthgenError("corrupted message: a number overflows a float") from None
        return -value if negative else value

    def done(self) -> None:
        if self.pos != len(self.bits):
            raise LengthgenError(f"corrupted message: {len(self.bits) - self.pos} bits left over "
                                 "after Bob read everything he expected")


# ----------------------------------------------------------------------------- the model's shape
@dataclass
class _Head:
    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    output: torch.Tensor
    phi: torch.Tensor        # phi by distance 0..tau of the layer (zeros past the head's own)


@dataclass
class _Layer:
    heads: list
    mlp: object
    tau: int                 # largest distance with a nonzero phi in this layer, -1 if none

    @property
    def window(self) -> int:
        """How many of the latest positions are kept individually (the local part)."""
        return max(self.tau, 0)

    @property
    def key_width(self) -> int:
        return sum(h.key.shape[1] for h in self.heads)


def periodic_local_layers(model: LimitTransformer) -> list[_Layer]:
    """The per-layer locality of a model, after checking that it is Periodic and Local.

    Refuses (LengthgenError naming the property) a positional table without a period, and a
    general phi table that is not a function of the distance i - j.
    """
    if not isinstance(model, LimitTransformer):
        raise LengthgenError(f"the protocol runs on a LimitTransformer, got {type(model).__name__}")
    try:
        model.check_periodic_local()
    except LengthgenError as e:
        raise LengthgenError(f"the protocol needs a Periodic and Local Limit Transformer: {e}"
                             ) from None
    layers = []
    for layer in model.layers:
        by_distance = []
        for head in layer.heads:
            if head.phi is not None:
                values = translation_invariant_values(head.phi)
            elif head.local is not None:
                values = head.local.detach()
            else:
                values = head.query.new_zeros(0)
            nonzero = torch.nonzero(values).flatten()
            by_distance.append(values[:int(nonzero[-1]) + 1] if len(nonzero) else values[:0])
        tau = max((len(v) for v in by_distance), default=0) - 1
        heads = []
        for head, values in zip(layer.heads, by_distance):
            phi = head.query.new_zeros(max(tau + 1, 0))
            phi[:len(values)] = values
            heads.append(_Head(head.query.detach(), head.key.detach(), head.value.detach(),
                               head.output.detach(), phi))
        layers.append(_Layer(heads, layer.mlp, tau))
    return layers


# ----------------------------------------------------------------------------- the sweep
@dataclass
class _State:
    """What positions 0..lo-1 leave behind for later queries in one layer.

    Classes (positions j < lo - window): per head the class keys [C, k], the counts [C] and per
    head the value sums [C, k]. Buffer (the last min(window, lo) positions): per head keys and
    values [b, k].
    """
    keys: list
    counts: torch.Tensor
    sums: list
    buffer_keys: list
    buffer_values: list

    @property
    def classes(self) -> int:
        return len(self.counts)

    @property
    def buffered(self) -> int:
        return self.buffer_keys[0].shape[0] if self.buffer_keys else 0


def _empty_state(layer: _Layer, dtype) -> _State:
    ks = [h.key.shape[1] for h in layer.heads]
    return _State([torch.zeros(0, k, dtype=dtype) for k in ks], torch.zeros(0, dtype=torch.int64),
                  [torch.zeros(0, k, dtype=dtype) for k in ks],
                  [torch.zeros(0, k, dtype=dtype) for k in ks],
                  [torch.zeros(0, k, dtype=dtype) for k in ks])


def _attend(model: LimitTransformer, layer: _Layer, x: torch.Tensor, lo: int, n: int,
            state: _State) -> tuple[torch.Tensor, _State]:
    """Attention of the positions lo..lo+Q-1 (residual stream x [Q, d]) given the state of the
    positions before lo; returns the heads' summed output [Q, d] and the state before lo + Q."""
    q_len = x.shape[0]
    hi = lo + q_len
    if not layer.heads:
        return torch.zeros_like(x), state
    b = state.buffered
    e0 = lo - b                                          # first position kept individually
    bits = model.key_bits
    keys = [torch.cat([bk, x @ h.key if bits is None else round_to_bits(x @ h.key, bits)])
            for bk, h in zip(state.buffer_keys, layer.heads)]
    values = [torch.cat([bv, x @ h.value]) for bv, h in zip(state.buffer_values, layer.heads)]
    m = keys[0].shape[0]                                 # positions e0..hi-1
    # Classes: distinct key signatures (all heads' keys side by side) among the old classes and
    # the new positions.
    signatures = torch.cat([torch.cat(state.keys, dim=1), torch.cat(keys, dim=1)])
    unique, inverse = torch.unique(signatures, dim=0, return_inverse=True)
    c = len(unique)
    need = 8 * (m + 1 + q_len) * c * (layer.key_width + 1)
    if need > MAX_BYTES:
        raise LengthgenError(
            f"the keys take {c} distinct values in a layer on this input: the class tables "
            f"would need {need / 2 ** 30:.1f} GiB (limit {MAX_BYTES / 2 ** 30:.0f} GiB); use a "
            f"shorter input")
    old, new = inverse[:state.classes], inverse[state.classes:]
    counts0 = torch.zeros(c, dtype=torch.int64).index_add_(0, old, state.counts)
    onehot = torch.nn.functional.one_hot(new, c)
    cum_counts = torch.cat([torch.zeros(1, c, dtype=torch.int64), onehot.cumsum(0)])
    far_end = torch.clamp(torch.arange(lo, hi) - layer.tau - e0, 0, m)   # far: j < i - tau
    counts = counts0 + cum_counts[far_end]                                # [Q, C]
    scale = math.log(n) if model.log_length_scaling else 1.0
    dtype = x.dtype
    near = torch.arange(lo, hi)[:, None] - torch.arange(layer.tau + 1)[None, :] - e0  # [Q, T]
    valid = near >= 0
    near = near.clamp(min=0)
    done = max(0, min(m, hi - layer.window - e0))   # positions far for every later query
    update = torch.zeros_like(x)
    new_sums = []
    offset = 0
    for h, head in enumerate(layer.heads):
        k = head.key.shape[1]
        class_keys = unique[:, offset:offset + k]
        offset += k
        sums0 = torch.zeros(c, k, dtype=dtype).index_add_(0, old, state.sums[h])
        cum_sums = torch.cat([torch.zeros(1, c, k, dtype=dtype),
                              (onehot[:, :, None].to(dtype) * values[h][:, None, :]).cumsum(0)])
        sums = sums0 + cum_sums[far_end]                                  # [Q, C, k]
        query = x @ head.query
        logits_far = query @ class_keys.T
        logits_near = (query[:, None, :] * keys[h][near]).sum(-1) + head.phi[None, :]
        if model.precision_bits is not None:
            logits_far = round_to_bits(logits_far, model.precision_bits)
            logits_near = round_to_bits(logits_near, model.precision_bits)
        scores = torch.cat([(scale * logits_far).masked_fill(counts == 0, float("-inf")),
                            (scale * logits_near).masked_fill(~valid, float("-inf"))], dim=1)
        terms = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
        if model.round_softmax:  # as LimitTransformer.attention: drop terms <= 2^-p, keep the max
            terms = terms.masked_fill((terms <= 2.0 ** -model.precision_bits) & (terms < 1), 0.0)
        far_terms, near_terms = terms[:, :c], terms[:, c:]
        numerator = (far_terms[:, :, None] * sums).sum(1) + \
            (near_terms[:, :, None] * values[h][near]).sum(1)
        denominator = (far_terms * counts.to(dtype)).sum(1) + near_terms.sum(1)
        update = update + (numerator / denominator[:, None]) @ head.output
        new_sums.append(sums0 + cum_sums[done])
    counts_end = counts0 + cum_counts[done]
    keep = counts_end > 0
    offsets = [0]
    for head in layer.heads:
        offsets.append(offsets[-1] + head.key.shape[1])
    kept = min(layer.window, hi)
    after = _State([unique[keep, a:z] for a, z in zip(offsets, offsets[1:])], counts_end[keep],
                   [s[keep] for s in new_sums], [kk[m - kept:] for kk in keys],
                   [v[m - kept:] for v in values])
    return update, after


def _embed(model: LimitTransformer, tokens: torch.Tensor, lo: int) -> torch.Tensor:
    """x_i = E[token_i] + p_{i mod Delta} for the absolute positions lo, lo+1, ..."""
    vocab = model.token_embedding.shape[0]
    if len(tokens) and (tokens.min() < 0 or tokens.max() >= vocab):
        raise LengthgenError(f"token ids must lie in 0..{vocab - 1}")
    x = model.token_embedding.detach()[tokens]
    if model.positional is not None:
        x = x + model.positional.detach()[torch.arange(lo, lo + len(tokens)) % model.period]
    return x


def _sweep(model, layers, tokens, lo, n, states):
    """Run positions lo.. through every layer from the given states; returns the activations
    (residual stream after the embedding and after each sublayer) and the states after them."""
    x = _embed(model, tokens, lo)
    activations, after = [x], []
    with torch.no_grad():
        for layer, state in zip(layers, states):
            update, state = _attend(model, layer, x, lo, n, state)
            after.append(state)
            x = x + update
            activations.append(x)
            if layer.mlp is not None:
                x = x + layer.mlp(x)
            activations.append(x)
    return activations, after


# ----------------------------------------------------------------------------- the two parties
@dataclass
class Message:
    """Alice's message: the bits, and how many of them each part of each layer took."""
    bits: str
    n: int
    cut: int
    layers: int
    parts: list = field(default_factory=list)   # dicts: layer, part, bits, (classes | positions)

    def __len__(self) -> int:
        return len(self.bits)

    def by_layer(self) -> list[int]:
        """Bits per layer (0 for a layer without attention heads)."""
        out = [0] * self.layers
        for p in self.parts:
            out[p["layer"]] += p["bits"]
        return out

    def by_part(self) -> dict:
        out = {}
        for p in self.parts:
            out[p["part"]] = out.get(p["part"], 0) + p["bits"]
        return out


def _check_split(model, n: int, cut: int) -> None:
    if n < 2:
        raise LengthgenError(f"an input of {n} position(s) cannot be split between two parties")
    if not 1 <= cut <= n - 1:
        raise LengthgenError(f"cut point {cut} lies outside the input: Alice holds positions "
                             f"0..cut-1 and Bob cut..N-1, so 1 <= cut <= {n - 1} for N = {n}")
    need = memory_needed(model, n, check=False)
    if need > MAX_BYTES:
        raise LengthgenError(f"N = {n} is too long for this model: the protocol needs about "
                             f"{need / 2 ** 30:.1f} GiB (limit {MAX_BYTES / 2 ** 30:.0f} GiB); "
                             f"use N <= {max_length(model, check=False)}")


def memory_needed(model: LimitTransformer, n: int, check: bool = True) -> int:
    """Bytes a run at length n needs (estimated): the activations of every position at every
    sublayer, and with check=True the model's own forward pass (an [N, N] matrix per step)."""
    width, depth = model.width, len(model.layers)
    need = 8 * n * width * (2 * depth + 1) * 3
    if check:
        need += 8 * n * n * 6
    return need


def max_length(model: LimitTransformer, check: bool = True) -> int:
    """The longest input (in positions) whose run fits in MAX_BYTES."""
    lo, hi = 2, 2
    while memory_needed(model, hi * 2, check) <= MAX_BYTES:
        hi *= 2
    hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if memory_needed(model, mid, check) <= MAX_BYTES else (lo, mid)
    return lo


def _as_tokens(tokens) -> torch.Tensor:
    t = torch.as_tensor(tokens)
    if t.dim() != 1:
        raise LengthgenError(f"tokens must be one sequence [N], got shape {tuple(t.shape)}")
    return t.long()


def alice(model: LimitTransformer, tokens, n: int) -> Message:
    """Alice's side: she holds tokens 0..cut-1 (cut = len(tokens)) of an input of public length
    n, computes her activations and writes the state of every layer at the cut as bits."""
    tokens = _as_tokens(tokens)
    cut = len(tokens)
    _check_split(model, n, cut)
    layers = periodic_local_layers(model)
    _, states = _sweep(model, layers, tokens, 0, n, [_empty_state(l, model.token_embedding.dtype)
                                                     for l in layers])
    writer, parts = BitWriter(), []

    def part(layer: int, name: str, start: int, **extra) -> None:
        parts.append({"layer": layer, "part": name, "bits": len(writer.bits) - start, **extra})

    def floats(layer: int, name: str, arrays, row: int) -> None:
        """Row `row` of each array as floats, counted as one part of the message."""
        start = len(writer.bits)
        for array in arrays:
            for x in array[row].tolist():
                writer.float(x)
        part(layer, name, start)

    for number, (layer, state) in enumerate(zip(layers, states)):
        if not layer.heads:          # a layer without attention: nothing for Bob to learn
            continue
        start = len(writer.bits)
        writer.gamma(state.classes + 1)
        part(number, "header", start, classes=state.classes)
        for c in range(state.classes):
            floats(number, "class keys", state.keys, c)
            start = len(writer.bits)
            writer.gamma(int(state.counts[c]))
            part(number, "counts", start)
            floats(number, "value sums", state.sums, c)
        start = len(writer.bits)
        for r in range(state.buffered):
            for keys, values in zip(state.buffer_keys, state.buffer_values):
                for x in keys[r].tolist() + values[r].tolist():
                    writer.float(x)
        part(number, "local positions", start, positions=state.buffered)
    return Message(writer.bits, n, cut, len(layers), parts)


def decode(model: LimitTransformer, bits: str, n: int, cut: int) -> list[_State]:
    """Bob's reading of a message: per layer the class table and the local positions.

    A message that does not parse, leaves bits over, or whose class counts do not add up to
    Alice's far positions is refused as corrupted."""
    _check_split(model, n, cut)
    layers = periodic_local_layers(model)
    dtype = model.token_embedding.dtype
    reader = BitReader(bits)
    states = []
    for number, layer in enumerate(layers):
        ks = [h.key.shape[1] for h in layer.heads]
        if not layer.heads:
            states.append(_empty_state(layer, dtype))
            continue
        classes = reader.gamma() - 1
        if classes > cut:
            raise LengthgenError(f"corrupted message: {classes} classes in layer {number} for "
                                 f"{cut} positions")
        keys = [[] for _ in ks]
        sums = [[] for _ in ks]
        counts = []
        for _ in range(classes):
            for h, k in enumerate(ks):
                keys[h].append([reader.float() for _ in range(k)])
            counts.append(reader.gamma())
            for h, k in enumerate(ks):
                sums[h].append([reader.float() for _ in range(k)])
        buffered = min(layer.window, cut)
        if sum(counts) != cut - buffered:
            raise LengthgenError(f"corrupted message: the class counts of layer {number} add up "
                                 f"to {sum(counts)}, not to Alice's {cut - buffered} positions "
                                 "outside the local window")
        buffer_keys, buffer_values = [[] for _ in ks], [[] for _ in ks]
        for _ in range(buffered):
            for h, k in enumerate(ks):
                buffer_keys[h].append([reader.float() for _ in range(k)])
                buffer_values[h].append([reader.float() for _ in range(k)])

        def table(rows, k):
            return torch.tensor(rows, dtype=dtype).reshape(len(rows), k)
        states.append(_State([table(r, k) for r, k in zip(keys, ks)],
                             torch.tensor(counts, dtype=torch.int64),
                             [table(r, k) for r, k in zip(sums, ks)],
                             [table(r, k) for r, k in zip(buffer_keys, ks)],
                             [table(r, k) for r, k in zip(buffer_values, ks)]))
    reader.done()
    return states


def bob(model: LimitTransformer, tokens, n: int, bits: str) -> list[torch.Tensor]:
    """Bob's side: his tokens (positions cut..n-1) and Alice's bits give every activation of
    his positions: the residual stream after the embedding and after each sublayer, [n-cut, d]."""
    tokens = _as_tokens(tokens)
    cut = n - len(tokens)
    states = decode(model, bits, n, cut)
    activations, _ = _sweep(model, periodic_local_layers(model), tokens, cut, n, states)
    return activations


def forward_activations(model: LimitTransformer, tokens) -> list[torch.Tensor]:
    """The reference: the model's own attention and MLPs on the whole input, the residual
    stream after the embedding and after each sublayer, [N, d] each (as LimitTransformer._run)."""
    tokens = _as_tokens(tokens)[None]
    with torch.no_grad():
        stream = model.embed(tokens)
        out = [stream[0]]
        for layer in model.layers:
            update = torch.zeros_like(stream)
            for head in layer.heads:
                update = update + (model.attention(head, stream) @ (stream @ head.value)) \
                    @ head.output
            stream = stream + update
            out.append(stream[0])
            if layer.mlp is not None:
                stream = stream + layer.mlp(stream)
            out.append(stream[0])
    return out


@dataclass
class ProtocolRun:
    """One run: the message, Bob's activations and (when checked) their distance from the
    forward pass at every sublayer: max over his positions and coordinates."""
    message: Message
    activations: list
    errors: list | None = None

    @property
    def bits(self) -> int:
        return len(self.message)

    @property
    def max_error(self) -> float | None:
        return None if self.errors is None else max(self.errors)


def compare(model: LimitTransformer, tokens, cut: int, activations) -> list[float]:
    """Per activation (embedding, then each sublayer), the largest |Bob - forward pass| over
    Bob's positions."""
    tokens = _as_tokens(tokens)
    need = memory_needed(model, len(tokens), check=True)
    if need > MAX_BYTES:
        raise LengthgenError(f"checking against the forward pass at N = {len(tokens)} needs "
                             f"about {need / 2 ** 30:.1f} GiB (limit "
                             f"{MAX_BYTES / 2 ** 30:.0f} GiB); check at N <= {max_length(model)}"
                             " or run the protocol with check=False")
    reference = forward_activations(model, tokens)
    return [float((r[cut:] - a).abs().max()) for r, a in zip(reference, activations)]


def run_protocol(model: LimitTransformer, tokens, cut: int, check: bool = True) -> ProtocolRun:
    """Alice writes, Bob reads and computes; with check=True his activations are compared with
    the model's forward pass on the whole input."""
    tokens = _as_tokens(tokens)
    n = len(tokens)
    _check_split(model, n, cut)
    message = alice(model, tokens[:cut], n)
    activations = bob(model, tokens[cut:], n, message.bits)
    errors = compare(model, tokens, cut, activations) if check else None
    return ProtocolRun(message, activations, errors)


def flip(bits: str, position: int) -> str:
    """The message with one bit flipped (for corruption experiments)."""
    if not 0 <= position < len(bits):
        raise LengthgenError(f"bit {position} is outside a message of {len(bits)} bits")
    return bits[:position] + ("1" if bits[position] == "0" else "0") + bits[position + 1:]


def replay(model: LimitTransformer, tokens, cut: int, bits: str) -> float:
    """Bob on a (possibly corrupted) message: the largest distance of his activations from the
    forward pass, or inf when he refuses the message as corrupted."""
    tokens = _as_tokens(tokens)
    try:
        activations = bob(model, tokens[cut:], len(tokens), bits)
    except LengthgenError as e:
        if "corrupted" not in str(e):
            raise
        return math.inf
    return max(compare(model, tokens, cut, activations))


def count_messages(compiled, parts: list, n: int) -> int:
    """How many different messages Alice sends over her possible parts (strings of the
    compiled program's alphabet, all of one length m; the input length n is public). If this is
    below the number of distinct rows of a problem, the model cannot solve it at length n."""
    lengths = {len(compiled.tokens(p)) for p in parts}
    if len(lengths) != 1:
        raise LengthgenError("Alice's parts must all have one length")
    return len({alice(compiled.model, compiled.tokens(p), n).bits for p in parts})
