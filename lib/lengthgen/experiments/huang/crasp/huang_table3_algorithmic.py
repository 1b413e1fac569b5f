"""Huang et al. (2025), App. E.2.2 (Table 3), regenerated: which of the 8 algorithmic tasks have
C-RASP[] and C-RASP[periodic,local] programs.

Every "yes" is a next-token program of the library checked against the task's solver on random
inputs at lengths up to the longest test length; every "no" names its proof. Cells are compared
with the paper's entries (tasks.metadata).

Feeds: book/crasp.ipynb, {numref}`tab-crasp-algorithmic`
"""
from lengthgen.experiments.huang.crasp.expressiveness import (ALGORITHMIC_COLUMNS, cell_rows,
                                                              cells_of, regenerated_figure)
from lengthgen.tasks.metadata import algorithmic_ids, info

FIGURE_ID = "huang-table3-algorithmic"
TITLE = "Table 3: C-RASP expressiveness of the algorithmic tasks, every yes checked by running"

CONFIGS = {
    "test": {"max_length": 6, "n_random": 24, "max_random_length": 12, "n_lengths": 3},
    "book": {"max_length": 10, "n_random": 2000, "max_random_length": 150, "n_lengths": 40},
    "paper": {"max_length": 10, "n_random": 10000, "max_random_length": 150, "n_lengths": 150},
}


def runs(config):
    return [{"name": task_id, "task": task_id} for task_id in algorithmic_ids()]


def run_one(params, config, device):
    meta = info(params["task"])
    return {"name": meta.name, "number": None, "cells": cells_of(meta.id, config), "ac0": meta.ac0}


def figure(records):
    return regenerated_figure(records, ALGORITHMIC_COLUMNS, "Table 3", "the task's solver")


def data(records: list[dict]) -> list[dict]:
    """One row per task and column of the table (as for Table 2)."""
    return [{k: v for k, v in row.items() if k not in ("star_free", "dot_depth")}
            for row in cell_rows(records)]
