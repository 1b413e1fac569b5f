"""Izzo et al. chapter: tasks, regression training, the limit-style model, Theorem 4.1's
calculator and the simulation argument."""
import math

import numpy as np
import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.evaluate import evaluate
from lengthgen.runs.registry import experiment
from lengthgen.experiments.izzo.analysis import required_length
from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, build_model
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.objectives import masked_squared_error
from lengthgen.tasks import get_task
from lengthgen.tasks.izzo import KGramTask, ModPTask, SimpleTask
from lengthgen.theory.izzo_bound import (last_output, logit_margin, modp_task_model,
                                         simple_task_model, simulate, theorem41_length,
                                         theorem_norm)
from lengthgen.train import TrainConfig, train

TASKS = [SimpleTask(3.0), ModPTask(4, 1), KGramTask(3, 2), KGramTask(2, 3)]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_vectorized_targets_match_the_reference(task):
    batch = task.sample(np.random.default_rng(1), 64, task.min_len, 30)
    for row, n in zip(batch.inputs, batch.lengths):
        assert (row[n:] == 0).all() and (row[:n] > 0).all()
    for i, n in enumerate(batch.lengths):
        expected = task.target(list(batch.inputs[i, :n] - 1))
        assert np.allclose(batch.targets[i, n - 1], expected, atol=1e-6)
        assert batch.loss_mask[i].sum() == 1 and batch.loss_mask[i, n - 1]


def test_targets_by_hand():
    s = SimpleTask(2.0)
    assert s.target([0, 0, 1, 2]) == pytest.approx(math.sin(2.0 / 3))
    assert s.target([2, 2]) == 0.0
    m = ModPTask(3, 1)
    assert m.target([0, 1, 0, 0, 0, 1, 1]) == pytest.approx(0.5)  # t = 1, 4
    k = KGramTask(2, 2)
    # context 1; it was followed by 0 once and by 1 once before the end: (1, 1)/2
    assert np.allclose(k.target([1, 0, 1, 1]), [1 / 2, 1 / 2])
    assert np.allclose(k.target([0, 1, 1, 1]), [0, 1])  # 1 -> 1 twice, never 1 -> 0
    # 1 never occurred before the end: the string's own frequencies, 3 zeros and 1 one
    assert np.allclose(k.target([0, 0, 0, 1]), [3 / 4, 1 / 4])
    assert np.allclose(k.target([0, 0, 0]), [1, 0])  # 0 -> 0 twice, no smoothing
    assert np.allclose(KGramTask(2, 3).target([0, 1, 1, 0, 1]), [0, 1])  # 01 -> 1 once


def test_modp_data_follow_the_per_residue_bernoulli():
    task = ModPTask(2, 0)
    batch = task.sample(np.random.default_rng(0), 4000, 200, 200)
    x = batch.inputs - 1
    even, odd = x[:, 0::2].mean(axis=1), x[:, 1::2].mean(axis=1)
    assert abs(np.corrcoef(even, odd)[0, 1]) < 0.1  # independent q_0, q_1
    assert np.allclose(batch.targets[:, -1], even, atol=1e-6)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), 1e6, True])
def test_omega_out_of_range(bad):
    with pytest.raises(LengthgenError, match="omega"):
        SimpleTask(bad)


@pytest.mark.parametrize("p, k", [(0, 0), (65, 0), (3, 3), (2.5, 0), (3, -1)])
def test_period_out_of_range(p, k):
    with pytest.raises(LengthgenError):
        ModPTask(p, k)


def test_tasks_are_registered_and_regression():
    for name in ("izzo_simple", "izzo_modp", "izzo_kgram"):
        assert get_task(name).objective == "regression"


