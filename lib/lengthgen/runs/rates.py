"""The engine's measured rates on a card: what a slice plans with, so that it starts only jobs
that finish in the time it has.

The built-in table (`H200`) is the benchmark of 2026-11-28 on one NVIDIA H200 (torch 2.11.0,
CUDA 13.0, commit 6718b4949bcb, batch 64, Len <= 50): `benchmarks/bench_engine.py` rows
"engine" and "engine+graph" (model-steps per second at two group sizes per shape), and for the
12-layer width-768 decoder, which the benchmark's budget skipped, `benchmarks/profile_engine.py`
(36.46 ms a step eager, 15.11 ms as a CUDA graph, one model). Source: the run's bench.jsonl and
profile.jsonl, copied from the project's GPU-run folder gpu-runs/2026-11-28-h200 (its README
describes the run). A newer benchmark's bench.jsonl is read by `read_bench` (`--rates FILE`).

How long a stacked group's step takes is not modelled here: `runs.cost.group_steps_per_s`
reads a table's stacked rows (by the FLOPs per step of the group's runs, their batch and length
in it) for the slice's planner (`runs.planner.Planner`) and `figure cost` alike, so the two
cannot disagree on a group. Against the run's first slice: its group of 19 one-layer
width-128 jobs ended in 184 s (its last members at 30k steps, most others at 3,000, where they
stopped); that rule gives about 190 s for 30k steps at the benchmark's workload (the rule
this module held until then, by shape and group size, gave 267 s).

A job the engine trains alone (`engine.jobs`, "Alone": Richard's Dyck models) steps one model at
a time, eagerly, as `train()` does: a stacked group's rate does not time it. The one-model rate's
home, `runs.cost.one_model_steps_per_s`, does, from a table's `train()` rows (`Rate.single`)
and the FLOPs of the job's step, for the slice's planner (`runs.planner.Planner`) and `figure
cost` alike; host work before a job's first step (`Job.host_seconds`: a Dyck job's training
words) is added by them, once per word set (`Job.host_key`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lengthgen.errors import LengthgenError

Shape = tuple   # (layers, heads, d_model)
SINGLE = "train()"                            # the benchmark's rows of one model at a time
KINDS = ("engine", "engine+graph", SINGLE)    # the rows a table reads


@dataclass(frozen=True)
class Rate:
    shape: Shape           # (layers, heads, d_model)
    group: int             # decoders stepped together
    graphs: bool           # steps replayed as CUDA graphs
    model_steps_per_s: float
    single: bool = False   # a `train()` row: one model at a time, eagerly (a job alone)


def shape_cost(shape: Shape) -> float:
    layers, _, d = shape
    return layers * (12 * d * d + 100 * d)


def state_bytes(shape: Shape) -> float:
    """About the bytes of a job's state: weights and two AdamW moments, 4 bytes each (the
    cost above is about the parameters of the decoder's blocks)."""
    return 12 * shape_cost(shape)


@dataclass(frozen=True)
class RateTable:
    card: str              # the card the rates were measured on (torch's device name)
    source: str            # where they come from
    rates: tuple


RATES_FILE = Path(__file__).resolve().parents[1] / "data" / "h200_rates.json"


def builtin_table(path: Path = RATES_FILE) -> RateTable:
    """The H200 benchmark's engine rows, as a table: the one copy of those numbers in the
    library (data/h200_rates.json, with its source), which `lengthgen.runs.cost` reads too.
    The 12-layer rows come from the profile (36.46 ms a step eager, 15.11 ms as a graph); the
    `train()` rows time the jobs trained alone."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LengthgenError(f"cannot read the GPU rate table {path}: {error}") from None
    rates = tuple(Rate(tuple(r["shape"]), r["group"], r["kind"] == "engine+graph",
                       float(r["model_steps_per_s"]), r["kind"] == SINGLE)
                  for r in data["rows"] if r["kind"] in KINDS)
    return RateTable(card=data["card"], source=data["source"], rates=rates)


H200 = builtin_table()


def read_bench(path) -> RateTable:
    """The engine rows (and `train()` rows) of a `benchmarks/bench_engine.py --out` file (JSON
    lines), as a table; one line naming the file when it holds no engine row."""
    import stat
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > 16 * 2 ** 20:
            raise LengthgenError(f"{path}: not a benchmark's rates file (a regular file of at "
                                 f"most 16 MiB, JSON lines)")
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise LengthgenError(f"{path}: cannot read the benchmark's rates "
                             f"({getattr(e, 'strerror', None) or e.__class__.__name__})") from None
    card, rates = "", []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue   # a line cut by a killed benchmark
        if not isinstance(row, dict):
            continue
        if isinstance(row.get("header"), dict):
            card = str(row["header"].get("card", ""))
        kind, shape = row.get("kind"), row.get("shape")
        rate, group = row.get("model_steps_per_s"), row.get("group")
        if kind in KINDS and isinstance(shape, list) and len(shape) == 3 \
                and all(isinstance(v, int) and v > 0 for v in [*shape, group]) \
                and isinstance(rate, (int, float)) and 0 < rate < float("inf"):
            rates.append(Rate(tuple(shape), group, kind == "engine+graph", float(rate),
                              kind == SINGLE))
    if not any(not r.single for r in rates):
        raise LengthgenError(f"{path}: no engine rates in it (a bench_engine.py --out file "
                             f"has lines with kind 'engine' and model_steps_per_s)")
    return RateTable(card=card, source=str(path), rates=tuple(rates))


def table_for(device, path=None) -> RateTable | None:
    """The rates a slice on `device` plans with: those of `path` (a benchmark's file), else
    the built-in table where the device is the card it was measured on, else None (the slice
    then measures its own)."""
    if path is not None:
        return read_bench(path)
    import torch
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available() \
            and H200.card in torch.cuda.get_device_name(device):
        return H200
    return None
