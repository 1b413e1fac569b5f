"""Models: the decoder (APE/NoPE); other model modules are imported by name where used.

`Decoder` and `DecoderConfig` are loaded on first use, so that importing a light module of this
package (`lengthgen.models.positions`, read by the command line's help) does not import torch.
"""
__all__ = ["Decoder", "DecoderConfig"]


def __getattr__(name):
    if name in __all__:
        from lengthgen.models import decoder
        return getattr(decoder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
