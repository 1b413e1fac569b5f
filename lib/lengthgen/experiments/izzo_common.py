"""The training protocol of Izzo et al. (2026, App. B), shared by the izzo-* figure modules.

One attention head and an MLP (d = 16, width 256) in Limit-Transformer form
(`LimitStyleTransformer`), muP initialization, Adam (AdamW with weight decay 0) at 1e-2 for
embeddings and vectors and 1e-2 / d for hidden matrices and the readout, a fresh batch of 1024
every step, training until the in-distribution loss falls below 1e-5, regression (MSE) on the
task's real-valued target. Training strings have lengths uniform in [min_len, N]; the test loss
at length T' is measured on strings of exactly T'.

Not stated in the paper, chosen here: the positional encoding (none for SimpleTask, a learned
table of period p for ModPTask, i.e. the Delta = p of its construction) and a step cap
`max_steps`, a safety that a run reaching the stop loss never meets (`reached_stop_loss` in each
record says which runs met it). The logits follow the paper's scaling: only the tau-suffix term
is multiplied by log i (`logit_scaling="suffix"`, which for a head without a local term means no
scaling); `logit_scaling="all"` multiplies every logit by log i as the Limit Transformer of
Huang et al. does, and ModPTask runs it beside the paper's for comparison.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from lengthgen.errors import LengthgenError

if TYPE_CHECKING:   # annotations only: the figures' data() and runs() need no torch
    from lengthgen.models.limit_style import LimitStyleTransformer
    from lengthgen.train import TrainConfig

D_MODEL = 16
PAPER_PROTOCOL = {"d_model": D_MODEL, "mlp_width": 256, "init": "mup", "lr": 1e-2,
                  "hidden_lr": 1e-2 / D_MODEL, "batch_size": 1024, "stop_loss": 1e-5,
                  "max_steps": 200_000, "eval_every": 100, "eval_samples": 1024,
                  "test_samples": 1024, "logit_scaling": "suffix"}


def build_model(task, config: dict, seed: int, **options) -> LimitStyleTransformer:
    import torch

    from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
    torch.manual_seed(seed)
    options = {"logit_scaling": config["logit_scaling"], **options}
    cfg = LimitStyleConfig(vocab_size=len(task.vocab), n_outputs=task.n_classes,
                           d_model=config["d_model"], mlp_width=config["mlp_width"],
                           init=config["init"], **options)
    return LimitStyleTransformer(cfg)


def train_config(config: dict, seed: int, train_length: int, min_len: int) -> TrainConfig:
    from lengthgen.train import TrainConfig
    hidden = config["hidden_lr"]
    # the paper's optimizer: plain Adam, no clipping, a smaller rate for the hidden layers
    return TrainConfig.from_config(config, weight_decay=0.0, grad_clip=None, min_len=min_len,
                                   max_len=train_length, stop_accuracy=None, seed=seed,
                                   group_lr={"hidden": hidden, "readout": hidden})


def check_train_length(model, train_length: int) -> None:
    """A train length above an absolute position table is refused before any training."""
    if model.cfg.pe.absolute and train_length > model.cfg.n_positions:
        raise LengthgenError(f"train length {train_length} is above the position table "
                             f"({model.cfg.n_positions} rows)")


def train_and_test(task, model, config: dict, seed: int, train_length: int,
                   test_lengths, device) -> dict:
    """Train with the protocol, then the test MSE at each test length; JSON-able metrics."""
    from lengthgen.evaluate import evaluate
    from lengthgen.train import EVAL_SEED_OFFSET, train
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


# ---- Figures 1 and 2 share their data and their panels ---------------------------------------
def _by(records, key):
    groups = {}
    for r in records:
        groups.setdefault(r["params"][key], []).append(r)
    return dict(sorted(groups.items()))


def main_records(records) -> list:
    """The records of the paper's logit scaling (the comparison runs of the other are apart)."""
    return [r for r in records
            if r["params"].get("logit_scaling", r["config"]["logit_scaling"])
            == r["config"]["logit_scaling"]]


