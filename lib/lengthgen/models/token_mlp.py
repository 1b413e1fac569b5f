"""The random baseline of Huang et al. (2025), Fig. 1: a 2-layer MLP over the current token.

It sees one token and nothing else (no position, no context), so what it learns is the best
guess from the current symbol alone. Whatever accuracy it reaches is the floor against which a
transformer's success must be judged. It meets the trainer's model interface
(lengthgen.models.protocol.TrainableModel), so the same loop as the transformers trains it.
"""
from dataclasses import asdict, dataclass

import torch
from torch import nn

from lengthgen.errors import LengthgenError
from lengthgen.models.positions import PositionalEncoding


@dataclass
class TokenMLPConfig:
    vocab_size: int
    n_classes: int
    d_model: int = 64
    hidden: int = 256
    pe: PositionalEncoding = PositionalEncoding.NOPE  # no positions: the trainer draws no offsets
    n_positions: int = 1 << 30  # any length fits

    def __post_init__(self):
        for name in ("vocab_size", "n_classes", "d_model", "hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LengthgenError(f"token MLP config: {name} must be a positive integer, "
                                     f"got {value!r}")
        self.pe = PositionalEncoding.parse(self.pe, (PositionalEncoding.NOPE,), "token MLP config")

    def to_dict(self) -> dict:
        return {**asdict(self), "pe": self.pe.value}


class TokenMLP(nn.Module):
    def __init__(self, cfg: TokenMLPConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.hidden), nn.ReLU(),
                                 nn.Linear(cfg.hidden, cfg.n_classes))

    def forward(self, inputs: torch.Tensor, offsets=None, check: bool = True) -> torch.Tensor:
        return self.mlp(self.embed(inputs))

    def parameter_roles(self) -> dict[str, str]:
        """Roles for per-group learning rates and muP (lengthgen.models.protocol)."""
        from lengthgen.models.protocol import default_roles
        return default_roles(self, embeddings=("embed.weight",), readout=("mlp.2.weight",))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
