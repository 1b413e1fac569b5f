"""The trained Dyck models of Richard (2024, App. 5.3.4, the ablation), one typed config each.

A `DyckModelConfig` names a variant and its size; `build_dyck_model` makes the module (the
caller seeds torch first; `lengthgen.engine.kinds` does, for a Job of kind "dyck"):
  full          the decoder with learned absolute positions, softmax attention, MLP
  nope          the same without positional embeddings
  uniform-pm1   uniform attention (Q = 0) and frozen token embeddings '(' = u, ')' = -u with
                u = (+1, -1, +1, ...) (see token_signs)
  uniform-pm1-v uniform-pm1, no MLP, value and output projections frozen to the identity
  eq1           Eq. (1) itself: one uniform head, frozen +-1 tokens, learned B and V, tied
                unembedding, no LayerNorm, no residual (`lengthgen.models.dyck.SelfAttentionHead`)
and, outside the Fig. 6 sweep (STUDY_VARIANTS, used by the Fig. 7 order study):
  eq1-res       Eq. (1) with a residual connection and LayerNorm, closer to the paper's model 5:
                a one-layer decoder with one uniform head, no MLP, frozen tokens +-u tied as
                unembedding; learned B, V, output projection and LayerNorm gains

torch is imported inside the functions that make tensors: the names and the config serve the
Dyck figures' runs() and data(), which need no torch.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.dyck import CLOSE, OPEN, TOKEN_ID, VOCAB

if TYPE_CHECKING:   # annotations only
    import torch

VARIANTS = ("full", "nope", "uniform-pm1", "uniform-pm1-v", "eq1")
STUDY_VARIANTS = ("eq1-res",)   # not in VARIANTS: Fig. 6's registered config lists VARIANTS
# every decoder variant has the learned absolute table except the NoPE ablation
VARIANT_ENCODING = {"nope": PositionalEncoding.NOPE}


@dataclass(frozen=True)
class DyckModelConfig:
    """One Dyck model: its variant and size (eq1 is one head of width d_model: it has no
    layers or heads to count), for D_2N with <bos> (n_positions = 2N)."""
    variant: str
    n_positions: int
    n_layers: int
    n_heads: int
    d_model: int
    dropout: float = 0.0

    def __post_init__(self):
        if self.variant not in VARIANTS + STUDY_VARIANTS:
            raise unknown_name("Dyck model variant", self.variant, VARIANTS + STUDY_VARIANTS)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(layers, heads, width) as costs and the slices' planner count them: eq1 is one
        attention head of width d_model, whatever its config's layers and heads say."""
        if self.variant == "eq1":
            return 1, 1, self.d_model
        return self.n_layers, self.n_heads, self.d_model


def token_signs(d: int) -> torch.Tensor:
    """u = (+1, -1, +1, ...): the frozen embedding of '(' (and -u of ')') in the decoder.

    The paper writes E('(') = (1, ..., 1), but the decoder's pre-LayerNorm subtracts the mean
    over coordinates, which maps that vector (plus any position) to the position alone: the
    model could not see its input. u has +-1 entries, zero mean, and keeps '(' = -')'.
    """
    import torch
    return torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(d)])


def _freeze_tokens(embedding: torch.nn.Embedding) -> None:
    import torch
    u = token_signs(embedding.weight.shape[1])
    with torch.no_grad():
        embedding.weight.zero_()
        embedding.weight[TOKEN_ID[OPEN]] = u
        embedding.weight[TOKEN_ID[CLOSE]] = -u
    embedding.weight.requires_grad_(False)


def _freeze_identity(linear: torch.nn.Linear) -> None:
    import torch
    with torch.no_grad():
        linear.weight.copy_(torch.eye(linear.weight.shape[0]))
        linear.bias.zero_()
    linear.weight.requires_grad_(False)
    linear.bias.requires_grad_(False)


def build_dyck_model(cfg: DyckModelConfig) -> torch.nn.Module:
    """A fresh model of the config's variant (its weights drawn from torch's generator as it
    stands: seed it first)."""
    from lengthgen.models.decoder import Decoder, DecoderConfig
    from lengthgen.models.dyck import SelfAttentionHead
    variant = cfg.variant
    if variant == "eq1":
        return SelfAttentionHead(cfg.d_model, cfg.n_positions, uniform=True, fixed_tokens=True)
    if variant not in VARIANTS + STUDY_VARIANTS:   # a config made with object.__setattr__
        raise LengthgenError(f"unknown Dyck model variant {variant!r}")
    uniform = variant.startswith("uniform") or variant == "eq1-res"
    decoder = DecoderConfig(vocab_size=len(VOCAB), n_classes=len(VOCAB), n_layers=cfg.n_layers,
                            n_heads=cfg.n_heads, d_model=cfg.d_model, mlp_ratio=8,
                            pe=VARIANT_ENCODING.get(variant, PositionalEncoding.APE),
                            n_positions=cfg.n_positions, dropout=cfg.dropout,
                            attention="uniform" if uniform else "softmax",
                            use_mlp=variant not in ("uniform-pm1-v", "eq1-res"),
                            tied_embeddings=variant == "eq1-res")
    model = Decoder(decoder)
    if uniform:
        _freeze_tokens(model.token_embeddings)
    if variant == "uniform-pm1-v":
        for block in model.blocks:
            _freeze_identity(block.attn.in_proj)
            _freeze_identity(block.attn.out_proj)
    return model
