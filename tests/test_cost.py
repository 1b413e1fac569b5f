"""The GPU cost estimate of figures' trainings (`lengthgen.runs.cost`, `figure cost`).

The arithmetic is checked on planted runs whose answer is worked out here from the rate table's
own numbers; every figure that trains must say what it trains and what its paper config takes
from the paper.
"""
import json
import math

import pytest

from lengthgen.runs import cost
from lengthgen.runs.cost import Training
from lengthgen.runs.registry import EXPERIMENTS, experiment, source_ids

# figures with runs of their own that train no model (constructions, interpreters, counts)
NOT_TRAINED = {"comm-agreement", "comm-matrices", "comm-messages", "comm-protocol-bits",
               "comm-rounding", "crasp-compile-check", "crasp-long-unary",
               "huang-prop54-regularizer", "huang-table2-languages", "huang-table3-algorithmic",
               "izzo-thm41-bound", "richard-fig2-closed-form-paths", "richard-thm41-closed-form"}


def _rates() -> dict:
    return json.loads(cost.RATES_FILE.read_text())


def test_flops_per_step_is_the_stated_rule():
    t = Training("x", n_params=1000, layers=2, d_model=8, batch=4, tokens=10, steps=1)
    assert t.flops_per_step() == (6 * 1000 + 6 * 2 * 10 * 8) * 4 * 10
    assert Training("x", 1, 1, 1, 1, 1, 1, flops=123.0).flops_per_step() == 123.0


def test_planted_runs_of_a_measured_shape_take_their_measured_minutes():
    """Runs of the benchmark's own workload at 1L1H d16: a full group of 1024 runs at the best
    engine rate the table holds for that shape, one lone run at the fastest group step measured
    there (launch-bound), and one at a time at the train() rate."""
    rows = [r for r in _rates()["rows"] if r["shape"] == [1, 1, 16]]
    best = max(r["model_steps_per_s"] for r in rows if r["kind"] in cost.ENGINE_KINDS)
    step = max(r["model_steps_per_s"] / r["group"] for r in rows
               if r["kind"] in cost.ENGINE_KINDS)
    single = next(r["model_steps_per_s"] for r in rows if r["kind"] == "train()")
    flops = cost._bench_flops((1, 1, 16))
    full = cost.estimate("full", [Training("1L1H d16", 1, 1, 16, 64, 52, steps=1500,
                                           count=1024, flops=flops)])
    assert full.minutes() == pytest.approx(1024 * 1500 / best / 60, rel=1e-6)
    lone = cost.estimate("lone", [Training("1L1H d16", 1, 1, 16, 64, 52, steps=30_000,
                                           flops=flops)])
    assert lone.minutes() == pytest.approx(30_000 / step / 60, rel=1e-6)
    assert lone.minutes(kind="train()") == pytest.approx(30_000 / single / 60, rel=1e-6)
    assert full.fits and lone.fits


def test_planted_large_run_reaches_the_largest_shapes_throughput():
    """Above the largest shape the FLOP/s stays at its measured value, and the T4 is bound by
    its fp32 peak times the H200's best efficiency: both worked out by hand here."""
    points = cost.measured_points()
    f_n, r_n = points[-1]
    flops, steps = 1e13, 60_000
    planted = Training("big", 1, 1, 1, 1, 1, steps=steps, flops=flops)
    c = cost.estimate("planted", [planted])
    assert c.minutes() == pytest.approx(steps * flops / (f_n * r_n) / 60, rel=1e-9)
    cards = _rates()["cards"]
    eta = max(f * r for f, r in points) / (cards["h200"]["dense_tflops"] * 1e12)
    t4_step = max(flops / (f_n * r_n), flops / (cards["t4"]["dense_tflops"] * 1e12 * eta))
    assert c.minutes("t4") == pytest.approx(steps * t4_step / 60, rel=1e-9)
    assert not c.fits and c.minutes("t4") > c.minutes()


def test_interpolation_lies_between_its_neighbours_and_never_beats_the_smallest():
    points = cost.measured_points()
    for (fa, ra), (fb, rb) in zip(points, points[1:]):
        mid = math.sqrt(fa * fb)
        throughput = mid * cost.h200_steps_per_s(mid)
        assert min(fa * ra, fb * rb) <= throughput * (1 + 1e-9)
        assert throughput <= max(fa * ra, fb * rb) * (1 + 1e-9)
    assert cost.h200_steps_per_s(points[0][0] / 100) == points[0][1]


def test_fits_is_the_allotment_line():
    rate = cost.h200_steps_per_s(1e9, group=1)
    just = lambda minutes: cost.estimate("x", [Training("s", 1, 1, 1, 1, 1,  # noqa: E731
                                                        steps=round(minutes * 60 * rate),
                                                        flops=1e9)])
    assert just(cost.ALLOTMENT_MIN - 0.1).fits
    assert not just(cost.ALLOTMENT_MIN + 0.1).fits


def test_shared_runs_count_once_in_the_total():
    shared = Training("s", 10, 1, 4, 1, 4, 100, key="same")
    a = cost.estimate("a", [shared, Training("t", 10, 1, 4, 1, 4, 50)])
    b = cost.estimate("b", [shared])
    total = cost.unique_trainings([a, b])
    assert sum(t.model_steps for t in total) == 150


def _own_runs():
    return [f for f in sorted(EXPERIMENTS) if source_ids(f) == (f,)]


