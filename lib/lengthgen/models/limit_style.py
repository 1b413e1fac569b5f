"""A trainable transformer in the form of a Limit Transformer: the model of Izzo et al.'s
experiments (2026, App. B: one attention head and an MLP, d = 16, MLP width 256, muP).

Compared with `Decoder` it has no LayerNorm, one head per layer, a ReLU MLP, and it sees
positions only the ways a Limit Transformer may (Huang et al. 2025; Izzo et al. 3.1):

* pe="nope": no positional encoding;
* pe="periodic": a learned table of `period` rows, p_i = P[i mod period] (Delta-periodic);
* pe="ape": a learned table of n_positions rows (the trainer draws random offsets, as for the
  decoder); inputs longer than the table are refused;
* `local_tau`: a learned translation-invariant, tau-local bias phi(i - j) added to the logit of
  query i on key j when 0 <= i - j <= tau (None: no such term).

The logit of query i on key j <= i (0-based; i + 1 is the 1-based position) is one of two
named scalings (`logit_scaling`):

* "suffix" (Izzo et al. 2026, their two-layer model; the default): q_i . k_j * scale
  + log(i + 1) * phi(i - j): only the tau-suffix term phi is multiplied by the log of the
  position; the token logits are not scaled. Without phi (local_tau None) nothing is scaled.
* "all" (the Limit Transformer of Huang et al. 2025): (q_i . k_j * scale + phi(i - j)) *
  log(i + 1), every logit multiplied by the log of the position (log N at the last token).

scale is 1/d under muP (Yang et al. 2022) and 1/sqrt(d) under the standard init.

readout="last" computes the last layer (attention and MLP) only at each sequence's last real
token and returns zeros elsewhere: the regression tasks of the Izzo chapter put their one
target there, so training pays for one query per sequence instead of T. The outputs at that
position equal readout="all" (tests/test_limit_style.py checks it).

Architecture (per layer l):  Y = y + V-weighted attention(y);  y' = Y + B relu(A Y + b);
outputs U y at the end. Token ids: 0 is PAD and only follows a sequence.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from lengthgen.errors import LengthgenError, check_choice
from lengthgen.models.positions import PositionalEncoding
from lengthgen.models.protocol import check_init_scheme, default_roles, mup_init

READOUTS = ("last", "all")
LOGIT_SCALINGS = ("suffix", "all")


@dataclass
class LimitStyleConfig:
    vocab_size: int
    n_outputs: int = 1
    n_layers: int = 1
    d_model: int = 16
    mlp_width: int = 256
    pe: PositionalEncoding = PositionalEncoding.NOPE  # any of the three; strings are parsed
    period: int = 1                  # rows of the periodic table (pe="periodic")
    n_positions: int = 256           # rows of the absolute table (pe="ape")
    local_tau: int | None = None     # locality of the learned bias phi; None: no bias
    logit_scaling: str = "suffix"   # see the module docstring
    readout: str = "last"
    init: str = "mup"

    def __post_init__(self):
        for name in ("vocab_size", "n_outputs", "n_layers", "d_model", "mlp_width", "period",
                     "n_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LengthgenError(f"limit-style config: {name} must be a positive integer, "
                                     f"got {value!r}")
        self.pe = PositionalEncoding.parse(self.pe, owner="limit-style config")
        check_choice("limit-style config", "logit scaling", self.logit_scaling, LOGIT_SCALINGS)
        check_choice("limit-style config", "readout", self.readout, READOUTS)
        if self.local_tau is not None and (not isinstance(self.local_tau, int)
                                           or self.local_tau < 0):
            raise LengthgenError(f"limit-style config: local_tau must be None or an integer "
                                 f">= 0, got {self.local_tau!r}")
        check_init_scheme(self.init)

    def to_dict(self) -> dict:
        return {**asdict(self), "pe": self.pe.value}

    @property
    def position_rows(self) -> int:
        """Rows of the learned position table (0: none, NoPE)."""
        return {PositionalEncoding.NOPE: 0, PositionalEncoding.PERIODIC: self.period,
                PositionalEncoding.APE: self.n_positions}[self.pe]


class LimitStyleLayer(nn.Module):
    def __init__(self, cfg: LimitStyleConfig):
        super().__init__()
        d = cfg.d_model
        self.query = nn.Linear(d, d, bias=False)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d, bias=False)
        self.local_bias = (nn.Parameter(torch.zeros(cfg.local_tau + 1))
                           if cfg.local_tau is not None else None)
        self.up = nn.Linear(d, cfg.mlp_width)
        self.down = nn.Linear(cfg.mlp_width, d, bias=False)
        self.scale = 1.0 / d if cfg.init == "mup" else 1.0 / math.sqrt(d)
        self.logit_scaling = cfg.logit_scaling

    def weights(self, x: torch.Tensor, query_positions: torch.Tensor | None) -> torch.Tensor:
        """Attention weights [B, Q, T] of the queries at query_positions [B, Q] (None: all)."""
        b, t, _ = x.shape
        keys = torch.arange(t, device=x.device)
        if query_positions is None:
            query_positions = keys.expand(b, t)
        rows = x.gather(1, query_positions[..., None].expand(-1, -1, x.shape[-1]))
        logits = (self.query(rows) @ self.key(x).transpose(1, 2)) * self.scale
        distance = query_positions[..., None] - keys  # [B, Q, T]: i - j
        log_position = torch.log1p(query_positions.float())[..., None]  # log of the 1-based i
        if self.local_bias is not None:
            tau = len(self.local_bias) - 1
            inside = (distance >= 0) & (distance <= tau)
            bias = torch.where(inside, self.local_bias[distance.clamp(0, tau)],
                               torch.zeros((), device=x.device))
            logits = logits + (bias * log_position if self.logit_scaling == "suffix" else bias)
        if self.logit_scaling == "all":
            logits = logits * log_position
        logits = logits.masked_fill(distance < 0, float("-inf"))
        return logits.softmax(dim=-1)

    def forward(self, x: torch.Tensor, query_positions: torch.Tensor | None = None):
        """The layer's output at the queries [B, Q, d] and the attention weights [B, Q, T]."""
        weights = self.weights(x, query_positions)
        rows = x if query_positions is None else \
            x.gather(1, query_positions[..., None].expand(-1, -1, x.shape[-1]))
        y = rows + weights @ self.value(x)
        return y + self.down(F.relu(self.up(y))), weights


