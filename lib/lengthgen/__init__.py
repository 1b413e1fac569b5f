"""lengthgen: the library behind "Length Generalization in Transformers: an interactive textbook".

Layers flow one way: tasks -> models (and crasp) -> train/evaluate -> runs -> experiments ->
viz -> cli (tests/test_architecture.py checks it).
"""
from lengthgen.config import SCALES, get_device, get_scale

__version__ = "0.1.0"
__all__ = ["SCALES", "get_scale", "get_device", "__version__"]
