"""Huang et al. (2025), Fig. 1 (right): APE and NoPE decoders on the 17 regular languages.

Each language is a next-symbol-set prediction task (one class per set of legal next symbols);
a sequence counts only if every position is right. Training on Len 1..50, testing on the bins
[1,50], [51,100], [101,150]. The search and seeds are described in huang_sweep.
"""
from lengthgen.experiments import huang_sweep as sweep
from lengthgen.experiments.huang_sweep import cell_runs, run_one  # noqa: F401  (the contract)
from lengthgen.tasks.metadata import LANGUAGES

FIGURE_ID = "huang-fig1-languages"
TITLE = "APE vs NoPE on 17 regular languages: accuracy per test bin against C-RASP's prediction"

TASKS = [row.id for row in LANGUAGES if row.number is not None]  # the 17 of Table 2

BOOK = {"tasks": TASKS, "selection": "first_fit", "search": [[1, 1, 16, 1e-3], [2, 2, 64, 1e-3]],
        "steps": 2000, "batch_size": 64, "weight_decay": 0.01, "schedule": "linear",
        "eval_every": 200, "eval_samples": 512, "seeds": 3, "max_seed_attempts": 3,
        "samples_per_bin": 2000, "heldout_bin": "51-100", "extra": None,
        "baseline": {"steps": 1000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
PAPER = {**BOOK, "selection": "best_heldout", "search": sweep.paper_grid(), "steps": 30000,
         "eval_every": 500, "eval_samples": 2000, "seeds": 5, "max_seed_attempts": 20,
         "extra": [12, 12, 768, 1e-4, 60000, 3000],
         "baseline": {"steps": 30000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
TEST = {**BOOK, "tasks": ["tomita2", "aa_star"], "search": [[1, 1, 16, 1e-2]], "steps": 30,
        "eval_every": 10, "eval_samples": 32, "seeds": 2, "max_seed_attempts": 2,
        "samples_per_bin": 32, "baseline": {"steps": 10, "lr": 1e-3, "d_model": 16,
                                            "hidden": 32}}
CONFIGS = {"test": TEST, "book": BOOK, "paper": PAPER}


def runs(config):
    return cell_runs(config)


def figure(records):
    return sweep.draw_fig1(sweep.table(records), "Regular languages (Huang et al. 2025, Fig. 1)")


def data(records):
    return sweep.tidy(sweep.table(records))
