"""Training speed of the engine: the sweep's own groups first, then model-steps per second.

    PYTHONPATH=lib python benchmarks/bench_engine.py --device cuda [--budget 300] [--compile]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_engine.py --device cpu --budget 60

1. The sweep (what matters first): the groups the APE vs NoPE sweep at the paper's budget trains
   next, read from its records (`budget.plan` on `--records`/huang-fig1-budget/gpu, the
   12-layer setting included), each job of the group built as `train_jobs` builds it (its own
   task, encoding, seed, learning rate and schedule, batches made on the device), at the
   group's real size (at most the slice's `max_group`, 256). For each: the time a step takes,
   model-steps per second, the minutes a 60,000-step job of that group needs, the minutes of
   the group's own step cap, and the first step's seconds (CUDA-graph capture and, with
   --compile, torch.compile's tracing and code generation: paid once per group and member count).
2. The shapes: for each decoder shape (layers, heads, width), full training steps at batch 64
   on binary majority with Len 1-50, for
   * `engine`: S decoders as stacked tensors (`lengthgen.engine.stacked`) with the per-member
     AdamW and batches made on the device (on a CPU: also `engine+host`, the host's sampler;
     on a CPU both use the same length chunks as `train()`);
   * `engine+graph` (GPU): the same, each step replayed as one captured CUDA graph;
   * `engine+compile` (and `engine+compile+graph` on a GPU), with --compile: the step's loss
     and update through torch.compile (`lengthgen.engine.compiled`);
   * `train()`: one model, the loop `train` runs (torch's AdamW, the host's numpy sampler; on a
     CPU with the sweep's length chunks, 4 from width 64, on a GPU one): the trainer every figure
     used before the engine.
   (A `vmap+host` row, S models through torch.func.vmap, timed the old `train_seeds` path until
   both were removed: the README's older tables keep its numbers.)

The time budget: every sweep group and every shape gets an equal share of what is left of
`--budget` when its turn comes (time a row leaves unused goes to the later ones), its rows split
that share, and a row whose share is spent is skipped with a line saying so, but the first row
of every group and shape always runs: the 12-layer rows are never skipped for want of time. On
a CPU a row whose steps would take longer than its share (predicted from the multiply-adds per
second measured so far) is skipped with the prediction instead (a 12-layer width-768 group
takes minutes a step there).

A model-step is one optimizer step of one model: a group of S doing n steps does S x n. Each
row is timed by torch.utils.benchmark's Timer (benchmarks/timing.py: it synchronises the card):
after 3 warm-up steps, `--rounds` blocked_autorange runs of at least `--seconds` (or less, as
the budget allows), and the rate is one over the median block of the best round (load from
other jobs only slows a run down). The card's name, torch version and thread count are
printed; on a GPU, the peak memory of each measurement too. At the end, the rows as a markdown
table and as torch.utils.benchmark's Compare table (time a step, shapes by kinds).
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
SWEEP_STEPS = 60_000       # the paper's longest budget (6L4H d256, 12L12H d768)
MAX_GROUP = 256            # a slice's largest group (runs.slices.run_slice)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


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


def _timed(step, seconds: float, rounds: int, what: tuple) -> tuple:
    """(the Measurement: torch.utils.benchmark's Timer, `rounds` blocked_autorange runs of at
    least `seconds` after 3 warm-up steps, the one with the lowest median; the first warm-up
    step's seconds: capture and compiling). `what` is the Compare table's (sub_label,
    description)."""
    from timing import once, steady
    first = once(step)
    measurement = steady(step, seconds, rounds, warmup=2, label="bench_engine: a step",
                         sub_label=what[0], description=what[1])
    return measurement, first


def _stepper(group, feed):
    counter = [0]

    def step():
        group.set_rates(counter[0])
        group.train_step(*feed.batch(counter[0]))
        counter[0] += 1
    return step


def _fresh_memory(device: str) -> None:
    """On a card, start the measurement's peak memory afresh (Timer does the synchronising)."""
    import torch
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _finish(row: dict, measurement, first: float, size: int, device: str) -> dict:
    """The row's numbers from its Measurement (kept under "measurement" for the Compare table,
    taken out before the row is written)."""
    import torch

    from timing import per_second
    rate = per_second(measurement)
    row.update(steps_per_s=round(rate, 2), model_steps_per_s=round(rate * size, 1),
               ms_per_step=round(1e3 / rate, 2), ms_iqr=round(measurement.iqr * 1e3, 3),
               first_step_s=round(first, 2), measurement=measurement)
    if device == "cuda":
        row["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2 ** 30, 2)
    return row


def measure(kind: str, shape, size: int, device: str, seconds: float, rounds: int) -> dict:
    import torch

    from lengthgen.engine.feeds import DeviceFeed, HostFeed
    from lengthgen.engine.groups import ModuleGroup, StackedGroup
    from lengthgen.tasks import get_task
    task = get_task(TASK)
    _fresh_memory(device)
    # length chunks as the CPU sweep uses them (from width 64, huang.sweep.protocol.chunks_for)
    # on a CPU, whatever makes the batches; one on a GPU (a chunk's cut reads the lengths)
    from lengthgen.experiments.huang.sweep.protocol import chunks_for
    configs = _configs(size, chunks_for(shape[2]) if device == "cpu" else 1)
    models = _models(shape, size, task)
    tasks = [task] * size
    npos = [m.cfg.n_positions for m in models]
    ape = [True] * size
    if kind == "train()":
        group = ModuleGroup(models[0], task, configs[0], device)
    else:
        group = StackedGroup(models, tasks, configs, device, graphs=kind.endswith("+graph"),
                             compile="+compile" in kind)
    if kind.startswith("engine") and kind != "engine+host":   # batches made on the device
        width = task.max_tokens(50)
        feed = DeviceFeed(tasks, configs, npos, ape, device, width)
    else:
        feed = HostFeed(tasks, configs, npos, ape, torch.long, device)
    label = "{}L{}H d{}".format(*shape)
    measurement, first = _timed(_stepper(group, feed), seconds, rounds,
                                (label, f"{kind} S={size}"))
    return _finish({"kind": kind, "shape": list(shape), "group": size}, measurement, first,
                   size, device)


# ---- the sweep's groups ------------------------------------------------------------------
def sweep_groups(root: str) -> list[dict]:
    """The groups the sweep trains next: {"shape", "jobs" (engine Jobs), "steps" (the group's
    longest step cap)}, cheapest first, from `budget.plan` on the records under `root`."""
    from pathlib import Path

    from lengthgen.engine.jobs import group_key
    from lengthgen.experiments.huang.sweep.budget import (budget_configs, load_job_records,
                                                          plan, to_engine_job)
    from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID as RECORDS_ID
    config = budget_configs()["gpu"]
    records = load_job_records(Path(root) / RECORDS_ID / "gpu")
    groups: dict = {}
    for spec in plan(config, records, slices=False):
        if spec.name not in records:
            job = to_engine_job(spec, config)
            groups.setdefault(group_key(job), []).append((spec, job))
    out = []
    for members in sorted(groups.values(), key=lambda g: g[0][0].cost(config)):
        s = members[0][0].setting
        for first in range(0, len(members), MAX_GROUP):
            jobs = [j for _, j in members[first: first + MAX_GROUP]]
            out.append({"shape": [s.layers, s.heads, s.d_model], "jobs": jobs,
                        "steps": max(j.train.steps for j in jobs)})
    return out


def sweep_kind(device: str, compile: bool) -> str:
    """How a slice trains on this device: CUDA graphs on a card, compiled with --compile."""
    return "sweep:engine" + ("+compile" if compile else "") + ("+graph" if device == "cuda"
                                                               else "")


def measure_sweep(entry: dict, device: str, seconds: float, rounds: int, compile: bool) -> dict:
    from lengthgen.engine.jobs import make_group
    jobs = entry["jobs"]
    built = [job.build() for job in jobs]
    _fresh_memory(device)
    group, feed = make_group([t for t, _ in built], [m for _, m in built],
                             [j.train for j in jobs], device, "device",
                             graphs=device == "cuda", compile=compile)
    kind = sweep_kind(device, compile)
    label = "{}L{}H d{}".format(*entry["shape"])
    measurement, first = _timed(_stepper(group, feed), seconds, rounds,
                                (label, f"{kind} S={len(jobs)}"))
    row = {"kind": kind, "shape": entry["shape"], "group": len(jobs),
           "tasks": len({j.task for j in jobs})}
    row = _finish(row, measurement, first, len(jobs), device)
    rate = row["steps_per_s"]
    row["minutes_60k"] = round(SWEEP_STEPS / rate / 60, 2)
    row["minutes_own"] = round(entry["steps"] / rate / 60, 2)
    row["own_steps"] = entry["steps"]
    return row


def step_flops(shape, size: int, width: int = 100) -> float:
    """Multiply-adds x 2 of one training step of `size` decoders of `shape` at batch 64 (forward
    and backward: 6 per weight and token), for predicting a CPU row's time."""
    from lengthgen.models.decoder import DecoderConfig
    layers, heads, d = shape
    params = DecoderConfig(vocab_size=8, n_classes=8, n_layers=layers, n_heads=heads,
                           d_model=d).approximate_parameters()
    return 6.0 * params * 64 * width * size


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
    parser.add_argument("--seconds", type=float, default=None,
                        help="a round's min_run_time for Timer.blocked_autorange (less where "
                             "the budget is short)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds for the whole benchmark, shared by the groups and shapes")
    parser.add_argument("--compile", action="store_true",
                        help="also time steps through torch.compile (and the sweep's groups so)")
    parser.add_argument("--sections", default="sweep,shapes",
                        help="which parts to run, in order: sweep, shapes")
    parser.add_argument("--records", default=os.path.join(ROOT, "results"),
                        help="the results folder whose sweep records say what is left")
    parser.add_argument("--out", default=None, help="also write the rows as JSON lines here")
    args = parser.parse_args(argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_engine: --device cuda but no CUDA device is available", file=sys.stderr)
        return 2
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    if not sections or any(s not in ("sweep", "shapes") for s in sections):
        print(f"bench_engine: --sections takes sweep and/or shapes, got {args.sections!r}",
              file=sys.stderr)
        return 2
    seconds = args.seconds or (2.0 if args.device == "cuda" else 1.5)
    info = header(args.device)
    print("bench_engine", json.dumps(info), flush=True)
    from timing import compare
    rows: list = []
    measurements: list = []   # torch.utils.benchmark Measurements, for the Compare table
    out = open(args.out, "w") if args.out else None
    if out:
        out.write(json.dumps({"header": info}) + "\n")
    items = []   # (label, [(row label, measure())]) in order; each item gets a share
    for section in sections:
        items += sweep_items(args) if section == "sweep" else shape_items(args)
    budget = Budget(args.budget, len(items), args.device)
    for label, rows_of_item in items:
        share = budget.next_share()
        item_start = time.perf_counter()
        for i, (what, flops, run) in enumerate(rows_of_item):
            spent = time.perf_counter() - item_start
            left = share - spent
            if i > 0 and left <= 0:
                print(f"{label}: share of {share:.0f} s spent: skipping {what}", flush=True)
                continue
            window = min(seconds, max(0.2, left / (len(rows_of_item) - i) / (args.rounds + 1)))
            predicted = budget.predict(flops, args.rounds)
            if predicted is not None and predicted > max(left, 0):
                print(f"{label}: skipping {what}: its steps would take about {predicted:.0f} s "
                      f"here, over its share of {max(left, 0):.0f} s", flush=True)
                continue
            try:
                row = run(window)
            except torch.OutOfMemoryError:
                row = {"what": what, "error": "out of memory"}
            except Exception as e:   # a benchmark row that fails says why and the rest go on
                row = failure({"what": what}, e)
            if "steps_per_s" in row:
                budget.learn(flops, row["steps_per_s"])
            measurements.append(row.pop("measurement", None))
            emit(row, rows, out)
    print(f"total {time.perf_counter() - budget.start:.0f} s")
    print(table(rows))
    print(compare(measurements))
    return 0


class Budget:
    """Equal shares of what is left of the budget, and (on a CPU) predicted row times."""

    def __init__(self, seconds: float, items: int, device: str):
        self.seconds, self.items, self.device = seconds, items, device
        self.start = time.perf_counter()
        self.flops_per_s = None

    def next_share(self) -> float:
        left = self.seconds - (time.perf_counter() - self.start)
        share = max(left, 0.0) / max(self.items, 1)
        self.items -= 1
        return share

    def learn(self, flops: float, steps_per_s: float) -> None:
        """The fastest multiply-add rate measured so far (what the predictions divide by)."""
        self.flops_per_s = max(self.flops_per_s or 0.0, flops * steps_per_s)

    def predict(self, flops: float, rounds: int) -> float | None:
        """Seconds of a row's fewest steps (3 warm-up; a round: one to size Timer's blocks,
        one block of one), on a CPU only (a card's rate grows with the shape: small shapes
        would predict the large ones too slow)."""
        if self.device != "cpu" or self.flops_per_s is None:
            return None
        return flops * (3 + 2 * rounds) / self.flops_per_s


def sweep_items(args) -> list:
    try:
        entries = sweep_groups(args.records)
    except Exception as e:   # no records, or records this code cannot read: say so, go on
        print(f"sweep: cannot read the plan from {args.records} ({type(e).__name__}: {e})",
              flush=True)
        return []
    if not entries:
        print(f"sweep: nothing is left to train in {args.records}", flush=True)
    items = []
    for entry in entries:
        label = "sweep {}L{}H d{} x{}".format(*entry["shape"], len(entry["jobs"]))
        run = (lambda e: lambda window: measure_sweep(e, args.device, window, args.rounds,
                                                       args.compile))(entry)
        items.append((label, [(label, step_flops(entry["shape"], len(entry["jobs"])), run)]))
    return items


def shape_items(args) -> list:
    plan = GPU_PLAN if args.device == "cuda" else CPU_PLAN
    items = []
    for shape, sizes in plan.items():
        kinds = [("engine", s) for s in sizes]
        if args.device == "cuda":
            kinds += [("engine+graph", s) for s in sizes]
        if args.compile:
            kinds += [("engine+compile", s) for s in sizes]
            if args.device == "cuda":
                kinds += [("engine+compile+graph", s) for s in sizes]
        if args.device == "cpu":
            kinds += [("engine+host", s) for s in sizes]
        kinds += [("train()", 1)]
        label = "{}L{}H d{}".format(*shape)
        rows = [(f"{label} {kind} S={size}", step_flops(shape, size),
                 (lambda k, h, z: lambda window: measure(k, h, z, args.device, window,
                                                         args.rounds))(kind, shape, size))
                for kind, size in kinds]
        items.append((label, rows))
    return items


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
    sweep = [r for r in rows if str(r.get("kind", "")).startswith("sweep")]
    lines = []
    if sweep:
        lines += ["| shape | group | kind | ms a step | model-steps/s | 60k-step job, min | "
                  "own cap, min | first step, s |", "|---|---|---|---|---|---|---|---|"]
        for r in sweep:
            lines.append("| {}L{}H d{} | {} | {} | {:g} | {:g} | {:g} | {:g} ({} steps) | {:g} |"
                         .format(*r["shape"], r["group"], r["kind"], r["ms_per_step"],
                                 r["model_steps_per_s"], r["minutes_60k"], r["minutes_own"],
                                 r["own_steps"], r["first_step_s"]))
        lines.append("")
    lines += ["| shape | kind | group | steps/s | model-steps/s |", "|---|---|---|---|---|"]
    for r in rows:
        if r in sweep:
            continue
        if "error" in r and "shape" not in r:
            lines.append(f"| {r.get('what')} | | | {r['error']} | |")
            continue
        value = r.get("error") or f"{r['steps_per_s']:g} | {r['model_steps_per_s']:g}"
        shape = "{}L{}H d{}".format(*r["shape"])
        lines.append(f"| {shape} | {r['kind']} | {r['group']} | {value} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
