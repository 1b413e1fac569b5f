"""Host time to draw a finite Dyck training set (`lengthgen.tasks.dyck.distinct_words`), the
work a Dyck job does on the host at its first batch (up to 4^12 words of D_32 at paper scale),
against the estimate the GPU planner adds for it (`dyck.drawing_seconds`).

It draws reduced sets (2^15 to 2^17 words; the paper's 4^12 would take minutes), at N = 16 (the
papers' D_32) and N = 12, any depth and depth <= 8, and prints the measured microseconds per
symbol drawn (seconds / (expected_draws x 2N)): the constant DRAW_SECONDS_PER_SYMBOL holds, and
the estimate at the measured sizes, and at the paper's sizes.

Run: OMP_NUM_THREADS=1 PYTHONPATH=lib .venv/bin/python benchmarks/bench_dyck_drawing.py
"""
import time

import numpy as np

from lengthgen.tasks.dyck import (DRAW_SECONDS_PER_SYMBOL, count_words, distinct_words,
                                  drawing_seconds, expected_draws)

SIZES = (2 ** 15, 2 ** 16, 2 ** 17)
BANDS = ((16, None), (16, 8), (12, None))   # (N, max depth)


def best_seconds(n, count, max_depth, repeats=3):
    distinct_words(np.random.default_rng(0), n, 10, 0, max_depth)   # the counting tables
    best = float("inf")
    for seed in range(repeats):
        t0 = time.perf_counter()
        distinct_words(np.random.default_rng(seed), n, count, 0, max_depth)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    print(f"{'N':>3} {'depth':>6} {'words':>8} {'s':>7} {'us/symbol':>10} {'estimate s':>11}")
    per_symbol = []
    for n, max_depth in BANDS:
        available = count_words(n, 0, max_depth)
        for count in SIZES:
            if count > available // 2:
                continue
            seconds = best_seconds(n, count, max_depth)
            symbols = expected_draws(available, count) * 2 * n
            per_symbol.append(seconds / symbols)
            print(f"{n:>3} {str(max_depth):>6} {count:>8} {seconds:>7.3f} "
                  f"{1e6 * seconds / symbols:>10.3f} {drawing_seconds(n, count, 0, max_depth):>11.3f}")
    print(f"median: {1e6 * float(np.median(per_symbol)):.3f} us per symbol drawn "
          f"(DRAW_SECONDS_PER_SYMBOL: {1e6 * DRAW_SECONDS_PER_SYMBOL:.3f})")
    for count, max_depth in ((4 ** 12, None), (10 ** 7, 8)):
        print(f"paper: {count:,} words of D_32, depth <= {max_depth}: about "
              f"{drawing_seconds(16, count, 0, max_depth) / 60:.1f} min")


if __name__ == "__main__":
    main()
