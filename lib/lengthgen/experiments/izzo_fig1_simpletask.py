"""Izzo et al. (2026), Figure 1: SimpleTask, f = sin(omega (c0 - c1) / (c0 + c1)).

Left: test loss against test length, one curve per train length N (at one omega): the curves
flatten (plateau) instead of growing. Middle: the plateau against N, one curve per omega: it
falls as N grows. Right: the smallest N whose plateau is below eps = 1e-2, against omega: the
paper finds it grows linearly (L = Theta(omega) in Theorem 4.1).
Book scale trains fewer omegas, train lengths and seeds, with a step cap (see CONFIGS).
"""
import matplotlib.pyplot as plt

from lengthgen.experiments.izzo_common import (PAPER_PROTOCOL, build_model, mean, plateau,
                                               required_length, train_and_test)
from lengthgen.tasks.izzo import SimpleTask

FIGURE_ID = "izzo-fig1-simpletask"
TITLE = "SimpleTask: test loss plateaus; the plateau falls with train length; N grows with omega"

_TESTS = [8, 16, 32, 64, 128, 256, 512]
CONFIGS = {
    "test": {**PAPER_PROTOCOL, "batch_size": 64, "max_steps": 20, "eval_every": 10,
             "eval_samples": 64, "test_samples": 64, "omegas": [1.0, 2.0],
             "train_lengths": [4, 8], "seeds": [0], "test_lengths": [8, 16], "eps": 1e-2},
    "book": {**PAPER_PROTOCOL, "max_steps": 1000, "eval_every": 100, "eval_samples": 512,
             "test_samples": 512, "omegas": [1.0, 2.0, 4.0], "train_lengths": [2, 4, 8, 16, 32],
             "seeds": [0], "test_lengths": _TESTS, "eps": 1e-2},
    "paper": {**PAPER_PROTOCOL, "omegas": [1.0, 2.0, 4.0, 8.0],
              "train_lengths": [4, 8, 16, 32, 64, 128], "seeds": list(range(8)),
              "test_lengths": _TESTS + [1024], "eps": 1e-2},
}


def runs(config):
    return [{"name": f"w{omega:g}-N{n}-s{seed}", "task": f"izzo_simple_w{omega:g}",
             "omega": omega, "train_length": n, "seed": seed}
            for omega in config["omegas"] for n in config["train_lengths"]
            for seed in config["seeds"]]


def run_one(params, config, device):
    task = SimpleTask(params["omega"], train_max=params["train_length"])
    model = build_model(task, config, params["seed"], pe="nope")
    return train_and_test(task, model, config, params["seed"], params["train_length"],
                          config["test_lengths"], device)


def _by(records, key):
    groups = {}
    for r in records:
        groups.setdefault(r["params"][key], []).append(r)
    return dict(sorted(groups.items()))


def data(records):
    """One row per (omega, train length, test length): the mean test loss over seeds, with
    the seed count and, per (omega, train length), the plateau and the required N."""
    rows = []
    config = records[0]["config"]
    for omega, group in _by(records, "omega").items():
        lengths = sorted({r["params"]["train_length"] for r in group})
        plateaus = [mean(plateau(r) for r in group if r["params"]["train_length"] == n)
                    for n in lengths]
        need = required_length(lengths, plateaus, config["eps"])
        for n, level in zip(lengths, plateaus):
            runs_n = [r for r in group if r["params"]["train_length"] == n]
            for t in config["test_lengths"]:
                rows.append({"omega": omega, "train_length": n, "test_length": t,
                             "test_loss": mean(r["metrics"]["test_loss"][str(t)] for r in runs_n),
                             "seeds": len(runs_n), "plateau": level,
                             "required_N": need})
    return rows


def figure(records):
    config = records[0]["config"]
    rows = data(records)
    omegas = sorted({r["omega"] for r in rows})
    lengths = sorted({r["train_length"] for r in rows})
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    shown = omegas[-1]
    for i, n in enumerate(lengths):
        pts = [(r["test_length"], r["test_loss"]) for r in rows
               if r["omega"] == shown and r["train_length"] == n]
        axes[0].plot(*zip(*pts), "o-", ms=3, color=f"C{i}", label=f"N = {n}")
    axes[0].set(xscale="log", yscale="log", xlabel="test length", ylabel="test MSE",
                title=f"test loss vs test length (omega = {shown:g})")
    axes[0].legend(fontsize=7)
    for i, omega in enumerate(omegas):
        pts = sorted({(r["train_length"], r["plateau"]) for r in rows if r["omega"] == omega})
        axes[1].plot(*zip(*pts), "o-", color=f"C{i}", label=f"omega = {omega:g}")
    axes[1].axhline(config["eps"], color="k", ls=":", lw=1)
    axes[1].set(xscale="log", yscale="log", xlabel="train length N",
                ylabel=f"plateau (MSE at length {max(config['test_lengths'])})",
                title="plateau vs train length")
    axes[1].legend(fontsize=7)
    need = sorted({(r["omega"], r["required_N"]) for r in rows if r["required_N"] is not None})
    if need:
        xs, ys = zip(*need)
        axes[2].plot(xs, ys, "o-", color="C3", label="measured")
        slope = sum(x * y for x, y in need) / sum(x * x for x in xs)
        axes[2].plot([0, max(xs)], [0, slope * max(xs)], "k:", lw=1,
                     label=f"linear fit through 0 (slope {slope:.2g})")
        axes[2].legend(fontsize=7)
    missing = [o for o in omegas if o not in {x for x, _ in need}]
    note = f" (not reached for omega = {', '.join(f'{o:g}' for o in missing)})" if missing else ""
    axes[2].set(xlabel="omega", ylabel=f"smallest N with plateau <= {config['eps']:g}",
                title="required train length vs omega" + note)
    axes[2].title.set_fontsize(8 if missing else 10)
    seeds = len(config["seeds"])
    fig.suptitle(f"SimpleTask, {seeds} seed(s), batch {config['batch_size']}, at most "
                 f"{config['max_steps']} steps (stop at loss < {config['stop_loss']:g})",
                 fontsize=10)
    fig.tight_layout()
    return fig
