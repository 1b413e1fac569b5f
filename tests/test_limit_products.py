"""Product functions of a decoder and their distances from translation-invariant/local/periodic."""
import math

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.products import (limit_distance, locality_distance, periodicity_distance,
                                       positional_products, product_report, translation_distance)

N = 24


def toeplitz(values: list[float], n: int = N) -> torch.Tensor:
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    f = torch.zeros(n, dtype=torch.float64)
    f[: len(values)] = torch.tensor(values, dtype=torch.float64)
    return torch.where(i >= j, f[(i - j).clamp(min=0)], torch.zeros((), dtype=torch.float64))


def doubly_periodic(period: int, n: int = N, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    g = torch.randn(period, period, generator=generator, dtype=torch.float64)
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    return g[i % period, j % period]


def test_local_toeplitz_is_translation_invariant_and_local():
    m = toeplitz([1.0, -2.0, 0.5])
    assert translation_distance(m) < 1e-12
    assert locality_distance(m, 2) < 1e-12
    assert locality_distance(m, 1) > 0.1


def test_periodic_matrix_is_periodic_only_at_its_period_and_multiples():
    m = doubly_periodic(3)
    assert periodicity_distance(m, 3) < 1e-9 and periodicity_distance(m, 6) < 1e-9
    assert periodicity_distance(m, 4) > 0.3
    assert translation_distance(m) > 0.3


def test_sum_of_periodic_and_local_is_a_limit_product():
    m = doubly_periodic(4) + toeplitz([3.0, 1.0])
    assert limit_distance(m, 4, 1) < 1e-9
    assert limit_distance(m, 4, 0) > 0.01
    assert periodicity_distance(m, 4) > 0.05 and locality_distance(m, 1) > 0.3


def test_random_matrix_is_far_from_every_shape():
    m = torch.randn(N, N, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert translation_distance(m) > 0.8
    assert locality_distance(m, 2) > 0.8
    assert periodicity_distance(m, 3) > 0.8
    assert limit_distance(m, 3, 2) > 0.7


def small_decoder(n_positions=N, d_model=N, seed=0):
    torch.manual_seed(seed)
    return Decoder(DecoderConfig(vocab_size=3, n_classes=2, d_model=d_model,
                                 n_positions=n_positions, pe="ape"))


def test_constructed_decoder_with_banded_query_key_is_local():
    # one-hot positions and W_Q = I: the product matrix is W_K / sqrt(d) itself
    model = small_decoder()
    band = toeplitz([0.0, 2.0, 1.0])
    with torch.no_grad():
        model.position_embeddings.weight.copy_(torch.eye(N))
        weight = model.blocks[0].attn.in_proj.weight
        weight[:N] = torch.eye(N)
        weight[N: 2 * N] = band.float() * math.sqrt(N)  # (W_Q e_i) . (W_K e_j) = band[i, j]
    m = positional_products(model, 0, 0, layernorm="none")
    assert torch.allclose(m, band, atol=1e-5)
    assert translation_distance(m) < 1e-6 and locality_distance(m, 2) < 1e-6


def test_periodic_position_table_gives_periodic_products_with_layernorm():
    model = small_decoder(d_model=16, seed=2)
    with torch.no_grad():
        rows = model.position_embeddings.weight[:5].clone()
        model.position_embeddings.weight.copy_(rows[torch.arange(N) % 5])
        model.blocks[0].ln_attn.weight.uniform_(0.5, 1.5)
    report = product_report(model, period=5, tau=1)
    assert report[0]["periodic"] < 1e-9 and report[0]["limit"] < 1e-9
    random_report = product_report(small_decoder(d_model=16, seed=3), period=5, tau=1)
    assert random_report[0]["periodic"] > 0.5 and random_report[0]["translation"] > 0.5


def test_linear_layernorm_mode_matches_real_logits_up_to_the_std_scale():
    """With zero token embeddings and biases, the head's real logit is M[i, j] / (s_i s_j)."""
    model = small_decoder(d_model=16, seed=4)
    block = model.blocks[0]
    with torch.no_grad():
        model.token_embeddings.weight.zero_()
        block.ln_attn.weight.uniform_(0.5, 1.5)
        block.ln_attn.bias.zero_()
        block.attn.in_proj.bias.zero_()
    x = model.embed(torch.zeros(1, N, dtype=torch.long))[0].double()
    normed = block.ln_attn.double()(x)
    w = block.attn.in_proj.weight.double()
    q, k = normed @ w[:16].T, normed @ w[16:32].T
    logits = q @ k.T / math.sqrt(16)
    scale = torch.sqrt(x.var(dim=1, unbiased=False) + block.ln_attn.eps)
    m = positional_products(model, 0, 0, layernorm="linear")
    assert torch.allclose(logits, m / (scale[:, None] * scale[None, :]), atol=1e-8)


def test_errors():
    nope = Decoder(DecoderConfig(vocab_size=3, n_classes=2, d_model=8, pe="nope"))
    with pytest.raises(LengthgenError, match="NoPE"):
        positional_products(nope, 0, 0)
    with pytest.raises(LengthgenError, match="layernorm mode"):
        positional_products(small_decoder(), 0, 0, layernorm="full")
    with pytest.raises(LengthgenError, match="square"):
        translation_distance(torch.zeros(3, 4))
