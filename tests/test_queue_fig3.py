"""Richard's Fig. 3 as planned figures (issue 53): the models Fig. 3 (right) shares with Fig. 4,
Fig. 5 and Table 1 train once in a GPU queue and are billed once, and a run that trains nothing
(the closed-form head) is scored by the slice at its start, as `run_one` scores it."""
import json
import time

import pytest
import torch

from lengthgen.results import load_records
from lengthgen.runs import cost, planned, queue
from lengthgen.runs.records import check_records
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import IN_PROGRESS

CPU = torch.device("cpu")
RIGHT, LEFT = "richard-fig3-right-samples", "richard-fig3-left-capacity"
STUDIES = ["richard-fig4-completions", "richard-fig5-spectrum", "richard-table1-deepest"]


@pytest.fixture
def dyck_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # run_one's weight cache


def _keys(figure_id: str, scale: str) -> dict:
    """{run name: its training's shared key} of a figure's plan (None: trains nothing)."""
    module = experiment(figure_id)
    config = module.CONFIGS[scale]
    return {job.name: module.shared_key(job, config) for job in module.plan(config, {})}


def test_fig3_right_shares_exactly_the_two_studied_models_at_paper_scale():
    """At paper scale the single-word model (one word, depth <= 4) and the 10^7-word model of
    depth <= 8 are the models Fig. 4, Fig. 5 and Table 1 study: the same keys, and no other run
    of Fig. 3 (right) has one of theirs; the closed form trains nothing."""
    right = _keys(RIGHT, "paper")
    assert [name for name, key in right.items() if key is None] == ["closed-form"]
    for figure_id in STUDIES:
        theirs = set(_keys(figure_id, "paper").values())
        assert sorted(n for n, k in right.items() if k in theirs) == \
            ["q04-size00000001", "q08-size10000000"], figure_id


def test_fig3_left_shares_no_model_and_trains_alone_at_paper_scale():
    """Fig. 3 (left) trains 126 models of 42 shapes on fresh words at every step: no other
    planned figure's training has one of its keys, so the queue bills all its minutes to it;
    each job trains alone (the engine's Dyck job) and fits one allotment's 13 minutes."""
    from lengthgen.runs.allotment import USABLE_MIN
    module = experiment(LEFT)
    config = module.CONFIGS["paper"]
    left = _keys(LEFT, "paper")
    assert [name for name, key in left.items() if key is None] == ["closed-form"]
    mine = set(left.values()) - {None}
    others = {t.key for f in queue.planned_figures() if f != LEFT
              and callable(getattr(experiment(f), "trainings", None))
              for t in experiment(f).trainings(experiment(f).CONFIGS[queue.figure_scale(
                  f, "gpu")])}
    assert len(mine) == 126 and not mine & others
    row = next(r for r in queue.order(queue.planned_figures(), "gpu")
               if r["figure_id"] == LEFT)
    assert row["minutes"] == pytest.approx(row["own_minutes"]) and row["scores_for"] is None
    for job in module.plan(config, {}):
        engine = module.engine_job(job, config)
        if engine is not None:
            assert engine.alone and engine.name == job.name
            one = cost.estimate(LEFT, [cost.job_training(engine)]).minutes()
            assert one <= USABLE_MIN, job.name


