"""A compute ladder toward Richard (2024)'s Fig. 1: the Boolean task at one training depth, with
ever larger models, more steps and more training expressions.

At book scale the decoders of richard-fig1-boolean (d = 64, 2 layers, 2000 steps) stay at or
near the trivial predictor that always answers the most frequent constant, while the paper's
model (about 1e8 parameters, 1e5 steps) gets 68% in-sample at depth 3. This figure asks what
more compute does between the two: it trains at the paper's headline depth q = 3 only, on
rungs that each take about twice the training operations of the one before (the FLOPs
estimate of `lengthgen.runs.cost`, `rung_flops`), and scores each model at depth 3 by the
protocol of richard-fig1-boolean (`boolean_protocol`: windows of concatenated equalities,
the paper's decoding rule, sympy's grading, answers held out of training), beside the trivial
predictors of the same training pool.

Rung 0 of the `book` config is the book's model, steps and pool; rung 1 is wider (d = 96, twice
the operations per step) on twice the expressions, rung 2 trains that model twice as long on
twice as many again. Three seeds a rung. On this library's CPU machine (2026-11-28, one thread,
time.process_time of the training) a step took 0.043 s at rung 0 and 0.065 s at rungs 1 and 2,
so the nine runs take about 25 CPU minutes with their pools and tests (nearer 40 minutes of
wall time on a shared core). The whole ladder spans 4x the book's operations per model,
against a gap of about 1e5 to the paper's: it shows the direction of the trend at the book's
end, not the paper's result. The `paper` config continues the ladder on a GPU at the paper's task (5 clauses,
windows of 1024 tokens, 16 a batch): five rungs up to the paper's model, one seed each.

A planned figure too (lengthgen.runs.planned): its runs train in GPU slices and queues as the
engine's stacked decoders (`boolean_protocol.job`, the pools drawn as the Job's host work), each
scored as `run_one` scores its model (`boolean_protocol.score_trained`), its record an ordinary
record of the figure. A run no slice can train is `deferred`, by one rule
(`runs.planner.in_an_allotment`, on the run's Job, as the slices plan it): alone at the
built-in H200 rates it takes longer than a slice gives a job (9 minutes; at the rate shared by
the prepared script's 3 workers where its state is over the 16 MiB hand-off file), and it has
no stop rule whose open-ended start could hand it on. At paper scale rung 0 is planned (4.3
H200 minutes of steps by `figure cost`, 5.8 as the planner counts them with its margin and the
pools' drawing, a 10.6 MiB state); rungs 1 to 4 are deferred (rung 1: 4.6 minutes of steps, but
a 39 MiB state, so about 23 minutes shared by 3 workers; rungs 2 to 4: 23 to 157 minutes), so
the figure is not complete after a GPU queue; a queue bills only the rung it can train
(`Training.deferred`), `figure cost` all five.

Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-boolean-ladder`
"""
from dataclasses import replace

from lengthgen.experiments import spread
from lengthgen.experiments.richard.boolean_protocol import (RUNG_KEYS, job as _job,
                                                            ladder_trainings, rung_config,
                                                            rung_flops, score_trained,
                                                            train_and_score)
from lengthgen.experiments.richard.rows import PAPER, SPLITS
from lengthgen.runs.planned import Run as spec

FIGURE_ID = "richard-fig1-ladder"
TITLE = "Boolean simplification at depth 3: accuracy along a ladder of training compute"
PAPER_SCALE = ("The paper's task (Sec. 2.2): 5 clauses, windows of 1024 tokens, 128 held-out "
               "answers, 10,000 test expressions, trained and tested at depth 3; its model "
               "(d = 1024, 8 layers, 8 heads, 1e5 steps) is the top rung. Chosen here: the four "
               "rungs below it (d = 128 to 512, 4 to 8 layers, 2e4 to 1e5 steps, pools of 2e4 "
               "to 5e5 expressions), 16 windows a batch at 3e-4 (the paper gives neither), one "
               "seed a rung.")
# `figure data ID --over-seeds`: the columns that name a setting
SPREAD_BY = ("rung", "d", "layers", "heads", "steps", "pool", "train_flops", "test_depth",
             "split", "predictor", "n")