def test_readout_last_equals_readout_all_at_the_last_token():
    torch.manual_seed(0)
    kw = dict(vocab_size=4, n_outputs=2, n_layers=2, pe="periodic", period=3, local_tau=1,
              init="standard")
    last = LimitStyleTransformer(LimitStyleConfig(**kw, readout="last"))
    full = LimitStyleTransformer(LimitStyleConfig(**kw, readout="all"))
    full.load_state_dict(last.state_dict())
    inputs = torch.tensor([[1, 2, 3, 1, 2, 0, 0], [3, 3, 1, 2, 1, 1, 2]])
    a, b = last(inputs), full(inputs)
    for row, n in enumerate([5, 7]):
        assert torch.allclose(a[row, n - 1], b[row, n - 1], atol=1e-6)
        assert torch.all(a[row, : n - 1] == 0)
    assert torch.allclose(last.last_attention(inputs), full.last_attention(inputs))


def test_a_prefix_does_not_see_what_follows():
    torch.manual_seed(0)
    model = LimitStyleTransformer(LimitStyleConfig(vocab_size=4, init="standard"))
    x = torch.tensor([[1, 2, 3, 2, 1, 1]])
    assert torch.allclose(model(x[:, :4])[0, 3], model(torch.cat([x[:, :4], 0 * x[:, 4:]],
                                                                   1))[0, 3])


def test_squared_error_ignores_masked_positions_even_if_nan():
    out = torch.tensor([[[float("nan")], [0.5]]])
    target = torch.tensor([[0.0, 1.0]])
    mask = torch.tensor([[False, True]])
    assert masked_squared_error(out, target, mask).tolist() == [[0.0, 0.25]]


def test_regression_training_learns_modp_and_stops_on_loss():
    torch.manual_seed(0)
    task = ModPTask(2, 0, train_max=10)
    config = {**PAPER_PROTOCOL, "batch_size": 256}
    model = build_model(task, config, 0, pe="periodic", period=2)
    before = evaluate(model, task, [(10, 10)], 256, 3)["10-10"]["loss"]
    cfg = TrainConfig(steps=300, batch_size=256, lr=1e-2, weight_decay=0.0, grad_clip=None,
                      eval_every=50, stop_accuracy=None, stop_loss=1e-3,
                      group_lr={"hidden": 1e-2 / 16, "readout": 1e-2 / 16})
    result = train(model, task, cfg)
    after = evaluate(model, task, [(10, 10)], 256, 3)["10-10"]["loss"]
    assert after < before / 10 and after < 0.01
    assert result.final_accuracy is None and "accuracy" not in result.history[-1]
    assert result.stopped_early and result.history[-1]["loss"] < 1e-3


def test_regression_needs_stop_accuracy_off():
    task = ModPTask(2, 0)
    model = build_model(task, PAPER_PROTOCOL, 0, pe="periodic", period=2)
    with pytest.raises(LengthgenError, match="no accuracy"):
        train(model, task, TrainConfig(steps=1))


def test_a_stacked_group_runs_the_regression_objective_like_train():
    """Two decoders on a regression task train in one stacked group (train_jobs), each as
    train() trains it alone: the objective reaches the engine's groups, not only train()."""
    from lengthgen.engine.jobs import Job, train_jobs
    task = ModPTask(2, 0, train_max=8)
    cfg = dict(steps=6, batch_size=32, lr=1e-2, weight_decay=0.0, grad_clip=None, eval_every=3,
               stop_accuracy=None, group_lr={"hidden": 1e-3})
    jobs = [Job(task, {"d_model": 8, "n_heads": 1, "pe": "nope"}, TrainConfig(**cfg, seed=s))
            for s in (0, 1)]
    outcomes = train_jobs(jobs, sampler="host")
    assert {o.group_size for o in outcomes} == {2}
    for job, outcome in zip(jobs, outcomes):
        _, alone = job.build()
        single = train(alone, task, job.train)
        for p, q in zip(outcome.model.parameters(), alone.parameters()):
            assert torch.allclose(p, q, atol=1e-5)
        assert "accuracy" not in outcome.result.history[-1]
        assert outcome.result.history[-1]["loss"] == pytest.approx(single.history[-1]["loss"],
                                                                    rel=1e-4)


