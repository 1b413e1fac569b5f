"""How fast `try` labels strings, against a CPU training step. Prints numbers; not a test.

    PYTHONPATH=lib .venv/bin/python benchmarks/bench_try_labels.py [--rounds 3] [--steps 20]

1. Labels per second of a 30-operation program (counts, local and periodic relations,
   comparisons, Boolean operations) at length 150: the interpreter's verdicts on every prefix
   of a batch of 256 strings, one vectorized run (lengthgen.crasp.task).
2. The balanced sampler's draw of one training batch (the book scale's batch, Len 1..50) and of
   one evaluation batch (256 strings, Len 101..150): rejection rounds included.
3. One training step of the book scale (3 seeds of one encoding, stacked, host batches) through
   the engine, and the share of it spent drawing the 3 batches (the issue asks under 10%).
Each number is the best of --rounds: load from other jobs only ever slows a run down. The load
average is printed, since absolute numbers mean little on a busy machine.
"""
import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

PROGRAM = """// 30 operations: a benchmark program (counts, relations, comparisons, Booleans)
alphabet a b c
Ca := #Q(a)
Cb := #Q(b)
Cc := #Q(c)
PrevA := #[j = i - 1] Q(a) >= 1
Even := i mod 2 = 0
Pairs := #(Q(b) and PrevA)
More := Ca > Cb + Cc
Close := Ca - Cb <= 3 and Cb - Ca <= 3
Late := #(Q(c) and Even) >= Pairs + Pairs
accept (More or Close) and (Late or not exists Q(c))
"""


def best(fn, rounds: int) -> float:
    """Seconds of the fastest of `rounds` calls (torch.utils.benchmark's Timer)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside it
    from timing import fastest
    return fastest(fn, rounds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    import numpy as np
    import torch

    from lengthgen.crasp import parse_program
    from lengthgen.crasp.task import program_task
    from lengthgen.engine.jobs import train_jobs
    from lengthgen.experiments.try_program import SCALES, jobs
    program = parse_program(PROGRAM, name="bench30")
    task = program_task(program)
    print(f"load average {os.getloadavg()[0]:.1f}, torch threads {torch.get_num_threads()}; "
          f"program of {len(program.ops)} operations, fragment {program.fragment()}")

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(256, 150))
    seconds = best(lambda: task.labels(codes), args.rounds)
    print(f"labels: {256 * 151 / seconds:,.0f} per second ({256 / seconds:,.0f} strings of "
          f"length 150 per second, {1e3 * seconds:.1f} ms per batch of 256)")

    config = SCALES["book"]
    batch = config["train"]["batch_size"]
    train_draw = best(lambda: task.sample(rng, batch, 1, 50), args.rounds)
    eval_draw = best(lambda: task.sample(rng, 256, 101, 150), args.rounds)
    print(f"balanced draw: {1e3 * train_draw:.2f} ms per training batch of {batch} "
          f"(Len 1..50), {1e3 * eval_draw:.1f} ms per evaluation batch of 256 (Len 101..150)")

    group = [j for j in jobs(task, "book") if j.model["pe"] == "ape"]
    for job in group:   # no evaluation or early stop inside the timed steps
        job.train.steps, job.train.eval_every, job.train.stop_accuracy = args.steps, 10 ** 6, None
        job.train.warmup_steps = 0
    step = best(lambda: train_jobs(group, "cpu", sampler="host"), args.rounds) / args.steps
    share = len(group) * train_draw / step
    print(f"training step (book scale, {len(group)} seeds stacked): {1e3 * step:.1f} ms; "
          f"drawing its {len(group)} batches: {1e3 * len(group) * train_draw:.1f} ms "
          f"({100 * share:.0f}% of the step)")


if __name__ == "__main__":
    main()
