"""Communication matrices of the chapter's problems, built exhaustively (the communication
chapter's lower-bound study; not a figure of the paper).

For each problem (equality, copying, addition, Dyck, majority, parity, and the two halves-of-
quarters problems) and each half length m, the matrix of f(x y) over every pair of halves is
built and its rows, distinct rows, exact rank and the one-way bits they force are counted
(`theory.communication.summary`), with a fooling set where the problem has one. One run per
problem; the records keep the rows, so the chapter is built from them.

Feeds: book/communication.ipynb, {numref}`tab-comm-matrices`
"""
import matplotlib.pyplot as plt

from lengthgen.experiments.huang.comm.analysis import in_config_order
from lengthgen.theory.communication import summary

FIGURE_ID = "comm-matrices"
TITLE = "Communication matrices of the chapter's problems: distinct rows and one-way bits by m"

_PROBLEMS = ["equality", "copy", "addition", "dyck2", "majority_ab", "dyck1", "parity",
            "inner_equality", "inner_equality_early"]
CONFIGS = {
    "test": {"problems": _PROBLEMS, "ms": [2, 4, 6]},
    "book": {"problems": _PROBLEMS, "ms": [2, 4, 6, 8]},
    "paper": {"problems": _PROBLEMS, "ms": [2, 4, 6, 8]},
}


def runs(config: dict) -> list[dict]:
    return [{"name": name, "problem": name} for name in config["problems"]]


def run_one(params: dict, config: dict, device) -> dict:
    return {"rows": [summary(params["problem"], m) for m in config["ms"]]}


def data(records: list[dict]) -> list[dict]:
    """The rows of `theory.communication.summary`, in the config's order of problems, by m."""
    return [row for r in in_config_order(records, "problems") for row in r["metrics"]["rows"]]


def figure(records: list[dict]):
    rows = data(records)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for k, name in enumerate(dict.fromkeys(r["problem"] for r in rows)):
        mine = [r for r in rows if r["problem"] == name]
        ax.plot([r["m"] for r in mine], [r["one_way_bits"] for r in mine], marker="o",
                color=f"C{k % 10}", ls="-" if k < 10 else "--", label=name)
    ax.set_xlabel("symbols in each half, m")
    ax.set_ylabel("one-way bits, ⌈log₂ distinct rows⌉")
    ax.set_title("What the matrices force Alice to send", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig
