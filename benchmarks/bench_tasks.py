"""Time to sample one batch of 64 length-150 examples for every task and language (one core).

Run: .venv/bin/python benchmarks/bench_tasks.py   (prints milliseconds per batch, best of 5)
"""
import os
import sys

import numpy as np

from lengthgen.tasks import get_task
from lengthgen.tasks.metadata import algorithmic_ids, language_ids

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import fastest  # noqa: E402

BATCH, LENGTH, REPEATS = 64, 150, 5


def best_ms(task, length):
    rng = np.random.default_rng(0)
    task.sample(rng, BATCH, length, length)  # first call builds the counting tables
    # the fastest of REPEATS calls, timed by torch.utils.benchmark's Timer
    return 1000 * fastest(lambda: task.sample(rng, BATCH, length, length), REPEATS)


def main():
    print(f"{'id':28s} {'Len':>4s} {'ms/batch of ' + str(BATCH):>16s}")
    for task_id in algorithmic_ids() + language_ids():
        task = get_task(task_id)
        length = task.feasible_lengths(LENGTH - 5, LENGTH)[-1]  # (aaaa)* has no length 150
        print(f"{task_id:28s} {length:4d} {best_ms(task, length):16.2f}")


if __name__ == "__main__":
    main()
