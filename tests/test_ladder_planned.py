"""richard-fig1-ladder as a planned figure (issue 53, items 2 and 4): a slice trains the rungs
that fit one GPU allotment through the engine and writes ordinary records of the figure, scored
as `run_one` scores its model; the rungs no slice can train are `deferred` by one rule
(`runs.planner.in_an_allotment`), so the figure is not complete while any is left, and a GPU
queue bills only the rungs it can train."""
from dataclasses import replace

import pytest

from lengthgen.errors import LengthgenError
from lengthgen.experiments.richard import boolean_protocol as protocol
from lengthgen.runs import cost, planned, queue
from lengthgen.runs.allotment import HANDOFF_FILE_BYTES, USABLE_MIN
from lengthgen.runs.planner import in_an_allotment, state_estimate
from lengthgen.runs.registry import experiment, run_matcher

FIGURE = "richard-fig1-ladder"
LADDER = experiment(FIGURE)
PAPER = LADDER.CONFIGS["paper"]


def _rung_job(config: dict, rung: int):
    return LADDER.engine_job(planned.Run({"name": f"rung{rung}", "rung": rung,
                                          "train_depth": config["train_depth"], "seed": 0}),
                             config)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The test config trained by a slice (`planned.run_to_end`) and by `run_one`."""
    root = tmp_path_factory.mktemp("results")
    sliced = {r["run_name"]: r for r in planned.run_to_end(FIGURE, "test", "cpu", root=root)}
    config = LADDER.CONFIGS["test"]
    alone = {p["name"]: LADDER.run_one(p, config, "cpu") for p in LADDER.runs(config)}
    return sliced, alone, root


def test_a_slice_writes_run_ones_metrics_as_ordinary_records(both):
    """Every run of the test config recorded by the slice, its params a registered run of the
    figure, and its metrics run_one's keys (the slice adds whether it stepped as CUDA graphs)
    with the same pools, model, counts and baselines, and run_one's training loss (equal on a CPU; the
    engine's stacked step against train()'s)."""
    sliced, alone, root = both
    config = LADDER.CONFIGS["test"]
    assert set(sliced) == set(alone) == {p["name"] for p in LADDER.runs(config)}
    matches = run_matcher(LADDER, "test")
    for name, record in sliced.items():
        assert record["figure_id"] == FIGURE and record["scale"] == "test"
        assert matches(name, record["params"])
        m, ref = record["metrics"], alone[name]
        assert set(m) - set(ref) == {"cuda_graphs"} and set(ref) <= set(m)
        exact = [k for k in ref if k.endswith("_n") or k.startswith("baseline")
                 or k in protocol.RUNG_KEYS + ("rung", "train_depth", "train_examples",
                                               "n_params", "held_out_answers", "train_flops",
                                               "train_tokens")]
        assert {k: m[k] for k in exact} == {k: ref[k] for k in exact}, name
        assert m["train_loss"] == pytest.approx(ref["train_loss"], rel=1e-3), name
        for key in ("in_sample_depth1", "out_of_sample_depth1", "in_sample_nonconstant_depth1"):
            assert m[key] is None or 0.0 <= m[key] <= 1.0
    # the figure's readers take them as its records (data(): one row per plotted value)
    from lengthgen.results import load_records
    records = load_records(FIGURE, "test", root)
    assert len(LADDER.data(records)) == 2 * len(records) * 3 + 2
    assert planned.refresh(FIGURE, "test", root)   # complete: nothing pending or deferred


def test_paper_scale_plans_the_rungs_that_fit_an_allotment_and_defers_the_rest():
    """By the rule's one home (`in_an_allotment` on each rung's Job): at paper scale rung 0 is
    planned and rungs 1 to 4 deferred. Rung 1's steps alone would fit the usable minutes of an
    allotment (`figure cost`), but its state (weights and AdamW moments) is over the hand-off
    file, as every deferred rung's is: every call plans such a job at the rate shared by the
    prepared script's workers, and so no slice gives it enough time (one worker alone would)."""
    plan = [j.name for j in LADDER.plan(PAPER, {})]
    left = [j.name for j in LADDER.deferred(PAPER, {})]
    assert plan == ["rung0"] and left == ["rung1", "rung2", "rung3", "rung4"]
    trainings = LADDER.trainings(PAPER)
    minutes = [cost.estimate(FIGURE, [t]).minutes() for t in trainings]
    assert minutes[0] <= USABLE_MIN and minutes[1] <= USABLE_MIN
    assert all(m > USABLE_MIN for m in minutes[2:])
    assert [t.deferred for t in trainings] == [False, True, True, True, True]
    assert state_estimate(_rung_job(PAPER, 0)) <= HANDOFF_FILE_BYTES
    for i in (1, 2, 3, 4):
        assert state_estimate(_rung_job(PAPER, i)) > HANDOFF_FILE_BYTES
    assert in_an_allotment(_rung_job(PAPER, 1), workers=1)
    assert not in_an_allotment(_rung_job(PAPER, 2), workers=1)
    # a recorded rung leaves both lists; the others stay where the rule put them
    records = {"rung1": {}, "rung3": {}}
    assert [j.name for j in LADDER.plan(PAPER, records)] == ["rung0"]
    assert [j.name for j in LADDER.deferred(PAPER, records)] == ["rung2", "rung4"]