def spread(values) -> tuple[float, float, float]:
    """Mean, min and max."""
    values = list(values)
    return mean(values), min(values), max(values)


def curve_rows(records, key: str) -> list[dict]:
    """One row per (key value, train length, test length) of the paper's logit scaling: the
    test loss (mean, min and max over seeds), the seed count, the plateau of that train length
    (mean, min, max over seeds), and the train length whose plateau reaches eps and eps / 10,
    interpolated on the mean plateaus and, for the spread, on each seed's own (min and max over
    seeds; None where the grid never gets there), and the least-squares line of each required
    length against the key, at this row's key (`required_N_line`, `required_N_eps_over_10_line`;
    None with fewer than two key values reaching it), as panel (d) of the figure draws it."""
    rows = []
    records = main_records(records)
    config = records[0]["config"]
    for value, group in _by(records, key).items():
        lengths = sorted({r["params"]["train_length"] for r in group})
        seeds = sorted({r["params"]["seed"] for r in group})
        per_seed = {s: {r["params"]["train_length"]: plateau(r) for r in group
                        if r["params"]["seed"] == s} for s in seeds}
        plateaus = [mean(plateau(r) for r in group if r["params"]["train_length"] == n)
                    for n in lengths]
        need = {}
        for name, eps in (("required_N", config["eps"]),
                          ("required_N_eps_over_10", config["eps"] / 10)):
            need[name] = required_length(lengths, plateaus, eps)
            own = [required_length(sorted(per_seed[s]), [per_seed[s][n]
                                                         for n in sorted(per_seed[s])], eps)
                   for s in seeds]
            reached = [v for v in own if v is not None]
            need[name + "_min"] = min(reached) if len(reached) == len(own) else None
            need[name + "_max"] = max(reached) if len(reached) == len(own) else None
        for n, level in zip(lengths, plateaus):
            runs_n = [r for r in group if r["params"]["train_length"] == n]
            levels = [plateau(r) for r in runs_n]
            for t in config["test_lengths"]:
                loss, low, high = spread(r["metrics"]["test_loss"][str(t)] for r in runs_n)
                rows.append({key: value, "train_length": n, "test_length": t,
                             "test_loss": loss, "test_loss_min": low, "test_loss_max": high,
                             "seeds": len(runs_n), "plateau": level,
                             "plateau_min": min(levels), "plateau_max": max(levels),
                             "stopped_by_loss": sum(r["metrics"]["reached_stop_loss"]
                                                    for r in runs_n),
                             "train_loss_max": max(r["metrics"]["train_loss"] for r in runs_n),
                             **need})
    for column in ("required_N", "required_N_eps_over_10"):
        pts = sorted({(r[key], r[column]) for r in rows if r[column] is not None})
        line = linear_fit(*zip(*pts)) if len(pts) >= 2 else None
        for r in rows:
            r[column + "_line"] = None if line is None else line[1] + line[0] * r[key]
    return rows


def summary_rows(records, key: str) -> list[dict]:
    """One row per (key value, train length): the plateau (mean, min, max over seeds), how
    many seeds stopped by the loss rule, and the required N columns."""
    rows = curve_rows(records, key)
    longest = max(r["test_length"] for r in rows)
    return [{k: v for k, v in r.items() if not k.startswith("test_")}
            for r in rows if r["test_length"] == longest]


def columns(rows, shown: dict) -> list[dict]:
    """The chapter's table of tidy rows: the keys of `shown`, renamed to its values (headers)."""
    return [{header: row[key] for key, header in shown.items()} for row in rows]


def summary_table(records, key: str, symbol: str) -> list[dict]:
    """The chapter's table of `summary_rows`, `symbol` heading the column of `key`."""
    return columns(summary_rows(records, key), {
        key: symbol, "train_length": "N", "seeds": "seeds", "plateau": "plateau (mean)",
        "plateau_min": "smallest seed", "plateau_max": "largest seed",
        "stopped_by_loss": "stopped by the rule", "required_N": "required N, eps = 0.01",
        "required_N_eps_over_10": "required N, eps = 0.001"})