def test_every_trained_figure_has_a_paper_config_a_note_and_its_trainings():
    for figure_id in _own_runs():
        module = experiment(figure_id)
        if figure_id in NOT_TRAINED:
            assert not hasattr(module, "trainings"), figure_id
            continue
        if "paper" not in module.CONFIGS:   # a planned figure whose GPU protocol is its "gpu"
            # config (the paper-budget sweep): its plan depends on its records, and so does
            # its cost (`budget plan --estimate`), not a fixed list of trainings
            assert module.CONFIGS.get("gpu") and callable(module.plan), figure_id
            continue
        assert hasattr(module, "trainings"), f"{figure_id} trains but has no trainings()"
        assert "paper" in module.CONFIGS
        note = getattr(module, "PAPER_SCALE", "")
        assert isinstance(note, str) and len(note.split()) >= 15, figure_id
        found = module.trainings(module.CONFIGS["test"])
        assert found and all(isinstance(t, Training) and t.model_steps > 0 and t.n_params > 0
                             for t in found), figure_id


def test_trainings_follow_the_configs_they_read():
    """Richard's Fig. 1 at paper scale: the paper's ~1e8-parameter model, one per depth; and
    the sweep's paper search walks the grid up to the cell's Table 6-7 setting, 5 seeds of it."""
    boolean = experiment("richard-fig1-boolean")
    [t] = boolean.trainings(boolean.CONFIGS["paper"])
    assert 0.8e8 < t.n_params < 1.3e8 and t.count == 6 and t.steps == 100_000
    from lengthgen.experiments.huang.sweep import protocol
    paper = protocol.configs(["binary_majority"], [])["paper"]
    own = protocol.paper_setting("binary_majority", "ape")
    planned = protocol.planned_settings("binary_majority", "ape", paper)
    assert planned[-1] == (own, 5)
    assert all(n == 1 and s.complexity < own.complexity for s, n in planned[:-1])
    assert len(planned) - 1 == sum(protocol.Setting.of(s).complexity < own.complexity
                                   for s in protocol.paper_grid())


def _cli(capsys, *args):
    """`python -m lengthgen figure cost ARGS` through the entry point's main() in this process
    (what is tested is the command's output and exit code, not an interpreter's start)."""
    from types import SimpleNamespace

    from lengthgen.__main__ import main
    capsys.readouterr()
    code = main(["figure", "cost", *args])
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def test_cli_prints_the_table_and_the_method(capsys):
    done = _cli(capsys, "richard-fig4-completions", "richard-table1-deepest", "--scale", "test",
                "--notes")
    assert done.returncode == 0, done.stderr
    assert "| richard-fig4-completions |" in done.stdout
    assert "total (shared runs once)" in done.stdout and "Kaplan" in done.stdout
    assert "richard-table1-deepest: From the paper" in done.stdout


def test_cli_refuses_a_figure_that_trains_nothing_in_one_line(capsys):
    done = _cli(capsys, "comm-matrices")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "trains no model" in done.stderr


# ---- the host's drawing of Dyck training words (issue 53) -----------------------------------
def test_the_drawing_estimate_follows_its_rounds_and_is_linear_while_one_round_holds():
    """`distinct_words` draws 2 x the missing words + 8 a round: one round where 2m draws hold
    m distinct words (m <= 0.79 of the band), so the time is linear in m; near the whole band
    it takes more rounds (the coupon collector), never an endless loop."""
    from lengthgen.tasks import dyck
    available = dyck.count_words(16)
    assert dyck.expected_draws(available, 1000) == pytest.approx(2008, rel=1e-6)
    assert dyck.expected_draws(available, 4 ** 12) == pytest.approx(2 * 4 ** 12 + 8, rel=1e-6)
    one, two = (dyck.drawing_seconds(16, m) for m in (4 ** 11, 2 * 4 ** 11))
    assert two == pytest.approx(2 * one, rel=1e-3)
    assert dyck.drawing_seconds(16, 4 ** 12) == pytest.approx(
        dyck.DRAW_SECONDS_PER_SYMBOL * 32 * (2 * 4 ** 12 + 8))
    whole = dyck.expected_draws(100, 100)
    assert 100 * math.log(100) < whole < 4 * 100 * (math.log(100) + 1)
    assert dyck.drawing_seconds(16, 10 ** 7, 0, 8) < dyck.drawing_seconds(16, 4 ** 12)


def test_a_dyck_figure_adds_each_set_of_training_words_once_to_its_minutes():
    """Fig. 7's three models share seed 0's 4^12 words of D_32: its paper estimate is their
    steps at train()'s rate (each trains alone) plus one draw of the words on the host, the
    same on every card and in both H200 columns."""
    from dataclasses import replace

    from lengthgen.tasks import dyck
    module = experiment("richard-fig7-learned-pe")
    trainings = module.trainings(module.CONFIGS["paper"])
    draw = dyck.drawing_seconds(16, 4 ** 12)
    assert draw > 60 and sum(t.host_s for t in trainings) == pytest.approx(draw)
    assert all(t.alone for t in trainings)
    with_draw = cost.estimate("f", trainings)
    without = cost.estimate("f", [replace(t, host_s=0.0) for t in trainings])
    at_train_rate = sum(t.model_steps / cost.h200_steps_per_s(t.flops_per_step(),
                                                              cost.SINGLE_KIND)
                        for t in trainings) / 60
    assert without.minutes() == pytest.approx(at_train_rate)
    for card, kind in (("h200", "engine"), ("h200", cost.SINGLE_KIND), ("t4", "engine")):
        assert with_draw.minutes(card, kind) - without.minutes(card, kind) == \
            pytest.approx(draw / 60)
