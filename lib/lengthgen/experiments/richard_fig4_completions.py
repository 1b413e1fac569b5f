"""Fig. 4 of Richard (2024): what the single-word and the many-word models actually generate.

Each model completes three contexts many times (sampling): a prefix of the single training
word, a context deeper than any training word (nine open brackets), and a shallow context that
is not a prefix of the training word. The two models are those of Fig. 3 (right): the same
specs, so the same trained weights (single_spec / many_spec).
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import richard_fig3_right_samples as samples_figure
from lengthgen.experiments.richard_dyck_training import trained_model
from lengthgen.models.dyck import complete_with_model
from lengthgen.tasks.dyck import is_balanced

FIGURE_ID = "richard-fig4-completions"
TITLE = "Sampled completions of three contexts by a single-word and a many-word model"

CONFIGS = samples_figure.completion_configs(top=8)

SHALLOW_CANDIDATES = ("()()()()", "()(())()", "(())(())")


def runs(config):
    return samples_figure.one_run_per_model(config)


def contexts(single_word: str) -> dict[str, str]:
    """The training-word prefix, a deeper context, and a shallow non-prefix."""
    shallow = next(c for c in SHALLOW_CANDIDATES if not single_word.startswith(c))
    return {"training prefix": single_word[: len(single_word) // 2 - 2],
            "deeper (depth 9)": "(" * 9, "shallow": shallow}


def distribution(model, context: str, n: int, trials: int, top: int, rng, device) -> dict:
    completions = complete_with_model(model, [context] * trials, n, rng, device=device)
    counts = Counter(completions)
    return {"context": context,
            "accuracy": float(np.mean([is_balanced(context + c, n) for c in completions])),
            "distinct": len(counts),
            "top": [{"completion": c, "count": k, "balanced": is_balanced(context + c, n)}
                    for c, k in counts.most_common(top)]}


def run_one(params, config, device):
    spec = config["models"][params["model"]]
    model, _ = trained_model(spec, device)
    _, single_words = trained_model(config["models"]["single"], device)
    rng = np.random.default_rng([params["seed"], 4])
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "single_word": single_words[0], "order": list(contexts(single_words[0])),
            "contexts": {name: distribution(model, ctx, spec["n"], config["trials"],
                                            config["top"], rng, device)
                         for name, ctx in contexts(single_words[0]).items()}}


def data(records):
    """One row per model, context and completion shown (the bars): how often it was sampled and
    whether the word is balanced, with the context's overall rate of balanced completions."""
    rows = []
    for r in sorted(records, key=lambda r: r["metrics"]["train_size"]):
        m = r["metrics"]
        for name in m["order"]:
            dist = m["contexts"][name]
            rows += [{"model": r["params"]["model"], "seed": r["params"]["seed"],
                      "train_size": m["train_size"], "max_depth": m["max_depth"],
                      "context_kind": name, "context": dist["context"],
                      "completion": t["completion"], "count": t["count"],
                      "trials": r["config"]["trials"], "balanced": t["balanced"],
                      "context_balanced_rate": dist["accuracy"],
                      "context_distinct": dist["distinct"]} for t in dist["top"]]
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: r["metrics"]["train_size"])
    names = records[0]["metrics"]["order"]
    fig, axes = plt.subplots(len(records), len(names), figsize=(5 * len(names), 3.2 * len(records)),
                             squeeze=False)
    for row, record in zip(axes, records):
        m = record["metrics"]
        trials = record["config"]["trials"]
        for ax, name in zip(row, names):
            dist = m["contexts"][name]
            top = dist["top"][::-1]
            ax.barh(range(len(top)), [t["count"] for t in top],
                    color=["limegreen" if t["balanced"] else "crimson" for t in top])
            ax.set_yticks(range(len(top)))
            ax.set_yticklabels([dist["context"] + "|" + t["completion"] for t in top],
                               fontsize=6, family="monospace")
            ax.set_xlabel(f"count out of {trials}")
            ax.set_title(f"{m['train_size']} word(s), depth <= {m['max_depth']}: {name}\n"
                         f"balanced {dist['accuracy']:.0%}, {dist['distinct']} distinct",
                         fontsize=9)
    fig.suptitle(f"Single training word: {records[0]['metrics']['single_word']} "
                 "(green: balanced, red: not)", fontsize=9)
    fig.tight_layout()
    return fig
