"""The compiled model: a LimitTransformer with the dimension of every operation, run on strings.

Strings are turned into token ids (the start symbol first), run through the transformer, and
the residual stream is decoded back into the value of every operation at every position.
"""
from dataclasses import dataclass

import numpy as np
import torch

from lengthgen.crasp import ir
from lengthgen.crasp.compile.blocks import START_TOKEN
from lengthgen.crasp.interpret import shown_alphabet, tokens_of
from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitTransformer


@dataclass
class CompiledModel:
    """A program compiled into a LimitTransformer, with the dimension of every operation.

    Inputs are strings over the program's alphabet; the start symbol is added here.
    """
    program: ir.Program
    model: LimitTransformer
    dims: dict
    max_length: int
    mlp: str
    bounds: dict

    def tokens(self, string) -> torch.Tensor:
        """Token ids: the start symbol (0), then 1 + the index of each symbol in the alphabet."""
        alphabet = self.program.alphabet
        string = tokens_of(self.program, string)
        bad = sorted({s for s in string if s not in alphabet})
        if bad:
            raise LengthgenError(f"symbol(s) {', '.join(map(repr, bad))} not in the alphabet "
                                 f"{shown_alphabet(alphabet)} of program {self.program.name!r}")
        return torch.tensor([START_TOKEN] + [1 + alphabet.index(s) for s in string])

    def residual(self, strings, allow_longer: bool = False) -> np.ndarray:
        """Final residual streams [B, n+1, d] for strings of one length n."""
        strings = [tokens_of(self.program, s) for s in strings]
        lengths = {len(s) for s in strings}
        if len(lengths) != 1:
            raise LengthgenError("residual() needs strings of one length; use run() otherwise")
        n = lengths.pop()
        if n > self.max_length and self.mlp == "relu" and not allow_longer:
            raise LengthgenError(
                f"input length {n} exceeds max_length={self.max_length} of this ReLU-only "
                f"compile, which is exact only up to that length (recompile with a larger "
                f"max_length, or use mlp='heaviside', exact at every length)")
        batch = torch.stack([self.tokens(s) for s in strings])
        with torch.no_grad():
            return self.model(batch.to(self.model.token_embedding.device)).cpu().numpy()

    def decode(self, stream: np.ndarray) -> dict:
        """Per operation, its values at positions 1..n: Booleans thresholded at 1/2, counts
        multiplied by i+1 and rounded."""
        scale = np.arange(stream.shape[-2], dtype=np.float64) + 1.0
        out = {}
        for name, op in self.program.ops.items():
            column = stream[..., self.dims[name]]
            if ir.sort_of(op) is ir.Sort.BOOL:
                out[name] = (column > 0.5)[..., 1:]
            else:
                out[name] = np.rint(column * scale).astype(np.int64)[..., 1:]
        return out

    def run(self, string, allow_longer: bool = False) -> dict:
        """Decoded value of every operation at every position 1..n of one string."""
        return self.decode(self.residual([string], allow_longer)[0])

    def accept_bits(self, string, allow_longer: bool = False) -> np.ndarray:
        """The prefix verdicts: the output operation at every position 1..n."""
        return self.run(string, allow_longer)[self.program.output]

    def size(self) -> dict:
        return {"mlp": self.mlp, "max_length": self.max_length, **self.model.summary()}

    def summary(self) -> str:
        s = self.size()
        return (f"{self.program.name or 'program'} -> Limit Transformer ({s['mlp']} MLPs): "
                f"{s['layers']} layers, width {s['width']}, heads {sum(s['heads_per_layer'])}, "
                f"{s['parameters']} parameters, positional parameters "
                f"{s['positional_parameters']}, period {s['period']}, tau {s['tau']}")


