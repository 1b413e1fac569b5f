"""What a slice plans with (issue 53): the rate it measures is of the training steps alone
(host work, such as drawing a Dyck job's words, is timed apart and counted once, by
Job.host_seconds), and a stacked group's rate has one home, `runs.cost.group_steps_per_s`,
which the planner and `figure cost` both call."""
import time

import pytest
import torch

from lengthgen.experiments.huang.sweep import budget
from lengthgen.runs import planned, rates
from lengthgen.runs.planner import GROUP_OVERHEAD_S, MARGIN, Planner

CPU = torch.device("cpu")
QUIET = dict(log=lambda *a, **k: None)


def test_a_slices_measured_rate_leaves_out_the_host_drawing(tmp_path, monkeypatch):
    """Fig. 7's three test models of a seed share one set of words, drawn (slowly here: slow_s
    more) by the first of them alone: the rate the slice measures is the steps', the same for
    the job that drew and for those that did not, so the planner's estimate for the next job
    of the shape holds no drawing (the drawing is counted once, by Job.host_seconds); the old
    slice timed the drawing into the first job's steps."""
    from lengthgen.experiments.richard import protocol
    slow_s, draws, measured = 1.0, [], []
    real = protocol.training_words

    def slow_words(spec):
        draws.append(spec["seed"])
        time.sleep(slow_s)
        return real(spec)
    monkeypatch.setattr(protocol, "training_words", slow_words)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    protocol._words.cache_clear()
    measure = Planner.measure

    def noted(self, shape, n, steps, seconds, alone=False):
        measure(self, shape, n, steps, seconds, alone)
        measured.append((seconds, self.seconds(shape, 1, steps, alone)))
    monkeypatch.setattr(Planner, "measure", noted)
    try:
        counts = planned.run_slice("richard-fig7-learned-pe", "test", tmp_path, CPU,
                                   time.time() + 300, **QUIET)
    finally:
        protocol._words.cache_clear()
    assert counts["recorded"] == len(measured) == 6 and sorted(draws) == [0, 1]   # 2 seeds
    seconds = [s for s, _ in measured]
    assert max(seconds) - min(seconds) < slow_s / 2
    assert all(estimate < slow_s / 2 + min(seconds) for _, estimate in measured)


def test_a_measured_rate_plans_a_job_with_its_host_work_added():
    """The rate measured on a shape is of its steps alone: a job whose words are still to be
    drawn is planned with that drawing on top (the old planner left it out there)."""
    planner = Planner()
    planner.measure((1, 1, 4), 1, 100, 2.0, alone=True)
    assert planner.seconds((1, 1, 4), 1, 300, alone=True) == pytest.approx(6.0)
    assert planner.seconds((1, 1, 4), 1, 300, alone=True, host_s=78.0) == pytest.approx(84.0)


# ---- one home for a stacked group's rate ------------------------------------------------------
@pytest.mark.parametrize("n", [1, 8, 19, 64])
def test_the_planner_and_figure_cost_time_a_stacked_group_at_one_rate(n):
    """A group of n jobs of each decoder shape the paper-budget sweep plans on the GPU: the
    slice's planner, cold (nothing measured yet), asks figure cost's rule for that group
    (`cost.group_steps_per_s`), so its estimate is figure cost's minutes with the planner's
    margin and group overhead, nothing else. The old planner had a rule of its own, by shape
    cost and group size, blind to a job's batch and lengths: 64 jobs of 1L1H d256 at 4,189
    model-steps/s where figure cost found 1,772, a 12L12H d768 job at 66 where it found 35."""
    from lengthgen.runs import cost
    config = budget.budget_configs()["gpu"]
    by_shape: dict = {}
    for spec in budget.plan(config, {}, slices=False):
        s = spec.setting
        by_shape.setdefault((s.layers, s.heads, s.d_model), spec)
    assert len(by_shape) >= 4
    planner = Planner(rates.H200, graphs=True)
    for shape, spec in sorted(by_shape.items()):
        job = budget.to_engine_job(spec, config)
        training = cost.job_training(job, count=n)
        assert training.dims == shape and not training.alone
        figure_s = cost.estimate("f", [training]).minutes() * 60
        planned_s = planner.seconds(shape, n, job.train.steps, flops=cost.job_flops(job))
        assert planned_s == pytest.approx(MARGIN * figure_s + GROUP_OVERHEAD_S,
                                          rel=1e-9), (shape, n)


def test_a_job_that_cannot_be_handed_on_is_planned_no_shorter_than_the_card_took():
    """The planner against the card's own clock: every stacked group the 2026-11-28 H200 run of
    the paper-budget sweep timed (3 workers on the card; evaluations, the group's start and
    the other workers in its wall time) is planned at least that long when its state could not
    be handed on (`careful`: the table's rate divided among the workers). The plain estimate
    falls short for some of them (runs.planner.MARGIN's comment), which costs no training only
    because such a job's state is handed on. (With the rate not divided, this fails.)"""
    from lengthgen.results import results_dir
    from lengthgen.runs.cost import rate_table
    config = budget.budget_configs()["gpu"]
    records = budget.load_job_records(results_dir() / "huang-fig1-budget" / "gpu")
    groups = budget.card_groups(records, config, rate_table()["card"])
    assert len(groups) >= 15
    for g in groups:
        planner = Planner(rates.H200, g["graphs"], 3, careful=lambda shape: True)
        planned_s = planner.seconds(g["shape"], g["size"], g["steps"], flops=g["flops"])
        assert planned_s >= g["seconds"], (g["shape"], g["size"], g["steps"])

