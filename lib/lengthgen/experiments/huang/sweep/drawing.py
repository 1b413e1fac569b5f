"""The APE vs NoPE sweep's figure: accuracy per test bin for each cell, with the spread over seeds
and C-RASP's prediction."""
from lengthgen.experiments.huang.sweep.analysis import table
from lengthgen.experiments.huang.sweep.protocol import ENCODINGS, LONGEST_BIN, predicted
from lengthgen.experiments.prose import math_names
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info


BIN_COLORS = ("#9ecae1", "#4292c6", "#08306b")
MARK = {"yes": ("✓", "#1a9850"), "no": ("✗", "#d73027"), "none found": ("?", "#777777")}
# what to look at in the languages' panel (huang-fig1-languages; the algorithmic tasks' figure
# has its guide in the chapter's prose)
LANGUAGES_GUIDE = ("To read: where a language's mark is ✓, its darkest bar (Len 101-150) should "
                   "reach 100%; where it is ✗, that bar should fall short.")


def draw_fig1(rows: list[dict], title: str, tasks: list[str] | None = None,
              phone: bool = False, guide: str = ""):
    """Bars: our accuracy per test bin (mean over the seeds that fit), with a line from the
    lowest to the highest seed; black ticks: the paper's; grey dashes: the random baseline;
    beside each task the C-RASP prediction (✓ program, ✗ proven impossible, ? none found).
    Hatched bars: no seed fit the training range. One panel per encoding. `tasks`: every task
    of the panel, in order; a cell without a record says "not run" in its slot. `guide`: a
    sentence saying what to look at, first in the note under the panels.

    With `phone`, the same picture for a phone's column: the tasks down the side (their names
    read across, not slanted into each other), the bars across, the panels one above the
    other."""
    import matplotlib.pyplot as plt
    ran = list(dict.fromkeys(r["task"] for r in rows))
    tasks = list(tasks) + [t for t in ran if t not in tasks] if tasks else ran
    size = (3.8, 0.34 * len(tasks) * 2 + 2.6) if phone else \
        (max(7.0, 0.55 * len(tasks) + 2), 7.2)   # (room for names at 60 degrees)
    fig, axes = plt.subplots(2, 1, figsize=size, sharex=not phone, sharey=phone)
    width = 0.26

    def at(slot, value):   # (x, y) of a point at a slot of the task axis and a value
        return (value, slot) if phone else (slot, value)

    def segment(ax, slots, values, **style):
        ends = [at(s, v) for s, v in zip(slots, values)]
        ax.plot([e[0] for e in ends], [e[1] for e in ends], **style)

    for ax, encoding in zip(axes, ENCODINGS):
        bar = ax.barh if phone else ax.bar
        first = None   # the legend labels go on the first cell drawn (the first may not be run)
        for i, task_id in enumerate(tasks):
            row = next((r for r in rows if r["task"] == task_id and r["encoding"] == encoding),
                       None)
            if row is None:   # no record yet: say so in the slot, keep the prediction
                ax.text(*at(i, 3), "not run", rotation=0 if phone else 90,
                        ha="left" if phone else "center", va="center" if phone else "bottom",
                        fontsize=8, color="#777777")
                symbol, color = MARK[predicted(task_id, encoding)]
                ax.text(*at(i, 104), symbol, ha="left" if phone else "center",
                        va="center" if phone else "bottom", color=color, fontsize=11)
                continue
            first = i if first is None else first
            for k, (name, value) in enumerate(row["accuracy"].items()):
                x = i + (k - 1) * width   # (on a phone the first bin on top: y runs down)
                bar(x, 100 * value, width, color=BIN_COLORS[k],
                    hatch=None if row["fit"] else "//", edgecolor="white",
                    label=f"Len {name}" if i == first else None)
                lo, hi = row["spread"][name]["min"], row["spread"][name]["max"]
                segment(ax, [x, x], [100 * lo, 100 * hi], color="#d95f02", lw=1.3,
                        label="seeds: min to max" if i == first and k == 0 else None)
                if row["paper"] is not None:
                    segment(ax, [x - width / 2, x + width / 2],
                            [100 * row["paper"]["bins"][k]] * 2, color="black", lw=1.6,
                            label="paper" if i == first and k == 0 else None)
            base = row["baseline"].get(LONGEST_BIN)
            if base is not None:
                segment(ax, [i - 1.5 * width, i + 1.5 * width], [100 * base] * 2, color="grey",
                        ls=":", lw=1.4, label="random baseline" if i == first else None)
            symbol, color = MARK[row["predicted"]]
            ax.text(*at(i, 104), symbol, ha="left" if phone else "center",
                    va="center" if phone else "bottom", color=color, fontsize=11)
        (ax.set_xlim if phone else ax.set_ylim)(0, 115)
        (ax.set_xticks if phone else ax.set_yticks)([0, 25, 50, 75, 100])
        (ax.set_xlabel if phone else ax.set_ylabel)(
            f"{PositionalEncoding(encoding).label}: accuracy %")
        ax.grid(axis="x" if phone else "y", alpha=0.3)
    names = [math_names(info(t).name) for t in tasks]   # D_12 as the prose's $D_{12}$
    if phone:
        axes[0].set_yticks(range(len(tasks)), names)
        axes[0].set_ylim(len(tasks) - 0.5, -0.5)   # the first task on top, as in the table
        axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8,
                       frameon=False)
    else:
        # steep enough that each name keeps clear of the next: at 40 degrees the names of 17
        # tasks touched, and D_2 D_3 D_4 D_12 read as one word
        axes[-1].set_xticks(range(len(tasks)))
        axes[-1].set_xticklabels(names, rotation=60, ha="right", rotation_mode="anchor")
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    axes[0].set_title(title, fontsize=10)
    fig.text(0.01, 0.005, (guide + "\n" if guide else "")
             + f"{'Beside' if phone else 'Above'} each task, C-RASP's prediction: "
             "✓ a program exists, ✗ proven impossible, ? none found. Hatched bars: no seed fit "
             "the training range. \"not run\": no record yet.",
             fontsize=7.5, color="#444444")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def fig1_panels(records: list[dict], title: str, phone: bool = False, guide: str = ""):
    """Fig. 1 of one sweep (languages or algorithmic tasks) from its records, in the order of
    its config's tasks (`phone`: drawn for a phone's column; `guide`: see draw_fig1)."""
    return draw_fig1(table(records), title,
                     tasks=records[0]["config"]["tasks"] if records else None, phone=phone,
                     guide=guide)


def fig1_figures(title: str, guide: str = ""):
    """The figure contract's figure(records) and phone_figure(records) of one half of Fig. 1,
    with `guide` (what to look at) under the panels."""
    def figure(records):
        return fig1_panels(records, title, guide=guide)

    def phone_figure(records):
        return fig1_panels(records, title, phone=True, guide=guide)

    return figure, phone_figure
