"""The APE vs NoPE sweep's figure: accuracy per test bin for each cell, with the spread over seeds
and C-RASP's prediction."""
from lengthgen.experiments.huang.sweep.analysis import table
from lengthgen.experiments.huang.sweep.protocol import ENCODINGS, LONGEST_BIN, predicted
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info


BIN_COLORS = ("#9ecae1", "#4292c6", "#08306b")
MARK = {"yes": ("✓", "#1a9850"), "no": ("✗", "#d73027"), "none found": ("?", "#777777")}


def draw_fig1(rows: list[dict], title: str, tasks: list[str] | None = None):
    """Bars: our accuracy per test bin (mean over the seeds that fit), with a line from the
    lowest to the highest seed; black ticks: the paper's; grey dashes: the random baseline;
    above each task the C-RASP prediction (✓ program, ✗ proven impossible, ? none found).
    Hatched bars: no seed fit the training range. One panel per encoding. `tasks`: every task
    of the panel, in order; a cell without a record says "not run" in its slot."""
    import matplotlib.pyplot as plt
    ran = list(dict.fromkeys(r["task"] for r in rows))
    tasks = list(tasks) + [t for t in ran if t not in tasks] if tasks else ran
    fig, axes = plt.subplots(2, 1, figsize=(max(7.0, 0.55 * len(tasks) + 2), 6.4), sharex=True)
    width = 0.26
    for ax, encoding in zip(axes, ENCODINGS):
        first = None   # the legend labels go on the first cell drawn (the first may not be run)
        for i, task_id in enumerate(tasks):
            row = next((r for r in rows if r["task"] == task_id and r["encoding"] == encoding),
                       None)
            if row is None:   # no record yet: say so in the slot, keep the prediction
                ax.text(i, 3, "not run", rotation=90, ha="center", va="bottom", fontsize=8,
                        color="#777777")
                symbol, color = MARK[predicted(task_id, encoding)]
                ax.text(i, 104, symbol, ha="center", va="bottom", color=color, fontsize=11)
                continue
            first = i if first is None else first
            for k, (name, value) in enumerate(row["accuracy"].items()):
                x = i + (k - 1) * width
                ax.bar(x, 100 * value, width, color=BIN_COLORS[k],
                       hatch=None if row["fit"] else "//", edgecolor="white",
                       label=f"Len {name}" if i == first else None)
                lo, hi = row["spread"][name]["min"], row["spread"][name]["max"]
                ax.plot([x, x], [100 * lo, 100 * hi], color="#d95f02", lw=1.3,
                        label="seeds: min to max" if i == first and k == 0 else None)
                if row["paper"] is not None:
                    ax.plot([x - width / 2, x + width / 2], [100 * row["paper"]["bins"][k]] * 2,
                            color="black", lw=1.6,
                            label="paper" if i == first and k == 0 else None)
            base = row["baseline"].get(LONGEST_BIN)
            if base is not None:
                ax.plot([i - 1.5 * width, i + 1.5 * width], [100 * base] * 2, color="grey",
                        ls=":", lw=1.4, label="random baseline" if i == first else None)
            symbol, color = MARK[row["predicted"]]
            ax.text(i, 104, symbol, ha="center", va="bottom", color=color, fontsize=11)
        ax.set_ylim(0, 115)
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_ylabel(f"{PositionalEncoding(encoding).label}: accuracy %")
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(range(len(tasks)))
    axes[-1].set_xticklabels([info(t).name for t in tasks], rotation=40, ha="right")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    axes[0].set_title(title, fontsize=10)
    fig.text(0.01, 0.005, "Above each task, C-RASP's prediction: ✓ a program exists, ✗ proven "
             "impossible, ? none found. Hatched bars: no seed fit the training range. "
             "\"not run\": no record yet.",
             fontsize=7.5, color="#444444")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def fig1_panels(records: list[dict], title: str):
    """Fig. 1 of one sweep (languages or algorithmic tasks) from its records, in the order of
    its config's tasks."""
    return draw_fig1(table(records), title,
                     tasks=records[0]["config"]["tasks"] if records else None)
