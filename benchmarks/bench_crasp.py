"""Speed of the C-RASP interpreter: one input of length 1000, a batch of 1000 such inputs, and
the big generated programs (sort, copy) on a full-length instance.

Run: .venv/bin/python benchmarks/bench_crasp.py   (prints milliseconds, best of 5)
"""
import os
import sys

import numpy as np

from lengthgen.crasp import run_batch, run_program
from lengthgen.crasp.library import get_program

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import fastest  # noqa: E402

REPEATS = 5


def best_ms(fn):
    """Milliseconds of the fastest of REPEATS calls (torch.utils.benchmark's Timer)."""
    return 1000 * fastest(fn, REPEATS)


def main():
    rng = np.random.default_rng(0)
    print(f"{'program':28s} {'operations':>10s} {'input':>22s} {'ms':>8s}")
    for name in ["majority_ab", "dyck1", "tomita4", "abcde_plus", "induction_head"]:
        program = get_program(name)
        one = list(rng.choice(program.alphabet, 1000))
        batch = [list(rng.choice(program.alphabet, 1000)) for _ in range(1000)]
        for label, fn in (("1 x length 1000", lambda: run_program(program, one)),
                          ("1000 x length 1000", lambda: run_batch(program, batch))):
            print(f"{name:28s} {len(program.ops):10d} {label:>22s} {best_ms(fn):8.1f}")
    numbers = [str(k) for k in rng.permutation(150)]
    for name, answer in (("sort", sorted(numbers, key=int)), ("copy_unique", numbers)):
        program = get_program(name)
        seq = numbers + ["<sep>"] + answer
        ms = best_ms(lambda: run_program(program, seq))
        print(f"{name:28s} {len(program.ops):10d} {'1 x length 301':>22s} {ms:8.1f}")


if __name__ == "__main__":
    main()
