"""Huang et al. (2025) App. G.2, Figures 5-6: which positional products extrapolate.

A product p_i^T Q^T K p_j is fitted to a target phi(i, j) on windows of 50 positions at random
offsets and tested on longer windows. The theory predicts that local and periodic targets keep
a small error at lengths never trained on and that targets that are neither do not.

Raw errors compare badly across targets: a sparse local target (i - j = 2) has so few ones that
predicting 0 everywhere already has a small error. So every run also records two predictors
that ignore position (always 0, and the best single constant for the test windows) and splits
the error into the distances seen inside a training window (i - j < 50) and those never seen
(i - j >= 50). The figure divides by the best constant's error: below 1, position helps.

Each run records its errors after several step counts (`checkpoints`), to show whether the
pattern is still moving when training stops. Book and paper scale both run the paper's 15k
steps with three seeds; the figure draws their mean and range.

Feeds: book/limit_transformers.ipynb, {numref}`fig-huang-positional`
"""
import matplotlib.pyplot as plt

from lengthgen.experiments.huang.limit.rows import ratio
from lengthgen.experiments.spread import key_row
from lengthgen.theory.positional_targets import KINDS, TARGETS

FIGURE_ID = "huang-fig5-6-positional"
TITLE = "Fitting positional products: which targets beat a position-blind constant at longer n"
PAPER_SCALE = ("From the paper (App. G.2): 200 positions, windows of 50 at random offsets, "
               "batch 64, Adam at 1e-3, 15k steps, the mean-squared-weight penalty at 0.01. "
               "Chosen here (the widths and some targets are lost in our copy of its text): "
               "widths 16, 64 and 256, the seven targets, three seeds.")
# the columns of data() that name a setting: `figure data ID --over-seeds` gives the
# mean, min and max over seeds of the other values per setting
SPREAD_BY = ("target", "kind", "width", "band", "n")

_SHARED = {"n_positions": 200, "train_length": 50, "batch_size": 64, "lr": 1e-3,
           "weight_penalty": 0.01, "test_lengths": [50, 75, 100, 125, 150, 175, 200]}
CONFIGS = {
    "test": {**_SHARED, "targets": ["i-j=2", "i-j>5"], "widths": [8], "steps": 30,
             "checkpoints": [10, 30], "seeds": [0], "test_lengths": [50, 100]},
    "book": {**_SHARED, "targets": list(TARGETS), "widths": [16, 64, 256], "steps": 15000,
             "checkpoints": [1000, 3000, 15000], "seeds": [0, 1, 2]},
    "paper": {**_SHARED, "targets": list(TARGETS), "widths": [16, 64, 256], "steps": 15000,
              "checkpoints": [1000, 3000, 15000], "seeds": [0, 1, 2]},
}
_BANDS = ("all", "seen", "unseen")  # causal entries; distances < train_length; >= train_length


def runs(config: dict) -> list[dict]:
    return [{"name": f"{target}-d{width}-s{seed}", "target": target, "width": width, "seed": seed}
            for target in config["targets"] for width in config["widths"]
            for seed in config["seeds"]]


def trainings(config: dict) -> list:
    """For `figure cost`: per width, one fit per target and seed. The model is a product, not a
    decoder, so its FLOPs per step are given: three times the forward pass (P Q^T and P K^T,
    2 n w^2 each, then their n x n product, 2 n^2 w) on the whole table of n positions."""
    from lengthgen.runs.cost import Training
    n = config["n_positions"]
    return [Training(f"P Q K d{w}", n * w + 2 * w * w, 1, w, 1, n, config["steps"],
                     count=len(config["targets"]) * len(config["seeds"]),
                     flops=3 * (4 * n * w * w + 2 * n * n * w))
            for w in config["widths"]]


def _errors(products, target: str, config: dict, bands=_BANDS) -> dict:
    """{band: {n: {"model", "zero", "constant"}}} for every test length and each of `bands`
    (the unseen band only where a window is longer than the training windows)."""
    from lengthgen.theory.positional_fit import band_errors, distance_band   # torch: here
    seen = config["train_length"]
    masks = {"all": lambda n: distance_band(n), "seen": lambda n: distance_band(n, near=seen),
             "unseen": lambda n: distance_band(n, far=seen) if n > seen else None}
    out = {band: {} for band in bands}
    for n in config["test_lengths"]:
        for band in bands:
            mask = masks[band](n)
            if mask is not None:
                out[band][str(n)] = band_errors(products, target, n, mask)
    return out


