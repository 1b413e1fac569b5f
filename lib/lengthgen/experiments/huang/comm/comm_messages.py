"""How many different messages Alice actually sends, over all her halves (the communication
chapter's count; not a figure of the paper).

For a compiled C-RASP program and a half length m, every string of m symbols Alice could hold is
played through the protocol at input length 2m + 1 (`analysis.message_counts`): the number of
different messages is what the model can tell apart at the cut, to set against the distinct
rows of a problem's communication matrix. One run per program; the records keep the counts, so
the chapter is built from them instead of playing thousands of protocols at every build.

Feeds: book/communication.ipynb, {numref}`tab-comm-messages`
"""
import matplotlib.pyplot as plt

from lengthgen.config import one_thread
from lengthgen.experiments.huang.comm.analysis import in_config_order, message_counts

FIGURE_ID = "comm-messages"
TITLE = "How many different messages Alice sends over all her halves, per compiled program"

_PROGRAMS = ["majority_ab", "dyck1", "tomita4", "abab_star"]
CONFIGS = {
    "test": {"programs": _PROGRAMS, "m": 6},
    "book": {"programs": _PROGRAMS, "m": 10},
    "paper": {"programs": _PROGRAMS, "m": 12},
}


def runs(config: dict) -> list[dict]:
    return [{"name": name, "program": name} for name in config["programs"]]


def run_one(params: dict, config: dict, device) -> dict:
    with one_thread():
        (row,) = message_counts([params["program"]], config["m"])
    return {"m": config["m"], "halves": row["Alice's halves"],
            "messages": row["different messages"]}


def data(records: list[dict]) -> list[dict]:
    """One row per program, in the config's order: the half length, how many halves Alice can
    hold and how many different messages she sends for them."""
    return [{"program": r["run_name"], "m": r["metrics"]["m"], "halves": r["metrics"]["halves"],
             "messages": r["metrics"]["messages"]}
            for r in in_config_order(records, "programs")]


def figure(records: list[dict]):
    rows = data(records)
    fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.45 * len(rows)))
    ax.barh(range(len(rows)), [r["halves"] for r in rows], color="#c6dbef",
            label="halves Alice can hold")
    ax.barh(range(len(rows)), [r["messages"] for r in rows], color="#2171b5",
            label="different messages")
    ax.set_yticks(range(len(rows)), [r["program"] for r in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(f"count (halves of m = {rows[0]['m']} symbols)" if rows else "count")
    ax.set_title("Alice's messages against her possible halves", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
