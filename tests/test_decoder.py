"""The decoder: causality, positional encodings, attention variants, inspection helpers, errors."""
import math
import re

import pytest
import torch
import torch.nn.functional as F

from lengthgen.errors import LengthgenError
from lengthgen.models import Decoder, DecoderConfig
from lengthgen.models.decoder import causal_mean


def make(seed=0, **options):
    base = dict(vocab_size=7, n_classes=7, n_layers=2, n_heads=2, d_model=16, n_positions=32)
    base.update(options)
    torch.manual_seed(seed)
    return Decoder(DecoderConfig(**base)).eval()


def tokens(b=3, t=12, seed=1):
    return torch.randint(1, 7, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("options", [
    dict(pe="ape"), dict(pe="nope"), dict(log_length_scaling=True),
    dict(attention="uniform"), dict(use_mlp=False, n_heads=4),
])
def test_changing_a_later_token_leaves_earlier_logits_unchanged(options):
    model = make(**options)
    x = tokens()
    y = x.clone()
    y[:, 7] = (y[:, 7] % 6) + 1  # a different real token at position 7
    with torch.no_grad():
        a, b = model(x), model(y)
    assert torch.equal(a[:, :7], b[:, :7])
    assert not torch.allclose(a[:, 7:], b[:, 7:])


def test_uniform_attention_is_a_causal_running_mean():
    model = make(attention="uniform", n_layers=1)
    attn = model.blocks[0].attn
    x = torch.randn(2, 9, 16)
    with torch.no_grad():
        got, weights = attn(x)
        values = attn.in_proj(x)  # uniform attention projects only values
        expected = torch.stack([values[:, : i + 1].mean(dim=1) for i in range(9)], dim=1)
        expected = attn.out_proj(expected)
    torch.testing.assert_close(got, expected)
    assert attn.in_proj.weight.shape == (16, 16)  # values only: no query or key rows
    assert torch.allclose(causal_mean(torch.ones(1, 5, 2)), torch.ones(1, 5, 2))


def test_nope_has_no_positional_parameters_and_ignores_offsets():
    ape, nope = make(pe="ape"), make(pe="nope")
    assert nope.position_table() is None
    assert not any("position" in name for name, _ in nope.named_parameters())
    assert ape.num_parameters() - nope.num_parameters() == 32 * 16
    x = tokens()
    with torch.no_grad():
        assert torch.equal(nope(x), nope(x, torch.tensor([0, 5, 19])))


def test_ape_offset_reads_shifted_rows_of_the_position_table():
    model = make()
    shifted = make()
    with torch.no_grad():
        shifted.position_embeddings.weight[:27] = model.position_embeddings.weight[5:]
        x = tokens(b=1)
        torch.testing.assert_close(model(x, torch.tensor([5])), shifted(x))


def test_explicit_attention_path_matches_sdpa_and_weights_are_causal_distributions():
    model = make(log_length_scaling=True)
    x = tokens()
    with torch.no_grad():
        logits, maps = model.attention_maps(x, torch.tensor([0, 3, 9]))
        torch.testing.assert_close(logits, model(x, torch.tensor([0, 3, 9])))
    assert len(maps) == 2 and maps[0].shape == (3, 2, 12, 12)
    torch.testing.assert_close(maps[1].sum(-1), torch.ones(3, 2, 12))
    assert torch.all(maps[1].triu(diagonal=1) == 0)


def test_query_key_matrices_reproduce_the_first_layer_attention():
    model = make(pe="ape", log_length_scaling=False)
    x = tokens(b=1)
    with torch.no_grad():
        _, maps = model.attention_maps(x)
        block = model.blocks[0]
        residual = model.token_embeddings(x) + model.position_table()[: x.shape[1]]
        a = block.ln_attn(residual)[0]
        wq, wk = model.query_key(0, 1)
        bias = block.attn.in_proj.bias
        bq, bk = bias[8:16], bias[16 + 8: 32]
        scores = (a @ wq.T + bq) @ (a @ wk.T + bk).T / math.sqrt(8)
        scores = scores.masked_fill(torch.ones(12, 12).triu(1).bool(), float("-inf"))
        torch.testing.assert_close(scores.softmax(-1), maps[0][0, 1])


def test_log_length_scaling_multiplies_logits_by_log_of_the_position_count():
    plain, scaled = make(n_layers=1), make(n_layers=1, log_length_scaling=True)
    x = tokens(b=1, t=10)
    with torch.no_grad():
        block = plain.blocks[0]
        a = block.ln_attn(plain.embed(x))[0]
        wq, wk = plain.query_key(0, 0)
        bq, bk = block.attn.in_proj.bias[:8], block.attn.in_proj.bias[16:24]
        raw = (a @ wq.T + bq) @ (a @ wk.T + bk).T / math.sqrt(8)
        factor = torch.log(torch.arange(1, 11.0))[:, None]
        expected = (raw * factor).masked_fill(torch.ones(10, 10).triu(1).bool(), float("-inf"))
        _, maps = scaled.attention_maps(x)
    torch.testing.assert_close(maps[0][0, 0], F.softmax(expected, dim=-1))


def test_tied_embeddings_share_the_token_table():
    model = make(tied_embeddings=True)
    assert model.unembed.weight is model.token_embeddings.weight


@pytest.mark.parametrize("options, message", [
    (dict(n_heads=3), "3 heads do not divide the width d_model=16"),
    (dict(pe="rope"), "unknown positional encoding 'rope'"),
    (dict(attention="linear"), "unknown attention 'linear'"),
    (dict(tied_embeddings=True, n_classes=4), "tied embeddings need n_classes == vocab_size"),
    (dict(n_layers=0), "n_layers must be a positive integer"),
    (dict(dropout=1.0), "dropout must be in [0, 1)"),
    (dict(attention="uniform", log_length_scaling=True), "needs softmax attention"),
])
def test_inconsistent_configs_say_what_is_wrong(options, message):
    with pytest.raises(LengthgenError, match="decoder config: .*" + re.escape(message)):
        make(**options)


def test_positions_beyond_the_table_are_refused():
    model = make(n_positions=16)
    with pytest.raises(LengthgenError, match="does not fit the position table of 16"):
        model(tokens(t=17))
    with pytest.raises(LengthgenError, match="offsets must be in"):
        model(tokens(b=2, t=10), torch.tensor([0, 7]))
    # PAD tail past the table is fine: only real tokens need rows
    x = tokens(b=1, t=10)
    x[0, 6:] = 0
    model(x, torch.tensor([10]))
    with pytest.raises(LengthgenError, match="uniform attention has no query"):
        make(attention="uniform").query_key(0, 0)


def test_uniform_running_mean_keeps_its_precision_in_bfloat16():
    values = torch.ones(1, 300, 1, dtype=torch.bfloat16)
    means = causal_mean(values)
    assert means.dtype == torch.bfloat16
    assert torch.all(means == 1)  # a bf16 running sum cannot hold 257 (it rounds to 256)
    assert float(values.cumsum(dim=1)[0, 256, 0]) != 257.0
