"""What the sign of Fig. 5's dominant eigenvalue depends on: a small study.

Richard (2024, Sec. 4.2 and App. 5.3.3) sees a dominant negative real eigenvalue in the top
layer's value (times projection) matrix of the model that generalizes; our book-scale Fig. 5
has a positive one. This study retrains the many-word model of Fig. 3 (right) / Fig. 5 under a
few changes of setting, several seeds each, and records for each model whether it generalizes
(balanced completions of deep prefixes, as in Fig. 3 right) and the dominant eigenvalue (the
one of largest modulus) of three matrices:

  W_O W_V             what Fig. 5 shows: the map from the attention's input to its output
  W_V W_O^T           the other reading of "value matrix times projection transpose"; not
                      similar to W_O W_V, so its eigenvalues differ in general
  W_O W_V diag(g) P   the map the layer applies to the residual stream: the pre-LayerNorm
                      centres (P = I - 11^T/d), divides by a positive scale and multiplies by
                      the gains g before V. A sign of an eigenvalue is basis-free, but a
                      negative gain flips coordinates, so this is the one whose sign says
                      whether the layer writes back against the direction it reads.

Settings (each an override of the Fig. 5 many-word spec): "base" is that spec (with seed 0 it
is the very model Fig. 5 shows), "more-steps" and "most-steps" (5x and 10x as many steps),
"wider", "fewer-words" (10 training words) and "fresh-words" (new words of depth <= 8 at every
step).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-sign-study`
"""
import numpy as np

from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import (SAMPLES_CONFIGS, completion_rate,
                                                    deep_test_prefixes, many_spec,
                                                    registered_settings, setting_label)
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig5-sign-study"
TITLE = "Fig. 5 sign study: the dominant eigenvalue of the top value map against generalization"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " This study has no paper counterpart: Fig. 5's 10^7-word model, 3 seeds, and 10 "
    "words.")

_READINGS = ("wo_wv", "wv_wot", "effective")
_READING_LABELS = {"wo_wv": "W_O W_V", "wv_wot": "W_V W_O^T", "effective": "W_O W_V diag(g) P"}


def _config(scale: str, seeds: list[int], settings: dict) -> dict:
    samples = SAMPLES_CONFIGS[scale]
    return {"base_spec": many_spec(samples), "seeds": seeds,
            "settings": settings, "test_depth": samples["test_depth"],
            "test_prefixes": samples["test_prefixes"]}


CONFIGS = {
    "test": _config("test", [0, 1], {"base": {}, "more-steps": {"steps": 6}}),
    "book": _config("book", [0, 1, 2, 3],
                    {"base": {}, "more-steps": {"steps": 2000}, "most-steps": {"steps": 4000},
                     "wider": {"d": 128},
                     "fewer-words": {"train_size": 10}, "fresh-words": {"train_size": None}}),
    "paper": _config("paper", [0, 1, 2], {"base": {}, "fewer-words": {"train_size": 10}}),
}


def runs(config):
    return [{"name": f"{setting}-s{seed}", "setting": setting, "seed": seed}
            for setting in config["settings"] for seed in config["seeds"]]


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return protocol.sign_study_spec(config, params["setting"], params["seed"])


def _measure(model, params, config, device) -> dict:
    """Out-of-sample completions and the dominant eigenvalue of each reading of the top
    block's value map."""
    spec = _model_spec(params, config)
    rng = np.random.default_rng([params["seed"], 13])
    deep = deep_test_prefixes(spec["n"], config["test_prefixes"], config["test_depth"], rng)
    matrices, gain = protocol.value_readings(model)
    out = {"setting": params["setting"], "d": spec["d"], "steps": spec["steps"],
           "train_size": spec["train_size"],
           "out_of_sample": completion_rate(model, deep, spec["n"], rng, device),
           "ln_gain_min": float(gain.min()), "ln_gain_negative_share": float((gain < 0).mean())}
    for name, matrix in matrices.items():
        for key, value in protocol.dominant_eigenvalue(matrix).items():
            out[f"{name}_{key}"] = value
    return out


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure)


def data(records):
    return [{"setting": r["params"]["setting"], "seed": r["params"]["seed"], "reading": reading,
             "dominant_real": r["metrics"][f"{reading}_real"],
             "dominant_imag": r["metrics"][f"{reading}_imag"],
             "out_of_sample": r["metrics"]["out_of_sample"]}
            for r in records for reading in _READINGS]


def figure(records):
    import matplotlib.pyplot as plt

    config = records[0]["config"]
    settings = registered_settings(records, CONFIGS)
    # stacked for the book's column
    fig, axes = plt.subplots(2, 1, figsize=(7.4, 9.6))
    markers = {"wo_wv": "o", "wv_wot": "s", "effective": "^"}
    width = 0.8 / len(_READINGS)
    cmap = plt.cm.viridis
    for j, reading in enumerate(_READINGS):
        for i, setting in enumerate(settings):
            rows = [r["metrics"] for r in records if r["params"]["setting"] == setting]
            x = np.full(len(rows), i + (j - (len(_READINGS) - 1) / 2) * width)
            # a complex dominant pair has no sign: drawn hollow
            real = np.array([m[f"{reading}_imag"] == 0 for m in rows])
            values = np.array([m[f"{reading}_real"] for m in rows])
            colors = cmap(np.array([m["out_of_sample"] for m in rows]))
            axes[0].scatter(x[real], values[real], marker=markers[reading], c=colors[real], s=30,
                            edgecolor="black", lw=0.4,
                            label=_READING_LABELS[reading] if i == 0 else None)
            axes[0].scatter(x[~real], values[~real], marker=markers[reading], s=30,
                            facecolor="none", edgecolor=colors[~real])
    axes[0].axhline(0, color="grey", lw=0.6)
    axes[0].set_xticks(range(len(settings)))
    axes[0].set_xticklabels([setting_label(config["settings"][s]).replace(" ", "\n", 1)
                             for s in settings], fontsize=10.5)
    axes[0].set(xlabel="setting (changes from the Fig. 5 many-word spec)",
                ylabel="real part of the dominant eigenvalue",
                title="Dominant eigenvalue of the top layer, one mark per seed")
    axes[0].legend(fontsize=10.5)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
    fig.colorbar(sm, ax=axes[0], fraction=0.03, label="balanced deep completions")
    for i, setting in enumerate(settings):
        rows = [r["metrics"] for r in records if r["params"]["setting"] == setting]
        axes[1].scatter([m["out_of_sample"] for m in rows], [m["effective_real"] for m in rows],
                        label=setting_label(config["settings"][setting]), s=25)
    axes[1].axhline(0, color="grey", lw=0.6)
    axes[1].set(xlabel="balanced deep completions (depth >= %d)" % config["test_depth"],
                ylabel="real part of the dominant\neigenvalue of W_O W_V diag(g) P",
                title="Sign against generalization", xlim=(-0.05, 1.05))
    axes[1].legend(fontsize=10.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3,
                   frameon=False)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: the study's models (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([protocol.sign_study_spec(config, p["setting"], p["seed"])
                           for p in runs(config)])
