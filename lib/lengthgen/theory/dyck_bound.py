"""Richard (2024), Theorem 3.1: the dimension condition and the lower bound it gives, as plain
arithmetic (no torch: the figures that draw the bound read it without training anything).
`lengthgen.models.dyck` re-exports these beside the heads they bound."""
import math


def theorem31_epsilon(n: int, d: int) -> float | None:
    """The smallest eps in (0, 1) that Theorem 3.1's dimension condition
    d >= 4 log n / (eps^2/2 - eps^3/3) allows at dimension d, or None where no eps in (0, 1)
    does (d <= 24 log n: eps^2/2 - eps^3/3 grows on (0, 1) up to 1/6 at eps = 1).

    The eps^3/3 term is the theorem's; the paper's scaling remark substitutes
    eps = 2 sqrt(2 log n / d), which solves the condition without it and is smaller, so a bound
    drawn with it is optimistic."""
    need = 4.0 * math.log(n) / d          # eps^2/2 - eps^3/3 must reach this
    if need >= 1.0 / 6.0:
        return None
    lo, hi = 0.0, 1.0                     # g(eps) = eps^2/2 - eps^3/3 is increasing here
    for _ in range(100):
        mid = (lo + hi) / 2
        if mid * mid / 2 - mid ** 3 / 3 >= need:
            hi = mid
        else:
            lo = mid
    return hi


def theorem31_min_dimension(n: int, eps: float) -> float:
    """The dimension Theorem 3.1 asks for at a given eps: 4 log n / (eps^2/2 - eps^3/3)."""
    return 4.0 * math.log(n) / (eps * eps / 2 - eps ** 3 / 3)


def theorem31_bound(n: int, t: int, d: int, v_gamma: float) -> float:
    """Theorem 3.1's lower bound 1 - n t exp(-v gamma / n + 2 eps) at the smallest eps its
    dimension condition allows at d (`theorem31_epsilon`); 0 where the condition cannot hold
    (the theorem says nothing there) or the bound is vacuous."""
    eps = theorem31_epsilon(n, d)
    if eps is None:
        return 0.0
    return max(0.0, 1.0 - n * t * math.exp(-v_gamma / n + 2.0 * eps))
