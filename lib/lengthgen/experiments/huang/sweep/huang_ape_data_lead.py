"""The third lead on the APE cells that fit and then fail: the authors' finite training set.

`huang-ape-leads` tested two ways the book's training differs from the authors' code on D_3,
D_4 and (aa)* with APE (their position offsets; D_n words that reach depth n), with 3 seeds;
neither separated from the book's protocol. A third difference is the data regime: the paper's
text, and the book, draw fresh batches at every step, while the authors' language code trains
on a dataset of 10,000 strings drawn once, by epochs (the chapter's protocol table).

This study trains the same cells, at the settings the book sweep selected, with that one
change (`tasks.fixed.FixedTrainingSet`: 10,000 strings of the task's own law, Len 1-50, drawn
once per seed, served in a new order every epoch, batch 64 as before; the evaluation sets stay
fresh strings), beside the unchanged protocol, with 5 seeds. The two earlier leads closest to
separating (D_4 trained on full-depth words, (aa)* with the authors' offsets) run to 5 seeds
here too. A change counts only where the seeds' ranges separate (`huang_ape_leads.verdicts`).

(aaaa)* and (abab)* also fit and then fail with APE, at 4 layers: each of their trainings
costs about ten times a 1-layer one on a CPU, so they are left to the paper-scale config.

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-data-lead`
"""
from lengthgen.experiments.huang.sweep import leads
from lengthgen.experiments.huang.sweep.leads import data, figure, score  # noqa: F401
from lengthgen.runs.planned import Run as spec, plan_runs
from lengthgen.tasks.fixed import AUTHORS_SIZE

FIGURE_ID = "huang-ape-data-lead"
TITLE = ("APE cells that fit and then fail: the authors' fixed training set by epochs, "
         "5 seeds")
PAPER_SCALE = ("No paper counterpart: a study of this book. Its paper config is the book's "
               "at the paper's 30,000-step budget, adding (aaaa)* and (abab)* at their 4-layer "
               "settings; the fixed set has the authors' 10,000 strings.")
SPREAD_BY = ("task", "variant")

# cell: (the setting the book sweep selected, the variants trained)
_CELLS = {"d3": [[1, 4, 128, 1e-4], ["book", "fixed_data"]],
          "d4": [[1, 4, 128, 1e-4], ["book", "fixed_data", "full_depth"]],
          "aa_star": [[1, 4, 128, 1e-4], ["book", "fixed_data", "half_offsets"]]}
_WIDER = {**_CELLS, "aaaa_star": [[4, 4, 128, 1e-4], ["book", "fixed_data"]],
          "abab_star": [[4, 4, 128, 1e-4], ["book", "fixed_data"]]}


CONFIGS = {
    "test": {"sweep": leads.sweep_config("test"), "fixed_size": 200, "seeds": [0],
             "cells": {"d3": [[1, 1, 16, 1e-2], ["book", "fixed_data"]],
                       "aa_star": [[1, 1, 16, 1e-2], ["book", "fixed_data"]]}},
    "book": {"sweep": leads.sweep_config("book"), "fixed_size": AUTHORS_SIZE,
             "seeds": [0, 1, 2, 3, 4], "cells": _CELLS},
    "paper": {"sweep": {**leads.sweep_config("book"), "steps": 30000},
              "fixed_size": AUTHORS_SIZE, "seeds": [0, 1, 2, 3, 4], "cells": _WIDER},
}


def runs(config):
    """Seed by seed (a sweep cut short has every variant of its first seeds), the changed
    trainings before the unchanged one."""
    return [{"name": f"{task}__{variant}__s{seed}", "task": task, "variant": variant,
             "setting": setting, "seed": seed}
            for seed in config["seeds"] for task, (setting, names) in config["cells"].items()
            for variant in sorted(names, key=lambda v: v == "book")]


def run_one(params, config, device):
    return leads.run_one(params, config, device)


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def engine_job(job, config):
    return leads.engine_job(job.params(), config)


def trainings(config):
    """The runs' trainings, for `figure cost` (leads.trainings)."""
    return leads.trainings(runs(config), config)
