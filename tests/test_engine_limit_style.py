"""The engine stacks Izzo et al.'s limit-style transformers as it stacks decoders.

`lengthgen.engine.stacked_limit` is a second copy of `LimitStyleTransformer.forward`, batched
over S members: checked here as tests/test_engine_fields.py and tests/test_engine.py check the
decoder's stack:

- every LimitStyleConfig field is placed (shared, per member, initialization only), and a
  planted field is refused until it is;
- the stacked outputs are each member's own (to 1e-4: outputs of order 1 from weights of
  order 1), for every value a field takes here, mixed inside
  one group where the field is per member (random weights everywhere, the query too, so that
  the log scalings, the periodic index, phi and the scale all show);
- `train_jobs` on a group of limit-style jobs ends each where `train()` alone ends it (history,
  stop step, weights), a member that meets the stop-loss rule first leaving the group;
- a job stopped at a step and resumed from its state continues bit for bit as one run;
- a member's state (weights and AdamW moments) handed out and loaded back is the same state.
"""
import math
from dataclasses import dataclass, fields

import pytest
import torch

from lengthgen.engine.jobs import Job, group_key, train_jobs
from lengthgen.engine.stacked_limit import (INIT_ONLY_FIELDS, PER_MEMBER_FIELDS, SHARED_FIELDS,
                                            StackedLimitStyle, unplaced_fields)
from lengthgen.errors import LengthgenError
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.tasks.izzo import KGramTask, ModPTask, SimpleTask
from lengthgen.train import TrainConfig, train

BASE = {"vocab_size": 6, "n_outputs": 2, "n_layers": 2, "d_model": 8, "mlp_width": 16,
        "n_positions": 30, "local_tau": 2}
# every field and the values it takes here; a field missing from this table fails the test
VARIATIONS = {
    "vocab_size": [6, 9, 4], "n_outputs": [2, 1, 3], "n_layers": [1, 2], "d_model": [8, 12],
    "mlp_width": [16, 4], "pe": ["nope", "periodic", "ape"], "period": [3, 5, 1],
    "n_positions": [30, 17, 40], "local_tau": [2, None, 0, 4],
    "logit_scaling": ["suffix", "all"], "readout": ["last", "all"], "init": ["mup", "standard"]}
T = 14


def test_every_config_field_is_placed_once():
    placed = list(SHARED_FIELDS) + list(PER_MEMBER_FIELDS) + list(INIT_ONLY_FIELDS)
    names = [f.name for f in fields(LimitStyleConfig)]
    assert len(placed) == len(set(placed)) and sorted(placed) == sorted(names)
    assert unplaced_fields() == [] and sorted(VARIATIONS) == sorted(names)


def test_a_new_config_field_is_refused_until_placed():
    @dataclass
    class Planted(LimitStyleConfig):
        heads: int = 1
    assert unplaced_fields(Planted) == ["heads"]
    with pytest.raises(LengthgenError, match="heads"):
        StackedLimitStyle([LimitStyleTransformer(Planted(vocab_size=4))], "cpu")


def _model(seed: int, **change) -> LimitStyleTransformer:
    """A member with random weights everywhere (muP starts the query at 0, which would hide
    every scaling of q.k)."""
    torch.manual_seed(seed)
    model = LimitStyleTransformer(LimitStyleConfig(**{**BASE, **change}))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    return model


def _compare(models, regression: bool = True) -> None:
    """The stacked outputs of `models` are each model's own (offsets for APE members; each
    batch with a short sequence, so that "last" reads a token before the end)."""
    stack = StackedLimitStyle(models, "cpu", regression=regression)
    gen = torch.Generator().manual_seed(0)
    inputs = torch.stack([torch.randint(1, m.cfg.vocab_size, (3, T), generator=gen)
                          for m in models])
    inputs[:, 1, 9:] = 0
    offsets = torch.stack([torch.randint(0, 10, (3,), generator=gen) for _ in models])
    with torch.no_grad():
        out = stack.forward(inputs, offsets)
        for i, model in enumerate(models):
            alone = model(inputs[i], offsets[i] if model.cfg.pe.absolute else None)
            c = model.cfg.n_outputs
            torch.testing.assert_close(out[i, ..., :c], alone, atol=1e-4, rtol=1e-4)
            padded = out[i, ..., c:]
            assert (padded == 0).all() if regression else torch.isneginf(padded).all()


