"""A small GPT-2-style causal decoder, in the spirit of nanoGPT's model.py.

Token embeddings (+ learned absolute positions for APE, nothing for NoPE), pre-LayerNorm
blocks of causal self-attention and an MLP, a final LayerNorm and an unembedding to n_classes
outputs. n_classes may differ from the vocabulary: languages predict one class per set of legal
next symbols.

Attention is softmax attention through scaled_dot_product_attention, or "uniform": every
position averages the values of itself and all earlier positions (no queries or keys), the
inductive bias of Richard (2024).

Log-length scaling multiplies the attention logits of the query at position i (0-based) by
log(i + 1), the log of the number of positions it can attend to. This keeps attention sharp as
sequences grow and, being per query, stays causal (a prefix's outputs never depend on what
follows it). The first position has a single key, so its factor of log(1) = 0 changes nothing.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from lengthgen.errors import LengthgenError
from lengthgen.models.positions import DECODER_ENCODINGS, PositionalEncoding
from lengthgen.models.protocol import check_init_scheme, default_roles, mup_init

ATTENTION_KINDS = ("softmax", "uniform")


# The largest decoder a config may ask for (4 GB of float32 weights, before optimizer state).
MAX_DECODER_PARAMETERS = 1_000_000_000
MAX_DECODER_LAYERS = 1_000


@dataclass
class DecoderConfig:
    vocab_size: int
    n_classes: int
    n_layers: int = 1
    n_heads: int = 1
    d_model: int = 64
    mlp_ratio: float = 4
    pe: PositionalEncoding = PositionalEncoding.APE  # strings ("ape", "nope") are parsed
    n_positions: int = 256  # size of the APE table (unused by NoPE)
    log_length_scaling: bool = False
    dropout: float = 0.0
    tied_embeddings: bool = False
    attention: str = "softmax"
    use_mlp: bool = True
    init: str = "standard"  # "standard" (GPT-2: N(0, 0.02), shrunk residual outputs) or "mup"

    def approximate_parameters(self) -> float:
        """Weights of the model, within a few percent (float: the sizes may be absurd)."""
        d, hidden = float(self.d_model), self.mlp_ratio * self.d_model
        per_layer = 4 * d * d + (2 * d * hidden if self.use_mlp else 0)
        return self.n_layers * per_layer + (self.vocab_size + self.n_classes + self.n_positions) * d

    def __post_init__(self):
        check_init_scheme(self.init)
        for name in ("vocab_size", "n_classes", "n_layers", "n_heads", "d_model", "n_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LengthgenError(f"decoder config: {name} must be a positive integer, "
                                     f"got {value!r}")
        self.pe = PositionalEncoding.parse(self.pe, DECODER_ENCODINGS, "decoder config")
        if self.attention not in ATTENTION_KINDS:
            raise LengthgenError(f"decoder config: unknown attention {self.attention!r}; "
                                 f"valid: {', '.join(ATTENTION_KINDS)}")
        if self.d_model % self.n_heads:
            raise LengthgenError(f"decoder config: {self.n_heads} heads do not divide the width "
                                 f"d_model={self.d_model}")
        if self.tied_embeddings and self.n_classes != self.vocab_size:
            raise LengthgenError(f"decoder config: tied embeddings need n_classes == vocab_size "
                                 f"(got {self.n_classes} and {self.vocab_size})")
        if not 0.0 <= self.dropout < 1.0:
            raise LengthgenError(f"decoder config: dropout must be in [0, 1), got {self.dropout}")
        if not (math.isfinite(self.mlp_ratio) and self.mlp_ratio > 0) or \
                round(self.mlp_ratio * self.d_model) < 1:
            raise LengthgenError(f"decoder config: mlp_ratio must be a positive number, "
                                 f"got {self.mlp_ratio}")
        if self.n_layers > MAX_DECODER_LAYERS:
            raise LengthgenError(f"decoder config: at most {MAX_DECODER_LAYERS} layers, "
                                 f"got {self.n_layers}")
        size = self.approximate_parameters()
        if size > MAX_DECODER_PARAMETERS:
            raise LengthgenError(f"decoder config: about {size:.3g} parameters, over the limit of "
                                 f"{MAX_DECODER_PARAMETERS:.0e}; use a smaller width, depth or "
                                 f"mlp_ratio")
        if self.log_length_scaling and self.attention == "uniform":
            raise LengthgenError("decoder config: log-length scaling needs softmax attention "
                                 "(uniform attention has no logits)")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def mlp_width(self) -> int:
        return round(self.mlp_ratio * self.d_model)

    def to_dict(self) -> dict:
        return {**asdict(self), "pe": self.pe.value}


def log_length_factors(t: int, device) -> torch.Tensor:
    """log(i + 1) for query positions i = 0..t-1: the attention logit multiplier."""
    return torch.log(torch.arange(1, t + 1, device=device, dtype=torch.float32))


def causal_mean(values: torch.Tensor) -> torch.Tensor:
    """Uniform causal attention: position i gets the mean of values at positions 0..i (dim -2).

    Summed in float32 even under bf16 autocast: a long bf16 running sum loses the counts."""
    t = values.shape[-2]
    counts = torch.arange(1, t + 1, device=values.device, dtype=torch.float32)
    return (values.float().cumsum(dim=-2) / counts[:, None]).to(values.dtype)


class CausalSelfAttention(nn.Module):
    """Multi-head causal attention; "uniform" keeps only the value and output projections."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        n_projections = 3 if cfg.attention == "softmax" else 1  # (q, k, v) or just v
        self.in_proj = nn.Linear(cfg.d_model, n_projections * cfg.d_model)
        self.out_proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:  # [B,T,D] -> [B,H,T,Dh]
        b, t, _ = x.shape
        return x.view(b, t, self.cfg.n_heads, self.cfg.d_head).transpose(1, 2)

    def _merge_heads(self, x: torch.Tensor) -> torch.Tensor:  # [B,H,T,Dh] -> [B,T,D]
        b, _, t, _ = x.shape
        return x.transpose(1, 2).reshape(b, t, self.cfg.d_model)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        """The attention output, and with need_weights also the weights [B,H,T,T] (slow path)."""
        cfg = self.cfg
        projected = self.in_proj(x)
        t = x.shape[1]
        if cfg.attention == "uniform":
            v = self._split_heads(projected)
            y = causal_mean(v)
            weights = None
            if need_weights:
                mask = torch.ones(t, t, device=x.device).tril()
                weights = (mask / mask.sum(-1, keepdim=True)).expand(x.shape[0], cfg.n_heads, t, t)
        else:
            q, k, v = (self._split_heads(part) for part in projected.split(cfg.d_model, dim=2))
            if cfg.log_length_scaling:
                q = q * log_length_factors(t, x.device).to(q.dtype)[:, None]
            if need_weights:
                logits = (q @ k.transpose(-2, -1)) / math.sqrt(cfg.d_head)
                causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
                weights = logits.masked_fill(~causal, float("-inf")).softmax(dim=-1)
                y = weights @ v
            else:
                weights = None
                y = F.scaled_dot_product_attention(
                    q, k, v, is_causal=True,
                    dropout_p=cfg.dropout if self.training else 0.0)
        y = self.resid_dropout(self.out_proj(self._merge_heads(y)))
        return y, weights


