"""How a model sees positions: one typed concept, declared once.

Every model config has a field `pe` holding a `PositionalEncoding`. Configs, records and the
command line spell it as its value ("nope", "periodic", "ape"); `PositionalEncoding.parse`
turns such a string into the member at the model boundary (each config's `__post_init__`), and
`to_dict()` writes the value back, so records and cache keys hold the same strings as before.

Trainers and evaluators never compare strings; they ask the member:

* `absolute`: positions index a learned table of `n_positions` rows (APE). The trainer draws a
  random offset into the table for every training sequence (Huang et al. 2025's protocol), the
  evaluator may shift the test positions by an offset, and inputs must fit the table.
* `sees_positions`: the model can tell positions apart at all (APE, and the periodic table of a
  Limit Transformer); NoPE sees only the causal mask.
"""
from enum import Enum

from lengthgen.errors import LengthgenError


class PositionalEncoding(str, Enum):
    NOPE = "nope"           # no positional information beyond the causal mask
    PERIODIC = "periodic"   # a learned table indexed by position mod a period
    APE = "ape"             # a learned table indexed by absolute position

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def label(self) -> str:
        """How prose, tables and plots name it ("NoPE", "periodic", "APE")."""
        return {"nope": "NoPE", "periodic": "periodic", "ape": "APE"}[self.value]

    @property
    def absolute(self) -> bool:
        """Positions index a finite table by absolute position (offsets apply, inputs must
        fit the table)."""
        return self is PositionalEncoding.APE

    @property
    def sees_positions(self) -> bool:
        """The model has any positional signal besides the causal mask."""
        return self is not PositionalEncoding.NOPE

    @classmethod
    def parse(cls, value, allowed=None, owner: str = "model config") -> "PositionalEncoding":
        """The member named by `value` (a member or its string), one of `allowed` (default:
        all); a LengthgenError naming the valid values otherwise."""
        allowed = tuple(cls) if allowed is None else tuple(allowed)
        try:
            member = cls(value)
        except ValueError:
            member = None
        if member not in allowed:
            raise LengthgenError(f"{owner}: unknown positional encoding {value!r}; valid: "
                                 f"{', '.join(m.value for m in allowed)}")
        return member


# the decoder (lengthgen.models.decoder) has no periodic table; the Limit-style model has all
DECODER_ENCODINGS = (PositionalEncoding.APE, PositionalEncoding.NOPE)


def values(members) -> tuple[str, ...]:
    """The config spellings of `members` (for choices on a command line, registered configs)."""
    return tuple(m.value for m in members)
