"""Open-ended jobs (runs.planner, OPEN_HANDOFF_SHARE): a job with a stop rule whose step cap no
allotment holds starts all the same while its small state fits in the slice's part of the
hand-off, and a group of them trains at most OPEN_GROUP_S before handing its unfinished
members on. Without it, none of Izzo et al.'s paper jobs (a 200,000-step cap, stopped by a loss
of 1e-5 in a few thousand steps) would ever start in a GPU slice.
"""
import dataclasses
import json
import time
from types import SimpleNamespace

import pytest
import torch

from lengthgen.engine.jobs import Job
from lengthgen.runs import allotment, rates, slices
from lengthgen.runs import planner as planner_module
from lengthgen.runs.planner import OPEN_HANDOFF_SHARE, OpenBudget, Planner, state_estimate
from lengthgen.runs.registry import experiment

CPU = torch.device("cpu")
SHARE = slices.HANDOFF_BYTES * OPEN_HANDOFF_SHARE


def _paper_jobs(figure_id: str) -> dict:
    module = experiment(figure_id)
    config = module.CONFIGS["paper"]
    return {spec.name: module.engine_job(spec, config) for spec in module.plan(config, {})}


def test_an_izzo_paper_job_starts_open_ended_and_a_job_an_allotment_holds_does_not():
    planner = Planner(rates.H200)
    jobs = _paper_jobs("izzo-fig2-modp")
    job = next(iter(jobs.values()))
    assert job.train.stop_loss == 1e-5 and job.train.steps == 200_000
    # the reason: at its cap no allotment holds one such job
    assert planner.largest((1, 1, 16), [job.train.steps], allotment.USABLE_S, 256,
                           flops=slices.job_flops(job)) == 0
    each = state_estimate(job)
    assert 12 * 9_000 < each < 2 ** 20   # weights, two moments and 2,001 history points
    assert planner.open_ended(job, 300, SHARE, slices.HANDOFF_FILE_BYTES) == \
        min(300, int(SHARE // each)) > 0
    assert planner.open_ended(job, 300, 3 * each + 1, slices.HANDOFF_FILE_BYTES) == 3
    assert planner.open_ended(job, 300, each - 1, slices.HANDOFF_FILE_BYTES) == 0
    assert planner.open_ended(job, 300, SHARE, each - 1) == 0    # no hand-off file holds it
    no_rule = dataclasses.replace(job, train=dataclasses.replace(job.train, stop_loss=None,
                                                                 stop_accuracy=None))
    assert planner.open_ended(no_rule, 300, SHARE, slices.HANDOFF_FILE_BYTES) == 0
    short = dataclasses.replace(job, train=dataclasses.replace(job.train, steps=2_000))
    assert planner.open_ended(short, 300, SHARE, slices.HANDOFF_FILE_BYTES) == 0   # waits
    assert Planner(None).open_ended(job, 300, SHARE, slices.HANDOFF_FILE_BYTES) == 0


def test_choose_opens_a_group_only_where_nothing_can_finish():
    """The slice loop's choice: Izzo's paper jobs, refused before (nothing can finish in 10
    minutes), now start as one open-ended group as large as the hand-off's share holds; a
    Fig. 1 sweep job that an allotment holds but not the time left is still refused."""
    planner = Planner(rates.H200)
    jobs = _paper_jobs("izzo-fig2-modp")
    pending = [SimpleNamespace(name=name) for name in jobs]
    each = state_estimate(next(iter(jobs.values())))

    def choose(jobs, pending, left, open_ended):
        return slices._choose(pending, jobs, {}, 0, left, planner, 256, None,
                              lambda name: True, open_ended)
    never = lambda job, available, resumed: 0   # noqa: E731  (before open-ended jobs)
    assert choose(jobs, pending, 600.0, never)[0] == []
    opened = lambda job, available, resumed: planner.open_ended(   # noqa: E731
        job, available, SHARE, slices.HANDOFF_FILE_BYTES)
    chosen, first, refused, is_open = choose(jobs, pending, 600.0, opened)
    assert is_open and first == 0 and len(chosen) == min(len(jobs), 256, int(SHARE // each))
    sweep = experiment("huang-fig1-budget")
    config = sweep.CONFIGS["gpu"]
    specs = sweep.plan(config, {})[:3]
    sweep_jobs = {s.name: sweep.engine_job(s, config) for s in specs}
    chosen, _, refused, is_open = choose(sweep_jobs, specs, 10.0, opened)
    assert chosen == [] and refused == len(specs) and not is_open


def _work(tmp_path, jobs: dict, recorded: list):
    def record(spec, job, model, result, group_size, started, seconds, weights):
        recorded.append((spec.name, result.steps, result.stopped_early))
    return slices.SliceWork(tmp_path / "records", lambda: [
        SimpleNamespace(name=n, params=lambda n=n: {"name": n})
        for n in jobs if n not in {r[0] for r in recorded}], lambda spec: jobs[spec.name],
        record)


def _izzo_jobs(count: int, stop_loss: float) -> dict:
    """Small limit-style jobs on ModP whose cap (200,000 steps) no allotment holds at the H200's
    rates, stopped by `stop_loss` at their first evaluation or never."""
    from lengthgen.train import TrainConfig
    return {f"j{i}": Job("izzo_modp", {"d_model": 8, "mlp_width": 16},
                         TrainConfig(steps=200_000, batch_size=8, lr=1e-3, eval_every=5,
                                     eval_samples=16, stop_accuracy=None, stop_loss=stop_loss,
                                     min_len=1, max_len=6, seed=i),
                         name=f"j{i}", kind="limit-style") for i in range(count)}


def test_open_ended_jobs_that_meet_their_rule_are_recorded_in_the_slice(tmp_path):
    jobs = _izzo_jobs(3, stop_loss=1e9)   # met at the first evaluation
    recorded: list = []
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 120,
                              rates=rates.H200, states=tmp_path / "states",
                              log=lambda *a, **k: None)
    assert sorted(recorded) == [(n, 5, True) for n in sorted(jobs)]
    assert counts["recorded"] == 3 and counts["not_started"] == 0 and counts["groups"] == 1
    assert "open_ended_left" not in counts


def test_no_open_ended_job_starts_where_the_call_keeps_no_state(tmp_path):
    """Without `states` or `states_out` an unfinished job's training would be lost (and its
    claim start it again from nothing next time): none starts. Nor with less than OPEN_MIN_S
    left, where a new group would train next to nothing."""
    jobs = _izzo_jobs(2, stop_loss=1e9)
    recorded: list = []
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 120,
                              rates=rates.H200, log=lambda *a, **k: None)
    assert recorded == [] and counts["groups"] == 0 and counts["not_started"] == 2
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU,
                              time.time() + slices.OPEN_MIN_S - 5, rates=rates.H200,
                              states=tmp_path / "states", log=lambda *a, **k: None)
    assert recorded == [] and counts["groups"] == 0 and counts["not_started"] == 2


def test_open_ended_jobs_that_never_meet_it_are_handed_on_after_their_groups_time(
        tmp_path, monkeypatch):
    """A group whose members never meet their rule trains OPEN_GROUP_S (1 s here), then its
    states are kept, in the call's share of the hand-off, and a later call resumes them from
    the step they reached, even with its budget for new ones spent."""
    monkeypatch.setattr(slices, "OPEN_GROUP_S", 1.0)
    jobs = _izzo_jobs(2, stop_loss=1e-30)
    recorded: list = []
    states, out = tmp_path / "states", tmp_path / "out"
    started = time.time()
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                              rates=rates.H200, states=states, states_out=out,
                              log=lambda *a, **k: None)
    assert time.time() - started < 60, "the open group stopped after its 1 s, not the slice's"
    assert recorded == [] and counts["unfinished"] == 2 and counts["open_ended_left"] == 2
    assert counts["states_kept"] == 2
    kept = {p.stem: torch.load(p, weights_only=False)["step"] for p in out.glob("*.pt")}
    assert set(kept) == set(jobs) and all(step > 0 for step in kept.values())
    slices.clear_claims(tmp_path / "records")
    spent = OpenBudget(total=1.0, found=10.0 ** 9)
    again = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                             rates=rates.H200, states_in=out, states=tmp_path / "states2",
                             open_budget=spent, log=lambda *a, **k: None)
    assert again["resumed"] == 2 and spent.kept == {}   # found states are counted already


