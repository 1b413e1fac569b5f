"""The Limit Transformer (Huang et al. 2025, Def. 2; written out in full in Izzo et al. 2026, 3.1).

A causal transformer without LayerNorm, built from explicit weights, that runs on inputs of
any length. It sees positions in two ways only:
  * positional encodings p_i added to the token embeddings, periodic with period Delta
    (p_i = p_{i mod Delta});
  * an extra term phi(j, i) in each head's attention logit; it is translation-invariant and
    tau-local when given as `local`: phi(j, i) = local[i - j] for 0 <= i - j <= tau, else 0.
Attention logits are scaled by log N (N = input length), which lets a fixed logit margin turn
softmax into hardmax on long inputs, and may be rounded to p fractional bits.

The logit of query position i on key position j <= i in one head:
    a_ij = round_p( (x_i @ query) . (x_j @ key) + phi(j, i) ),   weight_ij = softmax_j(log N * a_ij)
where round_p(z) = round(z * 2^p) / 2^p (no rounding when precision_bits is None): the logit is
rounded before the log N scaling, as in Huang et al. (eq. 2). With key_bits = q set, the keys
themselves are rounded to q fractional bits before the product, (x_j @ key) -> round_q(x_j @ key):
p-bit attention in the form Huang et al.'s communication proof uses (App. B.3: a rounded key
determines the rounded logit), so that keys, and hence the protocol's key classes, take
finitely many values on bounded activations.

For analysis, a head may instead carry a general positional table `phi` (phi[j, i] for all
positions below its size), e.g. the product functions p_j^T K^T Q p_i of a trained transformer;
`check_periodic_local` then tells whether it is translation-invariant and local.
"""
import math

import torch
from torch import nn

from lengthgen.errors import LengthgenError

ACTIVATIONS = ("relu", "heaviside")


def _parameter(tensor: torch.Tensor) -> nn.Parameter:
    return nn.Parameter(torch.as_tensor(tensor), requires_grad=False)


def round_to_bits(values: torch.Tensor, bits: int) -> torch.Tensor:
    """round(x * 2^bits) / 2^bits: the fixed fractional precision of attention logits."""
    scale = 2.0 ** bits
    return torch.round(values * scale) / scale


class LimitHead(nn.Module):
    """One attention head: bilinear logits from the residual stream plus a positional term phi."""

    def __init__(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 output: torch.Tensor, local: torch.Tensor | None = None,
                 phi: torch.Tensor | None = None):
        super().__init__()
        d, k = query.shape
        if key.shape != (d, k) or value.shape != (d, k) or output.shape != (k, d):
            raise LengthgenError(
                f"head shapes disagree: query {tuple(query.shape)}, key {tuple(key.shape)}, "
                f"value {tuple(value.shape)} must be [d, k] and output {tuple(output.shape)} "
                "[k, d]")
        if local is not None and phi is not None:
            raise LengthgenError("give a head either `local` (translation-invariant) or a general "
                                 "`phi` table, not both")
        if local is not None and (local.dim() != 1 or len(local) == 0):
            raise LengthgenError(f"`local` must be a vector of length tau+1, got shape "
                                 f"{tuple(local.shape)}")
        if phi is not None and (phi.dim() != 2 or phi.shape[0] != phi.shape[1]):
            raise LengthgenError(f"`phi` must be a square table [M, M], got {tuple(phi.shape)}")
        self.query, self.key = _parameter(query), _parameter(key)
        self.value, self.output = _parameter(value), _parameter(output)
        self.local = None if local is None else _parameter(local)
        self.phi = None if phi is None else _parameter(phi)

    @property
    def width(self) -> int:
        return self.query.shape[0]

    def positional_logits(self, n: int) -> torch.Tensor:
        """phi(j, i) as an [n, n] matrix indexed [i, j] (query i, key j); zero without phi."""
        dtype, device = self.query.dtype, self.query.device
        if self.phi is not None:
            if n > self.phi.shape[0]:
                raise LengthgenError(f"input of length {n} is longer than this head's phi table "
                                     f"({self.phi.shape[0]} positions)")
            return self.phi[:n, :n].T
        out = torch.zeros(n, n, dtype=dtype, device=device)
        if self.local is None:
            return out
        distance = torch.arange(n, device=device)[:, None] - torch.arange(n, device=device)[None, :]
        inside = (distance >= 0) & (distance < len(self.local))
        out[inside] = self.local[distance[inside]].to(dtype)
        return out

    def logits(self, stream: torch.Tensor, precision_bits: int | None,
               key_bits: int | None = None) -> torch.Tensor:
        """Unscaled logits a[b, i, j] (before log N), rounded if precision_bits is set, from
        keys rounded to key_bits fractional bits if that is set."""
        q = stream @ self.query
        k = stream @ self.key
        if key_bits is not None:
            k = round_to_bits(k, key_bits)
        raw = q @ k.transpose(-1, -2) + self.positional_logits(stream.shape[-2])
        return raw if precision_bits is None else round_to_bits(raw, precision_bits)


