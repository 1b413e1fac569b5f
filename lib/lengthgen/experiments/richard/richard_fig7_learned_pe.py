"""Fig. 7 of Richard (2024): the positional embeddings that gradient descent learns.

For the three uniform-attention variants of Fig. 6 trained on its largest set (same specs,
same weights: richard.protocol.learned_pe_models), each of the d coordinates of the
learned positional table B gives one curve r -> sum_{i<=r} B_i (in the decoder variants, coordinate j is multiplied by
the sign u_j of the frozen '(' embedding, so that up means "towards '('" in every curve);
k-means (k = 8) groups the curves. The closed form has a
single such curve (d = 1): minus the Dyck path of the training word, shifted by gamma E.
A config with "seeds" studies each seed's own models (the seed is in the model spec, so these
are Fig. 6's models of that seed).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-learned-pe`
"""
import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.protocol import (ABLATION_CONFIGS, LEARNED_PE_VARIANTS,
                                                    learned_pe_models, position_curves)
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig7-learned-pe"
TITLE = "Cumulative sums of learned positional embeddings, with k-means centroids"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 7 studies the three uniform-attention models of Fig. 6 at k = 12.")

CONFIGS = {scale: {"models": learned_pe_models(scale),
                   "clusters": {"test": 2, "book": 8, "paper": 8}[scale], "seed": 0}
           for scale in ABLATION_CONFIGS}
# three seeds at book scale, two at test scale: each seed trains its own models ("models"
# holds the specs of seed 0)
CONFIGS["book"] = {**CONFIGS["book"], "seeds": [0, 1, 2]}
CONFIGS["test"] = {**CONFIGS["test"], "seeds": [0, 1]}
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting (end_abs_mean: per variant)
SPREAD_BY = ("variant", "kind", "index", "position")


def runs(config):
    # one run per variant unless the config lists "seeds" (names then end in -s<seed>)
    return spread.model_runs(config, key="variant")


def _kmeans(curves: np.ndarray, k: int, rng, iterations: int = 50):
    """Plain Lloyd iterations: (centroids [k, T], label of each curve)."""
    k = min(k, len(curves))
    centroids = curves[rng.choice(len(curves), k, replace=False)]
    for _ in range(iterations):
        labels = ((curves[:, None] - centroids[None]) ** 2).sum(-1).argmin(1)
        centroids = np.stack([curves[labels == j].mean(0) if (labels == j).any() else centroids[j]
                              for j in range(k)])
    return centroids, labels


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return spread.seeded_spec(config, params["variant"], params["seed"])


def _measure(model, params, config, device) -> dict:
    """The curves of a trained model, their k-means centroids and mean absolute end."""
    curves = position_curves(model, params["variant"])             # [d, T]
    rng = np.random.default_rng([params["seed"], 7])
    centroids, labels = _kmeans(curves, config["clusters"], rng)
    return {"variant": params["variant"], "curves": curves.tolist(),
            "centroids": centroids.tolist(),
            "cluster_sizes": np.bincount(labels, minlength=len(centroids)).tolist(),
            "end_abs_mean": float(np.abs(curves[:, -1]).mean())}


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(
    _model_spec, _measure, to_device=False)


def data(records):
    """One row per curve and position: each coordinate's cumulative positional embedding
    (kind "curve", index = coordinate) and each k-means centroid (kind "centroid", index =
    cluster, with its size), with the model's mean absolute end value of the curves."""
    rows = []
    order = {v: i for i, v in enumerate(LEARNED_PE_VARIANTS)}
    for r in sorted(records, key=lambda r: (order.get(r["params"]["variant"], 99),
                                            r["params"]["seed"])):
        m = r["metrics"]
        base = {"variant": m["variant"], "seed": r["params"]["seed"],
                "end_abs_mean": m["end_abs_mean"]}
        for kind, curves, sizes in (("curve", m["curves"], None),
                                    ("centroid", m["centroids"], m["cluster_sizes"])):
            for index, curve in enumerate(curves):
                size = "" if sizes is None else sizes[index]
                rows += [{**base, "kind": kind, "index": index, "cluster_size": size,
                          "position": position, "value": value}
                         for position, value in enumerate(curve, start=1)]
    return rows


def _sorted(records):
    """The records in the figure's order: by variant (as in Fig. 6), then by seed."""
    order = {v: i for i, v in enumerate(LEARNED_PE_VARIANTS)}
    return sorted(records, key=lambda r: (order.get(r["params"]["variant"], 99),
                                          r["params"]["seed"]))


def _draw_curves(ax, m) -> None:
    """One model's panel: the curves (thin, grey) and their k-means centroids (thick)."""
    import matplotlib.pyplot as plt
    curves = np.array(m["curves"])
    x = np.arange(1, curves.shape[1] + 1)
    ax.plot(x, curves.T, color="grey", lw=0.4, alpha=0.4)
    colors = plt.cm.tab10(np.arange(len(m["centroids"])))
    for c, color in zip(m["centroids"], colors):
        ax.plot(x, c, color=color, lw=1.6)
    ax.axhline(0, color="black", lw=0.5)