def test_a_stacked_group_refuses_a_mix_of_model_classes():
    """Limit-style models stack (tests/test_engine_limit_style.py), but never with decoders in
    one group: a stacked group says so in one line."""
    from lengthgen.engine.groups import StackedGroup
    from lengthgen.train import decoder_for_task
    task = ModPTask(2, 0, train_max=8)
    models = [build_model(task, PAPER_PROTOCOL, 0, pe="periodic", period=2),
              decoder_for_task(task, d_model=16, n_heads=1)]
    cfg = TrainConfig(steps=1, stop_accuracy=None)
    with pytest.raises(LengthgenError, match="all of one class, not a Decoder"):
        StackedGroup(models, [task] * 2, [cfg] * 2, "cpu")


def test_a_train_length_above_the_position_table_is_refused():
    from lengthgen.experiments.izzo.protocol import job, train_and_test
    run = job(ModPTask(2, 0, train_max=50), PAPER_PROTOCOL, 0, 50, pe="ape", n_positions=32)
    with pytest.raises(LengthgenError, match="position table"):
        train_and_test(run, {**PAPER_PROTOCOL, "test_lengths": [50]}, "cpu")


def test_nan_loss_stops_with_the_step_and_keeps_the_checkpoint(tmp_path):
    task = ModPTask(2, 0, train_max=6)
    model = build_model(task, PAPER_PROTOCOL, 0, pe="periodic", period=2)
    path = tmp_path / "ck.pt"
    cfg = TrainConfig(steps=40, batch_size=16, lr=1e-2, weight_decay=0.0, grad_clip=None,
                      eval_every=5, stop_accuracy=None, checkpoint_path=str(path),
                      checkpoint_every=5)
    original = task.sample

    def poisoned(rng, *args):
        batch = original(rng, *args)
        poisoned.calls += 1
        if poisoned.calls > 12:
            batch.targets[:] = np.nan
        return batch
    poisoned.calls = 0
    task.sample = poisoned
    with pytest.raises(LengthgenError, match=r"at step 1[0-9]\b.*last good checkpoint"):
        train(model, task, cfg)
    assert path.exists()


# ---- Theorem 4.1 ---------------------------------------------------------------------------
def test_bound_terms_and_regimes():
    r = theorem41_length(delta=4, tau=2, L=3.0, eps=0.1, p=8, gamma=1.0)
    assert r["statistics"] == pytest.approx(2 * 4 * 9 / 0.01)
    assert r["hardmax"] == 256 and r["N"] == r["statistics"] and r["regime"] == "statistics"
    r = theorem41_length(delta=1, tau=1, L=1.0, eps=0.5, p=16, gamma=0.5)
    assert r["regime"] == "hardmax" and r["N"] == 2.0 ** 32
    doubled = theorem41_length(delta=8, tau=2, L=3.0, eps=0.1, p=8, gamma=1.0)
    assert doubled["statistics"] == pytest.approx(2 * 2 * 4 * 9 / 0.01)  # linear in Delta


@pytest.mark.parametrize("field, value", [("eps", 0.0), ("eps", -1.0), ("gamma", 0.0),
                                          ("gamma", -2.0), ("delta", 0), ("delta", 1.5),
                                          ("tau", 0), ("L", float("inf")), ("p", -1)])
def test_bound_bad_input_is_one_clear_error(field, value):
    args = dict(delta=2, tau=1, L=1.0, eps=0.1, p=8, gamma=1.0)
    args[field] = value
    with pytest.raises(LengthgenError, match="Theorem 4.1"):
        theorem41_length(**args)


@pytest.mark.parametrize("build, task", [(lambda: simple_task_model(3.0, knots=256),
                                          SimpleTask(3.0)),
                                         (lambda: modp_task_model(4, 1), ModPTask(4, 1))])
def test_constructions_compute_the_task(build, task):
    c = build()
    batch = task.sample(np.random.default_rng(0), 20, 40, 40)
    for row, y in zip(batch.inputs, batch.targets[:, -1]):
        full = float(c.model(torch.as_tensor(row)[None])[0, -1] @ c.readout)
        assert last_output(c, row) == pytest.approx(full, abs=1e-9)
        assert full == pytest.approx(float(y), abs=2e-3)


