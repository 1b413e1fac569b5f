"""Table 1 of Richard (2024): completions of the deepest D_32 context, 16 open brackets.

The only balanced completion is 16 closing brackets. The two models are those of Fig. 3
(right) and Fig. 4 (same specs, same trained weights). The paper's counts: the 10^7-word model
closes correctly 52 times out of 100, the single-word model never. A config with "seeds" studies
each seed's own pair of models (the seed is in the model spec).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-deepest`
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.protocol import completion_configs
from lengthgen.tasks.dyck import is_balanced
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-table1-deepest"
TITLE = "Completions of the deepest context (16 open brackets) over repeated trials"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Table 1 studies the two models of Fig. 4.")

CONFIGS = completion_configs(top=6)
# three seeds at book scale, two at test scale: each seed trains its own pair of models
# ("models" holds the specs of seed 0)
CONFIGS["book"] = {**CONFIGS["book"], "seeds": [0, 1, 2]}
CONFIGS["test"] = {**CONFIGS["test"], "seeds": [0, 1]}
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting (rank 1 has every seed)
SPREAD_BY = ("model", "train_size", "max_depth", "rank")

_PAPER_BALANCED = {"single": 0, "many": 52}  # out of 100, Table 1 of the paper


def runs(config):
    # one run per model unless the config lists "seeds" (names then end in -s<seed>)
    return spread.model_runs(config)


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return spread.seeded_spec(config, params["model"], params["seed"])


def _measure(model, params, config, device) -> dict:
    """The model's completions of the deepest context, counted."""
    from lengthgen.models.dyck import complete_with_model   # here: torch only where a model runs
    spec = _model_spec(params, config)
    context = "(" * spec["n"]
    rng = np.random.default_rng([params["seed"], 16])
    completions = complete_with_model(model, [context] * config["trials"], spec["n"], rng,
                                      device=device)
    counts = Counter(completions)
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "context": context, "trials": config["trials"],
            "balanced": sum(is_balanced(context + c, spec["n"]) for c in completions),
            "paper_balanced_of_100": _PAPER_BALANCED[params["model"]],
            "top": [{"completion": c, "count": k, "balanced": is_balanced(context + c, spec["n"])}
                    for c, k in counts.most_common(config["top"])]}


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure)


def data(records):
    """One row per model, seed and completion shown (`rank` 1 is the most frequent), with the
    model's total of balanced completions and the paper's count."""
    rows = []
    for r in sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"])):
        m = r["metrics"]
        rows += [{"model": r["params"]["model"], "seed": r["params"]["seed"],
                  "train_size": m["train_size"], "max_depth": m["max_depth"],
                  "context": m["context"], "rank": rank, "completion": t["completion"],
                  "count": t["count"], "balanced": t["balanced"], "trials": m["trials"],
                  "total_balanced": m["balanced"],
                  "paper_balanced_of_100": m["paper_balanced_of_100"]}
                 for rank, t in enumerate(m["top"], start=1)]
    return rows


_SHOWN_PER_SEED = 3   # completions per seed in the table (data() has the config's top)


def _sorted(records):
    """The records by model (fewer training words first), then seed, and grouped by model."""
    records = sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"]))
    return records, spread.group_by(records, lambda r: r["params"]["model"])


def _chart(chart, records, models) -> None:
    """Balanced completions per model: each seed (dots), their mean and min-max range, and the
    paper's count (star)."""
    labels, counts = [], []
    for group in models.values():
        m = group[0]["metrics"]
        labels.append(f"{m['train_size']} word(s)\nq <= {m['max_depth']}")
        counts.append([r["metrics"]["balanced"] for r in group])
    xs = list(range(len(models)))
    for x, values in zip(xs, counts):
        chart.scatter([x] * len(values), values, color="tab:blue", s=16, zorder=4)
    spread.points(chart, xs, counts, "black", marker="_", s=300, zorder=5)
    chart.scatter(xs, [g[0]["metrics"]["paper_balanced_of_100"] for g in models.values()],
                  marker="*", s=90, color="orange", edgecolor="black", zorder=6,
                  label="the paper (of 100)")
    chart.set_xticks(xs)
    chart.set_xticklabels(labels, fontsize=10.5)
    trials = records[0]["metrics"]["trials"]
    chart.set(xlim=(-0.5, len(xs) - 0.5), ylim=(-3, trials + 3),
              xlabel="trained model (words, depth of its training words)",
              ylabel=f"balanced completions of {trials}",
              title="per seed (dots), mean and min-max")
    chart.legend(fontsize=10.5, loc="upper left")


