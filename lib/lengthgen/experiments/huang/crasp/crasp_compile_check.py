"""Every program of the C-RASP library, compiled into a Limit Transformer, against the interpreter.

Huang et al. (2025, Thm. 9) turn each C-RASP program into a Limit Transformer. Here each library
program is compiled twice and run on random strings (and sampled members of its language, where
lengthgen.tasks has one) far beyond the chapter's lengths:
  * Heaviside comparisons: exact at every length;
  * ReLU-only, compiled for the longest length checked: exact within its range;
  * ReLU-only, compiled for a short max_length and run beyond it: where and how it breaks.
Every operation is compared at every position; the figure shows the accept bit and the largest
deviation of a stored value from its exact representation. Runs in float64: on a CUDA device
when given one, else on the CPU (MPS has no float64).

Feeds: book/crasp.ipynb, {numref}`tab-crasp-paper-vs-book` (its row, and the page's re-run cell runs it)
"""
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from lengthgen.config import one_thread
from lengthgen.crasp import library
from lengthgen.crasp.library import SMALL_VOCAB
from lengthgen.experiments.huang.crasp.rows import EXACT, compile_data
from lengthgen.experiments.huang.crasp.rows import mode_series as _series
from lengthgen.tasks import languages

FIGURE_ID = "crasp-compile-check"
TITLE = ("C-RASP programs compiled into transformers agree with the interpreter far beyond the "
         "chapter's lengths; ReLU-only compiles break just past their max length")

CONFIGS = {
    "test": {"programs": ["majority_ab", "dyck1", "tomita4", "aa_star"], "lengths": [24, 9, 2],
             "per_length": 5, "members_per_length": 1, "relu_max_length": 8,
             "break_lengths": [8, 9, 16, 24], "vocab": SMALL_VOCAB, "seed": 0},
    "book": {"programs": "all", "lengths": [1500, 750, 300, 150, 50, 10, 3],
             "per_length": 5, "members_per_length": 2, "relu_max_length": 150,
             "break_lengths": [150, 151, 160, 200, 300, 500, 750], "vocab": SMALL_VOCAB,
             "seed": 0},
    "paper": {"programs": "all", "lengths": [3000, 2000, 1500, 1000, 500, 150, 50, 10, 3],
              "per_length": 10, "members_per_length": 5, "relu_max_length": 150,
              "break_lengths": [150, 151, 175, 225, 300, 450, 750, 1500, 3000],
              "vocab": SMALL_VOCAB, "seed": 0},
}
def runs(config: dict) -> list[dict]:
    names = library.program_names() if config["programs"] == "all" else config["programs"]
    return [{"name": name, "program": name, "seed": config["seed"]} for name in names]


def _check_strings(program, lengths, config: dict, rng) -> list:
    """Per length: random strings of every kind, plus uniform members of the program's
    language when lengthgen.tasks defines it."""
    from lengthgen.crasp.compile import sample_strings   # here: data() and runs() need no torch
    language = (languages.get_language(program.name)
                if program.name in languages.DEFINITIONS else None)
    strings = []
    for n in lengths:
        strings += sample_strings(program.alphabet, [n] * config["per_length"], rng)
        if language is not None and language.count_members(n) > 0:
            strings += language.sample_members(rng, n, config["members_per_length"])
    return strings


def _summarize(report, compiled) -> dict:
    size = compiled.size()
    by_length = {str(n): entry for n, entry in sorted(report.by_length.items())}
    inexact = [n for n, e in sorted(report.by_length.items()) if e["max_error"] > EXACT]
    wrong = [n for n, e in sorted(report.by_length.items()) if e["accept_agree"] < e["positions"]]
    return {"ok": report.ok, "strings": report.strings, "members": report.members,
            "positions": report.positions, "value_mismatches": report.value_mismatches,
            "accept_mismatches": report.accept_mismatches, "max_error": report.max_error,
            "first_mismatch": report.first_mismatch, "by_length": by_length,
            "first_inexact_length": inexact[0] if inexact else None,
            "first_accept_error_length": wrong[0] if wrong else None,
            "max_length": compiled.max_length,
            "size": {k: size[k] for k in ("layers", "width", "parameters",
                                          "positional_parameters", "period", "tau")}
            | {"heads": sum(size["heads_per_layer"])}}



