"""Fig. 5 of Richard (2024): the value-times-output-projection matrix of the top layer.

For the single-word and the many-word models of Fig. 3 (right) (same specs, same weights) we
take M = W_O W_V of the last attention layer (d x d, heads merged) and report its singular
values and complex eigenvalues. The paper sees a low-rank M with a dominant negative real
eigenvalue in the model that generalizes better. A config with "seeds" studies each seed's own
pair of models (the seed is in the model spec) and the figure overlays the seeds.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-spectrum`
"""
import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.protocol import (SAMPLES_CONFIGS, many_spec, single_spec,
                                                    value_projection)
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs
from lengthgen.experiments.spread import key_row

FIGURE_ID = "richard-fig5-spectrum"
TITLE = "Spectrum of the top layer's value x projection matrix, single- vs many-word model"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 5 studies the two models of Fig. 4.")

CONFIGS = {scale: {"models": {"single": single_spec(cfg), "many": many_spec(cfg)}, "seed": 0}
           for scale, cfg in SAMPLES_CONFIGS.items()}
# three seeds at book scale, two at test scale: each seed trains its own pair of models
# ("models" holds the specs of seed 0)
CONFIGS["book"] = {**CONFIGS["book"], "seeds": [0, 1, 2]}
CONFIGS["test"] = {**CONFIGS["test"], "seeds": [0, 1]}
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("model", "train_size", "max_depth", "quantity", "i", "j")


def runs(config):
    # one run per model unless the config lists "seeds" (names then end in -s<seed>)
    return spread.model_runs(config)


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return spread.seeded_spec(config, params["model"], params["seed"])


def _measure(model, params, config, device) -> dict:
    """W_O W_V of the top layer, its singular values and eigenvalues."""
    spec = _model_spec(params, config)
    m = value_projection(model)
    eig = np.linalg.eigvals(m)
    order = np.argsort(-np.abs(eig))
    singular = np.linalg.svd(m, compute_uv=False)
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "matrix": m.tolist(), "singular_values": singular.tolist(),
            "eigenvalues_real": eig.real[order].tolist(),
            "eigenvalues_imag": eig.imag[order].tolist(),
            "top_singular_share": float(singular[0] ** 2 / (singular ** 2).sum())}


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure)


def data(records):
    """One row per plotted number of each model: the entries of W_O W_V (quantity "matrix",
    row i, column j), its singular values and its eigenvalues (index i, largest first; the
    eigenvalue's imaginary part in `imag`), and the top singular value's share of the squared
    spectrum (quantity "top_singular_share")."""
    rows = []
    for r in sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"])):
        m = r["metrics"]
        base = {"model": r["params"]["model"], "seed": r["params"]["seed"],
                "train_size": m["train_size"], "max_depth": m["max_depth"]}
        rows.append({**base, "quantity": "top_singular_share", "i": 0, "j": "",
                     "value": m["top_singular_share"], "imag": 0.0})
        rows += [{**base, "quantity": "matrix", "i": i, "j": j, "value": value, "imag": 0.0}
                 for i, line in enumerate(m["matrix"]) for j, value in enumerate(line)]
        rows += [{**base, "quantity": "singular_value", "i": i, "j": "", "value": value,
                  "imag": 0.0} for i, value in enumerate(m["singular_values"])]
        rows += [{**base, "quantity": "eigenvalue", "i": i, "j": "", "value": re, "imag": im}
                 for i, (re, im) in enumerate(zip(m["eigenvalues_real"], m["eigenvalues_imag"]))]
    return rows


def figure(records):
    """One column per model (single-word, many-word): W_O W_V of the smallest seed, and the
    singular values and eigenvalues of every seed overlaid (one colour per seed)."""
    import matplotlib.pyplot as plt

    models = _models(records)
    # one column per model, one row per view: two panels side by side fit the book's column
    fig, axes = plt.subplots(3, len(models), figsize=(3.7 * len(models), 10.5), squeeze=False)
    colors = _seed_colors(records)
    for row, group in zip(axes.T, models.values()):
        _draw_model(fig, row, group, colors)
        row[0].set_title(f"W_O W_V, {_label(group)}\n(seed {group[0]['params']['seed']})")
        row[1].set_title(f"singular values\n(top share {_top_share(group)})")
        row[1].legend(fontsize=7)
        row[2].set_title("eigenvalues\n(star: largest modulus)")
    fig.suptitle(_seeds_title(records), fontsize=9)
    fig.tight_layout()
    return fig


