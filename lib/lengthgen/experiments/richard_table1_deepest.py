"""Table 1 of Richard (2024): completions of the deepest D_32 context, 16 open brackets.

The only balanced completion is 16 closing brackets. The two models are those of Fig. 3
(right) and Fig. 4 (same specs, same trained weights). The paper's counts: the 10^7-word model
closes correctly 52 times out of 100, the single-word model never.
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import richard_fig3_right_samples as samples_figure
from lengthgen.experiments.richard_dyck_training import trained_model
from lengthgen.models.dyck import complete_with_model
from lengthgen.tasks.dyck import is_balanced

FIGURE_ID = "richard-table1-deepest"
TITLE = "Completions of the deepest context (16 open brackets) over repeated trials"

CONFIGS = samples_figure.completion_configs(top=6)

PAPER_BALANCED = {"single": 0, "many": 52}  # out of 100, Table 1 of the paper


def runs(config):
    return samples_figure.one_run_per_model(config)


def run_one(params, config, device):
    spec = config["models"][params["model"]]
    model, _ = trained_model(spec, device)
    context = "(" * spec["n"]
    rng = np.random.default_rng([params["seed"], 16])
    completions = complete_with_model(model, [context] * config["trials"], spec["n"], rng,
                                      device=device)
    counts = Counter(completions)
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "context": context, "trials": config["trials"],
            "balanced": sum(is_balanced(context + c, spec["n"]) for c in completions),
            "paper_balanced_of_100": PAPER_BALANCED[params["model"]],
            "top": [{"completion": c, "count": k, "balanced": is_balanced(context + c, spec["n"])}
                    for c, k in counts.most_common(config["top"])]}


def data(records):
    """One row per model and completion shown, with the model's total of balanced completions
    and the paper's count."""
    rows = []
    for r in sorted(records, key=lambda r: r["metrics"]["train_size"]):
        m = r["metrics"]
        rows += [{"model": r["params"]["model"], "seed": r["params"]["seed"],
                  "train_size": m["train_size"], "max_depth": m["max_depth"],
                  "context": m["context"], "completion": t["completion"], "count": t["count"],
                  "balanced": t["balanced"], "trials": m["trials"],
                  "total_balanced": m["balanced"],
                  "paper_balanced_of_100": m["paper_balanced_of_100"]} for t in m["top"]]
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: r["metrics"]["train_size"])
    rows = []
    for r in records:
        m = r["metrics"]
        for t in m["top"]:
            rows.append([f"{m['train_size']} (q <= {m['max_depth']})", t["completion"],
                         str(t["count"]), "yes" if t["balanced"] else "no"])
        rows.append([f"{m['train_size']} (q <= {m['max_depth']})", "total balanced",
                     f"{m['balanced']} / {m['trials']}",
                     f"paper: {m['paper_balanced_of_100']} / 100"])
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1))
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=["training words", "completion of " + "(" * 16,
                                               "count", "balanced?"], loc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.auto_set_column_width([0, 1, 2, 3])
    for (row, col), cell in table.get_celld().items():
        if col == 1 and row > 0:
            cell.get_text().set_family("monospace")
    ax.set_title("Completions of the deepest context of D_32 (16 open brackets)")
    fig.tight_layout()
    return fig
