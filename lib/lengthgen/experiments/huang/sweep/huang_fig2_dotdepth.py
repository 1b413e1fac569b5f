"""Huang et al. (2025), Fig. 2: accuracy on the longest bin against dot-depth.

Dot-depth measures how complex a star-free language is (Table 2's column). If complexity in
that sense decided length generalization, accuracy would fall with dot-depth. In the paper's
numbers it does not: D_12 has dot-depth 12 and generalizes, {0,1,2}*02* has dot-depth 2 and
does not. The figure puts this book's cells (mean over the seeds that fit) beside the paper's.
Drawn from the huang-fig1-languages records (no training of its own).

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-dotdepth`
"""
from lengthgen.experiments.huang.sweep import analysis, protocol
from lengthgen.experiments.prose import math_names
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info

FIGURE_ID = "huang-fig2-dotdepth"
TITLE = "Longest-bin accuracy against dot-depth for the star-free languages"
SOURCE = "huang-fig1-languages"


def _points(records) -> list[dict]:
    """One row per (star-free language, encoding, source): its dot-depth and its accuracy on the
    longest bin in percent (ours: the mean over the seeds that fit, with the lowest and highest
    seed; the paper's: its number), and whether the cell fit. The paper's number is there for
    every star-free language of the sweep's config and each encoding, whether or not this book
    has a record of the cell (the chapter reads the paper's D_12 with NoPE off this figure)."""
    drawn = analysis.longest_bin_points(analysis.table(records))
    have = {(p["task"], p["encoding"], p["source"]) for p in drawn}
    tasks = list(records[0]["config"]["tasks"]) if records else []
    reference = protocol.reference()
    for task in tasks:
        for encoding in protocol.ENCODINGS:
            paper = reference.get((task, encoding))
            if paper is not None and (task, encoding, "paper") not in have:
                drawn.append({"task": task, "encoding": encoding, "source": "paper",
                              "accuracy": paper["bins"][-1], "seed_min": "", "seed_max": "",
                              "fit": paper["bins"][0] >= 1.0})
    return [{"task": p["task"], "language": info(p["task"]).name,
             "dot_depth": info(p["task"]).dot_depth, "encoding": p["encoding"],
             "source": p["source"], "accuracy_percent": analysis.percent(p["accuracy"]),
             "seed_min_percent": analysis.percent(p["seed_min"]),
             "seed_max_percent": analysis.percent(p["seed_max"]), "fit": p["fit"]}
            for p in drawn if info(p["task"]).star_free]


def data(records):
    """What the figure draws: see _points()."""
    return _points(records)


def figure(records):
    """One row per language, grouped by dot-depth (top to bottom), accuracy across: a row has
    room for its name, so no two labels fall on one spot (a scatter against dot-depth put
    Tomita 1 and Tomita 2, both at 100%, on the same point)."""
    import matplotlib.pyplot as plt
    rows = _points(records)
    languages = sorted({(p["dot_depth"], p["language"]) for p in rows})
    row_of = {name: i for i, (_, name) in enumerate(languages)}
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 0.3 * len(languages) + 1.4))
    for ax, encoding in zip(axes, protocol.ENCODINGS):
        ours = set()
        for source, marker, offset in (("ours", "o", -0.15), ("paper", "s", 0.15)):
            chosen = [p for p in rows if p["encoding"] == encoding and p["source"] == source]
            if source == "ours":
                ours = {p["language"] for p in chosen}
            ys = [row_of[p["language"]] + offset for p in chosen]
            if source == "ours":
                low = [p["accuracy_percent"] - (p["seed_min_percent"] or p["accuracy_percent"])
                       for p in chosen]
                high = [(p["seed_max_percent"] or p["accuracy_percent"]) - p["accuracy_percent"]
                        for p in chosen]
                ax.errorbar([p["accuracy_percent"] for p in chosen], ys, xerr=[low, high],
                            fmt="none", ecolor="#08306b", alpha=0.5, lw=1)
            ax.scatter([p["accuracy_percent"] for p in chosen], ys, marker=marker, s=36,
                       facecolors="#08306b" if source == "ours" else "none",
                       edgecolors="#08306b",
                       label="this book (seed range)" if source == "ours" else "paper")
        paper = {p["language"]: p["accuracy_percent"] for p in rows
                 if p["encoding"] == encoding and p["source"] == "paper"}
        for depth, name in languages:
            if name not in ours:   # in our slot of the row, on the side away from the paper's
                high = paper.get(name, 0) >= 50
                ax.text(paper[name] - 6 if high else paper.get(name, 0) + 6,
                        row_of[name] - 0.15, "no record", ha="right" if high else "left",
                        va="center", color="0.45")
        for upper, lower in zip(languages, languages[1:]):
            if upper[0] != lower[0]:   # a line between dot-depth groups
                ax.axhline(row_of[lower[1]] - 0.5, color="0.6", lw=0.8)
        ax.set_xlim(-5, 105)
        ax.set_xlabel("accuracy % on Len 101-150")
        ax.set_title(PositionalEncoding(encoding).label)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes:   # each panel names its rows (on a phone the panels are stacked)
        ax.set_yticks(range(len(languages)),
                      [math_names(f"{name} ({depth})") for depth, name in languages])
        ax.set_ylim(len(languages) - 0.5, -0.5)
    axes[0].set_ylabel("language (dot-depth)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=2, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
