"""Fig. 4 of Richard (2024): what the single-word and the many-word models actually generate.

Each model completes three contexts many times (sampling): a prefix of the single training
word, a context deeper than any training word (nine open brackets), and a shallow context that
is not a prefix of the training word. The two models are those of Fig. 3 (right): the same
specs, so the same trained weights (single_spec / many_spec). A config with "seeds" studies
each seed's own pair of models (the seed is in the model spec; each seed's single-word model
has its own training word, so its own first and last contexts).

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues, each
model alone (richard.protocol.job), and are scored as `run_one` scores them.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-completions`
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.protocol import completion_configs, training_words
from lengthgen.tasks.dyck import is_balanced
from lengthgen.experiments.richard import protocol
from lengthgen.experiments.richard.protocol import PAPER_SCALE_DYCK
from lengthgen.runs.planned import Run as spec, plan_runs

FIGURE_ID = "richard-fig4-completions"
TITLE = "Sampled completions of three contexts by a single-word and a many-word model"
PAPER_SCALE = PAPER_SCALE_DYCK + (
    " Fig. 4 studies two models of Fig. 3 (right): one word of depth 4, and 10^7 words of"
    " depth up to 8.")

CONFIGS = completion_configs(top=8)
# three seeds at book scale, two at test scale: each seed trains its own pair of models
# ("models" holds the specs of seed 0)
CONFIGS["book"] = {**CONFIGS["book"], "seeds": [0, 1, 2]}
CONFIGS["test"] = {**CONFIGS["test"], "seeds": [0, 1]}
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting (rank 1 has every seed)
SPREAD_BY = ("model", "train_size", "max_depth", "context_kind", "rank")

_SHALLOW_CANDIDATES = ("()()()()", "()(())()", "(())(())")


def runs(config):
    # one run per model unless the config lists "seeds" (names then end in -s<seed>)
    return spread.model_runs(config)


def _contexts(single_word: str) -> dict[str, str]:
    """The training-word prefix, a deeper context, and a shallow non-prefix."""
    shallow = next(c for c in _SHALLOW_CANDIDATES if not single_word.startswith(c))
    return {"training prefix": single_word[: len(single_word) // 2 - 2],
            "deeper (depth 9)": "(" * 9, "shallow": shallow}


def _distribution(model, context: str, n: int, trials: int, top: int, rng, device) -> dict:
    from lengthgen.models.dyck import complete_with_model   # here: torch only where a model runs
    completions = complete_with_model(model, [context] * trials, n, rng, device=device)
    counts = Counter(completions)
    return {"context": context,
            "accuracy": float(np.mean([is_balanced(context + c, n) for c in completions])),
            "distinct": len(counts),
            "top": [{"completion": c, "count": k, "balanced": is_balanced(context + c, n)}
                    for c, k in counts.most_common(top)]}


# a planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues
plan = plan_runs(runs)


def _model_spec(params, config) -> dict:
    return spread.seeded_spec(config, params["model"], params["seed"])


def _measure(model, params, config, device) -> dict:
    """The model's completions of three contexts made from the single-word model's training
    word (drawn from its spec: no model is trained for it here)."""
    spec = _model_spec(params, config)
    single_words = training_words(spread.seeded_spec(config, "single", params["seed"]))
    rng = np.random.default_rng([params["seed"], 4])
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "single_word": single_words[0], "order": list(_contexts(single_words[0])),
            "contexts": {name: _distribution(model, ctx, spec["n"], config["trials"],
                                            config["top"], rng, device)
                         for name, ctx in _contexts(single_words[0]).items()}}


# the run's model trained alone and shared by its key, then measured (protocol.planned_hooks)
engine_job, shared_key, score, run_one = protocol.planned_hooks(_model_spec, _measure)


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


_SHOWN_PER_SEED = 3   # bars per seed and context in the figure (data() has the config's top)


def _model_label(metrics: dict) -> str:
    words = metrics["train_size"]
    return f"{words} word{'' if words == 1 else 's'}, depth <= {metrics['max_depth']}"


def _summary(summary, models: dict, names: list[str], legend_beside: bool = True) -> None:
    """Each context's share of balanced completions per seed (dots), their mean (black tick)
    and min-max range, for both models. `legend_beside`: the legend left of the panel, in the
    room the labels of the bars above it need (else where the layout puts it)."""
    for k, group in enumerate(models.values()):
        offset = (k - (len(models) - 1) / 2) * 0.22
        xs = [j + offset for j in range(len(names))]
        rates = [[r["metrics"]["contexts"][name]["accuracy"] for r in group] for name in names]
        for x, values in zip(xs, rates):
            summary.scatter([x] * len(values), values, color=f"C{k}", s=18, zorder=4,
                            label=_model_label(group[0]["metrics"]) if x == xs[0] else None)
        spread.points(summary, xs, rates, "black", marker="_", s=300, zorder=5)
    summary.set_xticks(range(len(names)))
    summary.set_xticklabels([name.replace(" ", "\n", 1) for name in names], fontsize=10.5)
    summary.set(xlim=(-0.5, len(names) - 0.5), ylim=(-0.05, 1.05), xlabel="context",
                ylabel="share balanced", title="per seed (dots), mean and min-max")
    if legend_beside:
        summary.legend(loc="center right", bbox_to_anchor=(-0.3, 0.5), fontsize=10.5,
                       title="model", title_fontsize=10.5)
    else:
        summary.legend(fontsize=10.5, title="model", title_fontsize=10.5)


def _title(records) -> str:
    return (f"Most frequent {_SHOWN_PER_SEED} completions per seed (s<seed>: context|"
            "completion); "
            + spread.seeds_label(records, lambda r: r["params"]["model"]).replace(
                "per setting", "per model") + "; green: balanced, red: not")


def figure(records):
    """One panel per model and context, stacked for the book's column: the most frequent
    completions of each seed (green: balanced, red: not), with their counts; the last panel:
    each context's share of balanced completions per seed (dots), their mean (black tick) and
    min-max range, for both models."""
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"]))
    models = spread.group_by(records, lambda r: r["params"]["model"])
    names = records[0]["metrics"]["order"]
    trials = records[0]["config"]["trials"]
    panels = []   # (model's records, context name, [(label, count, balanced)] top first)
    for group in models.values():
        for name in names:
            bars = []
            for r in group:
                dist = r["metrics"]["contexts"][name]
                bars += [(f"s{r['params']['seed']} {dist['context']}|{t['completion']}",
                          t["count"], t["balanced"]) for t in dist["top"][:_SHOWN_PER_SEED]]
            panels.append((group, name, bars))
    # a bar row is 0.21 in (labels at 10.5 pt); each panel also needs about 0.9 in for its
    # two-line title and x axis
    heights = [0.21 * len(bars) + 0.1 for _, _, bars in panels] + [2.0]
    fig, axes = plt.subplots(len(panels) + 1, 1, figsize=(7.4, sum(heights) + 0.9 * len(heights)),
                             gridspec_kw={"height_ratios": heights})
    for ax, (group, name, bars) in zip(axes, panels):
        y = list(range(len(bars)))[::-1]
        ax.barh(y, [b[1] for b in bars], height=0.7,
                color=["limegreen" if b[2] else "crimson" for b in bars])
        for row, (_, count, _) in zip(y, bars):
            ax.text(count + 0.01 * trials, row, str(count), va="center", fontsize=10.5)
        ax.set_yticks(y)
        ax.set_yticklabels([b[0] for b in bars], fontsize=10.5, family="monospace")
        ax.set_ylim(-0.6, len(bars) - 0.4)
        ax.set_xlim(0, 1.12 * trials)
        ax.set_xticks([0, trials // 4, trials // 2, 3 * trials // 4, trials])
        ax.set_xlabel(f"count out of {trials}", fontsize=10.5)
        rate = spread.spread([r["metrics"]["contexts"][name]["accuracy"] for r in group])
        ax.set_title(f"{_model_label(group[0]['metrics'])}: {name}\n{rate[0]:.0%} balanced"
                     + (f" ({rate[1]:.0%} to {rate[2]:.0%})" if rate[3] > 1 else ""),
                     fontsize=10.5)
    _summary(axes[-1], models, names)
    fig.suptitle(_title(records), fontsize=10.5)
    fig.tight_layout()
    return fig


# the phone's list of completions: a line's height, and where a line's count ends and its
# completion starts, in points from the left (text at 10.5 pt)
_PHONE_LINE_IN, _COUNT_PT, _LABEL_PT = 0.19, 20, 26
_BALANCED, _UNBALANCED = "#1a9850", "#d73027"


def phone_figure(records):
    """The same completions for a phone's column, where a bar chart with the completions
    beside the bars was three screens tall (each label broken over two lines): a list, one
    completion a line, its count in green (balanced) or red (not) before it, under a heading
    per model and one per context with its share balanced; then the summary panel."""
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: (r["metrics"]["train_size"], r["params"]["seed"]))
    models = spread.group_by(records, lambda r: r["params"]["model"])
    names = records[0]["metrics"]["order"]
    lines = []   # (kind, text, count, balanced): kind is "model", "context", "row" or "gap"
    for group in models.values():
        if lines:
            lines.append(("gap", "", None, None))
        lines.append(("model", _model_label(group[0]["metrics"]).replace("<=", "≤"), None,
                      None))
        for name in names:
            rate = spread.spread([r["metrics"]["contexts"][name]["accuracy"] for r in group])
            lines.append(("context", f"{name}: {rate[0]:.0%} balanced"
                          + (f" ({rate[1]:.0%} to {rate[2]:.0%})" if rate[3] > 1 else ""),
                          None, None))
            for r in group:
                dist = r["metrics"]["contexts"][name]
                lines += [("row", f"s{r['params']['seed']} {dist['context']}|{t['completion']}",
                           t["count"], t["balanced"]) for t in dist["top"][:_SHOWN_PER_SEED]]
    # the list across the figure, the summary in a column of its own right of a sliver of
    # one: the layout puts the summary's y label between the two columns, not in a margin
    # left of the list too (whose longest lines need the whole column)
    listing = _PHONE_LINE_IN * len(lines)
    fig = plt.figure(figsize=(3.8, listing + 2.6 + 1.6))
    grid = fig.add_gridspec(2, 2, width_ratios=[0.01, 1], height_ratios=[listing, 2.6])
    ax, summary = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 1])
    ax.axis("off")
    ax.set_ylim(len(lines), 0)
    for y, (kind, text, count, balanced) in enumerate(lines):
        at = {"xy": (0, y + 0.5), "xycoords": ("axes fraction", "data"),
              "textcoords": "offset points", "va": "center", "fontsize": 10.5}
        if kind == "row":
            ax.annotate(str(count), xytext=(_COUNT_PT, 0), ha="right", weight="bold",
                        color=_BALANCED if balanced else _UNBALANCED, **at)
            ax.annotate(text, xytext=(_LABEL_PT, 0), ha="left", family="monospace", **at)
        elif kind != "gap":
            ax.annotate(text, xytext=(0, 0), ha="left",
                        weight="bold" if kind == "model" else "normal",
                        style="italic" if kind == "context" else "normal", **at)
    _summary(summary, models, names, legend_beside=False)
    fig.suptitle(_title(records), fontsize=10.5)
    fig.tight_layout()
    return fig


def trainings(config):
    """For `figure cost`: the studied models' specs (richard.protocol.spec_trainings)."""
    from lengthgen.experiments.richard.protocol import spec_trainings
    return spec_trainings([spread.seeded_spec(config, p["model"], p["seed"])
                           for p in runs(config)])
