"""Why the end values of Fig. 7 come out in another order than the paper's: a small study.

Richard (2024, App. 5.3.4) reads Fig. 7 as: the cumulative positional curves end farthest from
the origin when V is learned (uniform-pm1), closer with V = I (uniform-pm1-v), closest in the
single-head model. Our book-scale Fig. 7 gives another order. This study retrains the Fig. 7
models under a few changes of setting, several seeds each, and records per model how far the
curves end from the origin:

  end_abs_mean  mean over coordinates j of |c_j(T)|, the statistic of Fig. 7's panel titles
  amplitude     mean over coordinates of the root-mean-square of c_j over positions
  end_relative  end_abs_mean / amplitude: the end measured in the curves' own size, since the
                variants' positional tables have different scales
  readout_end   eq1 only: where the one curve that eq1's output reads ends. eq1's bracket logit
                is 1^T V mean(x), so the positions act only through w^T c(r) with w = V^T 1;
                divided by 1^T V 1 (what one '(' adds) it is on the scale of the closed form's
                curve, which ends at -1/2 on our table (position 0 is <bos>). The single
                coordinates of eq1 are read by nothing in particular and may end anywhere.
  token_weight  eq1 only: 1^T V 1, the head's weight on the bracket count; negative in the
                closed form (v < -2N^2: the head pulls a deeper prefix back down)

Settings (each an override of the Fig. 7 spec): "base" is the Fig. 7 spec itself (with seed 0
it is the very model Fig. 7 shows), "more-steps" and "most-steps" train 5x and 10x longer,
"wider" uses a larger d, "fresh-words" draws new words at every step instead of a fixed set.
Besides the three Fig. 7 variants, eq1-res is Eq. (1) with a residual connection and
LayerNorm, as the paper's model 5 has (lengthgen.models.dyck_variants.STUDY_VARIANTS).

The token-embedding change (u = (+1, -1, ...) instead of the paper's all-ones) is not a
setting: in eq1 it is a relabelling (flip the sign of coordinate j of B and of row and column
j of V: the initial distribution is symmetric under it), and in the decoder variants the
all-ones vector is erased by LayerNorm (token_signs), so there is nothing to compare.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-order-study`
"""
import numpy as np

from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import (LEARNED_PE_VARIANTS, VARIANT_COLORS,
                                                    learned_pe_models, position_curves,
                                                    registered_settings, setting_label)
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig7-order-study"
TITLE = "Fig. 7 order study: how far learned positional curves end from 0, per variant and setting"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " This study has no paper counterpart: Fig. 7's models and eq1-res with 3 seeds, also"
    " on fresh words.")

_VARIANTS = LEARNED_PE_VARIANTS + ("eq1-res",)
_STATISTICS = ("end_abs_mean", "end_relative")


def _base_specs(scale: str) -> dict:
    """Fig. 7's own specs, and eq1-res: the frozen-V spec with one layer and one head."""
    specs = learned_pe_models(scale)
    specs["eq1-res"] = {**specs["uniform-pm1-v"], "variant": "eq1-res", "layers": 1, "heads": 1}
    return specs


def _wider(scale: str) -> int:
    return {"test": 8, "book": 128, "paper": 1024}[scale]


CONFIGS = {
    "test": {"base_specs": _base_specs("test"), "seeds": [0, 1],
             "settings": {"base": {}, "more-steps": {"steps": 6}}},
    "book": {"base_specs": _base_specs("book"), "seeds": [0, 1, 2, 3],
             "settings": {"base": {}, "more-steps": {"steps": 2000},
                          "most-steps": {"steps": 4000}, "wider": {"d": _wider("book")},
                          "fresh-words": {"train_size": None}}},
    "paper": {"base_specs": _base_specs("paper"), "seeds": [0, 1, 2],
              "settings": {"base": {}, "fresh-words": {"train_size": None}}},
}