CONFIGS = {
    "test": {"clauses": 1, "train_depth": 1, "test_depths": [1], "test_pool": 40,
             "held_out": 4, "test_examples": 4, "window": 32, "batch_size": 4, "lr": 1e-3,
             "seed": 0,
             "rungs": [{"d": 16, "layers": 1, "heads": 1, "steps": 3, "pool": 40},
                       {"d": 16, "layers": 1, "heads": 1, "steps": 6, "pool": 80}]},
    "book": {"clauses": 2, "train_depth": 3, "test_depths": [3], "test_pool": 400,
             "held_out": 32, "test_examples": 48, "window": 256, "batch_size": 8, "lr": 2e-3,
             "seed": 0, "seeds": [0, 1, 2],
             "rungs": [{"d": 64, "layers": 2, "heads": 4, "steps": 2000, "pool": 1500},
                       {"d": 96, "layers": 2, "heads": 4, "steps": 2000, "pool": 3000},
                       {"d": 96, "layers": 2, "heads": 4, "steps": 4000, "pool": 6000}]},
    "paper": {"clauses": 5, "train_depth": 3, "test_depths": [3], "test_pool": 20000,
              "held_out": 128, "test_examples": 10000, "window": 1024, "batch_size": 16,
              "lr": 3e-4, "seed": 0,
              "rungs": [{"d": 128, "layers": 4, "heads": 8, "steps": 20000, "pool": 20000},
                        {"d": 256, "layers": 4, "heads": 8, "steps": 20000, "pool": 100000},
                        {"d": 256, "layers": 4, "heads": 8, "steps": 100000, "pool": 200000},
                        {"d": 512, "layers": 8, "heads": 8, "steps": 100000, "pool": 500000},
                        {"d": 1024, "layers": 8, "heads": 8, "steps": 100000,
                         "pool": 1000000}]},
}


def runs(config):
    return [{"name": f"rung{i}{spread.run_suffix(config, seed)}", "rung": i,
             "train_depth": config["train_depth"], "seed": seed}
            for i in range(len(config["rungs"])) for seed in spread.config_seeds(config)]


def trainings(config):
    """For `figure cost`: one decoder per rung and seed; those no slice can train are marked
    `deferred` (a GPU queue does not bill them)."""
    fits = [_in_a_slice({"rung": i, "train_depth": config["train_depth"], "seed": 0}, config)
            for i in range(len(config["rungs"]))]
    return [t if fit else replace(t, deferred=True)
            for t, fit in zip(ladder_trainings(config), fits)]


def run_one(params, config, device):
    return _with_rung(train_and_score(params, rung_config(config, params["rung"]), device),
                      params, config)


def _with_rung(metrics: dict, params: dict, config: dict) -> dict:
    """A rung's metrics with what the rung is: its model, steps, pool, FLOPs and tokens."""
    flat = rung_config(config, params["rung"])
    return {**metrics, "rung": params["rung"], **{k: flat[k] for k in RUNG_KEYS},
            "train_flops": rung_flops(config)[params["rung"]],
            "train_tokens": flat["steps"] * flat["batch_size"] * flat["window"]}


# a planned figure too (lengthgen.runs.planned): the runs a slice can train, the rest deferred
def _in_a_slice(params: dict, config: dict) -> bool:
    from lengthgen.runs.planner import in_an_allotment
    return in_an_allotment(_job(params, rung_config(config, params["rung"])))


def plan(config, records):
    return [spec(p) for p in runs(config)
            if p["name"] not in records and _in_a_slice(p, config)]


def deferred(config, records):
    return [spec(p) for p in runs(config)
            if p["name"] not in records and not _in_a_slice(p, config)]


def engine_job(job, config):
    params = job.params()
    return _job(params, rung_config(config, params["rung"]), job.name)


def score(model, job, result, config, device, group_size):
    """A run trained in a slice, scored as `run_one` scores its model."""
    params = job.params()
    return _with_rung(score_trained(model, result, params, rung_config(config, params["rung"]),
                                    device), params, config)


_LABELS = {"in_sample": "in-sample", "out_of_sample": "out-of-sample",
          "in_sample_nonconstant": "in-sample, answers other than true/false"}
_STYLES = {"in_sample": ("o-", "tab:red"), "in_sample_nonconstant": ("s:", "tab:red"),
          "out_of_sample": ("o-", "tab:blue")}


def _rung_label(m: dict) -> str:
    flops = f"{m['train_flops']:.1e}".replace("e+", "e")
    return (f"rung {m['rung']}\nd={m['d']}, {m['layers']}L\n{m['steps']:,} steps\n"
            f"{m['pool']:,} expr.\n{flops} FLOP")


def figure(records):
    return _draw(records, _rung_label, "paper\nd=1024, 8L\n100,000 steps")


