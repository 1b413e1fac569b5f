"""Fig. 4 of Richard (2024): what the single-word and the many-word models actually generate.

Each model completes three contexts many times (sampling): a prefix of the single training
word, a context deeper than any training word (nine open brackets), and a shallow context that
is not a prefix of the training word. The two models are those of Fig. 3 (right): the same
specs, so the same trained weights (single_spec / many_spec). A config with "seeds" studies
each seed's own pair of models (the seed is in the model spec; each seed's single-word model
has its own training word, so its own first and last contexts).
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard_dyck_training import completion_configs, trained_model
from lengthgen.tasks.dyck import is_balanced

FIGURE_ID = "richard-fig4-completions"
TITLE = "Sampled completions of three contexts by a single-word and a many-word model"

CONFIGS = completion_configs(top=8)
# three seeds at book scale, two at test scale: each seed trains its own pair of models
# ("models" holds the specs of seed 0)
CONFIGS["book"] = {**CONFIGS["book"], "seeds": [0, 1, 2]}
CONFIGS["test"] = {**CONFIGS["test"], "seeds": [0, 1]}
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting (rank 1 has every seed)
SPREAD_BY = ("model", "train_size", "max_depth", "context_kind", "rank")

SHALLOW_CANDIDATES = ("()()()()", "()(())()", "(())(())")


def runs(config):
    # one run per model unless the config lists "seeds" (names then end in -s<seed>)
    return spread.model_runs(config)


def contexts(single_word: str) -> dict[str, str]:
    """The training-word prefix, a deeper context, and a shallow non-prefix."""
    shallow = next(c for c in SHALLOW_CANDIDATES if not single_word.startswith(c))
    return {"training prefix": single_word[: len(single_word) // 2 - 2],
            "deeper (depth 9)": "(" * 9, "shallow": shallow}


def distribution(model, context: str, n: int, trials: int, top: int, rng, device) -> dict:
    from lengthgen.models.dyck import complete_with_model   # here: torch only where a model runs
    completions = complete_with_model(model, [context] * trials, n, rng, device=device)
    counts = Counter(completions)
    return {"context": context,
            "accuracy": float(np.mean([is_balanced(context + c, n) for c in completions])),
            "distinct": len(counts),
            "top": [{"completion": c, "count": k, "balanced": is_balanced(context + c, n)}
                    for c, k in counts.most_common(top)]}


def run_one(params, config, device):
    spec = spread.seeded_spec(config, params["model"], params["seed"])
    model, _ = trained_model(spec, device)
    _, single_words = trained_model(spread.seeded_spec(config, "single", params["seed"]), device)
    rng = np.random.default_rng([params["seed"], 4])
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "single_word": single_words[0], "order": list(contexts(single_words[0])),
            "contexts": {name: distribution(model, ctx, spec["n"], config["trials"],
                                            config["top"], rng, device)
                         for name, ctx in contexts(single_words[0]).items()}}


def data(records):
    """One row per model, seed, context and completion shown (the bars; `rank` 1 is the most
    frequent): how often it was sampled and whether the word is balanced, with the context's
    overall rate of balanced completions and number of distinct completions."""
    rows = []
    for r in sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"])):
        m = r["metrics"]
        for name in m["order"]:
            dist = m["contexts"][name]
            rows += [{"model": r["params"]["model"], "seed": r["params"]["seed"],
                      "train_size": m["train_size"], "max_depth": m["max_depth"],
                      "context_kind": name, "context": dist["context"], "rank": rank,
                      "completion": t["completion"], "count": t["count"],
                      "trials": r["config"]["trials"], "balanced": t["balanced"],
                      "context_balanced_rate": dist["accuracy"],
                      "context_distinct": dist["distinct"]}
                     for rank, t in enumerate(dist["top"], start=1)]
    return rows


SHOWN_PER_SEED = 3   # bars per seed and context in the figure (data() has the config's top)


def figure(records):
    """A row per model, a column per context: the most frequent completions of each seed
    (green: balanced, red: not); the last column: each context's share of balanced completions,
    per seed (dots), their mean (black tick) and min-max range."""
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"]))
    models = spread.group_by(records, lambda r: r["params"]["model"])
    names = records[0]["metrics"]["order"]
    fig, axes = plt.subplots(len(models), len(names) + 1,
                             figsize=(4.6 * len(names) + 3, 3.6 * len(models)), squeeze=False,
                             gridspec_kw={"width_ratios": [3] * len(names) + [2]})
    for row, group in zip(axes, models.values()):
        first = group[0]["metrics"]
        trials = group[0]["config"]["trials"]
        rates = []
        for ax, name in zip(row, names):
            bars, labels, colors = [], [], []
            for r in group:
                dist = r["metrics"]["contexts"][name]
                for t in dist["top"][:SHOWN_PER_SEED]:
                    bars.append(t["count"])
                    labels.append(f"s{r['params']['seed']} {dist['context']}|{t['completion']}")
                    colors.append("limegreen" if t["balanced"] else "crimson")
            ax.barh(range(len(bars))[::-1], bars, color=colors)
            ax.set_yticks(range(len(bars))[::-1])
            ax.set_yticklabels(labels, fontsize=5.5, family="monospace")
            ax.set_xlabel(f"count out of {trials}")
            rate = spread.spread([r["metrics"]["contexts"][name]["accuracy"] for r in group])
            rates.append([r["metrics"]["contexts"][name]["accuracy"] for r in group])
            ax.set_title(f"{first['train_size']} word(s), depth <= {first['max_depth']}: {name}"
                         f"\nbalanced {rate[0]:.0%}"
                         + (f" ({rate[1]:.0%} to {rate[2]:.0%})" if rate[3] > 1 else ""),
                         fontsize=9)
        summary = row[-1]
        for j, values in enumerate(rates):
            summary.scatter([j] * len(values), values, color="tab:blue", s=14, zorder=4)
        spread.points(summary, list(range(len(names))), rates, "black", marker="_", s=300,
                      zorder=5)
        summary.set_xticks(range(len(names)))
        summary.set_xticklabels(names, fontsize=7, rotation=20)
        summary.set(xlim=(-0.5, len(names) - 0.5), ylim=(-0.05, 1.05), xlabel="context",
                    ylabel="balanced completions", title="by seed (dots),\nmean and min-max")
    fig.suptitle(f"Most frequent {SHOWN_PER_SEED} completions per seed (s<seed>); "
                 + spread.seeds_label(records, lambda r: r["params"]["model"]).replace(
                     "per setting", "per model") + "; green: balanced, red: not", fontsize=9)
    fig.tight_layout()
    return fig