def test_the_gpu_queue_bills_the_shared_models_once(capsys):
    """Fig. 4 goes first (its two models reproduce three ids), and Fig. 3 (right) after it is
    billed its own estimate less those two models: the rows sum to `figure cost`'s total of
    the pair, shared runs once, and the listing says so."""
    from lengthgen.__main__ import main
    rows = queue.order([RIGHT, STUDIES[0]], "gpu")
    assert [r["figure_id"] for r in rows] == [STUDIES[0], RIGHT]
    first, right = rows
    estimates = [cost.estimate(f, experiment(f).trainings(experiment(f).CONFIGS["paper"]))
                 for f in (RIGHT, STUDIES[0])]
    together = cost.estimate("total", cost.unique_trainings(estimates)).minutes()
    assert first["minutes"] + right["minutes"] == pytest.approx(together)
    assert right["own_minutes"] == pytest.approx(estimates[0].minutes())
    assert right["minutes"] < right["own_minutes"] - first["own_minutes"] + 0.1
    assert right["scores_for"] is None   # it trains thirteen models of its own
    capsys.readouterr()
    assert main(["budget", "queue", "--scale", "gpu", "--figures", f"{RIGHT},{STUDIES[0]}",
                 "--list"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [line[0] for line in lines] == [STUDIES[0], RIGHT]
    assert lines[1][2].startswith(f"{right['minutes']:.1f} H200 min") and \
        "figures before it train some of its models" in lines[1][2]


def test_a_queue_of_fig3_right_and_fig4_trains_each_shared_model_once(tmp_path, dyck_cache,
                                                                      monkeypatch):
    """At test scale the two figures call for eight trainings, two of them the same models
    (seed 0's single-word and many-word models): the queue trains six, each once; the figure
    that comes second scores the two from the store; the closed form is recorded without a
    training; every run of both is recorded, with `run_one`'s metrics."""
    from lengthgen.engine import jobs
    trained, train_jobs = [], jobs.train_jobs

    def counting(group, *args, **kwargs):
        trained.extend(job.name for job in group)
        return train_jobs(group, *args, **kwargs)
    monkeypatch.setattr(jobs, "train_jobs", counting)
    pair = [RIGHT, STUDIES[0]]
    keys = {f: _keys(f, "test") for f in pair}
    shared = set(keys[RIGHT].values()) & set(keys[STUDIES[0]].values()) - {None}
    assert len(shared) == 2
    rows = queue.order(pair, "test")
    lines: list = []
    done = queue.run_queue(rows, tmp_path, CPU, time.time() + 300,
                           log=lambda line, **k: lines.append(line))
    assert not [line for line in lines if '"note"' in line]
    distinct = {k for f in pair for k in keys[f].values() if k is not None}
    assert len(trained) == len(set(trained)) == len(distinct) == 6
    second = rows[1]["figure_id"]
    assert done[second]["reused_weights"] == 2
    for figure_id in pair:
        module = experiment(figure_id)
        config = module.CONFIGS["test"]
        records = load_records(figure_id, "test", tmp_path)
        assert sorted(r["run_name"] for r in records) == sorted(keys[figure_id])
        assert not planned.pending(figure_id, "test", tmp_path)
        assert not (tmp_path / figure_id / "test" / IN_PROGRESS).exists()
        check_records(figure_id, records)
        for r in records:
            weights = r["metrics"].get("shared_weights")
            key = keys[figure_id][r["run_name"]]
            assert (weights is None) == (key is None), r["run_name"]
            if key in shared:
                assert weights["from_store"] == (figure_id == second)
            metrics = {k: v for k, v in r["metrics"].items()
                       if k not in ("cuda_graphs", "shared_weights")}
            assert metrics == module.run_one(r["params"], config, CPU), r["run_name"]
    closed = next(r for r in load_records(RIGHT, "test", tmp_path)
                  if r["run_name"] == "closed-form")
    assert closed["metrics"]["in_sample"] == 1.0 and "train_word" in closed["metrics"]


def test_a_run_that_trains_nothing_is_scored_once_by_one_of_several_workers(tmp_path,
                                                                           dyck_cache):
    """Two workers' slices of one folder (the parent holds the lock): the closed form is
    claimed and recorded by the first, left by the second; a slice whose deadline has passed
    scores nothing, so the figure stays incomplete."""
    late = planned.record_untrained(RIGHT, "test", tmp_path, CPU, deadline=time.time() - 1)
    assert late == {"recorded": 0} and not load_records(RIGHT, "test", tmp_path)
    first = planned.record_untrained(RIGHT, "test", tmp_path, CPU, log=lambda *a, **k: None)
    again = planned.record_untrained(RIGHT, "test", tmp_path, CPU, log=lambda *a, **k: None)
    assert first == {"recorded": 1} and again == {"recorded": 0}
    assert [r["run_name"] for r in load_records(RIGHT, "test", tmp_path)] == ["closed-form"]
    assert planned.pending(RIGHT, "test", tmp_path)   # its trained runs are left


def test_a_failing_score_of_a_run_that_trains_nothing_is_counted_not_raised(tmp_path,
                                                                           monkeypatch):
    module = experiment(RIGHT)

    def broken(model, job, result, config, device, group_size):
        raise ValueError("no head")
    monkeypatch.setattr(module, "score", broken)
    notes: list = []
    counts = planned.record_untrained(RIGHT, "test", tmp_path, CPU,
                                      log=lambda line, **k: notes.append(json.loads(line)))
    assert counts == {"recorded": 0, "failed_groups": 1}
    assert "closed-form" in notes[0]["note"] and "no head" in notes[0]["note"]
