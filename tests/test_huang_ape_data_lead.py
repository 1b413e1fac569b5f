"""The third lead on the APE cells that fit and then fail (huang-ape-data-lead): a finite
training set served by epochs (tasks.fixed.FixedTrainingSet) changes the training data and
nothing else; its evaluation sets stay fresh strings; the study's cells and runs are those it
says."""
from dataclasses import replace

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.sweep import huang_ape_data_lead as lead
from lengthgen.experiments.huang.sweep import huang_ape_leads, leads
from lengthgen.experiments.huang.sweep import protocol
from lengthgen.tasks import get_task
from lengthgen.tasks.fixed import FixedTrainingSet, epochs_started


def _rows(batch) -> set:
    return {tuple(row[row != 0]) for row in batch.inputs}


def test_training_batches_come_from_the_set_each_string_once_per_epoch():
    task = get_task("d3")
    fixed = FixedTrainingSet(task, size=256, data_seed=3)
    pool = [tuple(r[r != 0]) for r in fixed.pool.inputs]
    rng = np.random.default_rng(0)
    served = []
    for _ in range(8):   # two epochs of 4 batches of 64
        batch = fixed.training_batch(rng, 64, 1, 50)
        assert batch.inputs.shape[1] == max(task.max_tokens(int(n)) for n in batch.lengths)
        served += [tuple(r[r != 0]) for r in batch.inputs]
    assert fixed.epochs == 2 == epochs_started(8, 64, 256)
    for epoch in (served[:256], served[256:]):   # each epoch serves every string once
        assert sorted(epoch) == sorted(pool)
    assert served[:256] != served[256:]           # in a new order


def test_a_batch_across_an_epoch_boundary_keeps_its_size():
    fixed = FixedTrainingSet(get_task("aa_star"), size=100, data_seed=0)
    rng = np.random.default_rng(1)
    sizes = [len(fixed.training_batch(rng, 64, 1, 50).inputs) for _ in range(3)]
    assert sizes == [64, 64, 64] and fixed.epochs == 2 == epochs_started(3, 64, 100)
    assert epochs_started(1, 64, 100) == 1 and epochs_started(25, 4, 100) == 1


def test_the_set_depends_on_its_seed_only_and_evaluation_draws_fresh_strings():
    task = get_task("d4")
    a, b = FixedTrainingSet(task, 300, data_seed=1), FixedTrainingSet(task, 300, data_seed=1)
    c = FixedTrainingSet(task, 300, data_seed=2)
    assert np.array_equal(a.pool.inputs, b.pool.inputs)
    assert not np.array_equal(a.pool.inputs, c.pool.inputs)
    fresh = a.sample(np.random.default_rng(9), 256, 41, 50)   # the law, not the set
    assert len(_rows(fresh) - _rows(a.pool)) > 200
    # the pool is the task's own law: the same strings a fresh draw with its generator gives
    assert set(map(int, a.pool.lengths)) <= set(range(1, 51))


def test_a_request_outside_the_sets_lengths_is_refused():
    fixed = FixedTrainingSet(get_task("d3"), size=50)
    with pytest.raises(LengthgenError, match="fixed set holds Len 1-50"):
        fixed.training_batch(np.random.default_rng(0), 8, 51, 100)
    with pytest.raises(LengthgenError, match="at least 1 string"):
        FixedTrainingSet(get_task("d3"), size=0)


def test_the_fixed_data_variant_changes_only_the_training_data():
    config = lead.CONFIGS["test"]
    setting = config["cells"]["d3"][0]
    params = {"task": "d3", "variant": "fixed_data", "setting": setting, "seed": 2}
    trained_on, model, cfg = leads.training(params, config)
    job = protocol.job_for("d3", "ape", setting, 2, config["sweep"])
    _, sweep_model = job.build()
    assert model.cfg == sweep_model.cfg and cfg == job.train
    assert isinstance(trained_on, FixedTrainingSet) and trained_on.task.id == "d3"
    assert trained_on.size == config["fixed_size"] and trained_on.data_seed == 2


def test_the_study_trains_five_seeds_of_its_cells_and_the_two_closest_earlier_leads():
    config = lead.CONFIGS["book"]
    names = [r["name"] for r in lead.runs(config)]
    assert len(names) == len(set(names)) == 5 * (2 + 3 + 3)
    assert {"d4__full_depth__s4", "aa_star__half_offsets__s4", "d3__fixed_data__s4"} <= set(names)
    assert "d3__half_offsets__s0" not in names
    first = [n for n in names if n.endswith("__s0")]
    assert names[:len(first)] == first and first[1] == "d3__book__s0"
    for task, (setting, _) in config["cells"].items():   # the sweep's selected settings
        assert setting == huang_ape_leads.CONFIGS["book"]["cells"][task]
    assert config["fixed_size"] == 10_000


def test_the_study_runs_at_test_scale_and_its_table_marks_what_it_does_not_train(tmp_path):
    config = lead.CONFIGS["test"]
    records = []
    for params in lead.runs(config):
        metrics = lead.run_one(params, config, "cpu")
        if params["variant"] == "fixed_data":
            assert metrics["epochs"] >= 1
        records.append({"metrics": metrics, "params": params})
    text = leads.data_lead_table(records, {**config, "cells": {
        "d3": config["cells"]["d3"], "aa_star": [config["cells"]["aa_star"][0], ["book"]]}})
    assert "| (aa)* (APE) |" in text and "not in this study" in text
    assert lead.data(records)


