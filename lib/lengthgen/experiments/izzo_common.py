"""The training protocol of Izzo et al. (2026, App. B), shared by the izzo-* figure modules.

One attention head and an MLP (d = 16, width 256) in Limit-Transformer form
(`LimitStyleTransformer`), muP initialization, Adam (AdamW with weight decay 0) at 1e-2 for
embeddings and vectors and 1e-2 / d for hidden matrices and the readout, a fresh batch of 1024
every step, training until the in-distribution loss falls below 1e-5, regression (MSE) on the
task's real-valued target. Training strings have lengths uniform in [min_len, N]; the test loss
at length T' is measured on strings of exactly T'.

Not stated in the paper, chosen here: the positional encoding (none for SimpleTask, a learned
table of period p for ModPTask, i.e. the Delta = p of its construction), log-length scaling of
the logits (the Limit Transformer's log N), and the step cap `max_steps` that book scale needs.
"""
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import evaluate
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.train import EVAL_SEED_OFFSET, TrainConfig, train

D_MODEL = 16
PAPER_PROTOCOL = {"d_model": D_MODEL, "mlp_width": 256, "init": "mup", "lr": 1e-2,
                  "hidden_lr": 1e-2 / D_MODEL, "batch_size": 1024, "stop_loss": 1e-5,
                  "max_steps": 200_000, "eval_every": 100, "eval_samples": 1024,
                  "test_samples": 1024}


def build_model(task, config: dict, seed: int, **options) -> LimitStyleTransformer:
    import torch
    torch.manual_seed(seed)
    cfg = LimitStyleConfig(vocab_size=len(task.vocab), n_outputs=task.n_classes,
                           d_model=config["d_model"], mlp_width=config["mlp_width"],
                           init=config["init"], **options)
    return LimitStyleTransformer(cfg)


def train_config(config: dict, seed: int, train_length: int, min_len: int) -> TrainConfig:
    hidden = config["hidden_lr"]
    return TrainConfig(steps=config["max_steps"], batch_size=config["batch_size"],
                       lr=config["lr"], weight_decay=0.0, grad_clip=None,
                       min_len=min_len, max_len=train_length, eval_every=config["eval_every"],
                       eval_samples=config["eval_samples"], stop_accuracy=None,
                       stop_loss=config["stop_loss"], seed=seed,
                       group_lr={"hidden": hidden, "readout": hidden})


def check_train_length(model, train_length: int) -> None:
    """A train length above an absolute position table is refused before any training."""
    if model.cfg.pe == "ape" and train_length > model.cfg.n_positions:
        raise LengthgenError(f"train length {train_length} is above the position table "
                             f"({model.cfg.n_positions} rows)")


def train_and_test(task, model, config: dict, seed: int, train_length: int,
                   test_lengths, device) -> dict:
    """Train with the protocol, then the test MSE at each test length; JSON-able metrics."""
    check_train_length(model, train_length)
    cfg = train_config(config, seed, train_length, task.min_len)
    result = train(model, task, cfg, device)
    test_seed = seed + 2 * EVAL_SEED_OFFSET
    losses = evaluate(model, task, [(n, n) for n in test_lengths], config["test_samples"],
                      test_seed, device, batch_size=512)
    return {"test_loss": {str(n): losses[f"{n}-{n}"]["loss"] for n in test_lengths},
            "train_loss": result.history[-1]["loss"], "steps": result.steps,
            "reached_stop_loss": result.stopped_early,
            "train_wall_time_s": round(result.wall_time_s, 3),
            "n_params": model.num_parameters()}


def plateau(record: dict) -> float:
    """The test loss at the longest test length: where the curves have flattened."""
    losses = record["metrics"]["test_loss"]
    return losses[max(losses, key=int)]


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def required_length(lengths, losses, eps: float) -> float | None:
    """Smallest train length whose mean plateau is <= eps, interpolating log-loss linearly in
    the train length between the two grid points around the crossing; None if never reached."""
    import math
    pairs = sorted(zip(lengths, losses))
    for i, (n, loss) in enumerate(pairs):
        if loss <= eps:
            if i == 0:
                return float(n)
            n0, l0 = pairs[i - 1]
            t = (math.log(l0) - math.log(eps)) / (math.log(l0) - math.log(loss))
            return n0 + t * (n - n0)
    return None


