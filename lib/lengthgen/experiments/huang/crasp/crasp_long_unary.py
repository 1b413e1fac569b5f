"""Lemma 37 of Huang et al. (2025), on the program library: on a one-letter input a^n every
C-RASP[] program settles into a constant verdict once n is large enough, because each count is
then a fixed linear function of n and each comparison of such functions has a final sign.

Every library program is run on a^N for the first symbol a of its alphabet. C-RASP is causal,
so the value of an operation at position n is its value on the prefix a^n: one run gives every
length. We record, for the output and for all Boolean operations, the last n where a value still
changed. Programs with periodic relations ((aa)*, ...) never settle, which is why (aa)* needs
them (Lemma 38); local relations see only a bounded window, so they settle too.

Feeds: book/crasp.ipynb, {numref}`fig-crasp-unary`
"""
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.crasp import ir
from lengthgen.crasp.interpret import run_program
from lengthgen.crasp.library import get_program, program_names
from lengthgen.experiments.huang.crasp.rows import unary_data

FIGURE_ID = "crasp-long-unary"
TITLE = "Lemma 37: every C-RASP[] program is eventually constant on a^n (library programs)"

CONFIGS = {
    "test": {"n": 60, "programs": ["majority_ab", "dyck1", "tomita4", "aa_star", "abab_star",
                                   "binary_majority"]},
    "book": {"n": 1000, "programs": "all"},
    "paper": {"n": 10000, "programs": "all"},
}


def runs(config):
    names = program_names() if config["programs"] == "all" else config["programs"]
    return [{"name": name, "program": name} for name in names]


def _last_change(values: np.ndarray) -> int:
    """The last n at which values[n] != values[n - 1] (0 if it never changes)."""
    changes = np.flatnonzero(values[1:] != values[:-1])
    return int(changes[-1]) + 1 if changes.size else 0


def run_one(params, config, device):
    program = get_program(params["program"])
    symbol = program.alphabet[0]
    values = run_program(program, [symbol] * config["n"])
    bools = [name for name, op in program.ops.items() if ir.sort_of(op) is ir.Sort.BOOL]
    outputs = list(program.token_outputs.values()) or [program.output]
    return {"fragment": program.fragment(), "symbol": symbol, "n": config["n"],
            "outputs": {name: values[name].astype(int).tolist() for name in outputs},
            "last_change_output": max(_last_change(values[name]) for name in outputs),
            "last_change_any": max(_last_change(values[name]) for name in bools),
            "boolean_operations": len(bools)}


def data(records):
    """One row per program and n: the verdict of its output on a^n and the program's last
    change (`huang.crasp.rows.unary_data`, which the chapter's table reads too)."""
    return unary_data(records)


def figure(records):
    records = sorted(records, key=lambda r: (r["metrics"]["fragment"], r["run_name"]))
    n = records[0]["metrics"]["n"]
    shown = min(n, 80)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 1.2 + 0.3 * len(records)),
                                      gridspec_kw={"width_ratios": [3, 2]})
    raster = np.array([next(iter(r["metrics"]["outputs"].values()))[:shown + 1] for r in records])
    left.imshow(raster, aspect="auto", cmap="Greys", vmin=-0.3, vmax=1.3, interpolation="nearest")
    # the program's name, and its fragment where it has positions (C-RASP[] is the rest)
    labels = [r["run_name"] + ("" if r["metrics"]["fragment"] == "C-RASP[]" else
                               " [" + r["metrics"]["fragment"].split("[")[-1].rstrip("]") + "]")
              for r in records]
    left.set_yticks(range(len(records)), labels, fontsize=8)
    left.set_xlabel("n (input a^n, first symbol of the alphabet); dark = true")
    left.set_title(f"output on a^n, n = 0..{shown}", fontsize=10)
    last = [max(1, r["metrics"]["last_change_any"]) for r in records]
    colors = ["#c0392b" if "periodic" in r["metrics"]["fragment"] else "#2e86c1" for r in records]
    right.barh(range(len(records)), last, color=colors)
    right.set_xscale("log")
    right.set_xlim(0.8, n * 1.5)
    right.axvline(n, color="k", lw=0.8, ls="--")
    right.set_yticks(range(len(records)), labels, fontsize=8)   # the panels may be stacked
    for ax in (left, right):
        ax.set_ylim(len(records) - 0.5, -0.5)
    right.set_xlabel(f"last n <= {n} where some Boolean operation changes")
    right.set_title("blue: no periodic relation, settles; red: periodic, never settles",
                    fontsize=10)
    fig.tight_layout()
    return fig
