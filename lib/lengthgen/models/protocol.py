"""The interface a model must meet to be trained by `lengthgen.train` (the engine's stacked
groups train Decoders and limit-style models), and the initialization schemes every model
config can name.

The trainers never ask which class they hold; they use only what `TrainableModel` lists.
`tests/test_model_protocol.py` checks every trainable model class against it.

Parameter roles name the groups that per-group learning rates (`TrainConfig.group_lr`) and the
muP initialization speak of (Yang et al. 2022, "Tensor Programs V", Table 3 for Adam):

    embeddings  token and position tables            muP: init O(1),        Adam lr O(1)
    vectors     biases, LayerNorm gains, scalar biases muP: like embeddings
    hidden      width-by-width matrices               muP: init var 1/fan_in, Adam lr O(1/fan_in)
    readout     the output (unembedding) matrix       muP: init var 1/fan_in^2, Adam lr O(1/fan_in)
"""
import math
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.models.positions import PositionalEncoding

ROLES = ("embeddings", "vectors", "hidden", "readout")
INIT_SCHEMES = ("standard", "mup")


@runtime_checkable
class TrainableModel(Protocol):
    """What a trainer reads from a model.

    cfg: has `pe`, a `lengthgen.models.positions.PositionalEncoding` (an absolute one gets
         random position offsets during training; the others do not), `n_positions` (rows of
         the position table, read for an absolute encoding) and `to_dict()` (stored in
         checkpoints and records).
    forward(inputs [B,T] long, offsets [B] long | None, check: bool) -> outputs [B,T,C]:
         C classes (logits) or C real values; check=False may skip input validation.
    parameter_roles(): {parameter name: role in ROLES} for every parameter that trains.
    num_parameters(): the parameter count reported in records.
    """
    cfg: Any

    def forward(self, inputs: torch.Tensor, offsets: torch.Tensor | None = None,
                check: bool = True) -> torch.Tensor: ...

    def parameter_roles(self) -> dict[str, str]: ...

    def num_parameters(self) -> int: ...


def check_trainable(model) -> None:
    """Raise LengthgenError unless `model` meets TrainableModel, roles included."""
    if not isinstance(model, TrainableModel) or not isinstance(model, nn.Module):
        raise LengthgenError(f"{type(model).__name__} is not a trainable model (needs forward, "
                             f"parameter_roles, num_parameters and a cfg)")
    for name in ("pe", "n_positions", "to_dict"):
        if not hasattr(model.cfg, name):
            raise LengthgenError(f"{type(model).__name__}.cfg has no {name!r}")
    if not isinstance(model.cfg.pe, PositionalEncoding):
        raise LengthgenError(f"{type(model).__name__}.cfg.pe must be a PositionalEncoding "
                             f"(parse the string in the config), got {model.cfg.pe!r}")
    roles = model.parameter_roles()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    if set(roles) != trainable:
        raise LengthgenError(f"{type(model).__name__}.parameter_roles() must name exactly the "
                             f"trainable parameters; missing {sorted(trainable - set(roles))}, "
                             f"extra {sorted(set(roles) - trainable)}")
    for name, role in roles.items():
        if role not in ROLES:
            raise LengthgenError(f"{type(model).__name__}: parameter {name} has unknown role "
                                 f"{role!r}; valid: {', '.join(ROLES)}")


def default_roles(model: nn.Module, embeddings=(), readout=()) -> dict[str, str]:
    """Roles from names and shapes: the named embedding and readout parameters, other matrices
    hidden, everything of dimension < 2 a vector."""
    roles = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if name in embeddings:
            roles[name] = "embeddings"
        elif name in readout:
            roles[name] = "readout"
        else:
            roles[name] = "hidden" if param.dim() >= 2 else "vectors"
    return roles


def check_init_scheme(scheme: str) -> None:
    if scheme not in INIT_SCHEMES:
        raise unknown_name("initialization scheme", scheme, INIT_SCHEMES)


@torch.no_grad()
def mup_init(model: nn.Module, zero: tuple[str, ...] = ()) -> None:
    """muP initialization by role (Yang et al. 2022, Table 3): embeddings N(0, 1), hidden
    matrices N(0, 1/fan_in), the readout N(0, 1/fan_in^2), biases zero and LayerNorm gains one
    (vectors keep O(1) values). Parameters named in `zero` start at zero (muP's zero query).
    A parameter on the meta device (a model built only to be counted, `runs.cost`) has no
    values to draw and is left as it is: each draw still cost about 0.7 ms through the meta
    kernels (the quantitative-bounds chapter's cost table counts 772 models: 3.2 -> 1.5 s in
    benchmarks/bench_chapter_costs.py without them)."""
    roles = model.parameter_roles()
    for name, param in model.named_parameters():
        role = roles.get(name)
        if role is None or param.is_meta:
            continue
        if name in zero:
            param.zero_()
        elif role == "embeddings":
            param.normal_(0.0, 1.0)
        elif role == "hidden":
            param.normal_(0.0, 1.0 / math.sqrt(param.shape[-1]))
        elif role == "readout":
            param.normal_(0.0, 1.0 / param.shape[-1])
        elif name.endswith("bias") or name.endswith("_bias"):
            param.zero_()