# on a phone: a matrix's panel and a spectrum's (in inches), and the seeds' key
_PHONE_MATRIX_IN, _PHONE_SPECTRUM_IN, _PHONE_KEY_IN = 1.7, 1.2, 0.25


def phone_figure(records):
    """The same six panels for a phone's column, where the column's figure laid out again was
    1,780 px tall and its spectra did not say which model they were: one column, the two models
    one after the other in each view (the matrices, the singular values, the eigenvalues),
    every panel titled with its model, the seeds' colours in one key at the top instead of a legend
    under each panel of singular values."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    models = _models(records)
    colors = _seed_colors(records)
    heights = [_PHONE_KEY_IN] + [_PHONE_MATRIX_IN] * len(models) + \
        [_PHONE_SPECTRUM_IN] * 2 * len(models)
    fig = plt.figure(figsize=(3.8, sum(heights) + 1.0 * len(heights)))
    grid = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    key_row(fig, fig.add_subplot(grid[0]),
            [Line2D([], [], color=c, marker="o", ms=4) for c in colors.values()],
            [f"seed {seed}" for seed in colors])
    for index, group in enumerate(models.values()):
        row = [fig.add_subplot(grid[1 + index + view * len(models)]) for view in range(3)]
        _draw_model(fig, row, group, colors)
        # the model on a line of its own above each view, lines a phone's column holds
        label = _label(group).replace("<=", "≤")
        for ax, view in zip(row, (f"W_O W_V (seed {group[0]['params']['seed']})",
                                  f"singular values, top share\n{_top_share(group)}",
                                  "eigenvalues\n(star: largest modulus)")):
            ax.set_title(f"{label}\n{view}", fontsize=10.5)
    fig.suptitle(_seeds_title(records), fontsize=10.5)
    fig.tight_layout()
    return fig


def _models(records) -> dict:
    """{model: its records}, the single-word model first, each model's seeds in order."""
    return spread.group_by(sorted(records, key=lambda r: (r["metrics"]["train_size"],
                                                          r["params"]["seed"])),
                           lambda r: r["params"]["model"])


def _seed_colors(records) -> dict:
    import matplotlib.pyplot as plt
    seeds = sorted({r["params"]["seed"] for r in records})
    return dict(zip(seeds, plt.cm.tab10(np.arange(len(seeds)))))


def _label(group) -> str:
    first = group[0]["metrics"]
    return f"{first['train_size']} word(s), depth <= {first['max_depth']}"


def _top_share(group) -> str:
    share = spread.spread([r["metrics"]["top_singular_share"] for r in group])
    return (f"{share[0]:.0%}" if share[3] == 1 else
            f"mean {share[0]:.0%}, {share[1]:.0%} to {share[2]:.0%}")


def _seeds_title(records) -> str:
    return (spread.seeds_label(records, lambda r: r["params"]["model"])
            .replace(", mean and min-max", "").replace("per setting", "per model")
            + ", one colour per seed")


def _draw_model(fig, row, group, colors) -> None:
    """One model's three views in the axes of `row`: W_O W_V of its first seed (with a
    colorbar), the singular values and the eigenvalues of every seed (unlabelled: the
    callers title them)."""
    mat = np.array(group[0]["metrics"]["matrix"])
    bound = np.abs(mat).max()
    im = row[0].imshow(mat, cmap="RdBu_r", vmin=-bound, vmax=bound)
    fig.colorbar(im, ax=row[0], fraction=0.046)
    row[0].set(xlabel="input dimension", ylabel="output dimension")
    for r in group:
        m, c = r["metrics"], colors[r["params"]["seed"]]
        row[1].semilogy(np.arange(1, len(m["singular_values"]) + 1), m["singular_values"],
                        "o-", color=c, ms=3, lw=1, label=f"seed {r['params']['seed']}")
        row[2].scatter(m["eigenvalues_real"], m["eigenvalues_imag"], s=10, color=c, alpha=0.6)
        row[2].scatter(m["eigenvalues_real"][:1], m["eigenvalues_imag"][:1], s=70, color=c,
                       edgecolor="black", marker="*", zorder=5)
    row[1].set(xlabel="index", ylabel="singular value")
    row[2].axhline(0, color="grey", lw=0.5)
    row[2].axvline(0, color="grey", lw=0.5)
    row[2].set(xlabel="real part", ylabel="imaginary part")


def trainings(config):
    """For `figure cost`: the studied models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([spread.seeded_spec(config, p["model"], p["seed"])
                           for p in runs(config)])
