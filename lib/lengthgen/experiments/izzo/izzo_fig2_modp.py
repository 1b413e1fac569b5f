"""Izzo et al. (2026), Figure 2: ModPTask, f = mean of x_t over positions t = k mod p.

Panels (izzo_common.curves_figure): test loss against test length per train length N (at the
largest p), the plateau against N and against N / p per period, and the smallest N whose
plateau is below eps (and eps / 10), interpolated between grid points, against p: the paper
finds it grows linearly in the period Delta = p, as Theorem 4.1's tau Delta L^2 / eps^2 term
says. The train lengths are the multiples N / p in `n_over_p` of each period, so every period
is read at the same relative lengths. Every run trains to the paper's stop rule (loss < 1e-5)
with the paper's logit scaling; `compare_all` adds runs with every logit scaled by log i (the
Limit Transformer's scaling), drawn by `drawing.scaling_figure`.

The model's positional table has period p (the Delta = p of the paper's construction; the paper
does not say which encoding it trained). Book scale: 3 seeds instead of 8, batch 256 instead of
1024 (at p = 4, N = 16 a probe run stopped at the same test loss with either), test lengths up
to 512.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked limit-style jobs (lengthgen.engine.stacked_limit), each scored as `run_one`
scores its model.

Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-fig2-modp`
"""
from lengthgen.experiments.izzo.analysis import curve_rows
from lengthgen.experiments.izzo.drawing import curves_figure
from lengthgen.experiments.izzo.protocol import (PAPER_PROTOCOL, PAPER_SCALE,  # noqa: F401
                                                 job, planned_hooks)
from lengthgen.experiments.izzo.rows import modp_train_length as _length  # N = N/p * p
from lengthgen.runs.planned import Run as spec, plan_runs  # noqa: F401
from lengthgen.tasks.izzo import ModPTask

FIGURE_ID = "izzo-fig2-modp"
TITLE = "ModPTask: test loss plateaus; the plateau falls with train length; N grows with p"

_TESTS = [8, 16, 32, 64, 128, 256, 512]
_GRID = [1.5, 2, 3, 4, 6, 8]
CONFIGS = {
    "test": {**PAPER_PROTOCOL, "batch_size": 64, "max_steps": 20, "eval_every": 10,
             "eval_samples": 64, "test_samples": 64, "periods": [2, 4],
             "n_over_p": [2, 4], "seeds": [0, 1], "test_lengths": [8, 16], "eps": 1e-2,
             "compare_all": {"period": 2, "n_over_p": [2]}},
    "book": {**PAPER_PROTOCOL, "batch_size": 256, "max_steps": 3000, "eval_every": 100,
             "eval_samples": 512, "test_samples": 512, "periods": [2, 4, 8],
             "n_over_p": _GRID, "seeds": [0, 1, 2], "test_lengths": _TESTS, "eps": 1e-2,
             "compare_all": {"period": 4, "n_over_p": [2, 8]}},
    "paper": {**PAPER_PROTOCOL, "periods": [2, 4, 6, 8], "n_over_p": _GRID,
              "seeds": list(range(8)), "test_lengths": _TESTS + [1024], "eps": 1e-2,
              "compare_all": {"period": 4, "n_over_p": _GRID}},
}


def runs(config):
    out = [{"name": f"p{p}-N{_length(p, r)}-s{seed}", "task": f"izzo_modp_p{p}_k0",
            "period": p, "train_length": _length(p, r), "seed": seed}
           for p in config["periods"] for r in config["n_over_p"] for seed in config["seeds"]]
    extra = config.get("compare_all")
    if extra:
        p = extra["period"]
        out += [{"name": f"all-p{p}-N{_length(p, r)}-s{seed}", "task": f"izzo_modp_p{p}_k0",
                 "period": p, "train_length": _length(p, r), "seed": seed,
                 "logit_scaling": "all"}
                for r in extra["n_over_p"] for seed in config["seeds"]]
    return out


def _job(params, config):
    """One run as the engine's Job (izzo.protocol.job): a positional table of period p, and
    the run's own logit scaling where it has one."""
    task = ModPTask(params["period"], 0, train_max=params["train_length"])
    scaling = params.get("logit_scaling", config["logit_scaling"])
    return job(task, config, params["seed"], params["train_length"], pe="periodic",
               period=params["period"], logit_scaling=scaling)


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
# record measured as `run_one`'s is (protocol.planned_hooks)
plan = plan_runs(runs)
engine_job, score, run_one = planned_hooks(_job)


def data(records):
    """One row per (p, train length, test length) of the paper's scaling (see
    izzo_common.curve_rows); the comparison runs of the other scaling are in scaling_rows."""
    return curve_rows(records, "period")


def figure(records):
    return curves_figure(records, "period", "Δ", "ModPTask")


def trainings(config):
    """For `figure cost`: one training per run (izzo.protocol.trainings)."""
    from lengthgen.experiments.izzo import protocol
    return protocol.trainings(runs(config), config, _job)
