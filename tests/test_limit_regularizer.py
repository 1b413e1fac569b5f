"""The attention-product regularizer term: exact expectation against brute force and sampling."""
import itertools
import statistics

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.theory.regularizer import expected_term, product_term, sample_term


def test_product_term_matches_explicit_sums():
    g = torch.Generator().manual_seed(0)
    p = torch.randn(5, 3, generator=g, dtype=torch.float64)
    keys = [torch.randn(2, 3, generator=g, dtype=torch.float64) for _ in range(2)]
    queries = [torch.randn(2, 3, generator=g, dtype=torch.float64) for _ in range(2)]
    dot = lambda a, b: float(a @ b)  # noqa: E731
    first = sum(dot(k @ p[0], q @ p[j]) ** 2 for k, q in zip(keys, queries) for j in range(5))
    pairs = sum(dot(k @ p[j], q @ p[i]) ** 2 for k, q in zip(keys, queries)
                for j, i in itertools.product(range(5), repeat=2) if j <= i) / 5
    assert product_term(p, keys, queries, "first_position") == pytest.approx(first)
    assert product_term(p, keys, queries, "all_pairs") == pytest.approx(pairs)


@pytest.mark.parametrize("variant", ["first_position", "all_pairs"])
def test_sample_mean_matches_the_exact_expectation(variant):
    samples = [sample_term(12, 6, 4, 2, variant, seed) for seed in range(400)]
    mean, sem = statistics.mean(samples), statistics.stdev(samples) / 20
    assert abs(mean - expected_term(12, 6, 4, 2, variant)) < 4 * sem


def test_bounded_with_linear_width_growing_with_fixed_width():
    linear = [expected_term(n, n, n, 1, "first_position") for n in (64, 256, 1024, 4096)]
    assert max(linear) < 1.1 and linear[-1] == pytest.approx(1.0, abs=1e-3)
    assert expected_term(4096, 4096, 4096, 1, "all_pairs") == pytest.approx(0.5, abs=1e-3)
    fixed = [expected_term(n, 16, 16, 1, "first_position") for n in (64, 256, 1024)]
    assert fixed[2] / fixed[1] == pytest.approx(4.0, rel=0.05)


def test_unknown_variant():
    with pytest.raises(LengthgenError, match="variant"):
        expected_term(4, 4, 4, 1, "diagonal")