def _valid(change: dict) -> dict:
    """A change with what makes it show: a periodic or absolute table for `period` and
    `n_positions`."""
    if "period" in change:
        return {**change, "pe": "periodic"}
    if "n_positions" in change:
        return {**change, "pe": "ape"}
    return change


@pytest.mark.parametrize("name", SHARED_FIELDS)
def test_a_shared_field_gives_each_models_outputs_at_every_value(name):
    for value in VARIATIONS[name]:
        change = _valid({name: value})
        _compare([_model(1, **change), _model(2, **change, pe="periodic", period=4),
                  _model(3, **change, pe="ape", readout="all")])


@pytest.mark.parametrize("name", PER_MEMBER_FIELDS + INIT_ONLY_FIELDS)
@pytest.mark.parametrize("layers", [1, 2])
def test_a_member_field_mixed_in_one_group_gives_each_models_outputs(name, layers):
    models = [_model(seed, n_layers=layers, **_valid({name: value}))
              for seed, value in enumerate(VARIATIONS[name])]
    assert len({getattr(m.cfg, name) for m in models}) == len(VARIATIONS[name])
    _compare(models)
    _compare(models, regression=False)


def test_a_group_mixing_everything_gives_each_models_outputs():
    """Three encodings with their own periods and tables, phi or none, both scalings, both
    readouts and both initializations, in one group of one-layer and one of two-layer models."""
    for layers in (1, 2):
        _compare([
            _model(0, n_layers=layers, pe="nope", local_tau=2, logit_scaling="suffix"),
            _model(1, n_layers=layers, pe="periodic", period=3, local_tau=None,
                   logit_scaling="all", init="standard", vocab_size=9),
            _model(2, n_layers=layers, pe="ape", n_positions=25, local_tau=1,
                   logit_scaling="all", readout="all", n_outputs=1),
            _model(3, n_layers=layers, pe="periodic", period=5, local_tau=0, readout="all",
                   n_outputs=3)])


def test_a_group_refuses_members_that_differ_in_a_shared_field():
    for name in SHARED_FIELDS:
        models = [_model(i, **{name: VARIATIONS[name][i]}) for i in (0, 1)]
        with pytest.raises(LengthgenError, match="must share"):
            StackedLimitStyle(models, "cpu")


def test_a_stack_member_comes_back_as_its_own_model():
    models = [_model(0, pe="ape", vocab_size=4), _model(1, pe="nope", local_tau=None),
              _model(2, pe="periodic", period=2, local_tau=4)]
    stack = StackedLimitStyle(models, "cpu")
    for i, model in enumerate(models):
        back = stack.unstack(i)
        assert back.cfg == model.cfg
        for (name, a), (_, b) in zip(model.named_parameters(), back.named_parameters()):
            assert torch.equal(a, b), name


# ---- training: a group does what train() does alone ----------------------------------------
def _job(task, seed, layers=1, stop_loss=None, steps=30, **model):
    cfg = TrainConfig(steps=steps, eval_every=5, eval_samples=32, batch_size=16, lr=1e-2,
                      weight_decay=0.0, grad_clip=None, stop_accuracy=None, stop_loss=stop_loss,
                      min_len=task.min_len, max_len=task.train_range[1], seed=seed,
                      group_lr={"hidden": 1e-2 / 8, "readout": 1e-2 / 8})
    return Job(task, {"n_layers": layers, "d_model": 8, "mlp_width": 32, **model}, cfg,
               kind="limit-style")


def _jobs():
    """Five limit-style jobs of one shape: their tasks (one, two or three outputs), encodings,
    periods, tables, phi, scalings, inits, seeds, caps and stop rules differ; the SimpleTask
    job's stop loss is met at an early evaluation."""
    return [_job(SimpleTask(2.0, train_max=8), 0, pe="nope", stop_loss=0.45),
            _job(ModPTask(3, 0, train_max=9), 1, pe="periodic", period=3),
            _job(ModPTask(2, 0, train_max=8), 2, pe="periodic", period=2, local_tau=1,
                 logit_scaling="all", steps=25),
            _job(KGramTask(2, 2, train_max=10), 3, pe="ape", n_positions=16, local_tau=1,
                 init="standard"),
            _job(KGramTask(3, 2, train_max=10), 4, pe="nope", local_tau=2, readout="all")]


