"""S limit-style transformers (Izzo et al.'s model, `lengthgen.models.limit_style`) of one shape
as stacked tensors, run by batched matrix products: `engine.stacked`'s idea for the other model
that the engine stacks.

The members share the layer count, width and MLP width (the shape of a step). Each keeps for
itself everything else (`PER_MEMBER_FIELDS`): its vocabulary and outputs (tables padded to the
group's largest; padded outputs are -inf logits for a classification task, 0 for a regression
one, where their targets are padded with 0 too: `engine.feeds`), its positional encoding (NoPE,
a periodic table of its own period, or an absolute table of its own length with its own
offsets: one position table of the group's most rows, which a NoPE member multiplies by 0), its
tau-local bias phi (padded to the group's largest tau; entries past a member's own tau are never
read) and its logit scaling, its readout ("last": only the last real token goes through the last
layer; where a group mixes readouts, the last layer runs at every position and a "last"
member's other outputs are 0, as its own model gives them) and its initialization (muP's 1/d or
the standard 1/sqrt(d) on the attention logits).

The batched forward computes what `LimitStyleTransformer.forward` computes, up to float
rounding (tests/test_engine_limit_style.py compares outputs; the field placement is checked as
tests/test_engine_fields.py checks the decoder's).
"""
from dataclasses import fields

import torch
import torch.nn.functional as F

from lengthgen.engine.stacked import MAX_ATTENTION_BATCH, FlatStack
from lengthgen.errors import LengthgenError
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.models.positions import PositionalEncoding

# Every LimitStyleConfig field, by how the stacked forward treats it (as engine.stacked places
# DecoderConfig's): a new field is refused (`check_fields`) until it is placed here
SHARED_FIELDS = ("n_layers", "d_model", "mlp_width")
PER_MEMBER_FIELDS = ("vocab_size", "n_outputs", "pe", "period", "n_positions", "local_tau",
                     "logit_scaling", "readout", "init")
INIT_ONLY_FIELDS = ()   # init also sets the logits' scale (1/d or 1/sqrt(d)): per member


def unplaced_fields(config_class=LimitStyleConfig) -> list[str]:
    """Fields of a limit-style config class that none of the three lists above names."""
    placed = set(SHARED_FIELDS) | set(PER_MEMBER_FIELDS) | set(INIT_ONLY_FIELDS)
    return [f.name for f in fields(config_class) if f.name not in placed]


def check_fields(cfg) -> None:
    missing = unplaced_fields(type(cfg))
    if missing:
        raise LengthgenError(f"the stacked forward does not handle the limit-style config "
                             f"field(s) {', '.join(missing)}: place them in "
                             f"lengthgen.engine.stacked_limit (shared, per member or "
                             f"initialization only)")


def shape_key(cfg: LimitStyleConfig) -> tuple:
    """Limit-style models with equal keys can train in one stacked group."""
    return tuple(getattr(cfg, name) for name in SHARED_FIELDS)


