"""The product-function view (Huang et al. 2025, eq. 5): how a trained APE decoder uses positions.

A head's attention logit between query position i and key position j contains the term
M[i, j] = p_i^T Q^T K p_j, a product of two positional encodings through the head's query and key
matrices. A Limit Transformer only allows such terms in two shapes: periodic (a function of
i mod Delta and j mod Delta, from periodic positional encodings) plus translation-invariant and
tau-local (phi(i - j), zero beyond distance tau). The distances below measure how far a product
matrix is from those shapes.

Every distance is a relative least-squares residual over the causal entries (i >= j) of M:
    distance = ||M - best fit||_F / ||M||_F     (0: exactly of that shape; 1: nothing fits)
with the best fit taken over
    translation-invariant  any function f(i - j);
    local(tau)             f(i - j) for 0 <= i - j <= tau, zero beyond;
    periodic(Delta)        any function g(i mod Delta, j mod Delta);
    limit(Delta, tau)      periodic(Delta) + local(tau): the shape a Periodic, Local
                           Limit Transformer can express.

LayerNorm. The decoder is pre-LN: a head reads LN(x) = gain * (x - mean(x)) / std(x) + bias. The
centring and the gain are linear and kept exactly (layernorm="linear"); the division by std(x) is
a positive per-position scale that depends on the token as well, so it is left out, and so are
the biases (they give products with a single positional encoding, not two).
layernorm="none" uses the raw weights, as if the model had no LayerNorm (Huang et al.'s setting).
Only the direct path is measured: p_i and p_j as they enter the head's layer, ignoring what
earlier layers add to the residual stream.
"""
import math

import torch

from lengthgen.errors import LengthgenError

LAYERNORM_MODES = ("linear", "none")


def positional_products(decoder, layer: int, head: int, layernorm: str = "linear") -> torch.Tensor:
    """M[i, j] = (W_Q p_i') . (W_K p_j') / sqrt(d_head) for all positions; p' = LN-linear(p)."""
    if layernorm not in LAYERNORM_MODES:
        raise LengthgenError(f"unknown layernorm mode {layernorm!r}; valid: "
                             f"{', '.join(LAYERNORM_MODES)}")
    table = decoder.position_table()
    if table is None:
        raise LengthgenError("a NoPE decoder has no positional encodings, hence no products")
    w_q, w_k = decoder.query_key(layer, head)
    with torch.no_grad():
        p = table.detach().double()
        if layernorm == "linear":
            ln = decoder.blocks[layer].ln_attn
            p = (p - p.mean(dim=1, keepdim=True)) * ln.weight.detach().double()
        q = p @ w_q.detach().double().T
        k = p @ w_k.detach().double().T
        return (q @ k.T) / math.sqrt(w_q.shape[0])


def _causal(matrix: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Row index i, column index j and value of every entry with i >= j."""
    if matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1]:
        raise LengthgenError(f"a product matrix must be square, got {tuple(matrix.shape)}")
    i, j = torch.tril_indices(*matrix.shape)
    return i, j, matrix[i, j].double()


def _residual(values: torch.Tensor, features: list[torch.Tensor]) -> float:
    """Relative residual of the least-squares fit of values by a sum of categorical features.

    Each feature gives every entry a group id; the fit is a sum of one free value per group of
    each feature. Group id -1 means "no free value" (the fit is held at zero there).
    """
    norm = values.norm()
    if norm == 0:
        return 0.0
    if len(features) == 1:  # one feature: the least-squares fit is the mean of each group
        groups = features[0]
        kept = groups >= 0
        fit = torch.zeros_like(values)
        ids, inverse = torch.unique(groups[kept], return_inverse=True)
        sums = torch.zeros(len(ids), dtype=values.dtype).index_add_(0, inverse, values[kept])
        counts = torch.bincount(inverse, minlength=len(ids)).to(values.dtype)
        fit[kept] = (sums / counts)[inverse]
        return float((values - fit).norm() / norm)
    columns = []
    for groups in features:
        ids = torch.unique(groups[groups >= 0])
        columns.append((groups[:, None] == ids[None, :]).double())
    design = torch.cat(columns, dim=1)
    solution = torch.linalg.lstsq(design, values[:, None], driver="gelsd").solution
    return float((values - (design @ solution)[:, 0]).norm() / norm)


def translation_distance(matrix: torch.Tensor) -> float:
    """How far M is from any function of i - j alone (causal entries)."""
    i, j, values = _causal(matrix)
    return _residual(values, [i - j])


def locality_distance(matrix: torch.Tensor, tau: int) -> float:
    """How far M is from a translation-invariant function that is zero beyond distance tau."""
    if tau < 0:
        raise LengthgenError(f"tau must be >= 0, got {tau}")
    i, j, values = _causal(matrix)
    d = i - j
    return _residual(values, [torch.where(d <= tau, d, -1)])


def periodicity_distance(matrix: torch.Tensor, period: int) -> float:
    """How far M is from a function of (i mod period, j mod period)."""
    if period < 1:
        raise LengthgenError(f"period must be >= 1, got {period}")
    i, j, values = _causal(matrix)
    return _residual(values, [(i % period) * period + (j % period)])


def limit_distance(matrix: torch.Tensor, period: int, tau: int) -> float:
    """How far M is from periodic(period) + local(tau): what a Limit Transformer can express."""
    if period < 1 or tau < 0:
        raise LengthgenError(f"need period >= 1 and tau >= 0, got {period} and {tau}")
    i, j, values = _causal(matrix)
    d = i - j
    return _residual(values, [(i % period) * period + (j % period), torch.where(d <= tau, d, -1)])


def product_report(decoder, period: int, tau: int, layernorm: str = "linear") -> list[dict]:
    """One row per head: the four distances of its positional product matrix."""
    rows = []
    for layer in range(decoder.cfg.n_layers):
        for head in range(decoder.cfg.n_heads):
            m = positional_products(decoder, layer, head, layernorm)
            rows.append({
                "layer": layer, "head": head,
                "translation": translation_distance(m),
                "local": locality_distance(m, tau),
                "periodic": periodicity_distance(m, period),
                "limit": limit_distance(m, period, tau),
            })
    return rows
