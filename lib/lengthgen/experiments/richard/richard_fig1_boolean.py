"""Fig. 1 of Richard (2024): simplifying nested Boolean expressions, in-sample vs out-of-sample.

A decoder is trained at one depth q and tested at depths 3 and 6 (the book adds depth 1, where the
model trained at depth 1 is tested in distribution). Training follows the paper
(Sec. 2.2): equalities <start> expression = simplified <end> (the oracle is sympy's
simplify_logic) are concatenated into a stream cut into windows that each begin at a <start>
and need not end at an <end>, with the loss on every next token (`BooleanWindowTask`).
Decoding follows it too (`boolean_protocol.generate_answers`): greedy until <end>, and an
answer counts only if it has fewer tokens than the expression, so an expression of n tokens
gets n tokens of room and an answer with no <end> in them is wrong. A fixed set of simplified
forms is held out of all training data: test expressions whose answer is held out are
out-of-sample, the others in-sample. An answer is right when sympy proves it equivalent.

Beside the model, every record scores the trivial predictor that always gives the most
frequent training answer (a constant, true or false), and for the in-sample answers other than
true/false the one that always gives the most frequent such answer: the model has learned
something only where it beats them.

The paper's model has about 1e8 parameters (d = 1024, 8 layers, 8 heads, context 1024,
5 clauses, 1e5 steps) and is tested on 10,000 expressions. The `book` config is a CPU decoder
(d = 64, 2 layers, about 1.4e5 parameters) on 2-clause expressions, trained for 2000 steps of
8 windows of 256 tokens at a rate of 2e-3 (the paper: 1e5 steps on windows of 1024 tokens;
ours hold about three equalities at depth 4), tested on 48 expressions per split
drawn from 400 per depth. The constants true and false are never held out (40 to 55% of all
answers; holding one out would empty the training set of a whole class).

At book scale the model does not reproduce the paper's in-sample success: its in-sample
accuracy at depths 3 and 6 is at or near the constant baseline, and it gets no answer other
than true/false right there (the chapter gives the numbers).

The `paper` config has the paper's model, clauses, windows, steps and decoding rule; its batch
(16) and learning rate (3e-4) are ours, since the paper does not give them. The trainer gives
an APE model random position offsets (as for every APE run in this library), so positions
past the window, which long test prompts need, are trained too.

Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-boolean`
"""
from lengthgen.experiments import spread
from lengthgen.experiments.richard.boolean_protocol import training, train_and_score
from lengthgen.experiments.richard.rows import PAPER, boolean_data

