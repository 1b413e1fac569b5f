"""Training speed of the engine: model-steps per second per shape and group size.

    PYTHONPATH=lib python benchmarks/bench_engine.py --device cuda [--seconds 3] [--out F]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_engine.py --device cpu

For each decoder shape (layers, heads, width) it times full training steps (learning rates,
batch, forward, backward, clipping, AdamW) at batch 64 on binary majority with Len 1-50, for:

* `train()`: one model, the loop `train` runs (torch's AdamW, the host's numpy sampler; on a
  CPU with the sweep's length chunks, 4 from width 64, on a GPU one): the trainer every figure
  used before the engine;
* `vmap+host`: S models through torch.func.vmap with host sampling per member, the path the
  old `train_seeds` took (kept as the engine's generic stacking for non-decoder models);
* `engine+graph` (GPU): the same, each step replayed as one captured CUDA graph;
* `engine`: S decoders as stacked tensors (`lengthgen.engine.stacked`) with the per-member
  AdamW and batches made on the device (on a CPU: also `engine+host`, with the host's sampler;
  on a CPU both use the same length chunks as `train()`).

A model-step is one optimizer step of one model: a group of S doing n steps does S x n. Each
rate is the best of `--rounds` timed windows of `--seconds` after warm-up steps (load from other
jobs only slows a run down). The card's name, torch version and thread count are printed; on a
GPU, the peak memory of each measurement too.
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

GPU_PLAN = {(1, 1, 16): [64, 1024], (2, 2, 64): [32, 512], (4, 4, 256): [8, 64],
            (6, 4, 256): [8, 32], (12, 12, 768): [1]}
CPU_PLAN = {(1, 1, 16): [1, 8, 32], (2, 2, 32): [1, 8], (2, 2, 64): [1, 8]}
TASK = "binary_majority"


def _configs(n: int, chunks: int = 1):
    from lengthgen.train import TrainConfig
    return [TrainConfig(steps=10 ** 6, batch_size=64, lr=1e-3, weight_decay=0.01,
                        schedule="linear", eval_every=10 ** 6, eval_samples=8, seed=i,
                        max_len=50, stop_accuracy=None, length_chunks=chunks)
            for i in range(n)]


def _models(shape, n, task, pe="ape"):
    from lengthgen.train import decoder_for_task
    layers, heads, width = shape
    return [decoder_for_task(task, seed=i, n_layers=layers, n_heads=heads, d_model=width, pe=pe)
            for i in range(n)]


def _timed(step, seconds: float, rounds: int, sync) -> float:
    """Steps per second: the best of `rounds` windows of `seconds`, after 3 warm-up steps."""
    for _ in range(3):
        step()
    sync()
    best = 0.0
    for _ in range(rounds):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds or n < 3:
            step()
            n += 1
        sync()
        best = max(best, n / (time.perf_counter() - start))
    return best


def measure(kind: str, shape, size: int, device: str, seconds: float, rounds: int) -> dict:
    import torch

    from lengthgen.engine.feeds import DeviceFeed, HostFeed
    from lengthgen.engine.groups import ModuleGroup, StackedGroup
    from lengthgen.tasks import get_task
    task = get_task(TASK)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    # length chunks as the CPU sweep uses them (from width 64, huang.sweep.protocol.chunks_for)
    # on a CPU, whatever makes the batches; one on a GPU (a chunk's cut reads the lengths)
    from lengthgen.experiments.huang.sweep.protocol import chunks_for
    chunked = device == "cpu" and kind != "vmap+host"
    configs = _configs(size, chunks_for(shape[2]) if chunked else 1)
    models = _models(shape, size, task)
    tasks = [task] * size
    npos = [m.cfg.n_positions for m in models]
    ape = [True] * size
    if kind == "train()":
        group = ModuleGroup(models[0], task, configs[0], device)
    else:
        group = StackedGroup(models, tasks, configs, device,
                             stacking="vmap" if kind == "vmap+host" else "auto",
                             graphs=kind == "engine+graph")
    if kind in ("engine", "engine+graph"):   # batches made on the device
        width = task.max_tokens(50)
        feed = DeviceFeed(tasks, configs, npos, ape, device, width)
    else:
        feed = HostFeed(tasks, configs, npos, ape, torch.long, device)
    counter = [0]

    def step():
        group.set_rates(counter[0])
        group.train_step(*feed.batch(counter[0]))
        counter[0] += 1

    rate = _timed(step, seconds, rounds, sync)
    out = {"kind": kind, "shape": list(shape), "group": size, "steps_per_s": round(rate, 2),
           "model_steps_per_s": round(rate * size, 1)}
    if device == "cuda":
        out["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2 ** 30, 2)
    return out


def header(device: str) -> dict:
    import torch
    info = {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "python": platform.python_version(), "host": platform.processor() or platform.machine()}
    if device == "cuda":
        info["card"] = torch.cuda.get_device_name()
        info["capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
    return info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=420.0,
                        help="stop measuring after this many seconds (the rest is skipped)")
    parser.add_argument("--out", default=None, help="also write the rows as JSON lines here")
    args = parser.parse_args(argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_engine: --device cuda but no CUDA device is available", file=sys.stderr)
        return 2
    plan = GPU_PLAN if args.device == "cuda" else CPU_PLAN
    seconds = args.seconds or (2.0 if args.device == "cuda" else 1.5)
    start = time.perf_counter()
    info = header(args.device)
    print("bench_engine", json.dumps(info), flush=True)
    rows = []
    out = open(args.out, "w") if args.out else None
    if out:
        out.write(json.dumps({"header": info}) + "\n")
    for shape, sizes in plan.items():
        kinds = [("train()", 1), ("vmap+host", sizes[min(1, len(sizes) - 1)])]
        if args.device == "cpu":
            kinds += [("engine+host", s) for s in sizes]
        kinds += [("engine", s) for s in sizes]
        if args.device == "cuda":
            kinds += [("engine+graph", s) for s in sizes]
        for kind, size in kinds:
            if time.perf_counter() - start > args.budget:
                print(f"budget of {args.budget:.0f} s spent: skipping {shape} {kind} S={size}",
                      flush=True)
                continue
            try:
                row = measure(kind, shape, size, args.device, seconds, args.rounds)
            except torch.OutOfMemoryError:
                row = {"kind": kind, "shape": list(shape), "group": size, "error": "out of memory"}
            except Exception as e:   # a benchmark row that fails says why and the rest go on
                row = failure({"kind": kind, "shape": list(shape), "group": size}, e)
            emit(row, rows, out)
    print(f"total {time.perf_counter() - start:.0f} s")
    print(table(rows))
    return 0


def failure(row: dict, error: Exception) -> dict:
    """A benchmark row that failed, saying why in one line (the other rows go on)."""
    return {**row, "error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}


def emit(row: dict, rows: list, out) -> None:
    """Keep a row, print it as JSON and append it to --out at once (a run cut short keeps
    what it measured)."""
    rows.append(row)
    print(json.dumps(row), flush=True)
    if out:
        out.write(json.dumps(row) + "\n")
        out.flush()


def table(rows) -> str:
    lines = ["| shape | kind | group | steps/s | model-steps/s |", "|---|---|---|---|---|"]
    for r in rows:
        value = r.get("error") or f"{r['steps_per_s']:g} | {r['model_steps_per_s']:g}"
        shape = "L{}H{} d{}".format(*r["shape"])
        lines.append(f"| {shape} | {r['kind']} | {r['group']} | {value} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
