"""The stacked forward is a second copy of `Decoder.forward`: every DecoderConfig field is placed.

`lengthgen.engine.stacked` names each field of DecoderConfig as shared by a group, kept per
member, or changing the initial weights only. These tests fail when a field is added to
DecoderConfig without being placed there (the lists must cover the dataclass exactly) and when
a field's value changes what the Decoder computes but not what the stacked forward computes:
for every field, each value it takes here gives the Decoder's own logits (within float
rounding, 1e-5) from the stacked forward, with the value shared by the whole group for a shared
field and mixed inside one group for the others.
"""
from dataclasses import dataclass, fields

import pytest
import torch

from lengthgen.engine.stacked import (INIT_ONLY_FIELDS, PER_MEMBER_FIELDS, SHARED_FIELDS,
                                      StackedDecoders, unplaced_fields)
from lengthgen.errors import LengthgenError
from lengthgen.models.decoder import Decoder, DecoderConfig

BASE = {"vocab_size": 6, "n_classes": 6, "n_layers": 2, "n_heads": 2, "d_model": 16,
        "n_positions": 24}
# every field and the values it takes here; a field missing from this table fails the test
VARIATIONS = {
    "vocab_size": [6, 9, 4], "n_classes": [6, 3, 10], "n_layers": [1, 3], "n_heads": [1, 4],
    "d_model": [8, 24], "mlp_ratio": [1.5, 4], "pe": ["ape", "nope"],
    "n_positions": [24, 40, 13], "log_length_scaling": [True, False], "dropout": [0.0],
    "tied_embeddings": [True, False], "attention": ["softmax", "uniform"],
    "use_mlp": [True, False], "init": ["standard", "mup"]}
FIELD_NAMES = [f.name for f in fields(DecoderConfig)]
T = 12


def test_every_config_field_is_placed_once():
    placed = list(SHARED_FIELDS) + list(PER_MEMBER_FIELDS) + list(INIT_ONLY_FIELDS)
    assert len(placed) == len(set(placed)), "a field is placed twice"
    assert sorted(placed) == sorted(FIELD_NAMES)
    assert unplaced_fields() == []
    assert sorted(VARIATIONS) == sorted(FIELD_NAMES), "every field needs values to test"


def test_a_new_config_field_is_refused_until_placed():
    @dataclass
    class Planted(DecoderConfig):
        rotary: bool = False
    assert unplaced_fields(Planted) == ["rotary"]
    model = Decoder(Planted(vocab_size=4, n_classes=4, d_model=8))
    with pytest.raises(LengthgenError, match="rotary"):
        StackedDecoders([model], "cpu")


def _decoder(seed: int, **change) -> Decoder:
    torch.manual_seed(seed)
    return Decoder(DecoderConfig(**{**BASE, **change}))


def _compare(models: list[Decoder]) -> None:
    """The stacked logits of `models` are each decoder's own (offsets for APE members)."""
    stack = StackedDecoders(models, "cpu")
    gen = torch.Generator().manual_seed(0)
    inputs = torch.stack([torch.randint(1, m.cfg.vocab_size, (3, T), generator=gen)
                          for m in models])
    offsets = torch.stack([torch.randint(0, m.cfg.n_positions - T + 1, (3,), generator=gen)
                           for m in models])
    with torch.no_grad():
        logits = stack.forward(inputs, offsets)
        for i, model in enumerate(models):
            alone = model(inputs[i], offsets[i] if model.cfg.pe.absolute else None)
            c = model.cfg.n_classes
            torch.testing.assert_close(logits[i, ..., :c], alone, atol=1e-5, rtol=1e-5)
            assert torch.isneginf(logits[i, ..., c:]).all()


def _valid(change: dict) -> dict:
    """The change, with what DecoderConfig requires alongside it."""
    if change.get("tied_embeddings"):
        change = {**change, "n_classes": change.get("vocab_size", BASE["vocab_size"])}
    if change.get("attention") == "uniform":
        change = {**change, "log_length_scaling": False}
    return change


@pytest.mark.parametrize("name", SHARED_FIELDS)
def test_a_shared_field_gives_each_decoders_logits_at_every_value(name):
    for value in VARIATIONS[name]:
        change = _valid({name: value})
        _compare([_decoder(1, **change), _decoder(2, **change, pe="nope"),
                  _decoder(3, **change)])


@pytest.mark.parametrize("name", PER_MEMBER_FIELDS + INIT_ONLY_FIELDS)
def test_a_member_field_mixed_in_one_group_gives_each_decoders_logits(name):
    models = [_decoder(seed, **_valid({name: value}))
              for seed, value in enumerate(VARIATIONS[name])]
    assert len({getattr(m.cfg, name) for m in models}) == len(VARIATIONS[name])
    _compare(models)


def test_a_group_refuses_members_that_differ_in_a_shared_field():
    for name in SHARED_FIELDS:
        values = VARIATIONS[name]
        if len(values) < 2:
            continue
        models = [_decoder(i, **_valid({name: values[i]})) for i in (0, 1)]
        with pytest.raises(LengthgenError, match="must share"):
            StackedDecoders(models, "cpu")


def test_dropout_above_zero_is_refused():
    with pytest.raises(LengthgenError, match="dropout"):
        StackedDecoders([_decoder(0, dropout=0.1)], "cpu")
