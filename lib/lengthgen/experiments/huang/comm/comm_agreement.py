"""Bob against the forward pass, for every program of the C-RASP library (the communication
chapter's check of `lengthgen.theory.protocol`; not a figure of the paper).

For each compiled program, inputs of several lengths are cut at the first position, the middle
and the end; Bob rebuilds every activation of his half from Alice's message and his own tokens
(`analysis.agreement`), and the largest distance from the model's own forward pass is kept. The
records keep one row per program, so the chapter is built from them instead of playing the
protocol at every build.
"""
import matplotlib.pyplot as plt

from lengthgen.config import one_thread
from lengthgen.crasp import library
from lengthgen.experiments.huang.comm.analysis import agreement

FIGURE_ID = "comm-agreement"
TITLE = "Bob's activations against the forward pass, for every compiled C-RASP program"
ERROR_COLUMN = "max |Bob - forward|"

CONFIGS = {
    "test": {"programs": ["majority_ab", "dyck1", "tomita4", "binary_majority_interleave"],
             "ns": [1, 7, 40], "inputs": 2, "seed": 0},
    "book": {"programs": "all", "ns": [1, 2, 7, 40, 150, 400], "inputs": 3, "seed": 0},
    "paper": {"programs": "all", "ns": [1, 2, 7, 40, 150, 400, 1000], "inputs": 5, "seed": 0},
}


def runs(config: dict) -> list[dict]:
    names = library.program_names() if config["programs"] == "all" else config["programs"]
    return [{"name": name, "program": name, "seed": config["seed"]} for name in names]


def run_one(params: dict, config: dict, device) -> dict:
    with one_thread():
        (row,) = agreement([params["program"]], config["ns"], inputs=config["inputs"],
                           seed=params["seed"])
    return row


def data(records: list[dict]) -> list[dict]:
    """One row per program: its fragment, how many (input, cut) pairs were played, the lengths,
    and the largest |Bob - forward pass| at any activation."""
    return [r["metrics"] for r in sorted(records, key=lambda r: r["run_name"])]


def figure(records: list[dict]):
    rows = data(records)
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.22 * len(rows)))
    errors = [max(float(r[ERROR_COLUMN]), 1e-18) for r in rows]
    ax.barh(range(len(rows)), errors, color="#4c72b0")
    ax.set_yticks(range(len(rows)), [r["program"] for r in rows], fontsize=8)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("largest |Bob - forward pass| over every activation (log scale)")
    ax.set_title("Bob rebuilds the forward pass up to float rounding", fontsize=10)
    fig.tight_layout()
    return fig
