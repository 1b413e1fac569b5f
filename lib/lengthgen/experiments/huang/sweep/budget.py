"""The APE vs NoPE sweep at the paper's step budget, trained by the engine on a GPU, in slices.

The CPU book sweep caps every training at 6,000 steps and shrinks settings above 512 layers x
width; four of its "never fits" cells fit at the paper's 30k budget on one GPU. This protocol
keeps the book's short ladder and selection but removes both limits:

- ladder: 1L1H d16 and 2L2H d64 where simpler than the cell's own Table 6-7 setting (a rung
  below the last gives up at its 3,000-step evaluation under 90% in distribution), ending at
  the cell's own setting at its true size and its table budget (30k, 40k or 60k steps, with
  its warm-up); for the languages whose names our copy of the tables lost, the unnamed rows;
- the authors' training: batch 64, AdamW (weight decay 0.01), linear decay over the budget,
  clipping at 1, evaluation every 3,000 steps on 2,000 inputs, stop at 100%, tied embeddings
  where input and output vocabularies coincide; one length chunk; batches made on the device;
- the main text's selection (the first rung at 100% in distribution and on Len 51-100; else
  the best on Len 51-100 among rungs that fit), then 3 seeds of the selected setting, 5 where
  the seeds' accuracies on Len 101-150 straddle the success line.

The unit of work is a job: one training of (task, encoding, setting, seed). Jobs have records
of their own: the planned figure `huang_fig1_budget` (results/huang-fig1-budget/gpu/) is this
protocol's face to the run layer, whose slices (`lengthgen.runs.planned`, `runs.slices`)
train its jobs, so a slice of minutes ends wherever its deadline falls and the next slice
plans what is left from the records. To use the card, the
seed-0 trainings of every rung and seeds 1-2 of every cell's own setting are planned at once
(the selection reads them when they are done) and jobs of one decoder shape train as one
stacked group.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lengthgen.experiments.huang.sweep.protocol import (ENCODINGS, HELDOUT_BIN, LONGEST_BIN,
                                                        Setting, configs, job_for, ladder,
                                                        paper_setting, score_training,
                                                        scores_problem)
from lengthgen.runs.allotment import USABLE_S
from lengthgen.runs.provenance import caption, code_commit, code_commits  # noqa: F401
from lengthgen.runs.rates import shape_cost
from lengthgen.runs.slices import STATE_BYTES, save_states  # noqa: F401  (the slices' API here)
from lengthgen.runs.planner import Planner
from lengthgen.runs.slices import read_states
from lengthgen.tasks import get_task
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.metadata import algorithmic_ids, language_ids

SUCCESS_LINE = 0.8                # the book's success line on Len 101-150 (the paper states none)


def panel_tasks() -> list[str]:
    """The 25 tasks of Fig. 1: 8 algorithmic, the 17 languages of Table 2."""
    return algorithmic_ids() + [t for t in language_ids() if t != "parity"]


def budget_configs() -> dict:
    """{"test": ..., "gpu": ...}: the protocol above, and a toy one with the same code path."""
    book = {k: v for k, v in configs([], [])["book"].items() if k != "tasks"}
    gpu = {**book, "tasks": panel_tasks(), "cpu_limit": None, "steps": 30000, "seeds": 3,
           "max_seeds": 5, "length_chunks": 1, "table_budget": True, "checkpoints": False, "sampler": "device",
           "success_line": SUCCESS_LINE}
    test = {**gpu, "tasks": ["binary_majority", "tomita2"], "search": [[1, 1, 16, 1e-2]],
            "paper_setting": False, "steps": 30, "schedule_steps": 60, "eval_every": 10,
            "eval_samples": 32, "samples_per_bin": 32, "seeds": 2, "max_seeds": 3,
            "abandon_below": 0.5}
    return {"test": test, "gpu": gpu}


@dataclass(frozen=True)
class JobSpec:
    task: str
    encoding: str
    setting: Setting
    seed: int
    may_abandon: bool

    @property
    def name(self) -> str:
        s = self.setting
        return (f"{self.task}__{self.encoding}__{s.layers}L{s.heads}H{s.d_model}_lr{s.lr:g}"
                f"__s{self.seed}")

    def params(self) -> dict:
        return {"name": self.name, "task": self.task, "encoding": self.encoding,
                "setting": self.setting.as_list(), "seed": self.seed,
                "may_abandon": self.may_abandon}

    def cost(self, config: dict) -> float:
        """Relative cost at the budget (multiply-adds per token times steps)."""
        s = self.setting
        steps = s.step_cap(config["steps"])
        return s.layers * (12 * s.d_model ** 2 + 100 * s.d_model) * steps + 1e6


def to_engine_job(spec: JobSpec, config: dict):
    """The engine's Job for a spec: the decoder and training of the protocol above (the same
    translation the CPU book sweep uses, `protocol.job_for`)."""
    return job_for(spec.task, spec.encoding, spec.setting, spec.seed, config, spec.may_abandon,
                   name=spec.name)


# ---- planning from the records -----------------------------------------------------------
def _metrics(records: dict, spec: JobSpec) -> dict | None:
    record = records.get(spec.name)
    return None if record is None else record["metrics"]


def cell_state(task: str, encoding: str, config: dict, records: dict) -> dict:
    """Where a cell stands: its rungs, the jobs it needs next and, once decided, the selected
    setting and its seeds' metrics."""
    rungs = ladder(task, encoding, config)
    seed0 = [JobSpec(task, encoding, r, 0, i < len(rungs) - 1) for i, r in enumerate(rungs)]
    done = [_metrics(records, j) for j in seed0]
    selected, searched = None, len(seed0)
    for i, (job, m) in enumerate(zip(seed0, done)):   # the main text's rule, simplest first
        if m is None:
            break
        if m["fit"] and m["bins"][HELDOUT_BIN] >= 1.0:
            selected, searched = job, i + 1   # the search stops here: later rungs not needed
            break
    else:
        fitting = [(j, m) for j, m in zip(seed0, done) if m["fit"]]
        if fitting:   # the appendix's rule: best on Len 51-100 among the rungs that fit
            best = max(m["bins"][HELDOUT_BIN] for _, m in fitting)
            selected = next(j for j, m in fitting if m["bins"][HELDOUT_BIN] == best)
        elif all(m is not None for m in done):   # none fits: the closest to fitting
            first = bin_name(*get_task(task).test_bins[0])
            best = max(m["bins"][first] for m in done)
            selected = next(j for j, m in zip(seed0, done) if m["bins"][first] == best)
    needed = [j for j, m in zip(seed0[:searched], done) if m is None]
    if selected is None:
        own = paper_setting(task, encoding)
        if own is not None:   # speculative: the cell's own setting is usually the selected one
            needed += [JobSpec(task, encoding, rungs[-1], s, False)
                       for s in range(1, config["seeds"])]
        return {"selected": None, "needed": needed, "seeds": []}
    setting = selected.setting
    seeds = [JobSpec(task, encoding, setting, s, False) for s in range(config["seeds"])]
    metrics = [_metrics(records, j) for j in seeds]
    if all(m is not None for m in metrics):
        longest = [m["bins"][LONGEST_BIN] for m in metrics]
        line = config.get("success_line", SUCCESS_LINE)
        if min(longest) < line <= max(longest):   # the spread crosses the line: 5 seeds
            seeds += [JobSpec(task, encoding, setting, s, False)
                      for s in range(config["seeds"], config["max_seeds"])]
            metrics += [_metrics(records, j) for j in seeds[len(metrics):]]
    needed += [j for j, m in zip(seeds, metrics) if m is None]
    return {"selected": selected, "needed": needed,
            "seeds": [m for m in metrics if m is not None]}