class StackedLimitStyle(FlatStack):
    """The parameters of S limit-style transformers as one flat leaf (views by the model's own
    parameter names), and a forward over inputs [S, B, T]."""
    model_class = LimitStyleTransformer

    def __init__(self, models: list[LimitStyleTransformer], device, regression: bool = False):
        """regression: padded outputs are 0 (their targets are padded with 0), not -inf."""
        if not models:
            raise LengthgenError("a stacked group needs at least one model")
        first = models[0].cfg
        for model in models:
            if not isinstance(model, LimitStyleTransformer):
                raise LengthgenError(f"a limit-style stack holds LimitStyleTransformers, got "
                                     f"{type(model).__name__}")
            check_fields(model.cfg)
            if shape_key(model.cfg) != shape_key(first):
                raise LengthgenError("the limit-style models of one group must share "
                                     + ", ".join(SHARED_FIELDS))
        self.cfg = first
        self.configs = [m.cfg for m in models]
        self.device = torch.device(device)
        self.fill = 0.0 if regression else float("-inf")
        self.pad = {"token_embeddings.weight": max(c.vocab_size for c in self.configs),
                    "unembed.weight": max(c.n_outputs for c in self.configs),
                    "position_embeddings.weight": max(c.position_rows for c in self.configs),
                    "local_bias": max(c.local_tau if c.local_tau is not None else -1
                                      for c in self.configs) + 1}
        self._flatten(models, self._names())

    def _names(self) -> list[str]:
        """The union of the members' parameter names, in the model's own order."""
        names = ["token_embeddings.weight"]
        if self.pad["position_embeddings.weight"]:
            names.append("position_embeddings.weight")
        for layer in range(self.cfg.n_layers):
            p = f"layers.{layer}."
            names += [p + "query.weight", p + "key.weight", p + "value.weight"]
            if self.pad["local_bias"]:
                names.append(p + "local_bias")
            names += [p + "up.weight", p + "up.bias", p + "down.weight"]
        return names + ["unembed.weight"]

    def _rows(self, name: str) -> int | None:
        return self.pad.get("local_bias" if name.endswith(".local_bias") else name)

    def _member_tensors(self) -> None:
        """Per-member constants of the forward, each [S] (or [S, C])."""
        dev, configs = self.device, self.configs
        flag = lambda test: torch.tensor([float(test(c)) for c in configs], device=dev)
        self.out_ok = torch.stack([torch.arange(self.pad["unembed.weight"], device=dev)
                                   < c.n_outputs for c in configs])                 # [S, C]
        self.periodic = torch.tensor([c.pe is PositionalEncoding.PERIODIC for c in configs],
                                     device=dev)
        self.absolute = torch.tensor([c.pe.absolute for c in configs], device=dev)
        self.period = torch.tensor([c.period for c in configs], device=dev)
        self.n_positions = torch.tensor([c.n_positions for c in configs], device=dev)
        self.uses_table = flag(lambda c: c.pe.sees_positions)
        self.scale = torch.tensor([1.0 / c.d_model if c.init == "mup" else c.d_model ** -0.5
                                   for c in configs], device=dev)
        self.tau = torch.tensor([-1 if c.local_tau is None else c.local_tau for c in configs],
                                device=dev)
        self.scale_all = flag(lambda c: c.logit_scaling == "all")   # every logit x log i
        self.reads_last = torch.tensor([c.readout == "last" for c in configs], device=dev)
        # Python bools, not tensors: the forward branches on them without a sync (a captured
        # CUDA graph allows none)
        self.all_last = all(c.readout == "last" for c in configs)
        self.any_last = any(c.readout == "last" for c in configs)

    # ---- the batched forward ----------------------------------------------------------------
    def forward(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
        """Outputs [S, B, T, C] for inputs [S, B, T] (offsets [S, B] shift the absolute
        members' positions; the others ignore them)."""
        p = self.params
        s, b, t = inputs.shape
        member = torch.arange(s, device=inputs.device)[:, None, None]
        x = p["token_embeddings.weight"][member, inputs]                     # [S, B, T, d]
        if "position_embeddings.weight" in p:
            x = x + self._positions(p["position_embeddings.weight"], member, s, b, t, offsets)
        last = ((inputs != 0).sum(dim=-1) - 1).clamp(min=0)                  # [S, B]
        n = self.cfg.n_layers
        for layer in range(n - 1):
            x = self._layer(x, p, f"layers.{layer}.", None)
        if self.all_last:   # the last layer at each sequence's last real token only
            out = self._unembed(self._layer(x, p, f"layers.{n - 1}.", last[..., None]), p)
            out = out.new_zeros(s, b, t, out.shape[-1]).scatter(
                2, last[..., None, None].expand(-1, -1, 1, out.shape[-1]), out)
        else:
            out = self._unembed(self._layer(x, p, f"layers.{n - 1}.", None), p)
            if self.any_last:   # a "last" member's outputs are 0 but at its last token
                keep = ~self.reads_last[:, None, None] | (
                    torch.arange(t, device=inputs.device) == last[..., None])
                out = torch.where(keep[..., None], out, torch.zeros((), device=out.device))
        return out.masked_fill(~self.out_ok[:, None, None, :], self.fill)

    def _positions(self, table, member, s, b, t, offsets) -> torch.Tensor:
        """Each member's position rows [S, B, T, d]: i mod its period (periodic), its offset
        plus i cut at its table's end (absolute), row 0 times 0 (NoPE)."""
        i = torch.arange(t, device=table.device).expand(s, b, t)
        shifted = i if offsets is None else i + offsets[..., None]
        absolute = torch.minimum(shifted, (self.n_positions - 1)[:, None, None])
        periodic = i % self.period[:, None, None]
        rows = torch.where(self.periodic[:, None, None], periodic,
                           torch.where(self.absolute[:, None, None], absolute, 0))
        return (table * self.uses_table[:, None, None])[member, rows]

    def _unembed(self, x, p) -> torch.Tensor:
        s, b, q, d = x.shape
        return torch.bmm(x.reshape(s, b * q, d),
                         p["unembed.weight"].transpose(1, 2)).view(s, b, q, -1)

    def _layer(self, x, p, pre, queries) -> torch.Tensor:
        """One layer at the query positions `queries` [S, B, Q] (None: every position):
        Y = y + attention(y) V; y' = Y + B relu(A Y + b)."""
        s, b, t, d = x.shape
        flat = x.reshape(s, b * t, d)
        key = torch.bmm(flat, p[pre + "key.weight"].transpose(1, 2)).view(s, b, t, d)
        value = torch.bmm(flat, p[pre + "value.weight"].transpose(1, 2)).view(s, b, t, d)
        if queries is None:   # every position: one mask per member, the same for its rows
            rows = x
            positions = torch.arange(t, device=x.device).expand(s, 1, t)         # [S, 1, T]
        else:
            rows = x.gather(2, queries[..., None].expand(-1, -1, -1, d))          # [S, B, Q, d]
            positions = queries
        q = rows.shape[2]
        query = torch.bmm(rows.reshape(s, b * q, d),
                          p[pre + "query.weight"].transpose(1, 2)).view(s, b, q, d)
        # The model's logit of query i on key j <= i is (q.k scale + phi(i - j) Ls) La, with
        # (Ls, La) = (log i, 1) for "suffix" and (1, log i) for "all" (log i: log of the
        # 1-based position). Either way Ls La = log i, so it is q.k (scale La) + phi log i: the
        # query is scaled per member and row, and phi log i is an additive mask beside the
        # causal -inf, which the fused attention kernels take (the logits are never stored).
        log_position = torch.log1p(positions.float())[..., None]                 # [S, *, Q, 1]
        every = self.scale_all[:, None, None, None] > 0
        query = query * (self.scale[:, None, None, None]
                         * torch.where(every, log_position, 1.0))
        distance = positions[..., None] - torch.arange(t, device=x.device)       # [S, *, Q, T]
        mask = None
        if pre + "local_bias" in p:   # phi(i - j) for 0 <= i - j <= tau (the member's tau)
            phi = p[pre + "local_bias"]
            inside = (distance >= 0) & (distance <= self.tau[:, None, None, None])
            index = distance.clamp(0, phi.shape[1] - 1).reshape(s, -1)
            mask = torch.where(inside, phi.gather(1, index).view(distance.shape),
                               torch.zeros((), device=x.device)) * log_position
        if mask is not None or queries is not None:
            causal = torch.where(distance < 0, float("-inf"), 0.0)
            mask = causal if mask is None else mask + causal
        y = rows + _attend(query, key, value, mask)
        hidden = F.relu(torch.baddbmm(p[pre + "up.bias"][:, None, :], y.reshape(s, b * q, d),
                                      p[pre + "up.weight"].transpose(1, 2)))
        return y + torch.bmm(hidden, p[pre + "down.weight"].transpose(1, 2)).view(s, b, q, d)


def _attend(query, key, value, mask):
    """Attention of [S, B, Q, d] queries with an additive mask [S, 1 or B, Q, T] (None: causal),
    at most MAX_ATTENTION_BATCH sequences per call (the fused kernels' grid limit:
    engine.stacked), members never attending to one another."""
    members = max(1, MAX_ATTENTION_BATCH // query.shape[1])
    parts = []
    for start in range(0, query.shape[0], members):
        rows = slice(start, start + members)
        if mask is None:
            parts.append(F.scaled_dot_product_attention(query[rows], key[rows], value[rows],
                                                        is_causal=True, scale=1.0))
        else:
            parts.append(F.scaled_dot_product_attention(query[rows], key[rows], value[rows],
                                                        attn_mask=mask[rows], scale=1.0))
    return parts[0] if len(parts) == 1 else torch.cat(parts)
