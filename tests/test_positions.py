"""Positional encoding is one typed concept: parsed from its spelling at the model boundary,
asked (never string-compared) by trainer and evaluator, written back as the same spelling."""
import json
import re
from pathlib import Path

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.evaluate import evaluate
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.dyck import HeadConfig
from lengthgen.models.limit_style import LimitStyleConfig
from lengthgen.models.positions import DECODER_ENCODINGS, PositionalEncoding, values
from lengthgen.models.protocol import check_trainable
from lengthgen.models.token_mlp import TokenMLPConfig
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, preamble

LIB = Path(__file__).resolve().parents[1] / "lib" / "lengthgen"


def test_spellings_parse_to_members_and_write_back_unchanged():
    for member in PositionalEncoding:
        assert PositionalEncoding.parse(member.value) is member
        assert PositionalEncoding.parse(member) is member
        assert str(member) == member.value and f"{member}" == member.value
    cfg = DecoderConfig(vocab_size=3, n_classes=2, pe="nope")
    assert cfg.pe is PositionalEncoding.NOPE
    # records and cache keys keep the plain strings they always held
    assert cfg.to_dict()["pe"] == "nope" and type(cfg.to_dict()["pe"]) is str
    assert json.loads(json.dumps(cfg.to_dict()))["pe"] == "nope"
    assert DecoderConfig(**cfg.to_dict()) == cfg
    assert LimitStyleConfig(vocab_size=3, pe="periodic").to_dict()["pe"] == "periodic"
    assert values(DECODER_ENCODINGS) == ("ape", "nope")


@pytest.mark.parametrize("make, bad", [
    (lambda pe: DecoderConfig(vocab_size=3, n_classes=2, pe=pe), "periodic"),
    (lambda pe: DecoderConfig(vocab_size=3, n_classes=2, pe=pe), "APE"),
    (lambda pe: LimitStyleConfig(vocab_size=3, pe=pe), "rope"),
    (lambda pe: TokenMLPConfig(vocab_size=3, n_classes=2, pe=pe), "ape"),
    (lambda pe: HeadConfig(d_model=4, n_positions=8, pe=pe), "nope"),
    (lambda pe: LimitStyleConfig(vocab_size=3, pe=pe), ["ape"]),
])
def test_each_model_refuses_encodings_it_lacks_in_one_line(make, bad):
    with pytest.raises(LengthgenError) as err:
        make(bad)
    message = str(err.value)
    assert "positional encoding" in message and "valid:" in message and "\n" not in message


def test_properties_drive_what_trainer_and_evaluator_do():
    assert [m.absolute for m in PositionalEncoding] == [False, False, True]
    assert [m.sees_positions for m in PositionalEncoding] == [False, True, True]
    assert [m.label for m in PositionalEncoding] == ["NoPE", "periodic", "APE"]   # as the papers
    task = get_task("binary_majority")
    cfg = TrainConfig(steps=1, batch_size=4, min_len=1, max_len=40)
    ape = Decoder(DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                                d_model=8, pe="ape", n_positions=8))
    nope = Decoder(DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                                 d_model=8, pe="nope", n_positions=8))
    with pytest.raises(LengthgenError, match="n_positions=8"):
        preamble(ape, task, cfg)          # the table is too short for Len 40
    assert preamble(nope, task, cfg)[3] is False   # NoPE: no table, no offsets
    # the evaluator shifts APE positions by the offset and leaves NoPE alone
    torch.manual_seed(0)
    ape = Decoder(DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                                d_model=8, pe="ape", n_positions=64))
    short = dict(bins=[(5, 5)], samples_per_bin=16, seed=1)
    assert evaluate(ape, task, **short) != evaluate(ape, task, offset=30, **short)
    assert evaluate(nope, task, **short) == evaluate(nope, task, offset=30, **short)


def test_a_config_holding_a_string_is_not_trainable():
    model = Decoder(DecoderConfig(vocab_size=3, n_classes=2, d_model=8))
    model.cfg.pe = "ape"  # bypasses the parse in __post_init__
    with pytest.raises(LengthgenError, match="PositionalEncoding"):
        check_trainable(model)


def test_no_string_compare_of_an_encoding_outside_the_models():
    # ("periodic" is also a C-RASP operation, compared as such in lengthgen.crasp)
    pattern = re.compile(r"""(==|!=)\s*["'](ape|nope)["']|["'](ape|nope)["']"""
                         r"""\s*(==|!=)|\bpe\s+(not\s+)?in\s""")
    found = [f"{path.relative_to(LIB)}:{i}" for path in LIB.rglob("*.py")
             if "models" not in path.relative_to(LIB).parts
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
