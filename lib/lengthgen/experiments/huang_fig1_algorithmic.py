"""Huang et al. (2025), Fig. 1 (left): APE and NoPE decoders on the 8 algorithmic tasks.

Each task is <bos> input <sep> answer <eos>, with the loss on the answer; a sequence counts
only if every answer token is right (teacher forcing). Training on Len up to 50 (from 3 for
the interleaved majority, 4 for addition), testing on the bins up to 100 and 150. The search
and seeds are described in huang_sweep.
"""
from lengthgen.experiments import huang_sweep as sweep
from lengthgen.experiments.huang_sweep import cell_runs, run_one  # noqa: F401  (the contract)
from lengthgen.tasks.metadata import ALGORITHMIC

FIGURE_ID = "huang-fig1-algorithmic"
TITLE = "APE vs NoPE on 8 algorithmic tasks: accuracy per test bin against C-RASP's prediction"

TASKS = [row.id for row in ALGORITHMIC]

BOOK = {"tasks": TASKS, "selection": "first_fit", "search": [[1, 1, 16, 1e-3], [2, 2, 64, 1e-3]],
        "steps": 2000, "batch_size": 64, "weight_decay": 0.01, "schedule": "linear",
        "eval_every": 200, "eval_samples": 512, "seeds": 3, "max_seed_attempts": 3,
        "samples_per_bin": 2000, "heldout_bin": "51-100", "extra": None,
        "baseline": {"steps": 1000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
PAPER = {**BOOK, "selection": "best_heldout", "search": sweep.paper_grid(), "steps": 30000,
         "eval_every": 500, "eval_samples": 2000, "seeds": 5, "max_seed_attempts": 20,
         "extra": [12, 12, 768, 1e-4, 60000, 3000],
         "baseline": {"steps": 30000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
TEST = {**BOOK, "tasks": ["binary_majority"], "search": [[1, 1, 16, 1e-2]], "steps": 30,
        "eval_every": 10, "eval_samples": 32, "seeds": 2, "max_seed_attempts": 2,
        "samples_per_bin": 32, "baseline": {"steps": 10, "lr": 1e-3, "d_model": 16,
                                            "hidden": 32}}
CONFIGS = {"test": TEST, "book": BOOK, "paper": PAPER}


def runs(config):
    return cell_runs(config)


def figure(records):
    return sweep.draw_fig1(sweep.table(records), "Algorithmic tasks (Huang et al. 2025, Fig. 1)")


def data(records):
    return sweep.tidy(sweep.table(records))
