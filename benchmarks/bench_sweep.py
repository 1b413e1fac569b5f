"""Throughput of the APE vs NoPE sweep engine: steps/s per shape, padded vs length-trimmed
batches, and runs/hour serial vs parallel workers. Prints numbers; not a test.

    .venv/bin/python benchmarks/bench_sweep.py            # about 2 minutes on 2 cores
"""
import os
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lengthgen.evaluate import to_tensors  # noqa: E402
from lengthgen.tasks import get_task  # noqa: E402
from lengthgen.train import (TrainConfig, decoder_for_task, make_optimizer,  # noqa: E402
                             sample_offsets, training_step)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file
from timing import compare, once, per_second, steady  # noqa: E402

SHAPES = [(1, 1, 16), (1, 2, 64), (2, 2, 64), (2, 4, 64)]
SECONDS = 3.0


def steps_per_second(task_id: str, shape, chunks: int):
    """(steps a second, the Measurement): Timer's blocked_autorange of at least SECONDS over
    16 batches in turn, one over the median block."""
    torch.set_num_threads(1)
    task = get_task(task_id)
    model = decoder_for_task(task, seed=0, n_layers=shape[0], n_heads=shape[1], d_model=shape[2])
    optimizer = make_optimizer(model, TrainConfig(), "cpu")
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(16):
        batch = task.sample(rng, 64, *task.train_range)
        offsets = torch.as_tensor(sample_offsets(rng, batch.inputs, model.cfg.n_positions))
        batches.append((*to_tensors(batch, "cpu"), offsets))
    counter = [0]

    def step():
        inputs, targets, mask, offsets = batches[counter[0] % len(batches)]
        training_step(model, optimizer, inputs, targets, mask, offsets, 1.0, chunks)
        counter[0] += 1
    measurement = steady(step, SECONDS, label="bench_sweep: a training step",
                         sub_label=f"{task_id} {shape}",
                         description="padded" if chunks == 1 else f"{chunks} chunks")
    return per_second(measurement), measurement


def sweep_runs_per_hour(workers: int) -> float:
    from lengthgen.runs.runner import run_experiment
    with tempfile.TemporaryDirectory() as root:
        records = []
        seconds = once(lambda: records.extend(run_experiment(
            "huang-fig1-languages", "test", "cpu", root=root, workers=workers)))
        return len(records) / seconds * 3600


def main():
    load = os.getloadavg()[0]
    print(f"torch {torch.__version__}, 1 thread per run, batch 64, training lengths of each "
          f"task; load average {load:.1f} before")
    print("task, shape (layers, heads, d): steps/s padded | trimmed (4 chunks) | ratio")
    measurements = []   # torch.utils.benchmark Measurements, for the Compare table
    for task_id in ("tomita4", "sort"):
        for shape in SHAPES:
            padded, m_padded = steps_per_second(task_id, shape, 1)
            trimmed, m_trimmed = steps_per_second(task_id, shape, 4)
            measurements += [m_padded, m_trimmed]
            print(f"{task_id:8s} {shape}: {padded:7.1f} | {trimmed:7.1f} | "
                  f"{trimmed / padded:.2f}x", flush=True)
    for workers in (1, 2):
        print(f"test-scale huang-fig1-languages sweep, {workers} worker(s): "
              f"{sweep_runs_per_hour(workers):.0f} runs/hour", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} after")
    print(compare(measurements))


if __name__ == "__main__":
    sys.exit(main())