def test_a_group_matches_separate_runs_history_stop_and_weights():
    jobs = _jobs()
    assert len({group_key(j) for j in jobs}) == 1
    outcomes = train_jobs(jobs, sampler="host")
    assert {o.group_size for o in outcomes} == {len(jobs)}
    for job, outcome in zip(jobs, outcomes):
        task, model = job.build()
        alone = train(model, task, job.train)
        got = outcome.result
        assert (got.steps, got.stopped_early) == (alone.steps, alone.stopped_early), job.model
        assert [h["step"] for h in got.history] == [h["step"] for h in alone.history]
        for a, b in zip(got.history, alone.history):
            assert math.isclose(a["loss"], b["loss"], rel_tol=1e-3, abs_tol=1e-6)
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=1e-3, abs_tol=1e-6)
            assert a["lr"] == b["lr"]
        for (name, p), q in zip(model.named_parameters(), outcome.model.parameters()):
            torch.testing.assert_close(q, p, atol=2e-4, rtol=1e-3, msg=name)
    early = outcomes[0].result
    assert early.stopped_early and early.steps < min(o.result.steps for o in outcomes[1:])


def test_a_job_stopped_and_resumed_continues_bit_for_bit():
    """Stopped at step 17 (between evaluations) and resumed from its state, each job ends
    with the history and the very weights of one unbroken run (the host's generators and the
    losses since the last evaluation are in the state)."""
    import time
    jobs = _jobs()
    whole = train_jobs(jobs, sampler="host")
    first = train_jobs(_jobs(), sampler="host", until_step=17)
    todo = [i for i, o in enumerate(first) if o.result is None]
    assert todo and all(first[i].state["step"] == 17 for i in todo)
    assert 0 not in todo   # the early stopper finished before the cut
    assert train_jobs(_jobs(), deadline=time.perf_counter())[1].state["step"] == 0
    again = _jobs()
    resumed = train_jobs([again[i] for i in todo], sampler="host",
                         resume={k: first[i].state for k, i in enumerate(todo)})
    for k, i in enumerate(todo):
        a, b = whole[i], resumed[k]
        assert a.result.history == b.result.history
        for (name, x), (_, y) in zip(a.model.state_dict().items(),
                                     b.model.state_dict().items()):
            assert torch.equal(x, y), name


def test_a_members_state_round_trips():
    """member_state of a trained member, loaded into another group's row, gives back the same
    weights and AdamW moments; its model is the member's own."""
    from lengthgen.engine.jobs import make_group
    jobs = _jobs()[1:4]
    built = [j.build() for j in jobs]
    group, feed = make_group([t for t, _ in built], [m for _, m in built],
                             [j.train for j in jobs], "cpu", "host")
    for step in range(3):
        group.set_rates(step)
        group.train_step(*feed.batch(step))
    states = [group.member_state(j) for j in range(3)]
    order = [2, 0, 1]
    other, _ = make_group([built[i][0] for i in order], [jobs[i].build()[1] for i in order],
                          [jobs[i].train for i in order], "cpu", "host")
    for row, i in enumerate(order):
        other.load_member(row, states[i])
        back = other.member_state(row)
        for key in ("model",):
            assert back[key].keys() == states[i][key].keys()
            for name in back[key]:
                assert torch.equal(back[key][name], states[i][key][name]), name
        for moment in ("exp_avg", "exp_avg_sq"):
            assert back["adam"][moment].keys() == states[i]["adam"][moment].keys()
            for name, value in back["adam"][moment].items():
                assert torch.equal(value, states[i]["adam"][moment][name]), (moment, name)
        assert float(back["adam"]["step"]) == float(states[i]["adam"]["step"]) == 3
    assert any(v.abs().sum() > 0 for v in states[0]["adam"]["exp_avg"].values())


def test_limit_style_and_decoder_jobs_never_share_a_group():
    decoder = Job("binary_majority", {"d_model": 8, "n_heads": 1}, TrainConfig(batch_size=16))
    assert group_key(decoder)[0] == "decoder" and group_key(_jobs()[0])[0] == "limit-style"
    wider = _job(SimpleTask(2.0, train_max=8), 0, pe="nope", mlp_width=64)
    assert group_key(wider) != group_key(_jobs()[0])
