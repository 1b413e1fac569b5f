"""The two switches: scale and device, with clear messages for bad values."""
import pytest
import torch

from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError


def test_scale_comes_from_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("LENGTHGEN_SCALE", raising=False)
    assert get_scale() == "book"
    monkeypatch.setenv("LENGTHGEN_SCALE", " Test ")
    assert get_scale() == "test"
    assert get_scale("paper") == "paper"


def test_invalid_scale_lists_the_valid_ones(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_SCALE", "huge")
    with pytest.raises(LengthgenError, match=r"invalid scale 'huge' \(from LENGTHGEN_SCALE\); "
                                             r"valid scales: test, book, paper"):
        get_scale()


def test_cpu_device_and_unknown_device(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")
    with pytest.raises(LengthgenError, match="unknown device 'tpu'"):
        get_device("tpu")


def test_cuda_without_a_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("LENGTHGEN_DEVICE", "cuda")
    with pytest.raises(LengthgenError, match="no CUDA GPU is available here"):
        get_device()
    monkeypatch.delenv("LENGTHGEN_DEVICE")
    assert get_device().type in ("cpu", "mps")  # automatic choice falls back quietly
