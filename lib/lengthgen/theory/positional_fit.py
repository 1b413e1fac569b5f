"""Fitting a positional product to a target function (Huang et al. 2025, App. G.2).

Learn positional encodings p_0..p_{P-1} in R^d and matrices Q, K in R^{d x d} so that the product
p_i^T Q^T K p_j matches a target phi(i, j) on windows of `train_length` positions placed at random
offsets, then measure the error on longer windows. Only entries with i >= j count (causal
attention). The theory predicts that targets that are local (nonzero only at small distances
i - j) or periodic extrapolate and that targets that are neither do not: distances longer than the
training windows never get a training signal, and the products there stay wherever initialization,
the fitted positions and the weight penalty leave them (band_errors measures them separately).

Each target is 0 where its condition is false and `value` where it is true; "combined" targets
add a local and a periodic one.
"""
import torch

from lengthgen.config import one_thread
from lengthgen.errors import LengthgenError, unknown_name
# the targets live in a module of their own that needs no torch (reading records uses them)
from lengthgen.theory.positional_targets import TARGETS


def target_matrix(name: str, n_positions: int, value: float = 1.0) -> torch.Tensor:
    """phi(i, j) for all absolute positions, [query i, key j]."""
    if name not in TARGETS:
        raise unknown_name("positional target", name, TARGETS)
    i, j = torch.meshgrid(torch.arange(n_positions), torch.arange(n_positions), indexing="ij")
    return value * TARGETS[name][1](i, j).double()


class PositionalProduct(torch.nn.Module):
    """P positional encodings and one query/key pair; entries start i.i.d. N(0, 1/d)."""

    def __init__(self, n_positions: int, width: int, generator: torch.Generator):
        super().__init__()
        std = width ** -0.5
        draw = lambda *shape: torch.nn.Parameter(  # noqa: E731
            torch.randn(*shape, generator=generator, dtype=torch.float64) * std)
        self.positions = draw(n_positions, width)
        self.query, self.key = draw(width, width), draw(width, width)

    def products(self) -> torch.Tensor:
        """[i, j] = p_i^T Q^T K p_j for all positions (cheaper than per window: P is small)."""
        p = self.positions
        return (p @ self.query.T) @ (p @ self.key.T).T

    def mean_squared_weights(self) -> torch.Tensor:
        return sum((w ** 2).mean() for w in (self.positions, self.query, self.key))


def causal_mse(predicted: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error over the entries i >= j of a square matrix."""
    mask = torch.ones_like(predicted).tril()
    return (((predicted - target) ** 2) * mask).sum() / mask.sum()


def window_weights(offsets: torch.Tensor, length: int, n_positions: int) -> torch.Tensor:
    """W[i, j] = how many windows [o, o + length) of the batch hold both i and j, for i >= j.

    The batch loss, the mean causal MSE over the windows, equals the W-weighted squared error of
    the full product matrix: the same objective, computed once per step instead of per window.
    """
    counts = torch.bincount(offsets, minlength=n_positions).double()
    started = torch.cumsum(counts, 0)  # windows with o <= j
    # windows with o <= i - length
    ended = torch.cat([torch.zeros(length, dtype=torch.float64), started])[:n_positions]
    weights = (started[None, :] - ended[:, None]).clamp(min=0)
    return weights.tril()



def fit(target: str, width: int, steps: int, seed: int, n_positions: int = 200,
        train_length: int = 50, batch_size: int = 64, lr: float = 1e-3,
        weight_penalty: float = 0.01, value: float = 1.0, checkpoints=(),
        on_checkpoint=None) -> PositionalProduct:
    """Adam on the causal MSE of windows at random offsets, plus the mean-squared-weight penalty.

    `on_checkpoint(step, model)` is called after each step listed in `checkpoints`, so one run
    can report how the errors moved with training (is the pattern still changing?).
    """
    if train_length > n_positions:
        raise LengthgenError(f"train_length {train_length} exceeds n_positions {n_positions}")
    generator = torch.Generator().manual_seed(seed)
    model = PositionalProduct(n_positions, width, generator)
    phi = target_matrix(target, n_positions, value)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    checkpoints = set(checkpoints)
    if checkpoints and (min(checkpoints) < 1 or max(checkpoints) > steps):
        raise LengthgenError(f"checkpoints {sorted(checkpoints)} must lie in 1..{steps} (the steps)")
    with one_thread():
        for step in range(1, steps + 1):
            offsets = torch.randint(0, n_positions - train_length + 1, (batch_size,),
                                    generator=generator)
            weights = window_weights(offsets, train_length, n_positions)
            fit_error = (weights * (model.products() - phi) ** 2).sum() / weights.sum()
            loss = fit_error + weight_penalty * model.mean_squared_weights()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if on_checkpoint is not None and step in checkpoints:
                on_checkpoint(step, model)
    return model


def _window_mean(matrix: torch.Tensor, n: int, band: torch.Tensor) -> float:
    """The mean of `matrix` over the entries of `band` (an n x n mask) in every window
    [o, o + n) of the P positions, averaged over all offsets o in [0, P - n]."""
    n_positions = matrix.shape[0]
    per_offset = [matrix[o:o + n, o:o + n][band].mean() for o in range(n_positions - n + 1)]
    return float(torch.stack(per_offset).mean())


def distance_band(n: int, near: int | None = None, far: int | None = None) -> torch.Tensor:
    """Causal entries (i >= j) of an n x n window whose distance i - j is below `near` (if
    given) and at least `far` (if given)."""
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    band = i >= j
    if near is not None:
        band &= (i - j) < near
    if far is not None:
        band &= (i - j) >= far
    return band


@torch.no_grad()
def band_errors(products: torch.Tensor, target: str, n: int, band: torch.Tensor,
                value: float = 1.0) -> dict[str, float]:
    """Squared error on one band of the windows of length n, for the fitted products and for
    the two predictors that ignore position: always 0, and the best single constant (the
    band's mean target value over all windows, the constant with the smallest error)."""
    if n > products.shape[0]:
        raise LengthgenError(f"test length {n} exceeds the {products.shape[0]} positions")
    if not band.any():
        raise LengthgenError(f"the band is empty at test length {n}")
    phi = target_matrix(target, products.shape[0], value)
    mean, mean_square = _window_mean(phi, n, band), _window_mean(phi ** 2, n, band)
    return {"model": _window_mean((products.double() - phi) ** 2, n, band),
            "zero": mean_square, "constant": max(mean_square - mean ** 2, 0.0)}


def extrapolation_errors(model: PositionalProduct, target: str, lengths: list[int],
                         value: float = 1.0) -> dict[int, float]:
    """Per test length n: the causal MSE averaged over every offset in [0, P - n]."""
    with torch.no_grad(), one_thread():
        products = model.products()
        return {n: band_errors(products, target, n, distance_band(n), value)["model"]
                for n in lengths}