def run_one(params: dict, config: dict, device) -> dict:
    from lengthgen.theory.positional_fit import fit
    by_steps = {}

    def checkpoint(step, model):
        by_steps[str(step)] = {n: e["model"] for n, e in
                               _errors(model.products().detach(), params["target"], config,
                                      bands=("all",))["all"].items()}

    model = fit(params["target"], params["width"], config["steps"], params["seed"],
                n_positions=config["n_positions"], train_length=config["train_length"],
                batch_size=config["batch_size"], lr=config["lr"],
                weight_penalty=config["weight_penalty"], checkpoints=config["checkpoints"],
                on_checkpoint=checkpoint)
    final = _errors(model.products().detach(), params["target"], config)
    return {"kind": TARGETS[params["target"]][0],
            "test_mse": {n: e["model"] for n, e in final["all"].items()},
            "bands": final, "test_mse_by_steps": by_steps}


def data(records: list[dict]) -> list[dict]:
    """One row per run, band and test length: the model's error, both baselines and ratios."""
    rows = []
    for r in records:
        p, m = r["params"], r["metrics"]
        for band in _BANDS:
            for n, e in m["bands"][band].items():
                rows.append({"target": p["target"], "kind": m["kind"], "width": p["width"],
                             "seed": p["seed"], "band": band, "n": int(n), "mse": e["model"],
                             "zero_mse": e["zero"], "constant_mse": e["constant"],
                             "ratio_to_zero": ratio(e["model"], e["zero"]),
                             "ratio_to_constant": ratio(e["model"], e["constant"])})
    return rows


def figure(records: list[dict]):
    config = records[0]["config"]
    kinds = _kinds(records)
    fig, axes = plt.subplots(2, len(kinds), figsize=(3.2 * len(kinds), 6.4), sharey="row",
                             squeeze=False)
    for col, kind in enumerate(kinds):
        top, bottom = axes[0][col], axes[1][col]
        _draw_kind(top, bottom, kind, records)
        top.legend(fontsize=6)
        bottom.set_xlabel("test length n")
    axes[0][0].set_ylabel("MSE / best constant's MSE")
    axes[1][0].set_ylabel("MSE at unseen distances (i-j >= 50)")
    fig.suptitle(f"Positional products fitted on windows of {config['train_length']} "
                 f"({config['steps']} steps). Top: error relative to the best position-blind "
                 "constant (black line: equal).\nBottom: error at distances no training window "
                 "contains (wide pale lines: always answering 0 there)", fontsize=9)
    fig.tight_layout()
    return fig


# on a phone: each group's two panels (in inches), and the key of the widths' line styles
_PHONE_PANEL_IN, _PHONE_KEY_IN = 1.2, 0.25


def phone_figure(records: list[dict]):
    """The same panels for a phone's column, where the column's figure laid out again stacked
    its eight panels with a legend of six lines under each upper one: 2,470 px tall. Here the
    two panels of a group share their x axis (numbers under the lower one only), each names
    its group, the colours (the targets) are named in the upper panel's title line, and the
    line styles (the widths), the same in every group, have one key at the top (`key_row`).
    (The targets' legends are the figure's too, placed on their panels: the phone's layout
    moves an axes' own legend under it, in one column.) Log axes span two powers of ten at
    least, so that each names two."""
    from matplotlib.lines import Line2D
    config = records[0]["config"]
    kinds = _kinds(records)
    widths = sorted({r["params"]["width"] for r in records})
    fig = plt.figure(figsize=(3.8, _PHONE_KEY_IN + 2 * _PHONE_PANEL_IN * len(kinds) + 1.5))
    grid = fig.add_gridspec(1 + 2 * len(kinds), 1,
                            height_ratios=[_PHONE_KEY_IN] + [_PHONE_PANEL_IN] * 2 * len(kinds))
    key_row(fig, fig.add_subplot(grid[0]),
            [Line2D([], [], color="black", ls=style) for style in _STYLES[:len(widths)]],
            [f"d={width}" for width in widths])
    for index, kind in enumerate(kinds):
        top = fig.add_subplot(grid[1 + 2 * index])
        bottom = fig.add_subplot(grid[2 + 2 * index], sharex=top)
        targets = _draw_kind(top, bottom, kind, records)
        top.set_title("")
        top.set_title(kind, loc="left", fontsize=10.5)
        bottom.set_title(bottom.get_title(), fontsize=10.5)
        top.tick_params(axis="x", labelbottom=False)
        top.set_ylabel("MSE / best\nconstant's")
        bottom.set_ylabel("MSE, unseen")
        bottom.set_xlabel("test length n")
        fig.legend([Line2D([], [], color=f"C{color}") for color in range(len(targets))],
                   targets, loc="lower right", bbox_to_anchor=(1, 1),
                   bbox_transform=top.transAxes, ncols=len(targets), frameon=False,
                   handlelength=1.0, handletextpad=0.4, columnspacing=0.8, borderpad=0.1,
                   borderaxespad=0.1, fontsize=10.5)
        for ax in (top, bottom):
            _two_decades(ax)
    fig.suptitle(f"Fitted on windows of {config['train_length']} ({config['steps']} steps). "
                 "Upper panel of a group: error / best position-blind constant's (black line: "
                 "equal); lower: error at unseen distances (pale: always 0)", fontsize=10.5)
    fig.tight_layout()
    return fig