class MLP(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.mlp_width)
        self.down = nn.Linear(cfg.mlp_width, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.down(F.gelu(self.up(x), approximate="tanh")))


class Block(nn.Module):
    """Pre-LayerNorm residual block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln_mlp = nn.LayerNorm(cfg.d_model) if cfg.use_mlp else None
        self.mlp = MLP(cfg) if cfg.use_mlp else None

    def forward(self, x, need_weights: bool = False):
        attended, weights = self.attn(self.ln_attn(x), need_weights)
        x = x + attended
        if self.mlp is not None:
            x = x + self.mlp(self.ln_mlp(x))
        return x, weights


class Decoder(nn.Module):
    """GPT-2-style causal decoder: forward(inputs [B,T], offsets [B] | None) -> logits [B,T,C]."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.token_embeddings = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position_embeddings = (nn.Embedding(cfg.n_positions, cfg.d_model)
                                    if cfg.pe.absolute else None)
        self.embed_dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, cfg.n_classes, bias=False)
        self.apply(self._init_weights)
        # GPT-2: shrink the residual-branch outputs so the residual stream's scale stays put
        for name, param in self.named_parameters():
            if name.endswith(("out_proj.weight", "down.weight")):
                nn.init.normal_(param, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layers))
        if cfg.tied_embeddings:
            self.unembed.weight = self.token_embeddings.weight
        if cfg.init == "mup":
            mup_init(self)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def parameter_roles(self) -> dict[str, str]:
        """Role of each parameter (lengthgen.models.protocol.ROLES), for per-group learning
        rates and muP. A tied unembedding is the token table and counts as an embedding."""
        return default_roles(self, embeddings=("token_embeddings.weight",
                                               "position_embeddings.weight"),
                             readout=("unembed.weight",))

    # ---- positions -------------------------------------------------------------------------
    def check_positions(self, inputs: torch.Tensor, offsets: torch.Tensor | None) -> None:
        """Every real (non-PAD) token must have a row in the position table.

        PAD (id 0) only follows a sequence, so a sequence's real length is its count of
        non-PAD tokens; PAD positions past the table are harmless (clamped, never attended to
        by real tokens under the causal mask). This reads values, so on a GPU it syncs.
        """
        if self.position_embeddings is None:
            return
        n, t = self.cfg.n_positions, inputs.shape[1]
        if offsets is None:
            if t > n:
                raise LengthgenError(f"sequence of {t} positions does not fit the position table "
                                     f"of {n} (n_positions={n})")
            return
        if offsets.shape != (inputs.shape[0],):
            raise LengthgenError(f"offsets must have shape [batch]={inputs.shape[0]}, "
                                 f"got {tuple(offsets.shape)}")
        ends = offsets + (inputs != 0).sum(dim=1)
        if bool((offsets < 0).any()) or bool((ends > n).any()):
            worst = int(ends.max())
            raise LengthgenError(f"offset + sequence length reaches position {worst} but the "
                                 f"position table has {n} rows (n_positions={n}); offsets must "
                                 f"be in [0, n_positions - length]")

    def embed(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
        x = self.token_embeddings(inputs)
        if self.position_embeddings is not None:
            positions = torch.arange(inputs.shape[1], device=inputs.device)
            if offsets is not None:
                positions = (offsets[:, None] + positions).clamp(max=self.cfg.n_positions - 1)
            x = x + self.position_embeddings(positions)
        return self.embed_dropout(x)

    def forward(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None,
                check: bool = True) -> torch.Tensor:
        """Logits [B,T,n_classes]. offsets shift each sequence's positions (APE only).

        check=False skips the position-table check (callers whose offsets are valid by
        construction, like the trainer, avoid its GPU sync).
        """
        if check:
            self.check_positions(inputs, offsets)
        x = self.embed(inputs, offsets)
        for block in self.blocks:
            x, _ = block(x)
        return self.unembed(self.ln_final(x))

    # ---- inspection ------------------------------------------------------------------------
    @torch.no_grad()
    def attention_maps(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None):
        """(logits, per-layer attention weights [B,H,T,T]) computed explicitly (slow path)."""
        self.check_positions(inputs, offsets)
        x = self.embed(inputs, offsets)
        maps = []
        for block in self.blocks:
            x, weights = block(x, need_weights=True)
            maps.append(weights)
        return self.unembed(self.ln_final(x)), maps

    def position_table(self) -> torch.Tensor | None:
        """The learned positional embeddings [n_positions, d_model] (None for NoPE)."""
        return None if self.position_embeddings is None else self.position_embeddings.weight

    def query_key(self, layer: int, head: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(W_Q, W_K) of one head, each [d_head, d_model]: its logit for residual vectors x_i,
        x_j (after the block's LayerNorm) is (W_Q x_i + b_Q) . (W_K x_j + b_K) / sqrt(d_head)."""
        cfg = self.cfg
        if cfg.attention != "softmax":
            raise LengthgenError("uniform attention has no query or key matrices")
        if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
            raise LengthgenError(f"no head ({layer}, {head}): the model has {cfg.n_layers} "
                                 f"layer(s) of {cfg.n_heads} head(s)")
        weight = self.blocks[layer].attn.in_proj.weight
        rows = slice(head * cfg.d_head, (head + 1) * cfg.d_head)
        return weight[: cfg.d_model][rows], weight[cfg.d_model: 2 * cfg.d_model][rows]