def in_a_slice(job: JobSpec, config: dict) -> bool:
    """Whether a job can finish inside one slice: the 12-layer, width-768 setting (60k steps,
    about 1 GB of optimizer state that cannot be handed to the next slice as files) cannot."""
    return job.setting.layers <= config.get("slice_max_layers", 6)


def plan(config: dict, records: dict, slices: bool = True) -> list[JobSpec]:
    """Every job the recorded state calls for now, cheapest first (deduplicated); with
    `slices`, only those that can finish inside a slice."""
    jobs = {}
    for task in config["tasks"]:
        for encoding in ENCODINGS:
            for job in cell_state(task, encoding, config, records)["needed"]:
                if not slices or in_a_slice(job, config):
                    jobs.setdefault(job.name, job)
    return sorted(jobs.values(), key=lambda j: (j.cost(config), j.name))


def deferred(config: dict, records: dict) -> list[JobSpec]:
    """The jobs the records call for that no slice can train (`in_a_slice`), cheapest first:
    left, not done. The planned figure's contract reads them (`runs.planned.deferred`): while
    any is left the sweep is not complete, though its plan (what slices train) is empty."""
    return [j for j in plan(config, records, slices=False) if not in_a_slice(j, config)]


# ---- cells from job records --------------------------------------------------------------
def cell_metrics(task: str, encoding: str, config: dict, records: dict) -> dict | None:
    """A complete cell (its search decided and all its seeds recorded) in the shape of the book
    sweep's cell records, so `analysis.table` reads both; None while the cell is incomplete."""
    state = cell_state(task, encoding, config, records)
    if state["selected"] is None or state["needed"]:
        return None
    seeds = sorted(state["seeds"], key=lambda m: m["seed"])
    names = [bin_name(lo, hi) for lo, hi in get_task(task).test_bins]
    fitting = [m for m in seeds if m["fit"]]
    counted = fitting[: config["seeds"]] if fitting else seeds
    rungs = ladder(task, encoding, config)
    search = [records[JobSpec(task, encoding, r, 0, i < len(rungs) - 1).name]["metrics"]
              for i, r in enumerate(rungs)
              if JobSpec(task, encoding, r, 0, False).name in records]
    return {"task": task, "encoding": encoding, "fit": bool(fitting),
            "selected": state["selected"].setting.as_list(), "rule": "paper budget (GPU)",
            "ladder": [r.as_list() for r in rungs], "search": search, "seeds": seeds,
            "n_used": len(counted), "n_successful": len(fitting),
            "accuracy": {b: round(sum(m["bins"][b] for m in counted) / len(counted), 5)
                         for b in names}}


