"""Host time to draw Boolean expressions and their simplified answers (`tasks.boolean.make_pool`:
sympy's simplify_logic per expression), the work a Boolean job does on the host at its first
batch (richard-fig1-ladder's pools: 2e4 to 1e6 expressions at paper scale), against the estimate
the GPU planner adds for it (`boolean_protocol.drawing_seconds`, DRAW_SECONDS_PER_CLAUSE).

It draws 2,000 expressions at depth 3 with 1, 2 and 5 clauses, three times each, and prints the
CPU milliseconds per expression and per expression and clause (the constant should hold), then
the estimate for the ladder's paper rungs.

Run: OMP_NUM_THREADS=1 PYTHONPATH=lib .venv/bin/python benchmarks/bench_boolean_pool.py
"""
import time

import numpy as np

from lengthgen.experiments.richard.boolean_protocol import (DRAW_SECONDS_PER_CLAUSE,
                                                            drawing_seconds, rung_config)
from lengthgen.runs.registry import experiment
from lengthgen.tasks.boolean import make_pool

COUNT, DEPTH = 2000, 3


def main():
    print(f"DRAW_SECONDS_PER_CLAUSE = {DRAW_SECONDS_PER_CLAUSE * 1e3:.3f} ms")
    for clauses in (1, 2, 5):
        rng = np.random.default_rng([0, clauses])
        for _ in range(3):
            t0 = time.process_time()
            make_pool(rng, COUNT, clauses, DEPTH)
            ms = (time.process_time() - t0) / COUNT * 1e3
            print(f"clauses {clauses} depth {DEPTH}: {ms:.3f} ms an expression, "
                  f"{ms / clauses:.3f} ms a clause")
    config = experiment("richard-fig1-ladder").CONFIGS["paper"]
    for i in range(len(config["rungs"])):
        flat = rung_config(config, i)
        print(f"paper rung {i}: pool {flat['pool']:,} + test {flat['test_pool']:,}: "
              f"estimate {drawing_seconds(flat) / 60:.1f} min on the host")


if __name__ == "__main__":
    main()
