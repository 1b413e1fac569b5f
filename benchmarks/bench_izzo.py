"""Training throughput of the one-layer model of Izzo et al. (App. B) at batch 1024, CPU.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_izzo.py [--seconds 4]

One attention head + MLP (d = 16, width 256, muP, per-role Adam rates), regression on
SimpleTask and ModPTask with train lengths uniform in [min_len, N] for several N. "step" times
the trainer's training_step on a fixed batch (forward, backward, Adam); "loop" times the whole
trainer (online sampling of a fresh batch every step, evaluation every 100 steps) and so is what
a figure run gets. Steps are timed by torch.utils.benchmark's Timer (benchmarks/timing.py:
blocked_autorange of at least --seconds, one over the median block), the loop as one timed call.
Best of 3 rounds each (load only ever slows a run down); prints the load average, since
absolute numbers mean little on a busy machine, and Compare's table of the steps at the end.
"""
import argparse
import os
import sys

import numpy as np
import torch

from lengthgen.evaluate import to_tensors
from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, build_model, train_config
from lengthgen.objectives import objective_of
from lengthgen.tasks.izzo import ModPTask, SimpleTask
from lengthgen.train import make_optimizer, train, training_step

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import compare, once, per_second, steady  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}")
    print("| task | N | step (steps/s) | loop (steps/s) |")
    print("|---|---|---|---|")
    measurements = []   # torch.utils.benchmark Measurements of the steps, for Compare
    for name, make, pe in (("SimpleTask w=4", lambda n: SimpleTask(4.0, n), {"pe": "nope"}),
                           ("ModPTask p=5", lambda n: ModPTask(5, 0, n),
                            {"pe": "periodic", "period": 5})):
        for n in (8, 32, 128):
            task = make(n)
            model = build_model(task, PAPER_PROTOCOL, 0, **pe)
            cfg = train_config(PAPER_PROTOCOL, 0, n, task.min_len)
            optimizer = make_optimizer(model, cfg, "cpu")
            objective = objective_of(task)
            batch = to_tensors(task.sample(np.random.default_rng(0), 1024, task.min_len, n),
                               "cpu", objective.target_dtype)
            measurement = steady(lambda: training_step(model, optimizer, *batch,
                                                       objective=objective),
                                 args.seconds, rounds=3, warmup=1,
                                 label="bench_izzo: a training step at batch 1024",
                                 sub_label=name, description=f"N={n}")
            measurements.append(measurement)
            step = per_second(measurement)
            loops = []
            for _ in range(3):
                model = build_model(task, PAPER_PROTOCOL, 0, **pe)
                cfg = train_config({**PAPER_PROTOCOL, "max_steps": 200, "stop_loss": 1e-12},
                                   0, n, task.min_len)
                results = []
                seconds = once(lambda: results.append(train(model, task, cfg)))
                loops.append(results[0].steps / seconds)
            print(f"| {name} | {n} | {step:.1f} | {max(loops):.1f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(compare(measurements))


if __name__ == "__main__":
    main()
