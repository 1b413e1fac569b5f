"""Models: the decoder (APE/NoPE); other model modules are imported by name where used."""
from lengthgen.models.decoder import Decoder, DecoderConfig

__all__ = ["Decoder", "DecoderConfig"]