class LimitStyleTransformer(nn.Module):
    """forward(inputs [B,T], offsets [B] | None) -> outputs [B,T,n_outputs]."""

    def __init__(self, cfg: LimitStyleConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.token_embeddings = nn.Embedding(cfg.vocab_size, d)
        rows = cfg.position_rows
        self.position_embeddings = nn.Embedding(rows, d) if rows else None
        self.layers = nn.ModuleList(LimitStyleLayer(cfg) for _ in range(cfg.n_layers))
        self.unembed = nn.Linear(d, cfg.n_outputs, bias=False)
        if cfg.init == "mup":
            # muP with the query at zero (Yang et al. 2022, App. D.2): attention starts uniform
            mup_init(self, zero=tuple(f"layers.{i}.query.weight" for i in range(cfg.n_layers)))
        else:
            for name, param in self.named_parameters():
                if param.dim() >= 2:
                    nn.init.normal_(param, 0.0, 0.02)
                else:
                    nn.init.zeros_(param)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def parameter_roles(self) -> dict[str, str]:
        return default_roles(self, embeddings=("token_embeddings.weight",
                                               "position_embeddings.weight"),
                             readout=("unembed.weight",))

    def check_positions(self, inputs: torch.Tensor, offsets: torch.Tensor | None) -> None:
        """An absolute table must have a row for every real token (periodic and NoPE: any
        length)."""
        if not self.cfg.pe.absolute:
            return
        n = self.cfg.n_positions
        ends = (inputs != 0).sum(dim=1) + (0 if offsets is None else offsets)
        if bool((ends > n).any()):
            raise LengthgenError(f"a sequence reaches position {int(ends.max())} but the "
                                 f"position table has {n} rows (n_positions={n})")

    def embed(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
        x = self.token_embeddings(inputs)
        if self.position_embeddings is None:
            return x
        positions = torch.arange(inputs.shape[1], device=inputs.device)
        if self.cfg.pe is PositionalEncoding.PERIODIC:
            positions = positions % self.cfg.period
        elif offsets is not None:
            positions = (offsets[:, None] + positions).clamp(max=self.cfg.n_positions - 1)
        else:
            positions = positions.clamp(max=self.cfg.n_positions - 1)  # PAD past the table
        return x + self.position_embeddings(positions)

    def _run(self, inputs, offsets, check):
        if check:
            self.check_positions(inputs, offsets)
        x = self.embed(inputs, offsets)
        b, t = inputs.shape
        last = ((inputs != 0).sum(dim=1) - 1).clamp(min=0)[:, None]  # [B, 1]
        weights = None
        for number, layer in enumerate(self.layers):
            final = number == len(self.layers) - 1
            if final and self.cfg.readout == "last":
                x, weights = layer(x, last)
            else:
                x, weights = layer(x)
        out = self.unembed(x)
        if self.cfg.readout == "last":
            full = out.new_zeros(b, t, out.shape[-1])
            out = full.scatter(1, last[..., None].expand(-1, -1, out.shape[-1]), out)
        return out, weights, last

    def forward(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None,
                check: bool = True) -> torch.Tensor:
        return self._run(inputs, offsets, check)[0]

    @torch.no_grad()
    def last_attention(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None):
        """The last layer's attention weights [B, T] of each sequence's last real token."""
        _, weights, last = self._run(inputs, offsets, True)
        if self.cfg.readout == "all":
            weights = weights.gather(1, last[..., None].expand(-1, -1, weights.shape[-1]))
        return weights[:, 0]