def test_margin_and_norm_of_the_constructions():
    c = modp_task_model(5, margin=2.0)
    assert logit_margin(c) == 2.0 and theorem_norm(c) == 1.0 and c.delta == 5
    assert theorem_norm(simple_task_model(4.0)) > theorem_norm(simple_task_model(1.0))


@pytest.mark.parametrize("c, task", [(modp_task_model(3), ModPTask(3)),
                                     (simple_task_model(2.0), SimpleTask(2.0))])
def test_simulation_keeps_z_short_and_the_output_close(c, task):
    rng = np.random.default_rng(0)
    eps = 0.05
    for n in (200, 5000):
        x = task.sample(rng, 1, n, n).inputs[0]
        r = simulate(c, x, eps, min_length=16)
        z = r["z"]
        assert r["z_length"] == len(z) <= c.delta * (math.floor(c.tau / eps) + 2) + 16
        assert z[-1] == x[-1] and (len(z) - 1) % c.delta == (n - 1) % c.delta
        assert r["statistic_error"] <= 4 * eps  # 2 |attended types| eps / tau
        assert r["output_error"] <= theorem_norm(c) * 4 * eps


def test_simulation_bad_eps():
    with pytest.raises(LengthgenError, match="eps"):
        simulate(modp_task_model(2), np.array([1, 2, 1, 2, 1]), 0.0)


IZZO_IDS = ["izzo-fig1-simpletask", "izzo-fig2-modp", "izzo-fig3-hardmax", "izzo-kgram",
            "izzo-thm41-bound"]


@pytest.fixture(scope="module")
def test_scale_records(tmp_path_factory):
    from lengthgen.runs.runner import run_experiment
    root = tmp_path_factory.mktemp("izzo-results")
    return {fid: run_experiment(fid, "test", "cpu", root=root) for fid in IZZO_IDS}


@pytest.mark.parametrize("figure_id", IZZO_IDS)
def test_data_rows_share_their_keys(figure_id, test_scale_records):
    """Tidy rows, and a spread that brackets its mean: wherever a row has X, X_min and X_max
    (over seeds), X_min <= X <= X_max, and a row that counts its seeds counts the records of
    its setting at most."""
    records = test_scale_records[figure_id]
    rows = experiment(figure_id).data(records)
    assert rows and all(set(r) == set(rows[0]) for r in rows)
    spreads = [k[:-4] for k in rows[0] if k.endswith("_min") and k[:-4] + "_max" in rows[0]
               and k[:-4] in rows[0]]
    for row in rows:
        for key in spreads:
            low, mid, high = row[key + "_min"], row[key], row[key + "_max"]
            if None not in (low, mid, high):
                assert low <= mid * (1 + 1e-12) and mid <= high * (1 + 1e-12), (key, row)
        if "seeds" in row:
            assert 1 <= row["seeds"] <= len(records)
    if figure_id in ("izzo-fig1-simpletask", "izzo-fig2-modp", "izzo-kgram"):
        assert "test_loss" in spreads   # the check above is not vacuous for the curves


def test_paper_vs_book_rows_come_from_the_records(test_scale_records):
    from lengthgen.experiments.izzo.analysis import headline, stop_counts
    from lengthgen.experiments.izzo.analysis import izzo_paper_vs_book_rows
    rows = izzo_paper_vs_book_rows(test_scale_records)
    # plain ids: a table cell is escaped text, so backticks would show raw on the site
    assert [r["figure"] for r in rows] == [
        "izzo-fig1-simpletask", "izzo-fig2-modp", "izzo-fig2-modp (scalings)",
        "izzo-fig3-hardmax", "izzo-kgram", "izzo-thm41-bound"]
    assert all(set(r) == {"figure", "paper", "this book", "verdict"} and r["verdict"]
               for r in rows)
    stopped, total, _ = stop_counts(test_scale_records["izzo-fig2-modp"])
    assert f"{stopped} of {total} runs" not in rows[1]["this book"]  # main runs only
    main = [r for r in test_scale_records["izzo-fig2-modp"] if "logit_scaling" not in r["params"]]
    assert f"{stop_counts(main)[0]} of {len(main)} runs" in rows[1]["this book"]
    numbers = headline(test_scale_records["izzo-fig1-simpletask"], "omega")
    assert numbers["runs"] == str(len(test_scale_records["izzo-fig1-simpletask"]))
    assert set(numbers) >= {"stopped", "required", "required10", "creep-median", "values"}