def runs(config):
    return [{"name": f"{setting}-{variant}-s{seed}", "setting": setting, "variant": variant,
             "seed": seed}
            for setting in config["settings"] for variant in _VARIANTS for seed in config["seeds"]]


def _model_spec(params, config) -> dict:
    return protocol.order_study_spec(config, params["setting"], params["variant"],
                                     params["seed"])


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _measure(model, params, config, device) -> dict:
    """How far the model's positional curves end from 0 (and eq1's readout)."""
    model_spec = _model_spec(params, config)
    curves = position_curves(model, params["variant"])
    out = {"setting": params["setting"], "variant": params["variant"], "d": model_spec["d"],
           "steps": model_spec["steps"], "train_size": model_spec["train_size"],
           **protocol.end_statistics(curves), "readout_end": None, "token_weight": None}
    if params["variant"] == "eq1":
        import torch
        with torch.no_grad():
            out.update(protocol.readout(model.value.weight.double().cpu().numpy(), curves))
    return out


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(
    _model_spec, _measure, to_device=False)


def data(records):
    return [{"setting": r["params"]["setting"], "variant": r["params"]["variant"],
             "seed": r["params"]["seed"], "statistic": stat, "value": r["metrics"][stat]}
            for r in records for stat in _STATISTICS + ("readout_end", "token_weight")
            if r["metrics"].get(stat) is not None]


_COLORS = {**{v: VARIANT_COLORS[v] for v in LEARNED_PE_VARIANTS}, "eq1-res": "darkorange"}


def figure(records):
    import matplotlib.pyplot as plt

    config = records[0]["config"]
    settings = registered_settings(records, CONFIGS)
    labels = [setting_label(config["settings"][s]) for s in settings]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), gridspec_kw={"width_ratios": [2, 2, 1.2]})
    width = 0.8 / len(_VARIANTS)
    for ax, stat in zip(axes, _STATISTICS):
        for j, variant in enumerate(_VARIANTS):
            for i, setting in enumerate(settings):
                values = [r["metrics"][stat] for r in records if r["params"]["setting"] == setting
                          and r["params"]["variant"] == variant]
                if not values:
                    continue
                x = i + (j - (len(_VARIANTS) - 1) / 2) * width
                ax.scatter(np.full(len(values), x), values, s=14, color=_COLORS[variant], alpha=0.6)
                ax.hlines(np.mean(values), x - width / 2, x + width / 2, color=_COLORS[variant],
                          lw=2.5, label=variant if i == 0 else None)
        ax.set_xticks(range(len(settings)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set(xlabel="setting (changes from the Fig. 7 spec)",
               ylabel={"end_abs_mean": "mean |end value|",
                       "end_relative": "mean |end value| / curve RMS"}[stat],
               title={"end_abs_mean": "How far the curves end from 0",
                      "end_relative": "The same, in units of the curves' own size"}[stat])
        ax.set_ylim(bottom=0)
    axes[0].legend(fontsize=8, title="dots: seeds, bar: mean", title_fontsize=7)
    ax = axes[2]
    for i, setting in enumerate(settings):
        values = [r["metrics"]["readout_end"] for r in records if r["params"]["setting"] == setting
                  and r["metrics"].get("readout_end") is not None]
        if values:
            ax.scatter(np.full(len(values), i), values, s=14, color=_COLORS["eq1"], alpha=0.6)
            ax.hlines(np.mean(values), i - 0.3, i + 0.3, color=_COLORS["eq1"], lw=2.5)
    ax.axhline(-0.5, color="limegreen", ls="--", lw=1.5, label="closed form (-1/2)")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xticks(range(len(settings)))
    ax.set_xticklabels(labels, fontsize=7, rotation=20)
    ax.set(xlabel="setting", ylabel="end of w^T c(r) / 1^T V 1",
           title="eq1: the one curve its output reads")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: the study's models (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([protocol.order_study_spec(config, p["setting"], p["variant"], p["seed"])
                           for p in runs(config)])
