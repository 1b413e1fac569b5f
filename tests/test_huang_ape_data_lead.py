"""The third lead on the APE cells that fit and then fail (huang-ape-data-lead): a finite
training set served by epochs (tasks.fixed.FixedTrainingSet) changes the training data and
nothing else; its evaluation sets stay fresh strings; the study's cells and runs are those it
says."""
import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.sweep import huang_ape_data_lead as lead
from lengthgen.experiments.huang.sweep import huang_ape_leads, leads
from lengthgen.experiments.huang.sweep import protocol
from lengthgen.tasks import get_task
from lengthgen.tasks.fixed import FixedTrainingSet


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
    assert fixed.epochs == 2
    for epoch in (served[:256], served[256:]):   # each epoch serves every string once
        assert sorted(epoch) == sorted(pool)
    assert served[:256] != served[256:]           # in a new order


def test_a_batch_across_an_epoch_boundary_keeps_its_size():
    fixed = FixedTrainingSet(get_task("aa_star"), size=100, data_seed=0)
    rng = np.random.default_rng(1)
    sizes = [len(fixed.training_batch(rng, 64, 1, 50).inputs) for _ in range(3)]
    assert sizes == [64, 64, 64] and fixed.epochs == 2


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
