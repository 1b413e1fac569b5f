"""Fig. 6 of Richard (2024): which architectural choices matter, against training set size.

Five variants (see richard.protocol.VARIANTS) are trained on 4^k distinct D_32 words and
score completions of prefixes of their own training words (in-sample) and of fresh words
(out-of-sample, any depth). The largest-set models of the three uniform-attention variants
are the ones Fig. 7 opens up (richard.protocol.learned_pe_models).

The `paper` config uses one learning rate, 6e-5, the top of the paper's range (AdamW at
6e-6 to 6e-5, Sec. 4.2); no other rate is searched. book/dyck.ipynb says so beside the figure.

Two variants differ from the paper's: eq1 has no residual or LayerNorm (the paper's
model 5 has both), and uniform-pm1-v freezes the attention's output projection to the
identity as well as V (the paper states only V = I).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-ablation`
"""
import numpy as np

from lengthgen.experiments.richard.drawing import legend_below
from lengthgen.experiments.richard.protocol import (ABLATION_CONFIGS, VARIANT_COLORS, VARIANTS,
                                                    ablation_spec, completion_rate,
                                                    random_prefixes, trainable_parameters)
from lengthgen.tasks.dyck import sample_words
from lengthgen.experiments import spread
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig6-ablation"
TITLE = "Ablation: positions, uniform attention with +-1 tokens, fixed V, Eq. (1) vs data size"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 6: the five variants on 4^k words, k = 1 ... 12, as the paper.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("variant", "k", "train_size", "trainable_parameters")

CONFIGS = ABLATION_CONFIGS


def runs(config):
    # one seed per point unless the config lists "seeds" (run names then end in -s<seed>)
    return [{"name": f"{variant}-k{k:02d}{spread.run_suffix(config, seed)}", "variant": variant,
             "k": k, "seed": seed}
            for variant in config["variants"] for k in config["ks"]
            for seed in spread.config_seeds(config)]


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return ablation_spec(config, params["variant"], params["k"], params["seed"])


def host_key(params, config):
    """The run's set of training words: the 12 sets of a variant, cycled five times in the
    runs' order, are more than a process keeps (runs.cost.HOST_KEYS_KEPT), so a sweep
    takes the runs of one set one after another (lengthgen.runs.execute.host_units)."""
    return protocol.words_key(_model_spec(params, config))


def _measure(model, words, params, config, device) -> dict:
    """In-sample and out-of-sample completion rates of a model trained on `words`."""
    rng = np.random.default_rng([params["seed"], 6])
    seen = set(words)
    fresh = [w for w in sample_words(rng, config["n"], 2 * config["test_prefixes"])
             if w not in seen]
    return {"variant": params["variant"], "train_size": len(words),
            "trainable_parameters": trainable_parameters(model),
            "in_sample": completion_rate(model, random_prefixes(words, config["test_prefixes"], rng),
                                         config["n"], rng, device),
            "out_of_sample": completion_rate(
                model, random_prefixes(fresh, config["test_prefixes"], rng), config["n"], rng,
                device)}


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure, words=True)


def data(records):
    """One row per variant and training set size: in-sample and out-of-sample rates."""
    rows = [{"variant": r["params"]["variant"], "k": r["params"]["k"],
             "seed": r["params"]["seed"], "train_size": r["metrics"]["train_size"],
             "trainable_parameters": r["metrics"]["trainable_parameters"],
             "in_sample": r["metrics"]["in_sample"], "out_of_sample": r["metrics"]["out_of_sample"]}
            for r in records]
    order = {v: i for i, v in enumerate(VARIANTS)}
    return sorted(rows, key=lambda row: (order.get(row["variant"], 99), row["k"]))


def figure(records):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.4, 5.6))
    for variant in VARIANTS:
        # several seeds per point: the mean, and the min-max range shaded
        groups = spread.group_by([r for r in records if r["params"]["variant"] == variant],
                                 lambda r: r["metrics"]["train_size"])
        if not groups:
            continue
        sizes = sorted(groups)
        params = groups[sizes[-1]][0]["metrics"]["trainable_parameters"]
        spread.line(ax, sizes, [[r["metrics"]["out_of_sample"] for r in groups[s]] for s in sizes],
                    "o-", VARIANT_COLORS[variant], label=f"{variant} ({params} params)")
        spread.line(ax, sizes, [[r["metrics"]["in_sample"] for r in groups[s]] for s in sizes],
                    "o--", VARIANT_COLORS[variant], alpha=0.08)
    cfg = records[0]["config"]
    ax.set_xscale("log", base=4)
    ax.set(xlabel="distinct training words (4^k)", ylabel="balanced completions", ylim=(-0.05, 1.05),
           title=f"$D_{{{2 * cfg['n']}}}$: out-of-sample (full) and in-sample (dashed); "
                 f"d={cfg['d']}, {cfg['steps']} steps\n"
                 + spread.seeds_label(records, lambda r: (r["params"]["variant"],
                                                          r["params"]["k"])))
    return legend_below(fig, ax)


def trainings(config):
    """For `figure cost`: one model per run (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([ablation_spec(config, p["variant"], p["k"], p["seed"])
                           for p in runs(config)])
