"""Huang et al. (2025), Tables 6-7: the setting the hyperparameter search selected, per task
and encoding, ours beside the paper's.

Drawn from the records of both Fig. 1 sweeps (no training of its own). The book-scale search
is a short ladder that ends at the paper's own setting for the cell (CPU-limited where it is
larger), so the table shows which cells were perfect up to Len 100 with a smaller setting,
which needed the paper's, and which fit nothing.

Feeds: book/ape_vs_nope.ipynb, {numref}`tab-huang-hparams`
"""
from lengthgen.experiments.huang.sweep import analysis, protocol, tables
from lengthgen.experiments.spread import group_by
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import info

FIGURE_ID = "huang-table6-7-hparams"
TITLE = "Hyperparameters the search selected per task and encoding, ours and the paper's"
SOURCE = ("huang-fig1-algorithmic", "huang-fig1-languages")


def _shape(setting, fit: bool = True) -> str:
    label = protocol.Setting.of(setting).label()
    return label if fit else f"{label} (none fits)"


def data(records):
    paper = {(r["task"], r["encoding"]): r for r in protocol.reference_hparams()}
    rows = []
    for group in group_by(records, lambda r: r["figure_id"]).values():
        for row in analysis.table(group):
            cell = next(r["metrics"] for r in group if r["metrics"]["task"] == row["task"]
                        and r["metrics"]["encoding"] == row["encoding"])
            ref = paper.get((row["task"], row["encoding"]))
            steps = [s["steps"] for s in cell["seeds"]]
            rows.append({
                "task": row["task"], "encoding": row["encoding"],
                "ours": _shape(cell["selected"], row["fit"]),
                "ours_fit": row["fit"], "ours_tried": len(cell["search"]),
                "ours_rule": cell["rule"],
                "ours_steps_mean": round(sum(steps) / len(steps)),
                "paper": "" if ref is None else
                f"{ref['layers']}L {ref['heads']}H d={ref['d_model']}, lr {float(ref['lr']):g}",
                "paper_max_steps": "" if ref is None else int(ref["max_steps"])})
    return rows


def figure(records):
    import matplotlib.pyplot as plt
    rows = data(records)
    fig, ax = plt.subplots(figsize=(9.5, 0.24 * len(rows) + 0.8))
    ax.axis("off")
    cells = [[info(r["task"]).name, PositionalEncoding(r["encoding"]).label, r["ours"], str(r["ours_steps_mean"]),
              r["paper"] or tables.HPARAMS_LOST] for r in rows]
    table = ax.table(cellText=cells, colLabels=["task", "PE", "ours (book search)",
                                                "steps (mean)", "paper (Tables 6-7)"],
                     loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(7.5)
    table.scale(1, 1.1)
    fig.tight_layout()
    return fig
