"""S decoders of one shape as stacked tensors, run by batched matrix products.

One small decoder cannot fill a GPU: a 1-layer, width-16 step is a few hundred kernel launches
that each do almost nothing. Stacking the weights of S decoders along a leading dimension makes
every launch do S models' work: `torch.baddbmm` over [S, rows, d] x [S, d, d'] for the linear
maps, one `scaled_dot_product_attention` call over S x B sequences, and so on. The launches per
step stay those of one model, whatever S is.

The members may differ in everything that does not change the shape of a step: task (so
vocabulary, output classes and position-table length; each member's tables are padded to the
group's largest, the padded rows are never read, and the padded output classes are masked out
of the logits), positional encoding (a NoPE member keeps an unused position table whose rows
are multiplied by 0, so it gets no gradient) and initialization seed. They share the layer
count, heads, width, MLP ratio, attention kind, log-length scaling and embedding tying.

Each member is built as the `Decoder` a single run would build (same seed, same initial
weights) and copied into the stack; `unstack` copies a member back into its own `Decoder`. The
batched forward computes what `Decoder.forward` computes, up to float rounding (the products
are grouped differently); tests/test_engine.py compares logits.
"""
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F

from lengthgen.errors import LengthgenError
from lengthgen.models.decoder import Decoder, DecoderConfig, causal_mean, log_length_factors

# Every DecoderConfig field, by how the stacked forward (a second copy of Decoder.forward)
# treats it. tests/test_engine_fields.py checks that these three cover the dataclass's fields
# exactly and that the stacked logits are the Decoder's own for every value a field takes:
# a new field fails there (and `check_fields` refuses it at run time) until it is placed here
# and, if it changes a step, handled in `forward`.
# what every member of a group must share: the shape and the meaning of a step
SHARED_FIELDS = ("n_layers", "n_heads", "d_model", "mlp_ratio", "attention", "use_mlp",
                 "log_length_scaling", "tied_embeddings", "dropout")
# what each member keeps for itself: its tables are padded to the group's largest (`Padding`),
# its extra output classes masked, and its position switch and table length per member
PER_MEMBER_FIELDS = ("vocab_size", "n_classes", "pe", "n_positions")
# what changes only the initial weights, which each member brings as its Decoder built them
INIT_ONLY_FIELDS = ("init",)


def unplaced_fields(config_class=DecoderConfig) -> list[str]:
    """Fields of a decoder config class that none of the three lists above names."""
    placed = set(SHARED_FIELDS) | set(PER_MEMBER_FIELDS) | set(INIT_ONLY_FIELDS)
    return [f.name for f in fields(config_class) if f.name not in placed]


def check_fields(cfg) -> None:
    """Refuse a config with a field the stacked forward does not know how to treat."""
    missing = unplaced_fields(type(cfg))
    if missing:
        raise LengthgenError(f"the stacked forward does not handle the decoder config field(s) "
                             f"{', '.join(missing)}: place them in lengthgen.engine.stacked "
                             f"(shared, per member or initialization only)")


def shape_key(cfg: DecoderConfig) -> tuple:
    """Decoders with equal keys can train in one stacked group."""
    return tuple(getattr(cfg, name) for name in SHARED_FIELDS)


@dataclass
class Padding:
    vocab: int       # rows of the stacked token table
    classes: int     # rows of the stacked unembedding
    positions: int   # rows of the stacked position table


def _layer_names(cfg: DecoderConfig, layer: int) -> list[str]:
    p = f"blocks.{layer}."
    names = [p + "ln_attn.weight", p + "ln_attn.bias", p + "attn.in_proj.weight",
             p + "attn.in_proj.bias", p + "attn.out_proj.weight", p + "attn.out_proj.bias"]
    if cfg.use_mlp:
        names += [p + "ln_mlp.weight", p + "ln_mlp.bias", p + "mlp.up.weight", p + "mlp.up.bias",
                  p + "mlp.down.weight", p + "mlp.down.bias"]
    return names


