"""The attention-product term of Huang et al.'s regularizer at random initialization (App. G.1).

The regularizer of the inference procedure (Huang et al. 2025, Def. 5, term (8)) penalizes the
products p_i^T K^T Q p_j of positional encodings through each head's key and query matrices, so
that far-apart positions never seen together in training do not attend to each other by accident.
Proposition 54 says that at a standard random initialization this term stays bounded as the
context length N grows, provided the width d grows linearly with N. We measure two variants:

    first_position: sum over heads and j < N of (p_0^T K^T Q p_j)^2      (products with position 0)
    all_pairs:      (1/N) sum over heads and j <= i < N of (p_j^T K^T Q p_i)^2

with every entry of p_i (in R^d) and of K, Q (in R^{k x d}) drawn i.i.d. from N(0, 1/d). Their
exact expectations follow from Gaussian moments (derived in `expected_term`): for i != j,
E[(p_i^T K^T Q p_j)^2] = k / d^2, and for i = j it is k (d + 2) / d^3. With k = d = cN both terms
tend to constants (heads / c and heads / (2c)); at fixed width they grow linearly in N.

torch is imported by the function that samples: reading the records (VARIANTS, expected_term)
needs none.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from lengthgen.errors import LengthgenError

if TYPE_CHECKING:   # annotations only
    import torch

VARIANTS = ("first_position", "all_pairs")


def _check(variant: str, n: int, d: int, k: int, heads: int) -> None:
    if variant not in VARIANTS:
        raise LengthgenError(f"unknown regularizer variant {variant!r}; valid: "
                             f"{', '.join(VARIANTS)}")
    if min(n, d, k, heads) < 1:
        raise LengthgenError(f"n, d, k and heads must be positive, got {n}, {d}, {k}, {heads}")


def product_term(positions: torch.Tensor, keys: list[torch.Tensor], queries: list[torch.Tensor],
                 variant: str) -> float:
    """The regularizer term of given positional encodings [N, d] and per-head K, Q [k, d]."""
    n, d = positions.shape
    _check(variant, n, d, keys[0].shape[0] if keys else 1, max(len(keys), 1))
    total = 0.0
    for key, query in zip(keys, queries):
        products = (positions @ key.T) @ (positions @ query.T).T  # [j, i] = p_j^T K^T Q p_i
        if variant == "first_position":
            total += float((products[0] ** 2).sum())
        else:
            total += float((products.triu() ** 2).sum()) / n
    return total


def sample_term(n: int, d: int, k: int, heads: int, variant: str, seed: int) -> float:
    """The term at one random initialization with all entries i.i.d. N(0, 1/d)."""
    import torch
    _check(variant, n, d, k, heads)
    g = torch.Generator().manual_seed(seed)
    std = d ** -0.5
    draw = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * std  # noqa: E731
    positions = draw(n, d)
    keys = [draw(k, d) for _ in range(heads)]
    queries = [draw(k, d) for _ in range(heads)]
    return product_term(positions, keys, queries, variant)


def expected_term(n: int, d: int, k: int, heads: int, variant: str) -> float:
    """The exact expectation of the term under N(0, 1/d) initialization.

    Write s^2 = 1/d. For i != j, u = K p_i and v = Q p_j are independent given p_i, p_j, each
    N(0, s^2 |p|^2 I_k), so E[(u.v)^2] = k s^4 E|p_i|^2 E|p_j|^2 = k s^4 (d s^2)^2 = k / d^2. For
    i = j, E[(u.v)^2 | p] = k s^4 |p|^4 and E|p|^4 = s^4 (d^2 + 2d), giving k (d + 2) / d^3.
    """
    _check(variant, n, d, k, heads)
    same, different = k * (d + 2) / d ** 3, k / d ** 2
    if variant == "first_position":
        return heads * (same + (n - 1) * different)
    return heads * (n * same + n * (n - 1) / 2 * different) / n
