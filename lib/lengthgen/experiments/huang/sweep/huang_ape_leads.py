"""Two leads on the APE cells of Huang et al.'s Fig. 1 that fit and then fail, tested.

In the CPU book sweep (huang-fig1-languages) some APE cells reach 100% in distribution at the
first evaluation and then fall on Len 101-150 where C-RASP predicts success: D_3, D_4 and
(aa)* among them. A longer budget cannot change them (they stop at the first evaluation), so
the chapter's protocol table names two ways the book's setup differs from the authors' code
there. This study trains each such cell's own selected setting once more, changing one thing:

* "half_offsets": the authors' language code's APE offsets, a shift uniform in [0, n/2)
  whatever the sequence's length, in a position table of n = twice the longest test input
  (TrainConfig.ape_offsets = "half"), where the book shifts by a uniform amount in
  [0, table - length] with a table just long enough for the longest test input;
* "full_depth" (D_n only): training words drawn only among those that reach depth n
  (tasks.languages.FullDepthDyck); the authors' nested generator makes nearly every word reach
  it, the book's law does not (analysis.full_depth_share);
* "book": nothing changed, trained by the same code as the two others, so the three are
  compared like with like. The sweep's own records need not match it: they came from another
  CPU model, whose kernels round differently, and 3,000 steps turn that into another
  trajectory, as a change of seed would (D_3 seed 0: 97.4% on Len 101-150 in the sweep, on an
  AMD EPYC; 92.2% here, on an Intel Xeon; the code gives the same weights after 20 steps at
  the sweep's commit and now). tests/test_huang_ape_leads.py compares them only where the CPU
  models match (none do yet).

Everything else is the sweep's book protocol (protocol.job_for: the same decoder, tying,
schedule, 6,000-step cap, evaluation every 3,000 steps, stop at 100%, scoring on the three bins
with the same test sets). The cells and settings are those the book sweep selected.

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-leads`
"""
from lengthgen.experiments.huang.sweep import leads, protocol
from lengthgen.experiments.huang.sweep.leads import data, figure, run_one, score  # noqa: F401
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "huang-ape-leads"
TITLE = "APE cells that fit and then fail: the authors' offsets and full-depth D_n words"
PAPER_SCALE = ("No paper counterpart: a study of this book. Its paper config is the book's "
               "(the cells' selected settings, the sweep's training) at the paper's 30,000-step "
               "budget, with 5 seeds.")


check_record = protocol.scores_problem   # each record is one training, scored on its bins

# The settings the book sweep selected for these cells (checked against its records by test).
_BOOK_CELLS = {"d3": [1, 4, 128, 1e-4], "d4": [1, 4, 128, 1e-4], "aa_star": [1, 4, 128, 1e-4]}
CONFIGS = {
    "test": {"sweep": leads.sweep_config("test"), "cells": {"d3": [1, 1, 16, 1e-2],
                                                      "aa_star": [1, 1, 16, 1e-2]},
             "seeds": [0], "variants": list(leads.VARIANTS)},
    "book": {"sweep": leads.sweep_config("book"), "cells": _BOOK_CELLS, "seeds": [0, 1, 2],
             "variants": list(leads.VARIANTS)},
    "paper": {"sweep": {**leads.sweep_config("book"), "steps": 30000}, "cells": _BOOK_CELLS,
              "seeds": [0, 1, 2, 3, 4], "variants": list(leads.VARIANTS)},
}


def runs(config):
    """Seed by seed (a sweep cut short has every variant of its first seeds), the changed
    trainings before the unchanged one."""
    order = sorted(config["variants"], key=lambda v: v == "book")
    return [{"name": f"{task}__{variant}__s{seed}", "task": task, "variant": variant,
             "setting": setting, "seed": seed}
            for seed in config["seeds"] for task, setting in config["cells"].items()
            for variant in order if leads.applies(task, variant)]


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def engine_job(job, config):
    return leads.engine_job(job.params(), config)


def trainings(config):
    """The runs' trainings, for `figure cost` (leads.trainings)."""
    return leads.trainings(runs(config), config)