def test_kgram_records_carry_where_the_layers_look(test_scale_records):
    for r in test_scale_records["izzo-kgram"]:
        shares = r["metrics"]["attention"]
        assert set(shares) == {str(n) for n in r["config"]["test_lengths"]}
        for v in shares.values():
            assert 0 <= v["layer1_previous"] <= 1
            assert v["layer2_matches"] is None or 0 <= v["layer2_matches"] <= 1
        assert [len(phi) for phi in r["metrics"]["phi"]] == [r["params"]["k"]] * 2
    from lengthgen.experiments.izzo.tables import kgram_attention_summary
    summary = kgram_attention_summary(test_scale_records["izzo-kgram"])
    runs = len(test_scale_records["izzo-kgram"])
    k2 = sum(r["params"]["k"] == 2 for r in test_scale_records["izzo-kgram"])
    assert int(summary["sure-runs"]) + int(summary["unsure-runs"]) == int(summary["k2-runs"]) == k2
    assert summary["l1-sharper"].endswith(f"of {runs}")


def test_smoothing_gap_is_the_distance_to_the_laplace_target():
    from lengthgen.experiments.izzo.tables import smoothing_gap_rows
    short, long = smoothing_gap_rows([(2, 2)], [(2, 8), (200, 200)], samples=100)
    assert short["gap_mse"] > 10 * long["gap_mse"] > 0   # the gap shrinks like 1/n^2


def test_required_length_interpolates_the_crossing():
    assert required_length([4, 8, 16], [1e-1, 1e-2, 1e-3], 1e-2) == 8
    assert required_length([4, 8], [1e-1, 1e-3], 1e-2) == pytest.approx(6.0)
    assert required_length([4, 8], [1e-1, 5e-2], 1e-2) is None


def test_the_model_refuses_inputs_past_its_absolute_table_but_not_periodic_ones():
    ape = LimitStyleTransformer(LimitStyleConfig(vocab_size=3, pe="ape", n_positions=8))
    with pytest.raises(LengthgenError, match="position table"):
        ape(torch.ones(2, 10, dtype=torch.long))
    assert ape(torch.ones(2, 8, dtype=torch.long)).shape == (2, 8, 1)
    periodic = LimitStyleTransformer(LimitStyleConfig(vocab_size=3, pe="periodic", period=4))
    assert periodic(torch.ones(1, 500, dtype=torch.long)).shape == (1, 500, 1)


def _manual_logits(model, x, scaling):
    """The layer-1 logits of every query written out: q.k/d + phi, scaled as named."""
    layer = model.layers[0]
    t = x.shape[1]
    q, k = layer.query(x), layer.key(x)
    logits = (q @ k.transpose(1, 2)) * layer.scale
    i = torch.arange(t)[:, None]
    j = torch.arange(t)[None, :]
    phi = torch.zeros(t, t)
    tau = len(layer.local_bias) - 1
    inside = (i - j >= 0) & (i - j <= tau)
    phi[inside] = layer.local_bias[(i - j)[inside]]
    log_i = torch.log(torch.arange(1, t + 1, dtype=torch.float32))[:, None]
    if scaling == "suffix":
        return logits + phi * log_i
    return (logits + phi) * log_i


@pytest.mark.parametrize("scaling", ["suffix", "all"])
def test_logit_scalings_are_the_named_formulas(scaling):
    torch.manual_seed(0)
    model = LimitStyleTransformer(LimitStyleConfig(vocab_size=4, local_tau=2, init="standard",
                                                   logit_scaling=scaling, readout="all"))
    with torch.no_grad():
        model.layers[0].local_bias.copy_(torch.tensor([0.5, 2.0, -1.0]))
        model.layers[0].query.weight.normal_()
        x = model.embed(torch.randint(1, 4, (2, 9)))
        got = model.layers[0].weights(x, None)
        expected = _manual_logits(model, x, scaling)
        expected = expected.masked_fill(torch.ones(9, 9).triu(1).bool(), float("-inf"))
        assert torch.allclose(got, expected.softmax(-1), atol=1e-6)


