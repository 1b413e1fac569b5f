"""Izzo et al. (2026), Figure 1: SimpleTask, f = sin(omega (c0 - c1) / (c0 + c1)).

Panels (izzo_common.curves_figure): test loss against test length per train length N (at the
largest omega): the curves flatten (plateau) instead of growing; the plateau against N and
against N / omega per omega: it falls as N grows; the smallest N whose plateau is below eps =
1e-2 (and eps / 10), interpolated between grid points, against omega: the paper finds it grows
linearly, reading omega as a proxy for the norm L (its text says L = Theta(omega) for the
construction; for our hand-built MLP, izzo_bound.simple_task_model, L grows faster).
Every run trains to the paper's stop rule (loss < 1e-5) with the paper's logit scaling (no
local term here, so no scaling at all). Book scale: 3 seeds instead of 8, batch 256 instead of
1024, omegas 1, 2, 4, test lengths up to 512.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked limit-style jobs (lengthgen.engine.stacked_limit), each scored as `run_one`
scores its model.

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-fig1-simpletask`
"""
from lengthgen.experiments.izzo.analysis import curve_rows
from lengthgen.experiments.izzo.drawing import curves_figure
from lengthgen.experiments.izzo.protocol import (PAPER_PROTOCOL, PAPER_SCALE,  # noqa: F401
                                                 job, planned_hooks)
from lengthgen.runs.planned import Run as spec, plan_runs  # noqa: F401
from lengthgen.tasks.izzo import SimpleTask

FIGURE_ID = "izzo-fig1-simpletask"
TITLE = "SimpleTask: test loss plateaus; the plateau falls with train length; N grows with omega"

_TESTS = [8, 16, 32, 64, 128, 256, 512]
CONFIGS = {
    "test": {**PAPER_PROTOCOL, "batch_size": 64, "max_steps": 20, "eval_every": 10,
             "eval_samples": 64, "test_samples": 64, "omegas": [1.0, 2.0],
             "train_lengths": [4, 8], "seeds": [0, 1], "test_lengths": [8, 16], "eps": 1e-2},
    "book": {**PAPER_PROTOCOL, "batch_size": 256, "max_steps": 3000, "eval_every": 100,
             "eval_samples": 512, "test_samples": 512, "omegas": [1.0, 2.0, 4.0],
             "train_lengths": [2, 3, 4, 6, 8, 12, 16], "seeds": [0, 1, 2],
             "test_lengths": _TESTS, "eps": 1e-2},
    "paper": {**PAPER_PROTOCOL, "omegas": [1.0, 2.0, 4.0, 8.0],
              "train_lengths": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64], "seeds": list(range(8)),
              "test_lengths": _TESTS + [1024], "eps": 1e-2},
}


def runs(config):
    return [{"name": f"w{omega:g}-N{n}-s{seed}", "task": f"izzo_simple_w{omega:g}",
             "omega": omega, "train_length": n, "seed": seed}
            for omega in config["omegas"] for n in config["train_lengths"]
            for seed in config["seeds"]]


def _job(params, config):
    """One run as the engine's Job (izzo.protocol.job): no positional encoding."""
    task = SimpleTask(params["omega"], train_max=params["train_length"])
    return job(task, config, params["seed"], params["train_length"], pe="nope")


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
# record measured as `run_one`'s is (protocol.planned_hooks)
plan = plan_runs(runs)
engine_job, score, run_one = planned_hooks(_job)


def data(records):
    """One row per (omega, train length, test length); see izzo_common.curve_rows."""
    return curve_rows(records, "omega")


def figure(records):
    return curves_figure(records, "omega", "omega", "SimpleTask")


def trainings(config):
    """For `figure cost`: one training per run (izzo.protocol.trainings)."""
    from lengthgen.experiments.izzo import protocol
    return protocol.trainings(runs(config), config, _job)
