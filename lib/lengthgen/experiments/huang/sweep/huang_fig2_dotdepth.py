"""Huang et al. (2025), Fig. 2: accuracy on the longest bin against dot-depth.

Dot-depth measures how complex a star-free language is (Table 2's column). If complexity in
that sense decided length generalization, accuracy would fall with dot-depth. In the paper's
numbers it does not: D_12 has dot-depth 12 and generalizes, {0,1,2}*02* has dot-depth 2 and
does not. The figure puts this book's cells (mean over the seeds that fit) beside the paper's.
Drawn from the huang-fig1-languages records (no training of its own).
"""
from lengthgen.experiments.huang.sweep import analysis, protocol
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info

FIGURE_ID = "huang-fig2-dotdepth"
TITLE = "Longest-bin accuracy against dot-depth for the star-free languages"
SOURCE = "huang-fig1-languages"


def points(records) -> list[dict]:
    """One row per (star-free language, encoding, source): its dot-depth and its accuracy on the
    longest bin in percent (ours: the mean over the seeds that fit, with the lowest and highest
    seed; the paper's: its number), and whether the cell fit."""
    return [{"task": p["task"], "language": info(p["task"]).name,
             "dot_depth": info(p["task"]).dot_depth, "encoding": p["encoding"],
             "source": p["source"], "accuracy_percent": analysis.percent(p["accuracy"]),
             "seed_min_percent": analysis.percent(p["seed_min"]),
             "seed_max_percent": analysis.percent(p["seed_max"]), "fit": p["fit"]}
            for p in analysis.longest_bin_points(analysis.table(records)) if info(p["task"]).star_free]


def data(records):
    """What the figure draws: see points()."""
    return points(records)


def figure(records):
    import matplotlib.pyplot as plt
    rows = points(records)
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharey=True)
    depths = sorted({p["dot_depth"] for p in rows})
    position = {d: i for i, d in enumerate(depths)}
    for ax, encoding in zip(axes, protocol.ENCODINGS):
        for source, marker, offset in (("ours", "o", -0.12), ("paper", "s", 0.12)):
            chosen = [p for p in rows if p["encoding"] == encoding and p["source"] == source]
            ax.scatter([position[p["dot_depth"]] + offset for p in chosen],
                       [p["accuracy_percent"] for p in chosen], marker=marker, s=36,
                       facecolors="#08306b" if source == "ours" else "none",
                       edgecolors="#08306b", label="this book" if source == "ours" else "paper")
        for p in rows:
            if p["encoding"] == encoding and p["source"] == "ours":
                ax.annotate(p["language"], (position[p["dot_depth"]] - 0.12,
                                            p["accuracy_percent"]),
                            fontsize=6.5, xytext=(4, -3), textcoords="offset points")
        ax.set_xticks(range(len(depths)))
        ax.set_xticklabels([str(d) for d in depths])
        ax.set_xlabel("dot-depth")
        ax.set_title(PositionalEncoding(encoding).label, fontsize=10)
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy % on Len 101-150")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
