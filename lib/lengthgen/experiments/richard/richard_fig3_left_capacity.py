"""Fig. 3 (left) of Richard (2024): deep-prefix completion accuracy against model size.

Decoders of several widths d, layers L and heads h are trained on D_32 words of depth <= 8
and asked to complete prefixes of depth >= 9; a completion counts when the whole word is
balanced. The closed-form head (d = L = h = 1, 35 weights) is scored on the same prefixes.

The paper trains with AdamW at learning rates "between 6e-6 to 6e-5" (Sec. 4.2) and reports
the models' best performance (our reading: the best run of each shape). The `paper` config
therefore lists three rates spanning that range (`lrs`; the paper does not give its grid),
trains one model per rate, and the figure shows the best of them per shape. Configs with a
single `lr` (book, test) train one model per shape.

A planned figure too (lengthgen.runs.planned): its models train in GPU slices and queues, each
alone (richard.protocol.job, under protocol.shared_key: none is another figure's model, since
these train on fresh words at every step), and are scored as `run_one` scores them. Its
closed-form run trains nothing: a slice scores it at its start.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-capacity`
"""
import numpy as np

from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import (completion_rate, deep_test_prefixes,
                                                    model_spec, trainable_parameters)
from lengthgen.experiments.richard.rows import best_per_shape
from lengthgen.experiments import spread
from lengthgen.tasks.dyck import is_balanced, sample_words
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig3-left-capacity"
TITLE = "Completion of deep D_32 prefixes vs parameter count; closed form as reference"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 3 (left): d in 2 ... 1024 by layers and heads in 1, 2, 4, as the paper; three "
    "rates of its range, the best kept.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("kind", "d", "layers", "heads", "lr", "n_params")

# Three rates spanning the paper's range "between 6e-6 to 6e-5" (its Sec. 4.2).
_PAPER_LRS = [6e-6, 2e-5, 6e-5]
_SHARED = {"n": 16, "variant": "full", "max_depth": 8, "test_depth": 9, "seed": 0}
CONFIGS = {
    "test": {**_SHARED, "dims": [2, 4], "layers_heads": [[1, 1]], "steps": 3, "batch_size": 4,
             "lr": 3e-3, "test_prefixes": 8},
    "book": {**_SHARED, "dims": [2, 8, 32], "layers_heads": [[1, 1], [2, 2]], "steps": 400,
             "batch_size": 32, "lr": 3e-3, "test_prefixes": 128, "seeds": [0, 1, 2]},
    "paper": {**_SHARED, "dims": [2, 16, 128, 512, 1024],
              "layers_heads": [[layers, heads] for layers in (1, 2, 4) for heads in (1, 2, 4)],
              "steps": 10000, "batch_size": 8, "lrs": _PAPER_LRS, "dropout": 0.1,
              "test_prefixes": 1024},
}


def runs(config):
    out = [{"name": "closed-form", "kind": "closed-form", "seed": config["seed"]}]
    for d in config["dims"]:
        for layers, heads in config["layers_heads"]:
            if d % heads != 0:
                continue
            # one seed per shape unless the config lists "seeds" (names then end in -s<seed>)
            for seed in spread.config_seeds(config):
                shape = {"kind": "trained", "d": d, "layers": layers, "heads": heads,
                         "seed": seed}
                name, suffix = f"d{d:04d}-L{layers}-h{heads}", spread.run_suffix(config, seed)
                if "lrs" not in config:  # one rate, the config's own (book and test scales)
                    out.append({"name": name + suffix, **shape})
                else:  # a search over rates: one model each, the figure keeps the best
                    out += [{"name": f"{name}-lr{lr:g}{suffix}", **shape, "lr": lr}
                            for lr in config["lrs"]]
    return out


def _test_prefixes(config) -> list[str]:
    rng = np.random.default_rng([config["seed"], 9])
    return deep_test_prefixes(config["n"], config["test_prefixes"], config["test_depth"], rng)


def _model_spec(params, config) -> dict | None:
    """The trained model of a run (None for the closed form, which trains nothing)."""
    if params["kind"] == "closed-form":
        return None
    rate = {"lr": params["lr"]} if "lr" in params else {}
    return model_spec(config, d=params["d"], layers=params["layers"], heads=params["heads"],
                      seed=params["seed"], **rate)