def figure(records):
    """A panel per variant and seed, two to a row for the book's column: the curves (thin) and
    their centroids (thick); the last panel: the mean absolute end value of each seed's curves
    (dots), their mean and min-max range, per variant."""
    import matplotlib.pyplot as plt

    records = _sorted(records)
    rows = -(-(len(records) + 1) // 2)
    fig, axes = plt.subplots(rows, 2, figsize=(7.4, 2.9 * rows), squeeze=False)
    axes = list(axes.ravel())
    for ax, r in zip(axes, records):
        m, seed = r["metrics"], r["params"]["seed"]
        _draw_curves(ax, m)
        ax.set_title(f"{r['params']['variant']}, seed {seed}: mean |end| "
                     f"{m['end_abs_mean']:.2f}", fontsize=10.5)
        ax.set_xlabel("position r", fontsize=10.5)
        ax.set_ylabel("cumulative PE", fontsize=10.5)
    for ax in axes[len(records) + 1:]:
        ax.axis("off")
    _draw_summary(axes[len(records)], records)
    fig.suptitle("Cumulative positional embeddings (thin) and k-means centroids (thick); "
                 + spread.seeds_label(records, lambda r: r["params"]["variant"]).replace(
                     "per setting", "per variant"), fontsize=10.5)
    fig.tight_layout()
    return fig


# on a phone: a model's panel and the summary's (in inches)
_PHONE_PANEL_IN, _PHONE_SUMMARY_IN = 1.15, 1.0


def phone_figure(records):
    """The same panels for a phone's column, where the column's figure laid out again put its
    ten panels one per row: 3,010 px tall. Here the models' panels go two to a row on one y
    scale, its numbers on the left only and named in the title and the key (a y label beside
    every row would leave the panels too narrow), each panel named by variant and seed (the
    mean |end| its title had in the column is its dot in the summary), the x label under the
    lowest panel of each column; the key of thin and thick lines takes the place after the last,
    and the summary is a row of its own under the grid, its axis named in its title. (A grid
    with a row that spans it is left as it is by the phone's layout, which would put the
    panels of a full grid one per row.)"""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    records = _sorted(records)
    rows = -(-(len(records) + 1) // 2)   # and the key's place
    fig = plt.figure(figsize=(3.8, rows * (_PHONE_PANEL_IN + 0.9) + _PHONE_SUMMARY_IN + 2))
    grid = fig.add_gridspec(rows + 1, 2, height_ratios=[_PHONE_PANEL_IN] * rows
                            + [_PHONE_SUMMARY_IN])
    axes = []
    for index, r in enumerate(records):
        ax = fig.add_subplot(grid[index // 2, index % 2], sharex=axes[0] if axes else None,
                             sharey=axes[0] if axes else None)
        axes.append(ax)
        _draw_curves(ax, r["metrics"])
        ax.set_title(f"{r['params']['variant']}\nseed {r['params']['seed']}", fontsize=10.5)
        if index % 2:
            ax.tick_params(axis="y", labelleft=False)
        if index + 2 >= len(records):   # the lowest of its column
            ax.set_xlabel("position r", fontsize=10.5)
    axes[0].yaxis.set_major_locator(MaxNLocator(5, integer=True))
    # the place after the panels: the key, drawn in it (a legend of the figure there would be
    # taken for a note under the panels, and an axes' own legend is moved under its axes by
    # the phone's layout)
    key = fig.add_subplot(grid[len(records) // 2, len(records) % 2])
    key.axis("off")
    for y, width, color, text in ((0.65, 0.8, "grey", "a coordinate's\ncumulative PE"),
                                  (0.3, 1.6, "tab:blue", "k-means\ncentroid")):
        key.plot([0, 0.18], [y, y], color=color, lw=width, transform=key.transAxes)
        key.text(0.24, y, text, va="center", fontsize=10.5, transform=key.transAxes)
    summary = fig.add_subplot(grid[rows, :])
    _draw_summary(summary, records)
    # the names flat (the ticks spread to the panel's edges), the axis named in the title
    summary.set_xticks(summary.get_xticks(), [t.get_text() for t in summary.get_xticklabels()],
                       rotation=0, ha="center", rotation_mode="default")
    summary.set(xlim=(-0.35, len(summary.get_xticks()) - 0.65), xlabel="", ylabel="")
    summary.set_title("mean |end value|: each seed (dots),\nmean and min-max", fontsize=10.5)
    fig.suptitle("Cumulative sums of the learned positional embeddings (up) by position r; "
                 + spread.seeds_label(records, lambda r: r["params"]["variant"])
                 .replace(", mean and min-max", "").replace("per setting", "per variant"),
                 fontsize=10.5)
    fig.tight_layout()
    return fig


def _draw_summary(summary, records) -> None:
    """The last panel: each seed's mean absolute end value (dots), their mean and min-max
    range, per variant."""
    variants = spread.group_by(records, lambda r: r["params"]["variant"])
    ends = [[r["metrics"]["end_abs_mean"] for r in group] for group in variants.values()]
    xs = list(range(len(variants)))
    for x, values in zip(xs, ends):
        summary.scatter([x] * len(values), values, color="tab:blue", s=14, zorder=4)
    spread.points(summary, xs, ends, "black", marker="_", s=300, zorder=5)
    summary.set_xticks(xs)
    # the names whole and slanted, as half the column does not hold them side by side (broken
    # after the first dash, they read "uniform-" over "pm1-v")
    summary.set_xticklabels(list(variants), fontsize=10.5, rotation=25, ha="right",
                            rotation_mode="anchor")
    summary.set(xlim=(-0.5, len(xs) - 0.5), ylim=(0, None), xlabel="variant",
                ylabel="mean |end value|")
    summary.set_title("per seed (dots), mean and min-max", fontsize=10.5)


def trainings(config):
    """For `figure cost`: the studied models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([spread.seeded_spec(config, p["variant"], p["seed"])
                           for p in runs(config)])
