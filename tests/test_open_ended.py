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
from lengthgen.runs.planner import OPEN_HANDOFF_SHARE, Planner, state_estimate
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
    never = lambda job, available: 0   # noqa: E731  (the planner before open-ended jobs)
    assert choose(jobs, pending, 600.0, never)[0] == []
    opened = lambda job, available: planner.open_ended(   # noqa: E731
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
    lines: list = []
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 120,
                              rates=rates.H200, log=lambda line, **k: lines.append(line))
    assert sorted(recorded) == [(n, 5, True) for n in sorted(jobs)]
    assert counts["recorded"] == 3 and counts["not_started"] == 0 and counts["groups"] == 1
    assert "open_ended_left" not in counts


def test_open_ended_jobs_that_never_meet_it_are_handed_on_after_their_groups_time(
        tmp_path, monkeypatch):
    """A group whose members never meet their rule trains OPEN_GROUP_S (2 s here), then its
    states are kept, in the slice's share of the hand-off, and a later call resumes them from
    the step they reached."""
    monkeypatch.setattr(slices, "OPEN_GROUP_S", 2.0)
    jobs = _izzo_jobs(2, stop_loss=1e-30)
    recorded: list = []
    states, out = tmp_path / "states", tmp_path / "out"
    started = time.time()
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                              rates=rates.H200, states=states, states_out=out,
                              log=lambda *a, **k: None)
    assert time.time() - started < 60, "the open group stopped after its 2 s, not the slice's"
    assert recorded == [] and counts["unfinished"] == 2 and counts["open_ended_left"] == 2
    assert counts["states_kept"] == 2
    kept = {p.stem: torch.load(p, weights_only=False)["step"] for p in out.glob("*.pt")}
    assert set(kept) == set(jobs) and all(step > 0 for step in kept.values())
    slices.clear_claims(tmp_path / "records")
    again = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                             rates=rates.H200, states_in=out, log=lambda *a, **k: None)
    assert again["resumed"] == 2


def test_no_open_ended_job_starts_once_the_share_is_spent(tmp_path, monkeypatch):
    """With a share that holds one state at its cap, one never-stopping job starts, and once
    its state is kept the other is not started: what the slice would hand on never exceeds its
    part of the hand-off (a kept state counts at its real size, a new job at its cap's)."""
    monkeypatch.setattr(slices, "OPEN_GROUP_S", 1.0)
    jobs = _izzo_jobs(2, stop_loss=1e-30)
    each = state_estimate(jobs["j0"])
    monkeypatch.setattr(slices, "OPEN_HANDOFF_SHARE", (each + 1) / slices.HANDOFF_BYTES)
    recorded: list = []
    lines: list = []
    counts = slices.run_slice(_work(tmp_path, jobs, recorded), CPU, time.time() + 300,
                              rates=rates.H200, states=tmp_path / "states",
                              log=lambda line, **k: lines.append(line))
    assert counts["groups"] == 1 and counts["open_ended_left"] == 1
    assert counts["not_started"] == 1
    assert any("not started" in json.loads(line).get("note", "") for line in lines
               if line.startswith("{"))


@pytest.mark.parametrize("figure_id", ["izzo-fig3-hardmax", "izzo-kgram"])
def test_every_izzo_figure_has_open_ended_paper_jobs(figure_id):
    planner = Planner(rates.H200)
    job = next(iter(_paper_jobs(figure_id).values()))
    assert planner.open_ended(job, 64, SHARE, slices.HANDOFF_FILE_BYTES) > 0
