"""Huang et al. (2025), Table 2, regenerated: which of the 17 regular languages (and PARITY)
lie in C-RASP[] and in C-RASP[periodic,local].

Every "yes" is a program of the library, run and checked here against the language's DFA on
every string up to length 10 (test scale: 6) and on random members and non-members; every "no"
names the result that proves it (crasp.lemmas). Each cell is compared with the paper's entry (tasks.metadata) and
a disagreement is flagged in the record and in red in the table.

Feeds: book/crasp.ipynb, {numref}`tab-crasp-languages`
"""
from lengthgen.experiments.huang.crasp.expressiveness import (LANGUAGE_COLUMNS, cell_rows,
                                                              cells_of, regenerated_figure)
from lengthgen.tasks.metadata import info, language_ids

FIGURE_ID = "huang-table2-languages"
TITLE = "Table 2: C-RASP expressiveness of the regular languages, every yes checked by running"

CONFIGS = {
    "test": {"max_length": 6, "n_random": 60, "max_random_length": 40},
    "book": {"max_length": 10, "n_random": 2000, "max_random_length": 300, "exhaustive_cap": None},
    "paper": {"max_length": 12, "n_random": 20000, "max_random_length": 1000,
              "exhaustive_cap": None},
}


def runs(config):
    return [{"name": task_id, "task": task_id} for task_id in language_ids()]


def run_one(params, config, device):
    meta = info(params["task"])
    return {"name": meta.name, "number": meta.number, "cells": cells_of(meta.id, config),
            "star_free": meta.star_free, "dot_depth": meta.dot_depth, "ac0": meta.ac0}


def data(records: list[dict]) -> list[dict]:
    """One row per task and column of the table: our entry, the paper's, whether they agree,
    and what backs ours (the checked program and how many strings it was run on, or the
    proof)."""
    return cell_rows(records)


def figure(records):
    return regenerated_figure(records, LANGUAGE_COLUMNS, "Table 2", "the language's DFA")
