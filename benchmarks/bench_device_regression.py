"""Drawing Izzo et al.'s training batches: the host's numpy sampler against the device sampler.

    OMP_NUM_THREADS=1 PYTHONPATH=lib .venv/bin/python benchmarks/bench_device_regression.py \
        [--device cpu] [--members 16] [--rounds 3]

For SimpleTask, ModPTask and KGramTask at the paper configs' longest train lengths (`paper`
configs of experiments/izzo: SimpleTask N = 64, ModPTask p = 8 with N = 64, the k-gram task's
N = 128), a batch of 1024 strings of lengths uniform in [min_len, N]:

* `host`: one member's `task.sample` (numpy), as the engine's HostFeed draws it every step
  for every member;
* `device`: `engine.device_regression`'s sampler drawing `--members` members' batches of one
  step in one call (as DeviceFeed draws a pool), divided by the members. With --device cpu
  this is torch on the CPU, not a GPU: the column says where it ran.

Milliseconds per member per step: the fastest of --rounds calls (benchmarks/timing.py, which
synchronises a CUDA device). Prints the load average, since absolute numbers mean little on a
busy machine. Under a minute on a CPU at the defaults.
"""
import argparse
import os
import sys

import numpy as np
import torch

from lengthgen.engine.device_data import device_sampler
from lengthgen.tasks.izzo import KGramTask, ModPTask, SimpleTask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import fastest  # noqa: E402

BATCH = 1024
CASES = [(SimpleTask(4.0), 64), (ModPTask(8, 0), 64), (KGramTask(4, 2), 128),
         (KGramTask(2, 3), 128)]


def host_ms(task, hi: int, rounds: int) -> float:
    rng = np.random.default_rng(0)
    return 1e3 * fastest(lambda: task.sample(rng, BATCH, task.min_len, hi), rounds,
                         label="host", sub_label=task.id)


def device_ms(task, hi: int, members: int, device, rounds: int) -> float:
    sampler = device_sampler(task)
    seeds = torch.arange(members, device=device)
    steps = torch.full_like(seeds, 7)
    sampler.sample(seeds, steps, BATCH, task.min_len, hi, hi)     # warm-up (tables, caches)
    seconds = fastest(lambda: sampler.sample(seeds, steps, BATCH, task.min_len, hi, hi),
                      rounds, label="device", sub_label=task.id)
    return 1e3 * seconds / members


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--members", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, device sampler on {device} "
          f"({'torch on the CPU' if device.type == 'cpu' else torch.cuda.get_device_name()})")
    print(f"ms per member per step, batch {BATCH}; device: {args.members} members per call")
    print("| task | lengths | host (numpy) | device | host / device |")
    print("|---|---|---|---|---|")
    for task, hi in CASES:
        host = host_ms(task, hi, args.rounds)
        on_device = device_ms(task, hi, args.members, device, args.rounds)
        print(f"| {task.id} | {task.min_len}-{hi} | {host:.2f} | {on_device:.3f} | "
              f"{host / on_device:.1f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