def run_one(params: dict, config: dict, device) -> dict:
    from lengthgen.crasp.compile import compile_program, verify
    program = library.program_over(params["program"], config["vocab"])
    rng = np.random.default_rng(params["seed"])
    longest = max(config["lengths"])
    strings = _check_strings(program, config["lengths"], config, rng)
    beyond = _check_strings(program, config["break_lengths"], config, rng)
    metrics = {"fragment": program.fragment(), "operations": len(program.ops),
               "alphabet": len(program.alphabet)}
    with one_thread():
        for mode, max_length, checked, longer in (("heaviside", longest, strings, False),
                                                  ("relu", longest, strings, False),
                                                  ("relu_break", config["relu_max_length"],
                                                   beyond, True)):
            compiled = compile_program(program, max_length, mode.split("_")[0])
            compiled.model.to(device if str(device).startswith("cuda") else "cpu")
            metrics[mode] = _summarize(verify(program, compiled, checked, longer), compiled)
    return metrics


def data(records: list[dict]) -> list[dict]:
    """One row per program, compilation and input length: the positions checked, the values
    and accept bits that agree with the interpreter, the largest deviation
    (`huang.crasp.rows.compile_data`, which the chapter's table reads too)."""
    return compile_data(records)


def figure(records: list[dict]):
    records = sorted(records, key=lambda r: r["params"]["program"])
    config = records[0]["config"]
    limit = config["relu_max_length"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.28 * len(records) + 3.2),
                             gridspec_kw={"width_ratios": [1.2, 1, 1]})

    ax = axes[0]
    for row, record in enumerate(records):
        for mode, shift, marker in (("heaviside", -0.15, "o"), ("relu", 0.15, "s")):
            ns, entries = _series(record, mode)
            exact = [e["value_agree"] == e["positions"] and e["max_error"] <= EXACT
                     for e in entries]
            ax.scatter(ns, [row + shift] * len(ns), marker=marker, s=18,
                       c=["tab:green" if ok else "tab:red" for ok in exact])
    ax.scatter([], [], marker="o", c="tab:green", label="Heaviside: every value exact")
    ax.scatter([], [], marker="s", c="tab:green", label=f"ReLU-only, max_length {max(config['lengths'])}")
    ax.scatter([], [], marker="x", c="tab:red", label="some value wrong or inexact")
    ax.set_yticks(range(len(records)), [r["params"]["program"] for r in records], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("input length n (every position 1..n checked)")
    ax.set_title("compiled model = interpreter")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12))

    ax = axes[1]
    broken = []
    for record in records:
        ns, entries = _series(record, "relu_break")
        agree = [e["accept_agree"] / e["positions"] for e in entries]
        if min(agree) < 1:
            broken.append(record["params"]["program"])
            ax.plot(ns, agree, marker=".", label=record["params"]["program"])
    ax.axvline(limit, color="k", ls="--", lw=1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("input length n (dashed: max_length)")
    ax.set_ylabel("accept bits correct (fraction of positions)")
    ax.set_title(f"ReLU-only compiled for max_length {limit}")
    unaffected = len(records) - len(broken)
    ax.legend(fontsize=6, ncol=2, loc="lower left",
              title=f"accept bit breaks; {unaffected} others never did", title_fontsize=7)

    ax = axes[2]
    for record in records:
        for mode, color in (("relu_break", "tab:red"), ("heaviside", "tab:blue")):
            ns, entries = _series(record, mode)
            ax.plot(ns, [max(e["max_error"], 1e-17) for e in entries], color=color, alpha=0.4,
                    marker=".")
    ax.plot([], [], color="tab:red", label=f"ReLU-only, max_length {limit}")
    ax.plot([], [], color="tab:blue", label="Heaviside")
    ax.axvline(limit, color="k", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("input length n")
    ax.set_ylabel("largest |stored value - exact representation|")
    ax.set_title("exactness of the residual stream")
    ax.legend(fontsize=7)
    for ax in axes[::2]:
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    return fig