def test_the_rule_counts_the_pools_host_work_and_open_ended_starts():
    """`in_an_allotment`: a job of a fixed budget fits only if it finishes in one allotment,
    its host work counted (the pools' drawing); one with a stop rule whose cap is longer starts
    open-ended where its state fits a hand-off file, and not where it does not."""
    small = _rung_job(PAPER, 0)   # 4.3 H200 minutes of steps, a state of about 11 MiB
    assert in_an_allotment(small) and small.host_seconds > 0
    assert not in_an_allotment(replace(small, host_seconds=20 * 60))   # minutes on the host
    long = replace(small, train=replace(small.train, steps=10 * small.train.steps))
    assert not in_an_allotment(long)
    assert state_estimate(long) <= HANDOFF_FILE_BYTES
    assert in_an_allotment(replace(long, train=replace(long.train, stop_loss=1e-3)))
    big = _rung_job(PAPER, 2)
    assert not in_an_allotment(replace(big, train=replace(big.train, stop_loss=1e-3)))


def test_a_job_is_built_without_drawing_its_pool():
    """A slice builds the Job of every pending run to choose among them: sizing, grouping and
    costing it draws no pool (the paper's 1e5 expressions are minutes of sympy); the first
    read of its pool draws it, once per process."""
    config = {**LADDER.CONFIGS["test"], "pool": 37}   # a pool no other test draws
    flat = protocol.rung_config({**config, "rungs": [{**config["rungs"][0], "pool": 37}]}, 0)
    run = _rung_job({**config, "rungs": [{**config["rungs"][0], "pool": 37}]}, 0)
    cost.job_training(run)
    in_an_allotment(run)
    run.build_model()
    assert "pool" not in run.get_task().__dict__
    assert run.get_task().max_tokens(1) == flat["window"]
    pool = run.get_task().pool
    assert pool is protocol.training_pool({"seed": 0, "train_depth": 1}, flat)
    assert 0 < len(pool) <= 37 and run.host_key and run.host_work() is pool


def test_the_position_table_bound_holds_for_drawn_expressions():
    """`table_rows` skips drawing the test pools where `longest_expression` bounds every
    expression within the window: no drawn expression is longer than the bound."""
    import numpy as np

    from lengthgen.tasks.boolean import random_expression
    rng = np.random.default_rng(0)
    for clauses in (1, 2, 3):
        for depth in (1, 2, 3):
            longest = max(len(random_expression(rng, clauses, depth)) for _ in range(300))
            assert longest <= protocol.longest_expression(clauses, depth)
    assert protocol.table_rows(PAPER | PAPER["rungs"][0]) == PAPER["window"]


def test_the_gpu_queue_bills_the_planned_rungs_and_names_the_deferred():
    """The GPU queue lists the ladder at the minutes of the rung it can train (`figure cost`'s
    first rung), and the deferred rungs apart, not billed."""
    [row] = queue.order([FIGURE], "gpu")
    trainings = LADDER.trainings(PAPER)
    planned_min = cost.estimate(FIGURE, trainings[:1]).minutes()
    assert row["minutes"] == pytest.approx(planned_min) and row["per_id"] == row["minutes"]
    assert row["deferred"] == 4
    assert row["deferred_minutes"] == pytest.approx(
        cost.estimate(FIGURE, trainings[1:]).minutes())
    # figure cost counts them all, rungs 1 and 2 (one shape) as one group: no more
    assert 0.9 * (row["minutes"] + row["deferred_minutes"]) \
        <= cost.estimate(FIGURE, trainings).minutes() <= row["minutes"] + row["deferred_minutes"]
    assert FIGURE in queue.planned_figures()


def test_the_figure_is_not_complete_while_a_rung_is_deferred(tmp_path, monkeypatch):
    """A rung the rule defers is left by the slice: the others are recorded, `run_to_end` says
    so in one line, the folder keeps its in-progress marker and `refresh` calls it incomplete."""
    from lengthgen.runs import planner
    from lengthgen.runs.folders import IN_PROGRESS
    monkeypatch.setattr(planner, "in_an_allotment", lambda job: job.train.steps <= 3)
    with pytest.raises(LengthgenError, match="1 job.s. deferred.*rung1"):
        planned.run_to_end(FIGURE, "test", "cpu", root=tmp_path)
    assert set(planned.job_records(FIGURE, "test", tmp_path)) == {"rung0"}
    assert [j.name for j in planned.deferred(FIGURE, "test", tmp_path)] == ["rung1"]
    assert not planned.refresh(FIGURE, "test", tmp_path)
    assert (planned.folder(FIGURE, "test", tmp_path) / IN_PROGRESS).exists()