def linear_fit(xs, ys) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


def required_fit(records, key: str, column: str = "required_N") -> dict | None:
    """The least-squares line of the required train length against `key` (None with fewer than
    two values reaching it): slope, intercept, and the ratio of the largest to the smallest."""
    rows = summary_rows(records, key)
    pts = sorted({(r[key], r[column]) for r in rows if r[column] is not None})
    if len(pts) < 2:
        return None
    xs, ys = zip(*pts)
    slope, intercept = linear_fit(xs, ys)
    return {"slope": slope, "intercept": intercept, "points": len(pts),
            "ratio": ys[-1] / ys[0], "key_ratio": xs[-1] / xs[0]}


def _line_through(intervals) -> bool:
    """Whether some line y = a + b x meets every vertical segment (x, lo, hi). For a slope b
    the feasible intercepts are [max(lo - b x), min(hi - b x)], whose width is concave in b,
    so it is largest at a slope where two of the bounding lines cross: those are checked."""
    bounds = [(x, lo) for x, lo, _ in intervals] + [(x, hi) for x, _, hi in intervals]
    slopes = {0.0} | {(y2 - y1) / (x2 - x1) for x1, y1 in bounds for x2, y2 in bounds
                      if x2 != x1}
    return any(min(hi - b * x for x, _, hi in intervals)
               >= max(lo - b * x for x, lo, _ in intervals) - 1e-12 for b in slopes)


def law_check(records, key: str, column: str = "required_N") -> dict | None:
    """Is the required train length linear in `key`, given the spread of the seeds' own
    crossings? Two readings of "linear", each decided on the ranges over seeds (None if some
    value of `key` has no seed range): "proportional", N = c * key for one c inside every
    range of N / key (the curves of N / key overlap); "affine", some line a + b * key through
    every range. With the end points' ratio of the mean crossings and of `key`."""
    rows = summary_rows(records, key)
    per_value = {}
    for r in rows:
        if r[column + "_min"] is not None and r[key] not in per_value:
            per_value[r[key]] = (r[column + "_min"], r[column + "_max"], r[column])
    values = sorted({r[key] for r in rows})
    if len(per_value) < len(values) or len(values) < 2:
        return None
    ranges = [(v, *per_value[v][:2]) for v in values]
    return {"proportional": max(lo / v for v, lo, _ in ranges)
            <= min(hi / v for v, _, hi in ranges),
            "affine": _line_through(ranges),
            "ratio": per_value[values[-1]][2] / per_value[values[0]][2],
            "key_ratio": values[-1] / values[0],
            "per_key": ", ".join(f"{fmt(lo / v)} to {fmt(hi / v)}" for v, lo, hi in ranges)}


def law_text(check: dict | None, symbol: str) -> str:
    """`law_check` in words: which reading of "linear in the key" the seeds' ranges allow."""
    if check is None:
        return f"not decided (some {symbol} has no seed crossing)"
    if check["proportional"]:
        return f"proportional to {symbol} within the seeds' ranges"
    if check["affine"]:
        return (f"on a line a + b {symbol} within the seeds' ranges, but not proportional to "
                f"{symbol}")
    return f"neither proportional to {symbol} nor on one line within the seeds' ranges"


def loss_band(ax, pts, color: str, label: str) -> None:
    """The mean test loss against test length of rows `pts`, with the band from their
    smallest to their largest seed."""
    xs = [r["test_length"] for r in pts]
    ax.plot(xs, [r["test_loss"] for r in pts], "o-", ms=3, color=color, label=label)
    ax.fill_between(xs, [r["test_loss_min"] for r in pts], [r["test_loss_max"] for r in pts],
                    color=color, alpha=0.2, lw=0)


