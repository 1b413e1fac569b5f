"""Fig. 3 (right) of Richard (2024): in-sample vs deep out-of-sample completion against the
number of distinct training words 10^k, for training depths q <= 4, 8, 12.

In-sample: prefixes of the training words themselves. Out-of-sample: prefixes of D_32 words
that already reach depth 13, deeper than any training word. The single-word model (k = 0,
q <= 4) and the largest q <= 8 model are the two models that Fig. 4, Table 1 and Fig. 5 study:
its configs live in richard.protocol (SAMPLES_CONFIGS, single_spec, many_spec), where
those figures take them from.

The `paper` config uses one learning rate, 6e-5, the top of the paper's range (AdamW at
6e-6 to 6e-5, Sec. 4.2); no other rate is searched. book/dyck.ipynb says so beside the figure.

A planned figure too (lengthgen.runs.planned): its models train in GPU slices and queues, each
alone (richard.protocol.job), under the keys Fig. 4, Fig. 5 and Table 1 name their models by
(protocol.shared_key: a queue trains the two models they share once), and are scored as
`run_one` scores them. Its closed-form run trains nothing: a slice scores it at its start.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-samples`
"""
import numpy as np

from lengthgen.experiments.richard.drawing import legend_below
from lengthgen.experiments.richard.protocol import (SAMPLES_CONFIGS, completion_rate,
                                                    deep_test_prefixes, model_spec,
                                                    random_prefixes)
from lengthgen.tasks.dyck import is_balanced, sample_words
from lengthgen.experiments import spread
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig3-right-samples"
TITLE = "In-sample vs deep out-of-sample completion against the number of training words"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 3 (right): the largest model (d = 1024, 4 layers, 4 heads) on 10^k words, k = "
    "0, 1, 3, 5, 7, of depth up to 4, 8, 12, as the paper.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("kind", "max_depth", "train_size")

CONFIGS = SAMPLES_CONFIGS


def runs(config):
    out = [{"name": "closed-form", "kind": "closed-form", "seed": config["seed"]}]
    # one seed per point unless the config lists "seeds" (run names then end in -s<seed>)
    out += [{"name": f"q{q:02d}-size{size:08d}{spread.run_suffix(config, seed)}",
             "kind": "trained", "max_depth": q, "train_size": size, "seed": seed}
            for q in config["depths"] for size in config["sizes"]
            for seed in spread.config_seeds(config)]
    return out


def _model_spec(params, config) -> dict | None:
    """The trained model of a run (None for the closed form, which trains nothing)."""
    if params["kind"] == "closed-form":
        return None
    return model_spec(config, train_size=params["train_size"], max_depth=params["max_depth"],
                      seed=params["seed"])


def _measure(model, words, params, config, device) -> dict:
    """Deep out-of-sample and in-sample completion rates of a model trained on `words` (the
    closed-form head's deep rate, for the run that trains nothing)."""
    from lengthgen.models.dyck import ClosedFormHead   # here: torch only where a model runs
    n = config["n"]
    rng = np.random.default_rng([config["seed"], 13])
    deep = deep_test_prefixes(n, config["test_prefixes"], config["test_depth"], rng)
    if params["kind"] == "closed-form":
        word = sample_words(rng, n, 1, 0, min(config["depths"]))[0]
        completions, _ = ClosedFormHead(word).complete(deep, rng)
        return {"out_of_sample": float(np.mean([is_balanced(p + c, n)
                                                for p, c in zip(deep, completions)])),
                "in_sample": 1.0, "train_size": 1, "train_word": word}
    own = random_prefixes(words, config["test_prefixes"], rng)
    return {"out_of_sample": completion_rate(model, deep, n, rng, device),
            "in_sample": completion_rate(model, own, n, rng, device),
            "train_size": params["train_size"], "max_depth": params["max_depth"]}


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure,
                                                                words=True)


def data(records):
    """One row per model (and the closed-form head): training depth and set size, in-sample
    and deep out-of-sample rates."""
    rows = [{"run": r["run_name"], "kind": r["params"]["kind"], "seed": r["params"]["seed"],
             "max_depth": r["params"].get("max_depth", min(r["config"]["depths"])),
             "train_size": r["metrics"]["train_size"], "in_sample": r["metrics"]["in_sample"],
             "out_of_sample": r["metrics"]["out_of_sample"]} for r in records]
    return sorted(rows, key=lambda row: (row["kind"], row["max_depth"], row["train_size"]))


def figure(records):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.4, 5.6))
    trained = [r for r in records if r["params"]["kind"] == "trained"]
    depths = sorted({r["params"]["max_depth"] for r in trained})
    colors = plt.cm.plasma(np.linspace(0.1, 0.8, max(len(depths), 1)))
    for q, c in zip(depths, colors):
        # several seeds per point: the mean, and the min-max range shaded
        groups = spread.group_by([r for r in trained if r["params"]["max_depth"] == q],
                                 lambda r: r["params"]["train_size"])
        sizes = sorted(groups)
        for key, fmt, alpha, what in (("out_of_sample", "o-", 1.0, "deep test"),
                                      ("in_sample", "o--", 0.6, "in-sample")):
            spread.line(ax, sizes, [[r["metrics"][key] for r in groups[s]] for s in sizes], fmt,
                        c, label=f"train depth <= {q}: {what}", alpha=0.15 * alpha)
    for r in records:
        if r["params"]["kind"] == "closed-form":
            ax.scatter(1, r["metrics"]["out_of_sample"], marker="D", s=90, color="limegreen",
                       edgecolor="black", zorder=5, label="closed form, one training word")
    cfg = records[0]["config"]
    ax.set_xscale("log")
    ax.set(xlabel="distinct training words", ylim=(-0.05, 1.05),
           ylabel="balanced completions",
           title=f"Test prefixes of depth >= {cfg['test_depth']}; d={cfg['d']}, "
                 f"L={cfg['layers']}, h={cfg['heads']}, {cfg['steps']} steps\n"
                 + spread.seeds_label(trained, lambda r: (r["params"]["max_depth"],
                                                          r["params"]["train_size"])))
    return legend_below(fig, ax)


def trainings(config):
    """For `figure cost`: the trained models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([_model_spec(p, config) for p in runs(config)
                           if p["kind"] == "trained"])