class FlatStack:
    """What every stack of S models shares: their parameters as one flat leaf [S, N] (each
    parameter by its model's own name, a view [S, ...] of it, tables padded to the group's
    largest), the optimizer's layout of its columns, one member's rows split by name and
    joined back, members leaving, and a member copied back into its own model. A subclass
    (`StackedDecoders`, `engine.stacked_limit.StackedLimitStyle`) sets `model_class`, gives
    the padded rows of its tables (`_rows`) and per-member constants (`_member_tensors`), and
    writes the batched forward."""
    model_class: type = torch.nn.Module

    def _flatten(self, models, names: list[str]) -> None:
        """`flat` from the members' parameters `names` (a union: a member without one, a NoPE
        member's position table, holds zeros there that its forward never reads)."""
        self.names = names
        # one flat leaf [S, N] holds every parameter of every member; `params` are views of
        # it. A step's optimizer and clipping then run a handful of kernels on one tensor
        # instead of a dozen per parameter, and the backward of the one `split` that makes the
        # views writes every gradient into one buffer.
        stacked = [self._stack(models, name) for name in names]
        self.shapes = [tuple(t.shape[1:]) for t in stacked]
        self.sizes = [int(t[0].numel()) for t in stacked]
        self.flat = torch.cat([t.reshape(len(models), -1) for t in stacked], dim=1)
        self.flat.requires_grad_(True)
        self._member_tensors()

    def _rows(self, name: str) -> int | None:
        """The padded first dimension of a table (None: a parameter every member shares)."""
        return None

    def _stack(self, models, name: str) -> torch.Tensor:
        rows = self._rows(name)
        owned = [dict(m.named_parameters()).get(name) for m in models]
        like = next(t for t in owned if t is not None)
        tensors = []
        for own in owned:
            if own is None:   # a member without it: zeros, never read (its forward scales by 0)
                own = torch.zeros(rows if rows is not None else like.shape[0], *like.shape[1:])
            own = own.detach().to(self.device, torch.float32)
            if rows is not None and own.shape[0] < rows:
                own = torch.cat([own, own.new_zeros(rows - own.shape[0], *own.shape[1:])])
            tensors.append(own)
        return torch.stack(tensors)

    def _member_tensors(self) -> None:
        """Per-member constants of the forward (a subclass's)."""

    @property
    def size(self) -> int:
        return len(self.configs)

    @property
    def params(self) -> dict[str, torch.Tensor]:
        """Each parameter as a view [S, ...] of the flat leaf (gradients flow to `flat`)."""
        parts = self.flat.split(self.sizes, dim=1)
        return {name: part.view(-1, *shape)
                for name, part, shape in zip(self.names, parts, self.shapes)}

    def leaves(self) -> dict[str, torch.Tensor]:
        """The tensors the optimizer updates (one, here)."""
        return {"flat": self.flat}

    def layout(self, roles: dict, dims: dict) -> tuple[dict, dict]:
        """(roles, decays) of the optimizer's leaves: each column of `flat` gets its parameter's
        role (index into ROLES) and whether it decays (a matrix or table in the model)."""
        from lengthgen.models.protocol import ROLES
        role = torch.cat([torch.full((size,), ROLES.index(roles[name]), dtype=torch.long)
                          for name, size in zip(self.names, self.sizes)])
        decay = torch.cat([torch.full((size,), dims[name] >= 2)
                           for name, size in zip(self.names, self.sizes)])
        return {"flat": role}, {"flat": decay}

    def split_leaves(self, rows: dict) -> dict[str, torch.Tensor]:
        """One member's leaf rows ({"flat": [N]}) as {parameter name: padded tensor}."""
        parts = rows["flat"].split(self.sizes)
        return {n: part.view(shape) for n, part, shape in zip(self.names, parts, self.shapes)}

    def join_leaves(self, tensors: dict) -> dict[str, torch.Tensor]:
        """The inverse of split_leaves, from unpadded tensors (missing ones stay zero)."""
        row = torch.zeros(sum(self.sizes), device=self.device)
        pieces = row.split(self.sizes)
        for name, piece, shape in zip(self.names, pieces, self.shapes):
            if name in tensors:
                value = tensors[name].to(self.device, torch.float32)
                piece.view(shape)[: value.shape[0]] = value
        return {"flat": row}

    @torch.no_grad()
    def load_member(self, index: int, tensors: dict) -> None:
        """Member `index`'s weights from a state dict (unpadded)."""
        self.flat[index] = self.join_leaves(tensors)["flat"]

    def retain(self, keep: list[int]) -> None:
        """Keep only the members at these indices (finished members leave the group)."""
        index = torch.tensor(keep, device=self.device)
        self.flat = self.flat.detach().index_select(0, index).requires_grad_(True)
        self.configs = [self.configs[i] for i in keep]
        self._member_tensors()

    @torch.no_grad()
    def unstack(self, index: int) -> torch.nn.Module:
        """Member `index` as its own model (on the CPU), its tables cut back to its size."""
        cfg = self.configs[index]
        torch.manual_seed(0)   # the weights are overwritten: any init will do
        model = self.model_class(cfg)
        params = self.params
        for name, param in model.named_parameters():
            value = params[name][index]
            param.copy_(value[: param.shape[0]].to(param.device, param.dtype))
        return model

    def member_state(self, index: int) -> dict[str, torch.Tensor]:
        """Member `index`'s parameters by name, unpadded (for checkpoints)."""
        return {n: t.clone() for n, t in self.unstack(index).state_dict().items()}