def phone_figure(records):
    """The same panels, the rungs named by number only: their five-line names, laid flat and
    turned upright by the phone's layout, made the figure twice as tall (the caption and the
    column's axis say what each rung is)."""
    return _draw(records, lambda m: f"rung {m['rung']}", "paper")


def _draw(records, rung_label, paper_label):
    import matplotlib.pyplot as plt

    groups = spread.group_by(sorted(records, key=lambda r: r["params"]["rung"]),
                             lambda r: r["params"]["rung"])
    rungs = sorted(groups)
    cfg = records[0]["config"]
    depths = cfg["test_depths"]
    # one row per test depth, then the training loss: the rungs' names need the width
    fig, axes = plt.subplots(len(depths) + 1, 1, figsize=(7.5, 3.2 * len(depths) + 4.6),
                             squeeze=False, sharex=True,
                             height_ratios=[3.2] * len(depths) + [2.2])
    axes = axes[:, 0]
    paper_x = rungs[-1] + 1
    for ax, q in zip(axes, depths):
        for split in SPLITS:
            fmt, color = _STYLES[split]
            spread.line(ax, rungs, [[r["metrics"][f"{split}_depth{q}"] for r in groups[i]]
                                    for i in rungs], fmt, color, label=_LABELS[split])
        for split, style in (("in_sample", "--"), ("in_sample_nonconstant", ":")):
            spread.line(ax, rungs, [[r["metrics"][f"baseline_{split}_depth{q}"]
                                     for r in groups[i]] for i in rungs], style, "gray",
                        label=f"baseline: always the most frequent training answer"
                              f"{' other than true/false' if 'nonconstant' in split else ''}")
        if q == cfg["train_depth"] == 3:   # the paper's q = 3 model, to the right of the ladder
            for split, color in (("in_sample", "tab:red"), ("out_of_sample", "tab:blue")):
                ax.scatter([paper_x], [PAPER[f"{split}_depth3"]], marker="*", s=120,
                           color=color, edgecolor="black",
                           label=f"paper, {_LABELS[split]} (1e8 params)")
        ax.set(ylabel="accuracy\n(sympy-equivalent)", ylim=(-0.05, 1.05),
               title=f"trained and tested at depth {q} ({cfg['clauses']} clauses)")
    loss = axes[-1]
    spread.line(loss, rungs, [[r["metrics"]["train_loss"] for r in groups[i]] for i in rungs],
                "o-", "black", label="final training loss")
    loss.set(ylabel="training loss\n(per token)", title="training loss")
    ticks = [rung_label(groups[i][0]["metrics"]) for i in rungs]
    paper = cfg["train_depth"] == 3 and 3 in depths
    # one x-axis for all panels (named under the last), with room for the paper's stars
    loss.set_xlim(rungs[0] - 0.5, (paper_x if paper else rungs[-1]) + 0.5)
    loss.set_xticks(rungs + [paper_x] if paper else rungs,
                    ticks + [paper_label] if paper else ticks,
                    fontsize=8)
    handles = {label: h for ax in axes for h, label in zip(*ax.get_legend_handles_labels())}
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=2, fontsize=7)
    fig.suptitle(f"{cfg['batch_size']} windows of {cfg['window']} tokens a step at rate "
                 f"{cfg['lr']:g}; " + spread.seeds_label(records, lambda r: r["params"]["rung"]),
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def data(records) -> list[dict]:
    """One row per plotted value: per rung (its model, steps, pool and training FLOPs) the
    model's and the baselines' accuracy per test depth and split, with the final training loss
    of the run on every row; then the paper's q = 3 model."""
    rows = []
    for r in sorted(records, key=lambda r: r["params"]["rung"]):
        m = r["metrics"]
        rung = {k: m[k] for k in ("rung",) + RUNG_KEYS + ("train_flops",)}
        for q in r["config"]["test_depths"]:
            for split in SPLITS:
                for predictor, key in (("model", f"{split}_depth{q}"),
                                       ("baseline", f"baseline_{split}_depth{q}")):
                    rows.append({**rung, "test_depth": q, "split": split,
                                 "predictor": predictor, "accuracy": m[key],
                                 "n": m[f"{split}_depth{q}_n"], "train_loss": m["train_loss"]})
    for split in ("in_sample", "out_of_sample"):
        rows.append({"rung": "paper", "d": 1024, "layers": 8, "heads": 8, "steps": 100000,
                     "pool": "", "train_flops": None, "test_depth": 3, "split": split,
                     "predictor": "paper (1e8 parameters)",
                     "accuracy": PAPER[f"{split}_depth3"], "n": "", "train_loss": None})
    return rows