class LimitMLP(nn.Module):
    """One hidden layer; heaviside(z) = 1 if z >= 0 else 0 (so heaviside(0) = 1)."""

    def __init__(self, w_in: torch.Tensor, b_in: torch.Tensor, w_out: torch.Tensor,
                 b_out: torch.Tensor, activation: str = "relu"):
        super().__init__()
        d, m = w_in.shape
        if b_in.shape != (m,) or w_out.shape != (m, d) or b_out.shape != (d,):
            raise LengthgenError(
                f"MLP shapes disagree: w_in {tuple(w_in.shape)} [d, m], b_in {tuple(b_in.shape)} "
                f"[m], w_out {tuple(w_out.shape)} [m, d], b_out {tuple(b_out.shape)} [d]")
        if activation not in ACTIVATIONS:
            raise LengthgenError(f"unknown activation {activation!r}; valid: "
                                 f"{', '.join(ACTIVATIONS)}")
        self.w_in, self.b_in = _parameter(w_in), _parameter(b_in)
        self.w_out, self.b_out = _parameter(w_out), _parameter(b_out)
        self.activation = activation

    @property
    def width(self) -> int:
        return self.w_in.shape[0]

    def forward(self, stream: torch.Tensor) -> torch.Tensor:
        hidden = stream @ self.w_in + self.b_in
        if self.activation == "relu":
            hidden = torch.relu(hidden)
        else:
            hidden = (hidden >= 0).to(stream.dtype)
        return hidden @ self.w_out + self.b_out


class LimitLayer(nn.Module):
    """All heads read the same residual stream; their outputs are added, then the MLP's."""

    def __init__(self, heads: list[LimitHead], mlp: LimitMLP | None = None):
        super().__init__()
        self.heads = nn.ModuleList(heads)
        self.mlp = mlp


