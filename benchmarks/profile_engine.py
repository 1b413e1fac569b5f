"""Where a stacked group's training step spends its time: the top operators and kernels.

    PYTHONPATH=lib python3 benchmarks/profile_engine.py --device cuda [--out FILE]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/profile_engine.py --device cpu

For the two shapes that missed their targets on an H200 (README, "The training engine"): a
group of 64 one-layer width-16 decoders (host-bound: about 6 ms a step whatever the group's
size) and one 12-layer width-768 decoder (41 ms a step against a floor near 4 ms). For each it
times eager steps, and with CUDA graphs where the device has them (with --compile: also the
step through torch.compile, and the first step's seconds, its compiling), each by
torch.utils.benchmark's Timer (benchmarks/timing.py; Compare's table of them at the end), then
profiles a few eager steps with torch.profiler and prints the step's wall time, the host time,
the device time, the number of kernels launched and the ten operators that take the most time.
One line of JSON per measurement goes to --out as well.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from bench_engine import emit, failure  # noqa: E402 (this folder: the benchmarks' row output)

CASES = (((1, 1, 16), 64), ((12, 12, 768), 1))


def _group(shape, size, device, graphs=False, compile=False):
    import torch

    from lengthgen.engine.feeds import DeviceFeed
    from lengthgen.engine.groups import StackedGroup
    from lengthgen.tasks import get_task
    from lengthgen.train import TrainConfig, decoder_for_task
    task = get_task("binary_majority")
    layers, heads, width = shape
    configs = [TrainConfig(steps=10 ** 6, lr=1e-3, schedule="linear", eval_every=10 ** 6,
                           eval_samples=8, seed=i, max_len=50, stop_accuracy=None)
               for i in range(size)]
    models = [decoder_for_task(task, seed=i, n_layers=layers, n_heads=heads, d_model=width)
              for i in range(size)]
    group = StackedGroup(models, [task] * size, configs, device, graphs=graphs, compile=compile)
    feed = DeviceFeed([task] * size, configs, [m.cfg.n_positions for m in models],
                      [True] * size, device, task.max_tokens(50))
    counter = [0]

    def step():
        group.set_rates(counter[0])
        out = group.train_step(*feed.batch(counter[0]))
        counter[0] += 1
        return out
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    return step, sync


def timed(step, n: int, what: tuple):
    """The Measurement of `n` steps after 3 warm-up steps (torch.utils.benchmark's Timer, one
    block of n: it synchronises the card); `what` is the Compare table's (sub_label,
    description)."""
    from timing import timer
    for _ in range(3):
        step()
    return timer(step, "profile_engine: a step", *what).timeit(n)


def profile(step, sync, device: str, n: int = 5) -> dict:
    from torch.profiler import ProfilerActivity, profile as torch_profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for _ in range(3):
        step()
    sync()
    with torch_profile(activities=activities) as prof:
        for _ in range(n):
            step()
        sync()
    events = prof.key_averages()
    key = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    top = sorted(events, key=lambda e: getattr(e, key, 0), reverse=True)[:10]
    kernels = sum(e.count for e in events if getattr(e, "device_type", None) is not None
                  and str(e.device_type).endswith("CUDA"))
    # operators called from Python (not from inside another operator): each costs host time
    # (dispatch, and on a GPU a launch) whatever the group's size
    # (autograd runs the backward's operators from C++: those are counted apart)
    roots = [e for e in prof.events() if e.cpu_parent is None]
    called = sum(1 for e in roots if e.name.startswith("aten::"))
    backward = sum(1 for e in roots if e.name.startswith("autograd::engine"))
    return {"host_ms_per_step": round(sum(e.self_cpu_time_total for e in events) / n / 1e3, 2),
            "device_ms_per_step": round(sum(getattr(e, "self_device_time_total", 0)
                                            for e in events) / n / 1e3, 2),
            "kernels_per_step": round(kernels / n, 1),
            "operators_per_step": round(called / n, 1),
            "backward_nodes_per_step": round(backward / n, 1),
            "top": [(e.key[:60], round(getattr(e, key, 0) / n / 1e3, 3), e.count // n)
                    for e in top]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--compile", action="store_true",
                        help="also time and profile steps through torch.compile")
    args = parser.parse_args(argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("profile_engine: --device cuda but no CUDA device is available", file=sys.stderr)
        return 2
    cases = CASES if args.device == "cuda" else (((1, 1, 16), 8), ((2, 2, 64), 1))
    n = args.steps or (20 if args.device == "cuda" else 3)
    out = open(args.out, "w") if args.out else None
    from timing import compare, once
    measurements = []   # torch.utils.benchmark Measurements, for the Compare table
    for shape, size in cases:
        rows = []
        for compile in ((False, True) if args.compile else (False,)):
            for graphs in ((False, True) if args.device == "cuda" else (False,)):
                what = {"shape": list(shape), "group": size, "graphs": graphs,
                        "compile": compile}
                try:
                    step, sync = _group(shape, size, args.device, graphs, compile)
                    first = once(step)   # capture, compiling: timed apart
                    measurement = timed(step, n, ("{}L{}H d{} S={}".format(*shape, size),
                                                  ("graph" if graphs else "eager")
                                                  + (" compiled" if compile else "")))
                    measurements.append(measurement)
                    row = {**what, "first_step_s": round(first, 2),
                           "ms_per_step": round(measurement.median * 1e3, 2)}
                    if not graphs:
                        row.update(profile(step, sync, args.device))
                except Exception as e:   # a failing case says why; the others go on
                    row = failure(what, e)
                emit(row, rows, out)
    print(compare(measurements))
    return 0


if __name__ == "__main__":
    sys.exit(main())
