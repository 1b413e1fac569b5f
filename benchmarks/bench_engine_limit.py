"""Training speed of Izzo et al.'s limit-style models stacked by the engine, against train().

    OMP_NUM_THREADS=1 PYTHONPATH=lib .venv/bin/python benchmarks/bench_engine_limit.py \
        [--device cpu] [--seconds 0.5]

The protocol's one-layer model (d = 16, MLP 256, muP, per-role Adam rates, readout at the last
token) on ModPTask (p = 5, train length 20), at batch 64 and 1024, in the protocol's fp32 (both
rows: `TrainConfig.precision`):

* `engine`: S members (seeds 0..S-1) as one `StackedGroup` (lengthgen.engine.stacked_limit),
  one full training step (forward, backward, per-member clipping and AdamW) on a fixed batch
  [S, B, T] drawn once by the host's feed;
* `train()`: one model, the step `train` runs (`training_step`: its forward, backward and
  torch's AdamW) on one fixed batch.

Model-steps per second: S over the seconds of a group step (1 for train()). Each row is timed
by torch.utils.benchmark's Timer (benchmarks/timing.py): one warm-up step, then a
blocked_autorange of at least --seconds; the rate is one over its median. Sampling and
evaluation are left out of both. Prints the load average, since absolute numbers mean little on
a busy machine.
"""
import argparse
import os
import sys

import numpy as np
import torch

from lengthgen.engine.jobs import make_group
from lengthgen.evaluate import to_tensors
from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, job
from lengthgen.objectives import objective_of
from lengthgen.tasks.izzo import ModPTask
from lengthgen.train import make_optimizer, training_step

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import per_second, steady  # noqa: E402

N = 20


def _jobs(batch: int, count: int) -> list:
    config = {**PAPER_PROTOCOL, "batch_size": batch}
    return [job(ModPTask(5, 0, train_max=N), config, seed, N, pe="periodic", period=5)
            for seed in range(count)]


def engine_rate(batch: int, size: int, device, seconds: float) -> float:
    jobs = _jobs(batch, size)
    built = [j.build() for j in jobs]
    group, feed = make_group([t for t, _ in built], [m for _, m in built],
                             [j.train for j in jobs], device, "host")
    group.set_rates(0)
    fixed = feed.batch(0)
    measurement = steady(lambda: group.train_step(*fixed), seconds, warmup=1,
                         label="bench_engine_limit", sub_label=f"batch {batch}",
                         description=f"engine S={size}")
    return size * per_second(measurement)


def train_rate(batch: int, device, seconds: float) -> float:
    (run,) = _jobs(batch, 1)
    task, model = run.build()
    model.to(device)
    optimizer = make_optimizer(model, run.train, device)
    objective = objective_of(task)
    inputs = to_tensors(task.sample(np.random.default_rng(0), batch, task.min_len, N), device,
                        objective.target_dtype)
    measurement = steady(lambda: training_step(model, optimizer, *inputs, objective=objective,
                                               precision=run.train.precision),
                         seconds, warmup=1, label="bench_engine_limit",
                         sub_label=f"batch {batch}", description="train()")
    return per_second(measurement)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--sizes", default="1,8,32")
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, device {device}")
    print("| batch | trainer | S | model-steps/s | x train() |")
    print("|---|---|---|---|---|")
    for batch in (64, 1024):
        alone = train_rate(batch, device, args.seconds)
        print(f"| {batch} | train() | 1 | {alone:,.1f} | 1.0 |", flush=True)
        for size in (int(s) for s in args.sizes.split(",")):
            rate = engine_rate(batch, size, device, args.seconds)
            print(f"| {batch} | engine | {size} | {rate:,.1f} | {rate / alone:.2f} |",
                  flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