def _fixed_job():
    """The test scale's D_3 job on a fixed set (200 strings, batch 64: an epoch ends inside
    a batch), run to its 30 steps whatever its accuracy (its stop rule would end it at an
    evaluation), as the slices train it."""
    from lengthgen.engine.jobs import Job
    config = lead.CONFIGS["test"]
    params = next(p for p in lead.runs(config) if p["variant"] == "fixed_data")
    job = leads.engine_job(params, config)
    return Job(job.task, job.model, replace(job.train, stop_accuracy=None), name=job.name)


def test_a_data_lead_job_trained_in_a_slice_has_the_fields_of_run_one(tmp_path):
    """Issue 48: a fixed-set record trained in a GPU slice (runs.planned) lacked the "epochs"
    that `run_one` writes. The same job through both paths: the same metrics' fields, the same
    steps and epochs (the slice's own notes of how it ran aside)."""
    import time

    from lengthgen.runs import planned, slices
    config = lead.CONFIGS["test"]
    params = next(p for p in lead.runs(config) if p["variant"] == "fixed_data")
    alone = lead.run_one(params, config, "cpu")
    work = planned.slice_work(lead.FIGURE_ID, "test", tmp_path, "cpu")
    work.pending = lambda: [j for j in planned.pending(lead.FIGURE_ID, "test", tmp_path)
                            if j.name == params["name"]]
    counts = slices.run_slice(work, "cpu", time.time() + 120, log=lambda *a, **k: None)
    assert counts["recorded"] == 1
    (record,) = planned.job_records(lead.FIGURE_ID, "test", tmp_path).values()
    sliced = record["metrics"]
    assert set(sliced) - {"cuda_graphs", "compiled"} == set(alone)
    assert sliced["steps"] == alone["steps"] and sliced["epochs"] == alone["epochs"] >= 1


class _Killed(Exception):
    """Stands for the process being killed mid-run."""


def _dies_at_batch(task, call: int):
    """The fixed set, except that its call-th training batch raises _Killed."""
    calls = []

    def training_batch(*args):
        calls.append(1)
        if len(calls) == call:
            raise _Killed
        return FixedTrainingSet.training_batch(task, *args)
    task.training_batch = training_batch
    return task


def test_a_fixed_set_job_resumed_in_a_slice_sees_the_batches_of_an_uninterrupted_one(tmp_path):
    """Issue 48: a job on a fixed set stopped at step 13 (mid-epoch, between evaluations),
    its state kept as a file and resumed in a new slice with a fresh set object, as a new
    process would, ends with the weights and evaluations of the same job trained at once: it
    continues its epoch's order and its generator (offsets, later epochs' orders), not the
    first epoch's."""
    import torch

    from lengthgen.engine.checkpoints import load_checkpoint
    from lengthgen.engine.jobs import train_jobs
    from lengthgen.runs.slices import keep_state
    (whole,) = train_jobs([_fixed_job()], sampler="host")
    (first,) = train_jobs([_fixed_job()], sampler="host", until_step=13)
    assert first.result is None and first.state["step"] == 13
    keep_state(tmp_path, "job", first.state)
    state = load_checkpoint(tmp_path / "job.pt")
    (resumed,) = train_jobs([_fixed_job()], sampler="host", resume={0: state})
    assert resumed.result.steps == whole.result.steps == 30
    assert resumed.result.history == whole.result.history
    for (name, p), q in zip(whole.model.named_parameters(), resumed.model.parameters()):
        assert torch.equal(p, q), name


def test_a_fixed_set_run_resumed_from_its_checkpoint_ends_as_an_uninterrupted_one(tmp_path):
    """The same for `train` (the CPU path, run_one): killed after its checkpoint at step 10,
    its 13th batch never drawn, then resumed with a fresh set object."""
    import torch

    from lengthgen.train import train
    job = _fixed_job()
    whole_task, whole_model = job.build()
    whole = train(whole_model, whole_task, job.train)
    cfg = replace(job.train, checkpoint_path=str(tmp_path / "run.pt"), checkpoint_every=10)
    task, model = _fixed_job().build()
    with pytest.raises(_Killed):
        train(model, _dies_at_batch(task, 13), cfg)
    task, model = _fixed_job().build()
    resumed = train(model, task, cfg)
    assert resumed.steps == whole.steps == 30 and resumed.history == whole.history
    assert task.epochs == whole_task.epochs == 10
    for (name, p), q in zip(whole_model.named_parameters(), model.parameters()):
        assert torch.equal(p, q), name


def test_a_training_state_of_another_set_or_task_is_one_clear_line():
    """A fixed set refuses an order that is not over its strings; a task that draws fresh
    batches refuses any state; one set object cannot feed two members of a group."""
    from lengthgen.engine.feeds import HostFeed
    from lengthgen.engine.settings import TrainConfig
    fixed = FixedTrainingSet(get_task("d3"), size=50)
    with pytest.raises(LengthgenError, match="not this set's"):
        fixed.restore_training_state({"order": [3, 70], "epochs": 1})
    with pytest.raises(LengthgenError, match="not this set's"):
        fixed.restore_training_state([1, 2])
    with pytest.raises(LengthgenError, match="no training state"):
        get_task("d3").restore_training_state({"order": [], "epochs": 0})
    cfg = TrainConfig(steps=1)
    with pytest.raises(LengthgenError, match="serves several members"):
        HostFeed([fixed, fixed], [cfg, cfg], [64, 64], [True, True], np.int64, "cpu")