def _two_decades(ax) -> None:
    """Widen a log axis' limits to two powers of ten, about their geometric middle, where
    they span less (one that spans less names at most one power, or crowds minor ticks)."""
    low, high = ax.get_ylim()
    if high / low < 100:
        middle = (low * high) ** 0.5
        ax.set_ylim(middle / 10, middle * 10)


_STYLES = ("-", "--", ":")


def _kinds(records: list[dict]) -> list[str]:
    """The groups of targets (local, periodic, ...) the records have, in the theory's order."""
    return [k for k in KINDS if any(TARGETS[r["params"]["target"]][0] == k for r in records)]


def _draw_kind(top, bottom, kind: str, records: list[dict]) -> list[str]:
    """Draw one group of targets: in `top` each target's error relative to the best constant,
    in `bottom` its error at unseen distances; a colour per target, a line style per width, the
    seeds' range shaded. Returns the group's targets, in their colours' order."""
    config = records[0]["config"]
    widths = sorted({r["params"]["width"] for r in records})
    styles = dict(zip(widths, _STYLES))
    targets = [t for t in config["targets"] if TARGETS[t][0] == kind]
    for color, target in enumerate(targets):
        for width in widths:
            rows = [r for r in records if r["params"]["target"] == target
                    and r["params"]["width"] == width]
            if not rows:
                continue
            for ax, band in ((top, "all"), (bottom, "unseen")):
                lengths = sorted(int(n) for n in rows[0]["metrics"]["bands"][band])
                mean = lambda key, n: sum(  # noqa: E731
                    r["metrics"]["bands"][band][str(n)][key] for r in rows) / len(rows)
                y = ([mean("model", n) / mean("constant", n) for n in lengths] if ax is top
                     else [mean("model", n) for n in lengths])
                ax.plot(lengths, y, styles[width], marker="o", ms=3, color=f"C{color}",
                        label=f"{target}, d={width}")
                if len(rows) > 1:  # several seeds: their min-max range, shaded
                    per_seed = [[r["metrics"]["bands"][band][str(n)]["model"] / (
                        r["metrics"]["bands"][band][str(n)]["constant"] if ax is top else 1)
                        for r in rows] for n in lengths]
                    ax.fill_between(lengths, [min(v) for v in per_seed],
                                    [max(v) for v in per_seed], color=f"C{color}", alpha=0.15,
                                    lw=0)
        # the reference of the lower panel: always answering 0 at the unseen distances (the
        # model's products there get no training signal; 0 is where a small-weight learner
        # would leave them). Not drawn for local targets, where it is exact (error 0).
        lengths = sorted(int(n) for n in rows[0]["metrics"]["bands"]["unseen"])
        zero = [rows[0]["metrics"]["bands"]["unseen"][str(n)]["zero"] for n in lengths]
        if min(zero) > 0:
            bottom.plot(lengths, zero, color=f"C{color}", lw=3, alpha=0.25)
    top.axhline(1, color="black", lw=0.8)
    top.axvline(config["train_length"], color="grey", lw=0.8)
    top.set_title(kind)
    # each lower panel names its group too: on a phone the panels stack in one column, and
    # the lower ones come far below the upper one of their group
    bottom.set_title(f"{kind}: unseen distances")
    for ax in (top, bottom):
        ax.set_yscale("log")
    return targets