def _title(records) -> str:
    return ("Completions of the deepest context of $D_{32}$ (16 open brackets); "
            + spread.seeds_label(records, lambda r: r["params"]["model"]).replace(
                "per setting", "per model") + f"; table: the {_SHOWN_PER_SEED} most "
            "frequent completions of each seed")


def figure(records):
    """Top: balanced completions of the deepest context per model, per seed (dots), their mean
    and min-max range, and the paper's count (star). Below, a table: each seed's most frequent
    completions with their counts. Stacked, with text at 10.5 pt, for the book's column."""
    import matplotlib.pyplot as plt

    records, models = _sorted(records)
    rows = []
    for group in models.values():
        for r in group:
            m = r["metrics"]
            who = f"{m['train_size']} (q <= {m['max_depth']}), seed {r['params']['seed']}"
            for t in m["top"][:_SHOWN_PER_SEED]:
                rows.append([who, t["completion"], str(t["count"]),
                             "yes" if t["balanced"] else "no"])
            rows.append([who, "total balanced", f"{m['balanced']} / {m['trials']}", ""])
    # a table row is 0.25 in at 10.5 pt (the header too); the chart is 2.8 in high, and the
    # titles and the chart's axis take about 1.8 in more
    table_height = 0.25 * (len(rows) + 1)
    fig, (chart, ax) = plt.subplots(2, 1, figsize=(7.4, 2.8 + table_height + 1.8),
                                    gridspec_kw={"height_ratios": [2.8, table_height]})
    _chart(chart, records, models)
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=["training words, seed", "completion of " + "(" * 16,
                                               "count", "balanced?"], bbox=[0, 0, 1, 1])
    table.auto_set_font_size(False)
    table.set_fontsize(10.5)
    table.auto_set_column_width([0, 1, 2, 3])
    for (row, col), cell in table.get_celld().items():
        if col == 1 and row > 0:
            cell.get_text().set_family("monospace")
    fig.suptitle(_title(records), fontsize=10.5)
    fig.tight_layout()
    return fig


# the phone's table: its columns' shares of the panel's width (completion, count, balanced?)
_PHONE_COLUMNS = (0.52, 0.2, 0.28)


def phone_figure(records):
    """The same chart and table for a phone's column, where the table's four columns wrote
    over each other: three columns (completion, count, balanced?), and each seed's model,
    seed and total of balanced completions in a row of its own above its completions."""
    import matplotlib.pyplot as plt

    records, models = _sorted(records)
    rows = []   # (texts of the row's cells, whether it names a model and seed)
    for group in models.values():
        for r in group:
            m = r["metrics"]
            words = "word" if m["train_size"] == 1 else "words"
            rows.append(([f"{m['train_size']} {words}, q ≤ {m['max_depth']}, seed "
                          f"{r['params']['seed']}: {m['balanced']}/{m['trials']} balanced",
                          "", ""], True))
            rows += [([t["completion"], str(t["count"]), "yes" if t["balanced"] else "no"],
                      False) for t in m["top"][:_SHOWN_PER_SEED]]
    # the table across the figure, the chart in a column of its own right of a sliver of
    # one: the layout then puts the chart's y label in the space between the two columns,
    # not in a margin left of the table too (the table's first column has no room to spare)
    table_height = 0.25 * (len(rows) + 1)
    fig = plt.figure(figsize=(3.8, 2.8 + table_height + 2.4))
    grid = fig.add_gridspec(2, 2, width_ratios=[0.01, 1], height_ratios=[2.8, table_height])
    chart, ax = fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    _chart(chart, records, models)
    ax.axis("off")
    table = ax.table(cellText=[cells for cells, _ in rows],
                     colLabels=["completion", "count", "balanced?"],
                     colWidths=list(_PHONE_COLUMNS), bbox=[0, 0, 1, 1])
    table.auto_set_font_size(False)
    table.set_fontsize(10.5)
    for (row, col), cell in table.get_celld().items():
        heading = row > 0 and rows[row - 1][1]
        if heading:   # one cell across the row: no lines between its three cells, and no
            # fill that would cover the text of the first
            cell.visible_edges = {0: "BTL", 1: "BT", 2: "BTR"}[col]
            cell.set_facecolor("none")
            if col == 0:
                cell.set_text_props(ha="left")
                cell.PAD = 0.02
        elif col == 0 and row > 0:
            cell.get_text().set_family("monospace")
    fig.suptitle(_title(records), fontsize=10.5)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: the studied models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([spread.seeded_spec(config, p["model"], p["seed"])
                           for p in runs(config)])