def test_no_open_ended_job_starts_once_the_share_is_spent(tmp_path, monkeypatch):
    """With a share that holds one state at its cap, one never-stopping job starts, and once
    its state is kept the other is not started: what the call would hand on never exceeds its
    part of the hand-off (a kept state counts at its estimate at the cap, or its size where
    larger, so that a shrinking series of small groups never follows)."""
    monkeypatch.setattr(slices, "OPEN_GROUP_S", 1.0)
    jobs = _izzo_jobs(2, stop_loss=1e-30)
    each = state_estimate(jobs["j0"])
    monkeypatch.setattr(planner_module, "OPEN_HANDOFF_SHARE", 1.9 * each / slices.HANDOFF_BYTES)
    recorded: list = []
    lines: list = []
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                              rates=rates.H200, states=tmp_path / "states",
                              log=lambda line, **k: lines.append(line))
    assert counts["groups"] == 1 and counts["open_ended_left"] == 1
    assert counts["not_started"] == 1
    assert any("not started" in json.loads(line).get("note", "") for line in lines
               if line.startswith("{"))


def test_a_calls_budget_counts_the_states_of_pending_jobs_it_found_once(tmp_path):
    """The states found on coming in that the call may hand on again are counted: a pending
    job's newest copy once (a pack's and the local folder's are one state), not a finished
    job's stale copy, nor one too large for a hand-off file; the rest is divided among the
    workers. A call that keeps no state has no budget; one with only the old hand-off has at
    most its `state_bytes`, which is already a worker's."""
    small = {"w": torch.zeros(1000)}
    large = {"w": torch.zeros(5 * 2 ** 20)}   # 20 MiB: no hand-off file holds it
    (tmp_path / "in").mkdir()
    slices.pack_states({"a": small, "done": small}, tmp_path / "in")
    (tmp_path / "states").mkdir()
    slices.keep_state(tmp_path / "states", "a", small)
    slices.keep_state(tmp_path / "states", "big", large)
    found = slices.read_states([tmp_path / "in", tmp_path / "states"])
    assert set(found) == {"a", "done", "big"}
    held = slices.held_bytes(found, {"a", "big"})
    assert held == slices.serialized_size(small)
    total = slices.HANDOFF_BYTES * planner_module.OPEN_HANDOFF_SHARE
    budget = OpenBudget.of_call(tmp_path / "states", None, 10, 2, held)
    assert budget.total == total / 2 and budget.found == held / 2
    budget.keep(("f", "j"), 500)
    assert budget.left() == total / 2 - held / 2 - 500
    assert OpenBudget.of_call(None, None, 10, 1).total == 0
    assert OpenBudget.of_call(None, tmp_path / "out", 10_000, 3).total == 10_000


