"""Huang et al. (2025), Fig. 4: star-free against non-star-free languages.

Star-freeness is the classical dividing line of regular languages (no counting modulo a
number). In the paper's numbers it does not separate the languages transformers
length-generalize on: (aa)* is not star-free and APE succeeds; {0,1,2}*02* is star-free and
both encodings fail. The figure puts this book's cells (mean over the seeds that fit) beside
the paper's; `analysis.starfree_group_means` gives each group's mean, which in this book's
APE runs are far apart. Drawn from the huang-fig1-languages records (no training of its own).

Feeds: book/ape_vs_nope.ipynb, {numref}`fig-huang-starfree`
"""
from lengthgen.experiments.huang.sweep import analysis, protocol
from lengthgen.models.positions import PositionalEncoding

FIGURE_ID = "huang-fig4-starfree"
TITLE = "Longest-bin accuracy of star-free and non-star-free languages"
SOURCE = "huang-fig1-languages"


def data(records):
    """What the figure draws: see analysis.starfree_points()."""
    return analysis.starfree_points(records)


def figure(records):
    import matplotlib.pyplot as plt
    import numpy as np
    rows = analysis.starfree_points(records)
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharey=True)
    rng = np.random.default_rng(0)  # horizontal jitter only, so overlapping points show
    for ax, encoding in zip(axes, protocol.ENCODINGS):
        for g, group in enumerate(analysis.STARFREE_GROUPS):
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
        ax.set_xticks(range(len(analysis.STARFREE_GROUPS)))
        ax.set_xticklabels(analysis.STARFREE_GROUPS)
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylim(-5, 105)
        ax.set_title(f"{PositionalEncoding(encoding).label} (red: group mean)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy % on Len 101-150")
    axes[1].legend(fontsize=8, loc="center right")
    fig.tight_layout()
    return fig
