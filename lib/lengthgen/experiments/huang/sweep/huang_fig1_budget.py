"""Huang et al. (2025), Fig. 1 at the paper's step budget: the APE vs NoPE sweep trained by the
engine on a GPU, in slices (the protocol: huang.sweep.budget).

A planned figure (lengthgen.runs.planned): its plan reads the records of the jobs done so far
(each training of a task, encoding, setting and seed is one record), selects each cell's
setting from its seed-0 trainings and then calls for that setting's seeds, so a slice of
minutes ends wherever its deadline falls and the next one plans what is left. Its scales are
"test" (a toy of the same code path, on a CPU) and "gpu" (the protocol: records in
results/huang-fig1-budget/gpu/). The chapter's paper-budget tables read its cells
(`budget.cell_records`); the figure draws the cells complete so far as Fig. 1 is drawn. The
12-layer setting's jobs, which no slice can train, are `deferred`: left, so the sweep is not
complete while any is (its folder keeps its SWEEP_IN_PROGRESS marker).

Feeds: book/ape_vs_nope.ipynb, {numref}`tab-huang-budget`
"""
from lengthgen.experiments.huang.sweep import analysis, budget, drawing, protocol
from lengthgen.experiments.huang.sweep.budget import deferred, plan, score, spec  # noqa: F401

FIGURE_ID = "huang-fig1-budget"
TITLE = ("APE vs NoPE on Fig. 1's 25 tasks at the paper's step budget, trained on a GPU in "
         "slices: the cells complete so far")
CONFIGS = budget.budget_configs()
CONFIG_KEYS = ("sampler",)   # read by the slices (runs.planned): where batches are made
QUEUE_FIRST = True   # a GPU queue runs this sweep before any other planned figure
check_record = protocol.scores_problem   # every job scored on its task's bins


def engine_job(job, config):
    return budget.to_engine_job(job, config)


def _cells(records: list[dict]) -> list[dict]:
    """The complete cells of the job records, as the book sweep's cell records."""
    if not records:
        return []
    config = records[0]["config"]
    return budget.cell_records({r["run_name"]: r for r in records}, config)


_figure, _phone = drawing.fig1_figures("Fig. 1 at the paper's budget (GPU; complete cells)")


def figure(records):
    return _figure(_cells(records))


def phone_figure(records):
    return _phone(_cells(records))


def data(records):
    """One row per (complete cell, seed, bin), as Fig. 1's `figure data`."""
    return analysis.tidy(analysis.table(_cells(records)))