def _measure(model, params, config, device) -> dict:
    """The share of deep prefixes the model completes to a balanced word (the closed-form
    head's, for the run that trains nothing), and its size."""
    from lengthgen.models.dyck import ClosedFormHead   # here: torch only where a model runs
    prefixes = _test_prefixes(config)
    rng = np.random.default_rng([params["seed"], 3])
    if params["kind"] == "closed-form":
        word = sample_words(rng, config["n"], 1, 0, config["max_depth"])[0]
        head = ClosedFormHead(word)
        completions, _ = head.complete(prefixes, rng)
        accuracy = float(np.mean([is_balanced(p + c, config["n"])
                                  for p, c in zip(prefixes, completions)]))
        return {"accuracy": accuracy, "n_params": head.n_weights, "d": 1, "layers": 1,
                "heads": 1, "train_word": word}
    return {"accuracy": completion_rate(model, prefixes, config["n"], rng, device),
            "n_params": trainable_parameters(model), "d": params["d"],
            "layers": params["layers"], "heads": params["heads"]}


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure)


def data(records):
    """One row per model: its shape, learning rate, parameter count and accuracy, and whether
    it is its shape's best (the point drawn)."""
    best = {id(m) for m in best_per_shape([r["metrics"] for r in records
                                           if r["params"]["kind"] == "trained"])}
    rows = [{"run": r["run_name"], "kind": r["params"]["kind"], "seed": r["params"]["seed"],
             "d": r["metrics"]["d"], "layers": r["metrics"]["layers"],
             "heads": r["metrics"]["heads"],
             "lr": r["params"].get("lr", r["config"].get("lr", "")) if r["params"]["kind"] ==
             "trained" else "", "n_params": r["metrics"]["n_params"],
             "accuracy": r["metrics"]["accuracy"],
             "drawn": r["params"]["kind"] == "closed-form" or id(r["metrics"]) in best}
            for r in records]
    return sorted(rows, key=lambda row: (row["kind"], row["n_params"]))


def figure(records):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    # several seeds per shape and rate: their mean (the best rate's, per shape) and min-max bar
    def setting(r):
        return tuple(sorted((k, str(v)) for k, v in r["params"].items()
                            if k not in ("name", "seed")))

    runs_of = spread.group_by([r for r in records if r["params"]["kind"] == "trained"], setting)
    means = [{**g[0]["metrics"],
              "accuracy": spread.spread([r["metrics"]["accuracy"] for r in g])[0],
              "seeds": [r["metrics"]["accuracy"] for r in g]} for g in runs_of.values()]
    trained = best_per_shape(means)
    markers = {1: "o", 2: "s", 4: "^"}
    dims = sorted({m["d"] for m in trained})
    colors = plt.cm.viridis(np.linspace(0, 0.9, max(len(dims), 1)))
    for m in trained:
        spread.points(ax, [m["n_params"]], [m["seeds"]], colors[dims.index(m["d"])],
                      marker=markers.get(m["layers"], "o"), s=20 + 15 * m["heads"])
    single = sorted((m for m in trained if m["layers"] == 1 and m["heads"] == 1),
                    key=lambda m: m["n_params"])
    ax.plot([m["n_params"] for m in single], [m["accuracy"] for m in single], "k:", lw=1,
            label="L = h = 1")
    for d, c in zip(dims, colors):
        ax.scatter([], [], color=c, label=f"d = {d}")
    for layers, mk in markers.items():
        if any(m["layers"] == layers for m in trained):
            ax.scatter([], [], marker=mk, color="grey", label=f"L = {layers}")
    for r in records:
        if r["params"]["kind"] == "closed-form":
            m = r["metrics"]
            ax.scatter(m["n_params"], m["accuracy"], marker="D", s=90, color="limegreen",
                       edgecolor="black", zorder=5, label=f"closed form ({m['n_params']} weights)")
    cfg = records[0]["config"]
    ax.set_xscale("log")
    ax.set(xlabel="trainable parameters", ylim=(-0.05, 1.05),
           ylabel=f"balanced completions, prefixes of depth >= {cfg['test_depth']}",
           title=f"$D_{{{2 * cfg['n']}}}$: trained on depth <= {cfg['max_depth']}, "
                 f"{cfg['steps']} steps\n" + spread.seeds_label(
                     [r for g in runs_of.values() for r in g] or records, setting))
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: the trained models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([_model_spec(p, config) for p in runs(config)
                           if p["kind"] == "trained"])