def cell_records(records: dict, config: dict) -> list[dict]:
    """The complete cells as records `analysis.table` reads ({"metrics", "config"})."""
    out = []
    for task in config["tasks"]:
        for encoding in ENCODINGS:
            metrics = cell_metrics(task, encoding, config, records)
            if metrics is not None:
                out.append({"metrics": metrics, "config": {"tasks": config["tasks"]}})
    return out


def cell_progress(records: dict, config: dict) -> list[dict]:
    """Every cell's state in the paper-budget sweep, for the chapter's table of what is left:
    trainings recorded, the rungs tried of its ladder, the setting selected (once decided),
    the seeds recorded of it, the best in-distribution accuracy so far, and what it waits for."""
    out = []
    for task in config["tasks"]:
        first = bin_name(*get_task(task).test_bins[0])
        for encoding in ENCODINGS:
            state = cell_state(task, encoding, config, records)
            mine = [r["metrics"] for r in records.values()
                    if r["params"]["task"] == task and r["params"]["encoding"] == encoding]
            rungs = ladder(task, encoding, config)
            tried = sum(JobSpec(task, encoding, r, 0, False).name in records for r in rungs)
            waiting = sorted({j.setting.label() for j in state["needed"]})
            deferred = [j for j in state["needed"] if not in_a_slice(j, config)]
            if state["selected"] is not None and not state["needed"]:
                stage = "complete"
            elif not mine:
                stage = "not started"
            elif deferred and len(deferred) == len(state["needed"]):
                stage = "needs the 12-layer setting (longer than a slice)"
            elif state["selected"] is not None:
                stage = "seeds of the selected setting"
            else:
                stage = "search"
            out.append({"task": task, "encoding": encoding, "jobs": len(mine),
                        "rungs": len(rungs), "tried": tried, "stage": stage,
                        "selected": None if state["selected"] is None
                        else state["selected"].setting.as_list(),
                        "seeds": len(state["seeds"]),
                        "best_first_bin": max((m["bins"][first] for m in mine), default=None),
                        "waiting_for": waiting})
    return out


def status(records: dict, config: dict) -> dict:
    """How far the paper-budget sweep is: jobs recorded, cells complete and started."""
    cells = [(t, e) for t in config["tasks"] for e in ENCODINGS]
    complete = [c for c in cells if cell_metrics(*c, config, records) is not None]
    started = [c for c in cells if any(r["params"]["task"] == c[0]
                                       and r["params"]["encoding"] == c[1]
                                       for r in records.values())]
    return {"jobs": len(records), "cells": len(cells), "complete": len(complete),
            "started": len(started), "planned": len(plan(config, records)),
            "deferred": len(deferred(config, records))}