# ---- Figures 1 and 2 share their data and their three panels -------------------------------
def _by(records, key):
    groups = {}
    for r in records:
        groups.setdefault(r["params"][key], []).append(r)
    return dict(sorted(groups.items()))


def curve_rows(records, key: str) -> list[dict]:
    """One row per (key value, train length, test length): the mean test loss over seeds, the
    seed count, the plateau of that train length, and the interpolated train length whose
    plateau reaches eps and eps / 10 (None where the grid never gets there)."""
    rows = []
    config = records[0]["config"]
    for value, group in _by(records, key).items():
        lengths = sorted({r["params"]["train_length"] for r in group})
        plateaus = [mean(plateau(r) for r in group if r["params"]["train_length"] == n)
                    for n in lengths]
        need = required_length(lengths, plateaus, config["eps"])
        need_tenth = required_length(lengths, plateaus, config["eps"] / 10)
        for n, level in zip(lengths, plateaus):
            runs_n = [r for r in group if r["params"]["train_length"] == n]
            for t in config["test_lengths"]:
                rows.append({key: value, "train_length": n, "test_length": t,
                             "test_loss": mean(r["metrics"]["test_loss"][str(t)]
                                               for r in runs_n),
                             "seeds": len(runs_n), "plateau": level, "required_N": need,
                             "required_N_eps_over_10": need_tenth})
    return rows


def linear_fit(xs, ys) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


def curves_figure(records, key: str, symbol: str, task_name: str):
    """Left: test loss vs test length per train length (largest `key` value). Middle: plateau
    vs train length per `key` value. Right: required train length vs `key` at eps and eps/10,
    with least-squares lines."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    config = records[0]["config"]
    rows = curve_rows(records, key)
    values = sorted({r[key] for r in rows})
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 3.7))
    shown = values[-1]
    lengths = sorted({r["train_length"] for r in rows if r[key] == shown})
    for i, n in enumerate(lengths):
        pts = [(r["test_length"], r["test_loss"]) for r in rows
               if r[key] == shown and r["train_length"] == n]
        axes[0].plot(*zip(*pts), "o-", ms=3, color=f"C{i}", label=f"N = {n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title=f"test loss vs test length ({symbol} = {shown:g})")
    axes[0].legend(fontsize=7)
    for i, value in enumerate(values):
        pts = sorted({(r["train_length"], r["plateau"]) for r in rows if r[key] == value})
        axes[1].plot(*zip(*pts), "o-", color=f"C{i}", label=f"{symbol} = {value:g}")
    for level in (config["eps"], config["eps"] / 10):
        axes[1].axhline(level, color="k", ls=":", lw=1)
    axes[1].set(xscale="log", yscale="log", xlabel="train length N",
                ylabel=f"plateau (MSE at length {max(config['test_lengths'])})",
                title="plateau vs train length")
    every_length = sorted({r["train_length"] for r in rows})
    axes[1].set_xticks(every_length, [str(n) for n in every_length])
    axes[1].xaxis.set_minor_formatter(NullFormatter())
    axes[1].legend(fontsize=7)
    for column, eps, color in (("required_N", config["eps"], "C3"),
                               ("required_N_eps_over_10", config["eps"] / 10, "C4")):
        need = sorted({(r[key], r[column]) for r in rows if r[column] is not None})
        if len(need) >= 2:
            xs, ys = zip(*need)
            slope, intercept = linear_fit(xs, ys)
            axes[2].plot(xs, ys, "o", color=color, label=f"plateau <= {eps:g}")
            axes[2].plot([min(xs), max(xs)], [intercept + slope * min(xs),
                                              intercept + slope * max(xs)], ":", color=color,
                         label=f"line, slope {slope:.2g}")
    axes[2].set(xlabel=symbol, ylabel="smallest N (interpolated)",
                title=f"required train length vs {symbol}")
    if axes[2].get_legend_handles_labels()[0]:
        axes[2].legend(fontsize=7)
    else:  # e.g. test scale: no train length in the grid reaches eps for two values
        axes[2].text(0.5, 0.5, f"eps = {config['eps']:g} reached for fewer than two {symbol}",
                     ha="center", va="center", transform=axes[2].transAxes, fontsize=8)
    fig.suptitle(f"{task_name}, {len(config['seeds'])} seed(s), batch {config['batch_size']}, "
                 f"at most {config['max_steps']} steps (stop at loss < {config['stop_loss']:g})",
                 fontsize=10)
    fig.tight_layout()
    return fig
