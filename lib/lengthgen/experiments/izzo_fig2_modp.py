"""Izzo et al. (2026), Figure 2: ModPTask, f = mean of x_t over positions t = k mod p.

Left: test loss against test length, one curve per train length N (at one period p). Middle:
the plateau against N, one curve per p. Right: the smallest N whose plateau is below eps
(and eps / 10), interpolated between grid points, against p: the paper finds it grows linearly in the period
Delta = p, as Theorem 4.1's tau Delta L^2 / eps^2 term says.
The model's positional table has period p (the Delta = p of the paper's construction; the paper
does not say which encoding it trained). Book scale: fewer periods, lengths, seeds; a step cap.
"""
from lengthgen.experiments.izzo_common import (PAPER_PROTOCOL, build_model, curve_rows,
                                               curves_figure, train_and_test)
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


def data(records):
    """One row per (p, train length, test length); see izzo_common.curve_rows."""
    return curve_rows(records, "period")


def figure(records):
    return curves_figure(records, "period", "p", "ModPTask")