class LimitTransformer(nn.Module):
    """Token embeddings + (periodic) positional encodings, then LimitLayers; no LayerNorm.

    positional: None (no positional encodings: the NoPE case), a table of `period` rows used as
    positional[i mod period], or, with period=None, a general table of P rows (inputs longer
    than P are refused). round_softmax (needs precision_bits p) additionally zeroes every
    softmax term exp(log N * (a_ij - max_j a_ij)) <= 2^-p, the finite-precision softmax of
    Izzo et al. (2026, 3.2): on inputs with N >= 2^(p / margin) attention is then exactly hardmax.
    """

    def __init__(self, token_embedding: torch.Tensor, positional: torch.Tensor | None,
                 layers: list[LimitLayer], period: int | None = None,
                 precision_bits: int | None = None, log_length_scaling: bool = True,
                 round_softmax: bool = False, check: bool = False,
                 key_bits: int | None = None):
        super().__init__()
        if token_embedding.dim() != 2:
            raise LengthgenError(f"token_embedding must be [V, d], got "
                                 f"{tuple(token_embedding.shape)}")
        d = token_embedding.shape[1]
        if positional is not None and (positional.dim() != 2 or positional.shape[1] != d):
            raise LengthgenError(f"positional must be [P, {d}], got {tuple(positional.shape)}")
        if period is not None:
            if period < 1:
                raise LengthgenError(f"period must be a positive integer, got {period}")
            if positional is None:
                raise LengthgenError("a period was given but no positional encodings")
            if positional.shape[0] != period:
                raise LengthgenError(f"not periodic: a periodic model needs exactly "
                                     f"period={period} positional rows, got {positional.shape[0]}")
        if precision_bits is not None and precision_bits < 0:
            raise LengthgenError(f"precision_bits must be >= 0, got {precision_bits}")
        if key_bits is not None and (isinstance(key_bits, bool) or not isinstance(key_bits, int)
                                     or key_bits < 0):
            raise LengthgenError(f"key_bits must be None or an integer >= 0, got {key_bits!r}")
        if round_softmax and precision_bits is None:
            raise LengthgenError("round_softmax needs precision_bits")
        for number, layer in enumerate(layers):
            widths = [h.width for h in layer.heads] + ([layer.mlp.width] if layer.mlp else [])
            if any(w != d for w in widths):
                raise LengthgenError(f"layer {number} has width(s) {widths}, the residual "
                                     f"stream {d}")
        self.token_embedding = _parameter(token_embedding)
        self.positional = None if positional is None else _parameter(positional)
        self.layers = nn.ModuleList(layers)
        self.period = period
        self.precision_bits = precision_bits
        self.log_length_scaling = log_length_scaling
        self.round_softmax = round_softmax
        self.key_bits = key_bits
        if check:
            self.check_periodic_local()

    @property
    def width(self) -> int:
        return self.token_embedding.shape[1]

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """x_i = E[token_i] + p_i for positions i = 0..N-1."""
        if tokens.dim() != 2:
            raise LengthgenError(f"tokens must be [batch, length], got {tuple(tokens.shape)}")
        vocab = self.token_embedding.shape[0]
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
            raise LengthgenError(f"token ids must lie in 0..{vocab - 1}")
        n = tokens.shape[1]
        stream = self.token_embedding[tokens]
        if self.positional is None:
            return stream
        if self.period is not None:
            rows = torch.arange(n, device=tokens.device) % self.period
        elif n > self.positional.shape[0]:
            raise LengthgenError(f"input of length {n} is longer than the positional table "
                                 f"({self.positional.shape[0]} rows) of this non-periodic model")
        else:
            rows = torch.arange(n, device=tokens.device)
        return stream + self.positional[rows]

    def attention(self, head: LimitHead, stream: torch.Tensor) -> torch.Tensor:
        """Causal attention weights [B, N, N] of one head."""
        n = stream.shape[-2]
        scale = math.log(n) if self.log_length_scaling else 1.0
        scores = scale * head.logits(stream, self.precision_bits, self.key_bits)
        causal = torch.ones(n, n, dtype=torch.bool, device=stream.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        if not self.round_softmax:
            return torch.softmax(scores, dim=-1)
        terms = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        negligible = (terms <= 2.0 ** -self.precision_bits) & (terms < 1)  # the max term stays
        terms = terms.masked_fill(negligible, 0.0)
        return terms / terms.sum(dim=-1, keepdim=True)

    def _run(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        stream = self.embed(tokens)
        patterns = []
        for layer in self.layers:
            weights = [self.attention(head, stream) for head in layer.heads]
            update = torch.zeros_like(stream)
            for head, a in zip(layer.heads, weights):
                update = update + (a @ (stream @ head.value)) @ head.output
            stream = stream + update
            if layer.mlp is not None:
                stream = stream + layer.mlp(stream)
            patterns.append(torch.stack(weights, dim=1) if weights else
                            stream.new_zeros(stream.shape[0], 0, stream.shape[1], stream.shape[1]))
        return stream, patterns

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """The final residual stream [B, N, d]."""
        return self._run(tokens)[0]

    def attention_weights(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Per layer, the attention weights [B, H, N, N] (query i, key j)."""
        return self._run(tokens)[1]

    def check_periodic_local(self, tau: int | None = None) -> None:
        """Raise LengthgenError unless the model satisfies Periodic and Local (Huang Def. 2).

        Periodic: positional encodings are absent or given with a period. Local: each head's phi
        is translation-invariant and zero at distances > tau (tau=None: any finite locality
        accepted; a general phi table is then checked for translation invariance only).
        """
        if self.positional is not None and self.period is None:
            raise LengthgenError(
                f"not periodic: the positional table has {self.positional.shape[0]} rows and no "
                f"period, so the model is undefined on longer inputs")
        for number, layer in enumerate(self.layers):
            for h, head in enumerate(layer.heads):
                where = f"layer {number} head {h}"
                if head.phi is not None:
                    by_distance = translation_invariant_values(head.phi)
                    if by_distance is None:
                        raise LengthgenError(f"not translation-invariant: phi of {where} differs "
                                             "between position pairs at the same distance")
                elif head.local is not None:
                    by_distance = head.local
                else:
                    continue
                if tau is not None:
                    far = torch.nonzero(by_distance[tau + 1:]).flatten()
                    if len(far):
                        raise LengthgenError(
                            f"not local (phi nonzero at distance {int(far[0]) + tau + 1} > "
                            f"tau={tau} in {where})")

    def summary(self) -> dict:
        """Sizes for reports and the compiler CLI."""
        heads = [len(layer.heads) for layer in self.layers]
        taus = [len(h.local) - 1 for layer in self.layers for h in layer.heads
                if h.local is not None]
        return {
            "vocab": self.token_embedding.shape[0],
            "width": self.width,
            "layers": len(self.layers),
            "heads_per_layer": heads,
            "mlp_widths": [layer.mlp.w_in.shape[1] if layer.mlp else 0 for layer in self.layers],
            "period": self.period,
            "tau": max(taus) if taus else None,
            "precision_bits": self.precision_bits,
            "positional_parameters": 0 if self.positional is None else self.positional.numel(),
            "parameters": sum(p.numel() for p in self.parameters()),
        }


def translation_invariant_values(phi: torch.Tensor, atol: float = 1e-9) -> torch.Tensor | None:
    """phi[j, i] as a function of i - j >= 0 (a vector over distances), or None if it is not one.

    Only the causal part (key j <= query i) is looked at.
    """
    m = phi.shape[0]
    values = torch.zeros(m, dtype=phi.dtype, device=phi.device)
    for distance in range(m):
        diagonal = torch.diagonal(phi, offset=distance)  # entries phi[j, j + distance]
        if (diagonal - diagonal[0]).abs().max() > atol:
            return None
        values[distance] = diagonal[0]
    return values
