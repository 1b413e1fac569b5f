"""Huang et al. (2025), Fig. 4: star-free against non-star-free languages.

Star-freeness is the classical dividing line of regular languages (no counting modulo a
number). In the paper's numbers it does not separate the languages transformers
length-generalize on: (aa)* is not star-free and APE succeeds; {0,1,2}*02* is star-free and
both encodings fail. The figure puts this book's cells (mean over the seeds that fit) beside
the paper's; `group_means` gives each group's mean, which in this book's APE runs are far
apart. Drawn from the huang-fig1-languages records (no training of its own).

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-starfree`
"""
from lengthgen.experiments.huang.sweep import analysis, protocol
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info, language_ids

FIGURE_ID = "huang-fig4-starfree"
TITLE = "Longest-bin accuracy of star-free and non-star-free languages"
SOURCE = "huang-fig1-languages"
_GROUPS = ("star-free", "not star-free")


def _points(records) -> list[dict]:
    """One row per (language, encoding, source): whether it is star-free, its accuracy on the
    longest bin in percent (ours: the mean over the seeds that fit, with the lowest and highest
    seed; the paper's: its number), whether the cell fit, and the mean accuracy of its group
    (star-free or not) for that encoding and source, which the figure draws as a red line."""
    rows = [{"task": p["task"], "language": info(p["task"]).name,
             "group": _GROUPS[0] if info(p["task"]).star_free else _GROUPS[1],
             "encoding": p["encoding"], "source": p["source"],
             "accuracy_percent": analysis.percent(p["accuracy"]),
             "seed_min_percent": analysis.percent(p["seed_min"]),
             "seed_max_percent": analysis.percent(p["seed_max"]), "fit": p["fit"]}
            for p in analysis.longest_bin_points(analysis.table(records))]
    for row in rows:
        same = [r["accuracy_percent"] for r in rows if (r["group"], r["encoding"], r["source"])
                == (row["group"], row["encoding"], row["source"])]
        row["group_mean_percent"] = sum(same) / len(same)
    return rows


def group_means(records) -> dict:
    """{(encoding, source, group): mean accuracy % on Len 101-150} over the cells drawn."""
    out = {}
    for row in _points(records):
        out[(row["encoding"], row["source"], row["group"])] = row["group_mean_percent"]
    return out


def group_counts(records, encoding: str) -> str:
    """How many languages of each group the means are over, for one encoding: the cells this
    book's sweep has run out of the panel's (the paper's means are taken on the same cells),
    e.g. "11 of 11 star-free and 5 of 6 not star-free languages"."""
    drawn = {p["task"] for p in _points(records)
             if p["encoding"] == encoding and p["source"] == "ours"}
    parts = []
    for group in _GROUPS:
        every = [t for t in records[0]["config"]["tasks"] if t in language_ids()
                 and info(t).star_free == (group == _GROUPS[0])]   # the panel's languages
        parts.append(f"{sum(t in drawn for t in every)} of {len(every)} {group}")
    return " and ".join(parts) + " languages"


def data(records):
    """What the figure draws: see points()."""
    return _points(records)


def figure(records):
    import matplotlib.pyplot as plt
    import numpy as np
    rows = _points(records)
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharey=True)
    rng = np.random.default_rng(0)  # horizontal jitter only, so overlapping points show
    for ax, encoding in zip(axes, protocol.ENCODINGS):
        for g, group in enumerate(_GROUPS):
            for source, marker, offset in (("ours", "o", -0.15), ("paper", "s", 0.15)):
                chosen = [p for p in rows if p["encoding"] == encoding
                          and p["source"] == source and p["group"] == group]
                x = g + offset + rng.uniform(-0.06, 0.06, len(chosen))
                ax.scatter(x, [p["accuracy_percent"] for p in chosen], marker=marker, s=30,
                           facecolors="#08306b" if source == "ours" else "none",
                           edgecolors="#08306b",
                           label=("this book" if source == "ours" else "paper") if g == 0
                           else None)
                if chosen:
                    mean = chosen[0]["group_mean_percent"]
                    ax.plot([g + offset - 0.1, g + offset + 0.1], [mean, mean], color="#d73027")
        ax.set_xticks(range(len(_GROUPS)))
        ax.set_xticklabels(_GROUPS)
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylim(-5, 105)
        ax.set_title(f"{PositionalEncoding(encoding).label} (red: group mean)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy % on Len 101-150")
    axes[1].legend(fontsize=8, loc="center right")
    fig.tight_layout()
    return fig
