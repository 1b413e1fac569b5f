"""Huang et al. (2025), Fig. 1 (right): APE and NoPE decoders on the 17 regular languages.

Each language is a next-symbol-set prediction task (one class per set of legal next symbols);
a sequence counts only if every position is right. Training on Len 1..50, testing on the bins
[1,50], [51,100], [101,150]. The search and seeds are described in huang.sweep.protocol.

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-languages`
"""
from lengthgen.experiments.huang.sweep import analysis, drawing, protocol
# the contract's runs and run_one: the sweep's, shared by both halves of Fig. 1
from lengthgen.experiments.huang.sweep.protocol import (cell_runs as runs, run_one,  # noqa: F401
                                                        trainings)
from lengthgen.tasks.metadata import LANGUAGES

FIGURE_ID = "huang-fig1-languages"
TITLE = "APE vs NoPE on 17 regular languages: accuracy per test bin against C-RASP's prediction"
PAPER_SCALE = protocol.PAPER_SCALE

_TASKS = [row.id for row in LANGUAGES if row.number is not None]  # the 17 of Table 2

CONFIGS = protocol.configs(_TASKS, test_tasks=["tomita2", "aa_star"])
check_record = protocol.scores_problem   # every training scored on the task's bins

# the figure for the column, and the one for a phone (the tasks down the side)
figure, phone_figure = drawing.fig1_figures("Regular languages (Huang et al. 2025, Fig. 1)",
                                            guide=drawing.LANGUAGES_GUIDE)


def data(records):
    return analysis.tidy(analysis.table(records))
