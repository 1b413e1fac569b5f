"""Huang et al. (2025), Fig. 1 (left): APE and NoPE decoders on the 8 algorithmic tasks.

Each task is <bos> input <sep> answer <eos>, with the loss on the answer; a sequence counts
only if every answer token is right (teacher forcing). Training on Len up to 50 (from 3 for
the interleaved majority, 4 for addition), testing on the bins up to 100 and 150. The search
and seeds are described in huang.sweep.protocol.

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-algorithmic`
"""
from lengthgen.experiments.huang.sweep import analysis, drawing, protocol
# the contract's runs and run_one: the sweep's, shared by both halves of Fig. 1
from lengthgen.experiments.huang.sweep.protocol import (cell_runs as runs, run_one,  # noqa: F401
                                                        trainings)
from lengthgen.tasks.metadata import ALGORITHMIC

FIGURE_ID = "huang-fig1-algorithmic"
TITLE = "APE vs NoPE on 8 algorithmic tasks: accuracy per test bin against C-RASP's prediction"
PAPER_SCALE = protocol.PAPER_SCALE

_TASKS = [row.id for row in ALGORITHMIC]

CONFIGS = protocol.configs(_TASKS, test_tasks=["binary_majority"])
check_record = protocol.scores_problem   # every training scored on the task's bins


# the figure for the column, and the one for a phone (the tasks down the side)
figure, phone_figure = drawing.fig1_figures("Algorithmic tasks (Huang et al. 2025, Fig. 1)")


def data(records):
    return analysis.tidy(analysis.table(records))