class StackedDecoders(FlatStack):
    """The parameters of S decoders as leaf tensors [S, ...] (a dict keyed by the Decoder's own
    parameter names), and a forward over inputs [S, B, T]."""
    model_class = Decoder

    def __init__(self, models: list[Decoder], device):
        if not models:
            raise LengthgenError("a stacked group needs at least one decoder")
        first = models[0].cfg
        for model in models:
            if not isinstance(model, Decoder):
                raise LengthgenError(f"stacked groups hold Decoders, got {type(model).__name__}")
            check_fields(model.cfg)
            if shape_key(model.cfg) != shape_key(first):
                raise LengthgenError("the decoders of one group must share "
                                     + ", ".join(SHARED_FIELDS))
        if first.dropout > 0:
            raise LengthgenError("stacked groups need dropout=0 (dropout streams would differ "
                                 "from separate runs)")
        self.cfg = first                       # the shared shape
        self.configs = [m.cfg for m in models]  # each member's own config
        self.device = torch.device(device)
        self.pad = Padding(vocab=max(c.vocab_size for c in self.configs),
                           classes=max(c.n_classes for c in self.configs),
                           positions=max(c.n_positions for c in self.configs))
        names = [n for n, _ in models[0].named_parameters()]
        if not first.pe.absolute:   # a group of NoPE models only may still mix in APE ones
            names = next(([n for n, _ in m.named_parameters()] for m in models
                          if m.cfg.pe.absolute), names)
        self._flatten(models, names)

    def _rows(self, name: str) -> int | None:
        return {"token_embeddings.weight": self.pad.vocab, "unembed.weight": self.pad.classes,
                "position_embeddings.weight": self.pad.positions}.get(name)

    def _member_tensors(self) -> None:
        """Per-member constants of the forward: class masks, table sizes, position switches."""
        dev = self.device
        self.class_ok = torch.stack([torch.arange(self.pad.classes, device=dev) < c.n_classes
                                     for c in self.configs])                       # [S, C]
        self.n_positions = torch.tensor([c.n_positions for c in self.configs], device=dev)
        self.uses_positions = torch.tensor([float(c.pe.absolute) for c in self.configs],
                                           device=dev)

    # ---- the batched forward ----------------------------------------------------------------
    # Under a bf16 autocast (on a card) every batched product casts its weight and bias to bf16
    # on each call, and its backward casts their gradients back: two copy kernels per
    # parameter per step, most of the 376 copies of a 12-layer step on an H200. With
    # `cast_once` the forward instead casts the columns of `flat` from the first product's
    # weight on in one kernel and hands the products bf16 views of it (the backward: one cast
    # back). The numbers are autocast's own (tests/test_engine_compile.py: bit for bit). A run
    # of precision "fp32" enters no autocast (`lengthgen.evaluate.autocast`), so none of this.
    cast_once = True
    PRODUCTS = ("attn.in_proj.weight", "attn.in_proj.bias", "attn.out_proj.weight",
                "attn.out_proj.bias", "mlp.up.weight", "mlp.up.bias", "mlp.down.weight",
                "mlp.down.bias", "unembed.weight")

    def _low_precision(self) -> dict[str, torch.Tensor]:
        """The products' parameters as views of one cast of `flat` to the autocast's dtype
        ("readout": the unembedding's, the token table when tied); {} without autocast."""
        kind = self.device.type
        if not self.cast_once or not torch.is_autocast_enabled(kind):
            return {}
        dtype = torch.get_autocast_dtype(kind)
        tied = self.cfg.tied_embeddings
        used = [n.endswith(self.PRODUCTS) or (tied and n == "token_embeddings.weight")
                for n in self.names]
        first = used.index(True)
        low = self.flat[:, sum(self.sizes[:first]):].to(dtype)
        out = {}
        for name, part, shape, use in zip(self.names[first:], low.split(self.sizes[first:], 1),
                                          self.shapes[first:], used[first:]):
            if use:
                key = "readout" if name in ("token_embeddings.weight", "unembed.weight") \
                    else name
                out[key] = part.view(-1, *shape)
        return out

    def forward(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
        """Logits [S, B, T, C] for inputs [S, B, T] (offsets [S, B] shift APE positions).
        Output classes beyond a member's own are -inf (they take no probability)."""
        cfg, p = self.cfg, self.params
        p.update(self._low_precision())
        s, b, t = inputs.shape
        d = cfg.d_model
        member = torch.arange(s, device=inputs.device)[:, None, None]
        x = p["token_embeddings.weight"][member, inputs]                     # [S, B, T, d]
        if "position_embeddings.weight" in p:
            positions = torch.arange(t, device=inputs.device).expand(s, b, t)
            if offsets is not None:
                positions = positions + offsets[..., None]
            positions = torch.minimum(positions, (self.n_positions - 1)[:, None, None])
            table = p["position_embeddings.weight"] * self.uses_positions[:, None, None]
            x = x + table[member, positions]
        x = x.reshape(s, b * t, d)
        for layer in range(cfg.n_layers):
            pre = f"blocks.{layer}."
            h = _layer_norm(x, p[pre + "ln_attn.weight"], p[pre + "ln_attn.bias"])
            x = x + self._attention(h, p, pre, s, b, t)
            if cfg.use_mlp:
                h = _layer_norm(x, p[pre + "ln_mlp.weight"], p[pre + "ln_mlp.bias"])
                h = F.gelu(_linear(h, p[pre + "mlp.up.weight"], p[pre + "mlp.up.bias"]),
                           approximate="tanh")
                x = x + _linear(h, p[pre + "mlp.down.weight"], p[pre + "mlp.down.bias"])
        x = _layer_norm(x, p["ln_final.weight"], p["ln_final.bias"])
        readout = p.get("readout")
        if readout is None:
            readout = p["token_embeddings.weight" if cfg.tied_embeddings else "unembed.weight"]
        logits = torch.bmm(x, readout.transpose(1, 2)).view(s, b, t, -1)
        if cfg.tied_embeddings:
            logits = logits[..., : self.pad.classes]
        return logits.masked_fill(~self.class_ok[:, None, None, :], float("-inf"))

    def _attention(self, h: torch.Tensor, p: dict, pre: str, s: int, b: int,
                   t: int) -> torch.Tensor:
        cfg = self.cfg
        heads, dh = cfg.n_heads, cfg.d_head
        projected = _linear(h, p[pre + "attn.in_proj.weight"], p[pre + "attn.in_proj.bias"])
        split = lambda part: part.reshape(s * b, t, heads, dh).transpose(1, 2)  # [SB, H, T, dh]
        if cfg.attention == "uniform":
            y = causal_mean(split(projected))
        else:
            q, k, v = (split(part) for part in projected.split(cfg.d_model, dim=-1))
            if cfg.log_length_scaling:
                q = q * log_length_factors(t, h.device).to(q.dtype)[:, None]
            y = _attention_in_chunks(q, k, v)
        y = y.transpose(1, 2).reshape(s, b * t, cfg.d_model)
        return _linear(y, p[pre + "attn.out_proj.weight"], p[pre + "attn.out_proj.bias"])


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x [S, N, in] times each member's weight [S, out, in], plus its bias [S, out]."""
    return torch.baddbmm(bias[:, None, :], x, weight.transpose(1, 2))


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.addcmul(bias[:, None, :], F.layer_norm(x, x.shape[-1:]), weight[:, None, :])


# The fused attention kernels put the batch in one grid dimension, limited to 65,535 blocks: a
# group of 1,024 members at batch 64 (65,536 sequences) failed on an H200 (cuDNN "mha_graph"
# error, bench_engine.py). Larger batches go through in slices.
MAX_ATTENTION_BATCH = 32768


def _attention_in_chunks(q, k, v, limit: int | None = None):
    """Causal scaled_dot_product_attention over [N, H, T, dh], at most `limit` sequences per
    call (the same numbers: sequences never attend to one another)."""
    limit = limit or MAX_ATTENTION_BATCH
    if q.shape[0] <= limit:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return torch.cat([F.scaled_dot_product_attention(a, b, c, is_causal=True)
                      for a, b, c in zip(q.split(limit), k.split(limit), v.split(limit))])