# ---- records and slices (the run layer: lengthgen.runs.planned, runs.slices) -------------
def spec(params: dict) -> JobSpec:
    """The job of a record's params (the figure contract's `spec`)."""
    return JobSpec(params["task"], params["encoding"], Setting.of(params["setting"]),
                   params["seed"], params["may_abandon"])


def load_job_records(folder: Path) -> dict:
    """{job name: record} of a folder (each record checked by `load_record`)."""
    from lengthgen.results import load_record, record_files
    folder = Path(folder)
    if not folder.is_dir():
        return {}
    return {r["run_name"]: r for r in (load_record(p, scores_problem)   # the keys read below
                                       for p in record_files(folder))}


def score(model, spec: JobSpec, result, config: dict, device, group_size: int) -> dict:
    """A finished job's metrics: those the book sweep records (`protocol.score_training`),
    where it diverged if it did, its group's size and its history."""
    metrics = score_training(model, get_task(spec.task), spec.setting, spec.seed, result,
                             config, device)
    diverged = next((h["diverged_at"] for h in result.history if "diverged_at" in h), None)
    return {**metrics, "diverged_at": diverged, "group_size": group_size,
            "history": result.history}


def load_states(folder: Path | None) -> dict:
    """{job name: state} of a folder of states a slice left (`<job name>.pt` and packs)."""
    return {name: state for name, (state, _) in read_states([folder]).items()}


def estimate(config: dict, records: dict, table, graphs: bool = True,
             usable_s: float = USABLE_S) -> list[dict]:
    """What the rest of the sweep needs on the card of `table` (a `runs.rates` table): per
    decoder shape, the jobs the records call for now, the group size whose group finishes in
    `usable_s` (one allotment's time for one job, chained), the GPU minutes at that size, and
    the jobs that cannot finish in one allotment even alone."""
    from lengthgen.runs.cost import job_flops
    planner = Planner(table, graphs)
    shapes: dict = {}
    for job in plan(config, records, slices=False):
        s = job.setting
        shapes.setdefault((s.layers, s.heads, s.d_model), []).append(job)
    rows = []
    for shape, jobs in sorted(shapes.items(), key=lambda kv: shape_cost(kv[0])):
        jobs.sort(key=lambda j: (j.setting.step_cap(config["steps"]), j.name))
        steps = [j.setting.step_cap(config["steps"]) for j in jobs]
        # FLOPs per step of each job (its task's lengths in it); a group pads to its longest
        flops = [job_flops(to_engine_job(j, config)) for j in jobs]
        n = planner.largest(shape, steps, usable_s, len(jobs), flops=max(flops))
        size = max(n, 1)
        seconds = sum(planner.seconds(shape, len(steps[k:k + size]), max(steps[k:k + size]),
                                      flops=max(flops[k:k + size]))
                      for k in range(0, len(jobs), size))
        too_long = [j.name for j, st, f in zip(jobs, steps, flops)
                    if planner.seconds(shape, 1, st, flops=f) > usable_s]
        rows.append({"shape": list(shape), "jobs": len(jobs), "steps": sorted(set(steps)),
                     "group": n, "minutes": round(seconds / 60, 1), "too_long": too_long})
    return rows




def card_groups(records: dict, config: dict, card: str) -> list[dict]:
    """The stacked groups the sweep trained on `card` (records naming that `gpu_model`), each
    as the card timed it: its setting's shape, group size, the longest member's steps, the
    group's wall time (evaluations, its start and the other workers on the card included),
    whether CUDA graphs ran, and the FLOPs of its largest step (a group pads to its longest
    member). What the estimates are checked against (benchmarks/check_cost.py,
    tests/test_slice_rates.py)."""
    from lengthgen.runs.cost import job_flops
    from lengthgen.experiments.huang.sweep import protocol
    groups: dict = {}
    for record in records.values():
        m, p = record["metrics"], record["params"]
        if record.get("gpu_model") != card or not m.get("group_size"):
            continue
        key = (tuple(m["setting"][:3]), m["group_size"], m["train_wall_time_s"],
               bool(m.get("cuda_graphs")))
        job = protocol.job_for(p["task"], p["encoding"], m["setting"], p["seed"], config)
        groups.setdefault(key, []).append((job, m["steps"]))
    return [{"shape": shape, "size": size, "steps": max(s for _, s in members),
             "seconds": wall, "graphs": graphs, "flops": max(job_flops(j) for j, _ in members)}
            for (shape, size, wall, graphs), members in sorted(groups.items())]
