"""Bob against the forward pass, for every program of the C-RASP library (the communication
chapter's check of `lengthgen.theory.protocol`; not a figure of the paper).

For each compiled program, inputs of several lengths are cut at the first position, the middle
and the end; Bob rebuilds every activation of his half from Alice's message and his own tokens
(`analysis.agreement`), and the largest distance from the model's own forward pass is kept. The
records keep one row per program, so the chapter is built from them instead of playing the
protocol at every build.

Feeds: book/communication.ipynb, {numref}`tab-comm-agreement`
"""
import matplotlib.pyplot as plt

from lengthgen.config import one_thread
from lengthgen.crasp import library
from lengthgen.experiments.huang.comm.analysis import agreement

FIGURE_ID = "comm-agreement"
TITLE = "Bob's activations against the forward pass, for every compiled C-RASP program"

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


_EPSILON = 2.0 ** -52   # float64's machine epsilon: the scale of one rounding step near 1


def data(records: list[dict]) -> list[dict]:
    """One row per program: its fragment, how many (input, cut) pairs were played, the lengths,
    and the largest |Bob - forward pass| at any activation, also in units of float64's epsilon
    (what the figure draws)."""
    rows = []
    for r in sorted(records, key=lambda r: r["run_name"]):
        m = r["metrics"]
        error = m["max_error"]
        rows.append({"program": m["program"], "fragment": m["fragment"], "runs": m["runs"],
                     "lengths": m["lengths"], "max_error": error,
                     "max_error_epsilons": round(error / _EPSILON, 2)})
    return rows


def figure(records: list[dict]):
    rows = data(records)
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.22 * len(rows)))
    ax.scatter([r["max_error_epsilons"] for r in rows], range(len(rows)), color="#4c72b0",
               zorder=3)
    ax.set_yticks(range(len(rows)), [r["program"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(left=-0.3)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("largest |Bob - forward pass| over every activation, in units of float64's "
                  "epsilon (2.2e-16)", fontsize=8)
    ax.set_title("Bob rebuilds the forward pass up to a few rounding steps", fontsize=10)
    fig.tight_layout()
    return fig