def curves_figure(records, key: str, symbol: str, task_name: str):
    """(a) test loss vs test length per train length (largest `key` value), band: min to max
    over seeds. (b) plateau vs train length per `key` value, bars: min to max over seeds.
    (c) the same against N / key, where the curves overlap if the required N is linear in the
    key. (d) required train length vs `key` at eps and eps/10, bars: each seed's own."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter
    config = records[0]["config"]
    rows = curve_rows(records, key)
    values = sorted({r[key] for r in rows})
    fig, axes = plt.subplots(2, 2, figsize=(8.2, 6.6))
    axes = axes.ravel()
    shown = values[-1]
    lengths = sorted({r["train_length"] for r in rows if r[key] == shown})
    for i, n in enumerate(lengths):
        loss_band(axes[0], [r for r in rows if r[key] == shown and r["train_length"] == n],
                  f"C{i}", f"N = {n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title=f"(a) test loss, {symbol} = {shown:g}")
    axes[0].legend(fontsize=7, ncol=2)
    summary = summary_rows(records, key)
    for i, value in enumerate(values):
        pts = sorted((r["train_length"], r["plateau"], r["plateau_min"], r["plateau_max"])
                     for r in summary if r[key] == value)
        ns, mid, low, high = map(list, zip(*pts))
        bars = [[m - lo for m, lo in zip(mid, low)], [h - m for m, h in zip(mid, high)]]
        for ax, x in ((axes[1], ns), (axes[2], [n / value for n in ns])):
            ax.errorbar(x, mid, yerr=bars, fmt="o-", ms=3, capsize=2, color=f"C{i}",
                        label=f"{symbol} = {value:g}")
    for ax, xlabel, title in ((axes[1], "train length N", "(b) plateau vs N"),
                              (axes[2], f"N / {symbol}", f"(c) plateau vs N / {symbol}")):
        for level in (config["eps"], config["eps"] / 10):
            ax.axhline(level, color="k", ls=":", lw=1)
        ax.set(xscale="log", yscale="log", xlabel=xlabel,
               ylabel=f"MSE at length {max(config['test_lengths'])}", title=title)
        ax.legend(fontsize=7)
    every_length = sorted({r["train_length"] for r in summary})
    axes[1].xaxis.set_minor_formatter(NullFormatter())
    plain = FuncFormatter(lambda x, _: f"{x:g}")
    axes[2].xaxis.set_major_formatter(plain)
    axes[2].xaxis.set_minor_formatter(plain)
    axes[2].tick_params(axis="x", which="both", labelsize=7)
    axes[1].set_xticks(every_length, [str(n) for n in every_length], fontsize=7)
    for column, eps, color in (("required_N", config["eps"], "C3"),
                               ("required_N_eps_over_10", config["eps"] / 10, "C4")):
        pts = sorted({(r[key], r[column], r[column + "_min"], r[column + "_max"])
                      for r in summary if r[column] is not None})
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        low = [p[1] - p[2] if p[2] is not None else 0 for p in pts]
        high = [p[3] - p[1] if p[3] is not None else 0 for p in pts]
        axes[3].errorbar(xs, ys, yerr=[low, high], fmt="o", capsize=3, color=color,
                         label=f"plateau <= {eps:g}")
        if len(pts) >= 2:   # the least-squares line of the rows, between the first and last key
            line = {r[key]: r[column + "_line"] for r in summary}
            slope = (line[max(xs)] - line[min(xs)]) / (max(xs) - min(xs))
            axes[3].plot([min(xs), max(xs)], [line[min(xs)], line[max(xs)]], ":", color=color,
                         label=f"line, slope {slope:.2g}")
    axes[3].set(xlabel=symbol, ylabel="smallest N (interpolated)",
                title=f"(d) required N vs {symbol}")
    if axes[3].get_legend_handles_labels()[0]:
        axes[3].legend(fontsize=7)
    else:  # e.g. test scale: no train length in the grid reaches eps
        axes[3].text(0.5, 0.5, f"eps = {config['eps']:g} not reached", ha="center",
                     va="center", transform=axes[3].transAxes, fontsize=8)
    fig.suptitle(f"{task_name}: {len(config['seeds'])} seeds, batch {config['batch_size']}, "
                 f"stop at loss < {config['stop_loss']:g} (cap {config['max_steps']} steps)",
                 fontsize=10)
    fig.tight_layout()
    return fig


# ---- numbers for the chapter's prose and its "Paper vs this book" table ---------------------
def fmt(x, digits: int = 2) -> str:
    """A number as the prose shows it: 2 significant digits, '-' for None."""
    if x is None:
        return "-"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e4):
        return str(int(x))
    return f"{x:.{digits}g}"


def _key(value) -> str:
    return fmt(value).replace(".", "p").replace("-", "m")


def stop_counts(records) -> tuple[int, int, float | None]:
    """How many runs stopped by the loss rule, of how many, and the largest final training loss
    among those that met the step cap instead (None if every run stopped by the rule)."""
    capped = [r["metrics"]["train_loss"] for r in records
              if not r["metrics"]["reached_stop_loss"]]
    return len(records) - len(capped), len(records), max(capped) if capped else None


def creep(records, start: int = 64) -> tuple[float, float]:
    """Median and largest ratio, over the runs whose train length is at least twice the
    smallest, of the test loss at the longest test length to that at `start`: 1 means flat."""
    records = main_records(records)
    tests = records[0]["config"]["test_lengths"]
    start = start if start in tests else min(tests)
    shortest = min(r["params"]["train_length"] for r in records)
    ratios = sorted(r["metrics"]["test_loss"][str(max(r["config"]["test_lengths"]))]
                    / r["metrics"]["test_loss"][str(start)]
                    for r in records if r["params"]["train_length"] >= 2 * shortest)
    return ratios[len(ratios) // 2], ratios[-1]


def headline(records, key: str) -> dict:
    """The numbers the prose around Figs. 1 and 2 cites, as strings keyed for book_text:
    stops, the plateau per train length at the largest key value, the required N per key
    value at eps and eps/10 (seed range in brackets), the fitted slopes and the creep."""
    main = main_records(records)
    out = {}
    stopped, total, worst = stop_counts(main)
    out["stopped"], out["runs"], out["capped-worst"] = str(stopped), str(total), fmt(worst)
    out["cap"] = str(main[0]["config"]["max_steps"])
    summary = summary_rows(main, key)
    values = sorted({r[key] for r in summary})
    largest = values[-1]
    out["largest"] = fmt(largest)
    out["plateaus-largest"] = ", ".join(
        f"{fmt(r['plateau'])} (N = {r['train_length']})"
        for r in sorted(summary, key=lambda r: r["train_length"]) if r[key] == largest)
    for column, name in (("required_N", "required"), ("required_N_eps_over_10", "required10")):
        parts = []
        for v in values:
            r = next(r for r in summary if r[key] == v)
            spread_text = (f" ({fmt(r[column + '_min'])} to {fmt(r[column + '_max'])})"
                           if r[column + "_min"] is not None else "")
            parts.append(f"{fmt(r[column])}{spread_text}")
            out[f"{name}-{_key(v)}"] = fmt(r[column])
        out[name] = ", ".join(parts)
        fit = required_fit(main, key, column)
        out[f"{name}-slope"] = fmt(fit["slope"]) if fit else "-"
        out[f"{name}-ratio"] = fmt(fit["ratio"]) if fit else "-"
    middle, top = creep(main)
    out["creep-median"], out["creep-max"] = fmt(middle), fmt(top)
    out["values"] = ", ".join(fmt(v) for v in values)
    law = law_check(main, key)
    out["law"] = law_text(law, _SYMBOLS.get(key, key))
    out["law-per-key"] = law["per_key"] if law else "-"
    out["law-ratio"] = fmt(law["ratio"]) if law else "-"
    out["law-key-ratio"] = fmt(law["key_ratio"]) if law else "-"
    return out


_SYMBOLS = {"omega": "ω", "period": "Δ"}


def monotone(values, decreasing: bool = False) -> bool:
    pairs = list(zip(values, values[1:]))
    return all((b <= a) if decreasing else (b >= a) for a, b in pairs)