def test_a_queues_figures_share_one_budget(tmp_path, monkeypatch):
    """run_queue hands one OpenBudget to every figure's slice (and a given one through)."""
    from lengthgen.runs import planned, queue
    seen = []
    monkeypatch.setattr(planned, "run_slice", lambda figure_id, *a, **options: seen.append(
        options["open_budget"]) or {"recorded": 0})
    rows = [{"figure_id": f, "scale": "test"} for f in ("izzo-fig3-hardmax", "izzo-kgram")]
    queue.run_queue(rows, tmp_path, CPU, time.time() + 60, states=tmp_path / "s",
                    log=lambda *a, **k: None)
    assert len(seen) == 2 and seen[0] is seen[1] and seen[0].total > 0
    given = OpenBudget(5.0)
    queue.run_queue(rows, tmp_path, CPU, time.time() + 60, states=tmp_path / "s",
                    open_budget=given, log=lambda *a, **k: None)
    assert seen[2] is given and seen[3] is given


@pytest.mark.parametrize("figure_id", ["izzo-fig3-hardmax", "izzo-kgram"])
def test_every_izzo_figure_has_open_ended_paper_jobs(figure_id):
    planner = Planner(rates.H200)
    job = next(iter(_paper_jobs(figure_id).values()))
    assert planner.open_ended(job, 64, SHARE, slices.HANDOFF_FILE_BYTES) > 0


def test_every_izzo_paper_job_fits_a_slice_or_starts_open_ended():
    """No Izzo paper job falls between the two (planned longer than a slice gives a job, yet
    not open-ended): it would never start. Before, the open-ended cut was the allotment's 13
    minutes, longer than a slice's 9, and 32 jobs of Fig. 1 lay between."""
    planner = Planner(rates.H200)
    for figure_id in ("izzo-fig3-hardmax", "izzo-fig2-modp", "izzo-fig1-simpletask",
                      "izzo-kgram"):
        for name, job in _paper_jobs(figure_id).items():
            whole = planner.seconds(slices.job_shape(job), 1, job.train.steps, False, 0.0,
                                    slices.job_flops(job))
            assert whole <= allotment.SLICE_S or planner.open_ended(
                job, 1, SHARE, slices.HANDOFF_FILE_BYTES) == 1, (figure_id, name, whole)


def _ladder_rung1():
    ladder = experiment("richard-fig1-ladder")
    config = ladder.CONFIGS["paper"]
    from lengthgen.runs.planned import Run
    return ladder.engine_job(Run({"name": "rung1", "rung": 1, "train_depth":
                                  config["train_depth"], "seed": 0}), config)


@pytest.mark.parametrize("chain_s, starts", [(135.0, False), (500.0, True)])
def test_a_job_whose_state_cannot_be_handed_on_counts_the_chained_call_less_its_restart(
        tmp_path, monkeypatch, chain_s, starts):
    """The ladder's rung 1 (a state of about 39 MiB, over a hand-off file; about 7.6 planned
    minutes with its pools' drawing): a first call with 6 minutes left counts a chained call
    only less what that new process must redo before it resumes the job (the drawing and a
    group's start), so 135 s of chained call do not make it start (before, they did, and its
    training was lost when the chained call could not finish it); 500 s do."""
    job = _ladder_rung1()
    assert slices.state_size(slices.job_shape(job)) > slices.HANDOFF_FILE_BYTES
    trained = []

    def fake_train_jobs(jobs, *a, **k):   # never trains: what was started is all we need
        trained.extend(j.name for j in jobs)
        raise RuntimeError("not trained in this test")
    monkeypatch.setattr("lengthgen.engine.jobs.train_jobs", fake_train_jobs)
    job.host_work = None   # the pools are not drawn here (minutes of sympy); still counted
    recorded: list = []
    work = _work(tmp_path, {"rung1": job}, recorded)
    counts = slices.run_slice(work, CPU, time.time() + 360, rates=rates.H200,
                              states=tmp_path / "states", chain_s=chain_s,
                              log=lambda *a, **k: None)
    assert bool(trained) == starts
    if not starts:
        assert counts["not_started"] == 1 and "failed_groups" not in counts