def test_suffix_scaling_without_a_local_term_scales_nothing():
    torch.manual_seed(1)
    kw = dict(vocab_size=3, init="standard", readout="all")
    suffix = LimitStyleTransformer(LimitStyleConfig(**kw, logit_scaling="suffix"))
    every = LimitStyleTransformer(LimitStyleConfig(**kw, logit_scaling="all"))
    every.load_state_dict(suffix.state_dict())
    with torch.no_grad():
        for m in (suffix, every):
            m.layers[0].query.weight.copy_(torch.eye(16) * 3)
            m.token_embeddings.weight.copy_(torch.randn(3, 16, generator=torch.Generator()
                                                        .manual_seed(2)))
        x = suffix.embed(torch.randint(1, 3, (1, 40)))
        plain = suffix.layers[0].weights(x, None)
        scaled = every.layers[0].weights(x, None)
        raw = (suffix.layers[0].query(x) @ suffix.layers[0].key(x).transpose(1, 2)) \
            * suffix.layers[0].scale
        raw = raw.masked_fill(torch.ones(40, 40).triu(1).bool(), float("-inf"))
    assert torch.allclose(plain, raw.softmax(-1), atol=1e-6)
    assert not torch.allclose(plain[0, -1], scaled[0, -1], atol=1e-3)


def test_unknown_logit_scaling_is_one_clear_error():
    with pytest.raises(LengthgenError, match="logit scaling 'log'.*suffix, all"):
        LimitStyleConfig(vocab_size=3, logit_scaling="log")


def test_modp_grid_is_relative_to_the_period_and_compares_the_scalings():
    from lengthgen.experiments.izzo import izzo_fig2_modp as fig2
    config = fig2.CONFIGS["book"]
    runs = fig2.runs(config)
    main = [r for r in runs if "logit_scaling" not in r]
    assert {(r["period"], r["train_length"]) for r in main} == {
        (p, int(x * p)) for p in (2, 4, 8) for x in (1.5, 2, 3, 4, 6, 8)}
    assert len({r["seed"] for r in main}) >= 3
    other = [r for r in runs if r.get("logit_scaling") == "all"]
    assert other and {r["period"] for r in other} == {4}
    assert len({r["name"] for r in runs}) == len(runs)
    with pytest.raises(LengthgenError, match="not a whole train length"):
        fig2.runs(dict(config, periods=[3]))


def test_book_configs_train_to_the_stop_rule_with_the_papers_scaling():
    from lengthgen.runs.registry import experiment
    for figure_id in ("izzo-fig1-simpletask", "izzo-fig2-modp", "izzo-fig3-hardmax",
                      "izzo-kgram"):
        config = experiment(figure_id).CONFIGS["book"]
        assert config["stop_loss"] == 1e-5 and config["logit_scaling"] == "suffix"
        assert len(config["seeds"]) >= 3


def test_curve_rows_give_the_seed_spread():
    from lengthgen.experiments.izzo.analysis import curve_rows
    config = {"eps": 1e-2, "test_lengths": [8, 16], "logit_scaling": "suffix"}

    def record(seed, n, loss):
        return {"params": {"omega": 1.0, "train_length": n, "seed": seed}, "config": config,
                "metrics": {"test_loss": {"8": loss / 2, "16": loss}, "reached_stop_loss": True,
                            "train_loss": 1e-6}}
    records = [record(0, 2, 1e-1), record(1, 2, 3e-1), record(0, 4, 1e-3), record(1, 4, 1.5e-2)]
    rows = {(r["train_length"], r["test_length"]): r for r in curve_rows(records, "omega")}
    r = rows[(2, 16)]
    assert (r["plateau_min"], r["plateau_max"], r["seeds"]) == (1e-1, 3e-1, 2)
    assert r["plateau"] == pytest.approx(2e-1)
    # seed 0 crosses 1e-2 between 2 and 4, seed 1 never does: no spread, a mean crossing
    assert rows[(4, 16)]["required_N"] is not None and rows[(4, 16)]["required_N_min"] is None