FIGURE_ID = "richard-fig1-boolean"
TITLE = "Boolean simplification: in-sample vs out-of-sample accuracy by training depth"
PAPER_SCALE = ("From the paper (Sec. 2.2): d = 1024, 8 layers, 8 heads, context 1024 (about "
               "1e8 parameters), 5 clauses, 1e5 steps, 128 held-out answers, windows that start "
               "at <start>. Chosen here: 16 windows a batch (2^14 tokens, our reading of its "
               "'2^14 batches'), rate 3e-4 with warm-up and cosine decay, pools of 1e6 "
               "expressions, 10,000 test expressions, one seed per depth.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("train_depth", "test_depth", "split", "predictor", "n")

CONFIGS = {
    "test": {"clauses": 1, "train_depths": [1], "test_depths": [1, 2], "pool": 40,
             "test_pool": 40, "held_out": 4, "test_examples": 4, "window": 32, "d": 16,
             "layers": 1, "heads": 1, "steps": 3, "batch_size": 4, "lr": 1e-3, "seed": 0},
    "book": {"clauses": 2, "train_depths": [1, 2, 3, 4], "test_depths": [1, 3, 6],
             "pool": 1500, "test_pool": 400, "held_out": 32, "test_examples": 48,
             "window": 256, "d": 64, "layers": 2, "heads": 4, "steps": 2000, "batch_size": 8,
             "lr": 2e-3, "seed": 0, "seeds": [0, 1, 2]},
    "paper": {"clauses": 5, "train_depths": [1, 2, 3, 4, 5, 6], "test_depths": [3, 6],
              "pool": 1000000, "test_pool": 20000, "held_out": 128, "test_examples": 10000,
              "window": 1024, "d": 1024, "layers": 8, "heads": 8, "steps": 100000,
              "batch_size": 16, "lr": 3e-4, "seed": 0},
}


def runs(config):
    # one seed per training depth unless the config lists "seeds" (then run names end in -s<seed>)
    return [{"name": f"train-depth{q}{spread.run_suffix(config, seed)}", "train_depth": q,
             "seed": seed}
            for q in config["train_depths"] for seed in spread.config_seeds(config)]


def trainings(config):
    """For `figure cost`: one decoder per training depth and seed, on windows of
    config["window"] tokens (`boolean_protocol.training`)."""
    return [training(config, count=len(runs(config)))]


def run_one(params, config, device):
    return train_and_score(params, config, device)


_LABELS = {"in_sample": "in-sample", "out_of_sample": "out-of-sample",
          "in_sample_nonconstant": "in-sample, answers other than true/false"}


def figure(records):
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: r["params"]["train_depth"])
    # several seeds per training depth: the mean, and the min-max range shaded
    groups = spread.group_by(records, lambda r: r["params"]["train_depth"])
    depths = sorted(groups)
    cfg = records[0]["config"]
    fig, axes = plt.subplots(1, len(cfg["test_depths"]), figsize=(5.5 * len(cfg["test_depths"]), 4),
                             squeeze=False)
    for ax, q in zip(axes[0], cfg["test_depths"]):
        for split, color, style in (("in_sample", "tab:red", "o-"),
                                    ("in_sample_nonconstant", "tab:red", "s:"),
                                    ("out_of_sample", "tab:blue", "o-")):
            spread.line(ax, depths, [[r["metrics"][f"{split}_depth{q}"] for r in groups[t]]
                                     for t in depths], style, color, label=_LABELS[split])
        for split, style in (("in_sample", "--"), ("in_sample_nonconstant", ":")):
            spread.line(ax, depths, [[r["metrics"][f"baseline_{split}_depth{q}"]
                                      for r in groups[t]] for t in depths], style, "gray",
                    label=f"baseline: always the most frequent training answer"
                          f"{' other than true/false' if 'nonconstant' in split else ''}")
        if q == 3:
            ax.scatter([3], [PAPER["in_sample_depth3"]], marker="*", s=120, color="tab:red",
                       edgecolor="black", label="paper, in-sample (1e8 params)")
            ax.scatter([3], [PAPER["out_of_sample_depth3"]], marker="*", s=120, color="tab:blue",
                       edgecolor="black", label="paper, out-of-sample")
        ax.set(xlabel="training depth q", ylabel="accuracy\n(sympy-equivalent)",
               title=f"tested at depth {q} ({cfg['clauses']} clauses)", ylim=(-0.05, 1.05))
        ax.set_xticks(depths)
    # one legend under the panels (it would hide the paper's stars inside one)
    handles = {label: h for ax in axes[0] for h, label in zip(*ax.get_legend_handles_labels())}
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=3, fontsize=7)
    fig.suptitle(f"Decoder d={cfg['d']}, L={cfg['layers']}, h={cfg['heads']}, "
                 f"{records[0]['metrics']['n_params']} parameters, {cfg['steps']} steps of "
                 f"{cfg['batch_size']} windows of {cfg['window']} tokens; "
                 + spread.seeds_label(records, lambda r: r["params"]["train_depth"]), fontsize=9)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def data(records) -> list[dict]:
    """One row per plotted value: the model's and the baselines' accuracy per split, and the
    paper's q = 3 model (`richard.rows.boolean_data`, which the chapter's numbers read too)."""
    return boolean_data(records)
