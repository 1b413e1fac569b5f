"""Izzo et al. (2026), Figure 2: ModPTask, f = mean of x_t over positions t = k mod p.

Left: test loss against test length, one curve per train length N (at one period p). Middle:
the plateau against N, one curve per p. Right: the smallest N whose plateau is below eps
(interpolated between grid points) against p: the paper finds it grows linearly in the period
Delta = p, as Theorem 4.1's tau Delta L^2 / eps^2 term says.
The model's positional table has period p (the Delta = p of the paper's construction; the paper
does not say which encoding it trained). Book scale: fewer periods, lengths, seeds; a step cap.
"""
import matplotlib.pyplot as plt

from lengthgen.experiments.izzo_common import (PAPER_PROTOCOL, build_model, mean, plateau,
                                               required_length, train_and_test)
from lengthgen.tasks.izzo import ModPTask

FIGURE_ID = "izzo-fig2-modp"
TITLE = "ModPTask: test loss plateaus; the plateau falls with train length; N grows with p"

_TESTS = [8, 16, 32, 64, 128, 256, 512]
CONFIGS = {
    "test": {**PAPER_PROTOCOL, "batch_size": 64, "max_steps": 20, "eval_every": 10,
             "eval_samples": 64, "test_samples": 64, "periods": [2, 3],
             "train_lengths": [4, 8], "seeds": [0], "test_lengths": [8, 16], "eps": 1e-2},
    "book": {**PAPER_PROTOCOL, "max_steps": 1000, "eval_every": 100, "eval_samples": 512,
             "test_samples": 512, "periods": [2, 4, 8], "train_lengths": [4, 8, 16, 32, 64],
             "seeds": [0], "test_lengths": _TESTS, "eps": 1e-2},
    "paper": {**PAPER_PROTOCOL, "periods": [2, 3, 4, 5, 8],
              "train_lengths": [4, 8, 16, 32, 64, 128], "seeds": list(range(8)),
              "test_lengths": _TESTS + [1024], "eps": 1e-2},
}


def runs(config):
    return [{"name": f"p{p}-N{n}-s{seed}", "task": f"izzo_modp_p{p}_k0",
             "period": p, "train_length": n, "seed": seed}
            for p in config["periods"] for n in config["train_lengths"] if n >= p
            for seed in config["seeds"]]


def run_one(params, config, device):
    task = ModPTask(params["period"], 0, train_max=params["train_length"])
    model = build_model(task, config, params["seed"], pe="periodic", period=params["period"])
    return train_and_test(task, model, config, params["seed"], params["train_length"],
                          config["test_lengths"], device)


def _by(records, key):
    groups = {}
    for r in records:
        groups.setdefault(r["params"][key], []).append(r)
    return dict(sorted(groups.items()))


def data(records):
    """One row per (p, train length, test length): the mean test loss over seeds, with
    the seed count and, per (p, train length), the plateau and the required N."""
    rows = []
    config = records[0]["config"]
    for p, group in _by(records, "period").items():
        lengths = sorted({r["params"]["train_length"] for r in group})
        plateaus = [mean(plateau(r) for r in group if r["params"]["train_length"] == n)
                    for n in lengths]
        need = required_length(lengths, plateaus, config["eps"])
        for n, level in zip(lengths, plateaus):
            runs_n = [r for r in group if r["params"]["train_length"] == n]
            for t in config["test_lengths"]:
                rows.append({"period": p, "train_length": n, "test_length": t,
                             "test_loss": mean(r["metrics"]["test_loss"][str(t)] for r in runs_n),
                             "seeds": len(runs_n), "plateau": level,
                             "required_N": need})
    return rows


def figure(records):  # noqa: C901 (three panels)
    config = records[0]["config"]
    rows = data(records)
    ps = sorted({r["period"] for r in rows})
    lengths = sorted({r["train_length"] for r in rows})
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    shown = ps[-1]
    for i, n in enumerate(lengths):
        pts = [(r["test_length"], r["test_loss"]) for r in rows
               if r["period"] == shown and r["train_length"] == n]
        axes[0].plot(*zip(*pts), "o-", ms=3, color=f"C{i}", label=f"N = {n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title=f"test loss vs test length (p = {shown:g})")
    axes[0].legend(fontsize=7)
    for i, p in enumerate(ps):
        pts = sorted({(r["train_length"], r["plateau"]) for r in rows if r["period"] == p})
        axes[1].plot(*zip(*pts), "o-", color=f"C{i}", label=f"p = {p:g}")
    axes[1].axhline(config["eps"], color="k", ls=":", lw=1)
    axes[1].set(xscale="log", yscale="log", xlabel="train length N",
                ylabel=f"plateau (MSE at length {max(config['test_lengths'])})",
                title="plateau vs train length")
    axes[1].legend(fontsize=7)
    need = sorted({(r["period"], r["required_N"]) for r in rows if r["required_N"] is not None})
    if need:
        xs, ys = zip(*need)
        axes[2].plot(xs, ys, "o-", color="C3", label="measured")
        slope = sum(x * y for x, y in need) / sum(x * x for x in xs)
        axes[2].plot([0, max(xs)], [0, slope * max(xs)], "k:", lw=1,
                     label=f"linear fit through 0 (slope {slope:.2g})")
        axes[2].legend(fontsize=7)
    missing = [o for o in ps if o not in {x for x, _ in need}]
    note = f" (not reached for p = {', '.join(f'{o:g}' for o in missing)})" if missing else ""
    axes[2].set(xlabel="period p", ylabel=f"smallest N with plateau <= {config['eps']:g}",
                title="required train length vs p" + note)
    axes[2].title.set_fontsize(8 if missing else 10)
    seeds = len(config["seeds"])
    fig.suptitle(f"ModPTask, {seeds} seed(s), batch {config['batch_size']}, at most "
                 f"{config['max_steps']} steps (stop at loss < {config['stop_loss']:g})",
                 fontsize=10)
    fig.tight_layout()
    return fig