def test_a_crossing_below_the_grid_is_reported_as_an_upper_bound():
    """Where the smallest train length's plateau is already below eps (the ModPTask rows at
    Delta = 4 and 8), required_length returns that grid point: an upper bound, marked "≤" in
    the prose, left out of the fitted line and the growth factor, and the law's "one line" is
    then not decided, while "not proportional" still is when a crossing at another key exceeds
    what proportionality allows."""
    from lengthgen.experiments.izzo.analysis import (crossing_is_bound, headline, law_check,
                                                     law_text, required_fit)
    assert crossing_is_bound([6, 8], [5e-3, 1e-4], 1e-2) and required_length([6, 8], [5e-3, 1e-4],
                                                                             1e-2) == 6
    assert not crossing_is_bound([3, 4], [5e-2, 4e-4], 1e-2)
    config = {"eps": 1e-2, "test_lengths": [8, 16], "logit_scaling": "suffix", "max_steps": 10}

    def record(period, seed, n, loss):
        return {"params": {"period": period, "train_length": n, "seed": seed},
                "config": config,
                "metrics": {"test_loss": {"8": loss, "16": loss}, "reached_stop_loss": True,
                            "train_loss": 1e-6}}
    records = [record(2, s, n, loss) for s in (0, 1) for n, loss in ((3, 5e-2), (4, 4e-4))]
    records += [record(4, s, n, loss) for s in (0, 1) for n, loss in ((6, 6e-3), (8, 4e-4))]
    records += [record(8, s, n, loss) for s in (0, 1) for n, loss in ((12, 1e-3), (16, 3e-4))]
    numbers = headline(records, "period")
    assert numbers["required-4"] == "≤ 6" and numbers["required-8"] == "≤ 12"
    assert not numbers["required-2"].startswith("≤")
    assert numbers["required-slope"] == "-" and numbers["law-ratio"] == "-"
    assert required_fit(records, "period") is None          # one crossing, two bounds: no line
    law = law_check(records, "period")
    assert law["bounded"] == [4, 8] and not law["proportional"]
    assert law_text(law, "Δ").startswith("not proportional") and "not decided" in \
        law_text(law, "Δ")


def test_two_model_simulation_needs_tau_delta_over_eps_squared():
    from lengthgen.theory.izzo_bound import simulate_pair
    f, g = modp_task_model(4, 0), modp_task_model(4, 1)
    rng = np.random.default_rng(3)
    x = ModPTask(4, 0).sample(rng, 1, 20000, 20000).inputs[0]
    for eps in (0.1, 0.05):
        r = simulate_pair(f, g, x, eps)
        assert r["case"] == "eps^2"   # disjoint attended sets: the eps^2 step
        assert 0.9 * 4 / eps ** 2 <= r["z_length"] <= 4 / eps ** 2 + 8
        assert max(r["output_error_f"], r["output_error_g"]) <= theorem_norm(f) * eps
    one = simulate(f, x, 0.05)
    assert one["z_length"] < r["z_length"] / 5    # one model: tau Delta / eps only
    simple_f, simple_g = simple_task_model(2.0), simple_task_model(2.0, pair=(1, 2))
    y = SimpleTask(2.0).sample(rng, 1, 5000, 5000).inputs[0]
    both = simulate_pair(simple_f, simple_g, y, 0.05)
    assert both["output_error_f"] <= theorem_norm(simple_f) * 0.05
    assert both["output_error_g"] <= theorem_norm(simple_g) * 0.05
    with pytest.raises(LengthgenError, match="same vocabulary"):
        simulate_pair(f, modp_task_model(2, 0), x, 0.1)
    with pytest.raises(LengthgenError, match="pair"):
        simple_task_model(2.0, pair=(1, 1))
