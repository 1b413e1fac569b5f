"""The training engine: a stacked group of S runs does what S separate runs do.

Separate runs are `train()` (a group of one, through torch's AdamW and each model's own
forward). The stacked group computes with batched products and its own AdamW, so the two agree
up to float rounding: checked on logits, evaluation histories, stop steps and verdicts.
"""
import math
from dataclasses import replace

import pytest
import torch

from lengthgen.engine.jobs import Job, train_jobs
from lengthgen.engine.optim import StackedAdamW, clip_per_member
from lengthgen.engine.stacked import StackedDecoders
from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, decoder_for_task, make_optimizer, train


def _members():
    """Decoders of one shape whose tasks, sizes, encodings and seeds differ."""
    specs = [("binary_majority", "ape", 0), ("sort", "ape", 1), ("tomita3", "nope", 2),
             ("copy_repeat", "nope", 3)]
    out = []
    for task_id, pe, seed in specs:
        task = get_task(task_id)
        out.append((task, decoder_for_task(task, seed=seed, n_layers=2, n_heads=2, d_model=16,
                                           pe=pe, n_positions=40 + 10 * seed)))
    return out


def _batch(task, seed, width=None):
    import numpy as np
    batch = task.sample(np.random.default_rng(seed), 5, 1, 8)
    inputs = torch.as_tensor(batch.inputs)
    if width:
        inputs = torch.nn.functional.pad(inputs, (0, width - inputs.shape[1]))
    return inputs


@pytest.mark.parametrize("options", [
    {}, {"tied_embeddings": True}, {"attention": "uniform"}, {"log_length_scaling": True},
    {"use_mlp": False}])
def test_stacked_forward_computes_each_decoders_logits(options):
    tasks = [get_task(t) for t in ("binary_majority", "copy_repeat", "parity_task")]
    models = [decoder_for_task(t, seed=i, n_layers=2, n_heads=2, d_model=16,
                               pe="ape" if i != 1 else "nope", **options)
              for i, t in enumerate(tasks)]
    stack = StackedDecoders(models, "cpu")
    width = 12
    inputs = torch.stack([_batch(t, i, width) for i, t in enumerate(tasks)])
    offsets = torch.tensor([[0, 1, 2, 3, 4], [0] * 5, [5, 4, 3, 2, 1]])
    logits = stack.forward(inputs, offsets)
    for i, model in enumerate(models):
        alone = model(inputs[i], offsets[i] if model.cfg.pe.absolute else None)
        c = model.cfg.n_classes
        torch.testing.assert_close(logits[i, ..., :c], alone, atol=1e-5, rtol=1e-5)
        assert torch.isneginf(logits[i, ..., c:]).all()   # padded classes take no probability


def test_stacked_forward_pads_vocabularies_and_position_tables():
    members = _members()
    stack = StackedDecoders([m for _, m in members], "cpu")
    assert stack.pad.vocab == max(len(t.vocab) for t, _ in members)
    width = 20
    inputs = torch.stack([_batch(t, 7, width) for t, _ in members])
    logits = stack.forward(inputs)
    for i, (task, model) in enumerate(members):
        torch.testing.assert_close(logits[i, ..., :task.n_classes], model(inputs[i]),
                                   atol=1e-5, rtol=1e-5)
    back = stack.unstack(1)   # a member comes back as its own decoder, tables cut to size
    for (name, a), b in zip(members[1][1].named_parameters(), back.parameters()):
        assert a.shape == b.shape and torch.equal(a, b), name


def test_stacked_adamw_is_torchs_adamw_per_member():
    """Two members with their own lr, weight decay and per-role rates, after three steps with
    the same gradients, hold what torch's AdamW gives each model alone."""
    task = get_task("binary_majority")
    configs = [TrainConfig(lr=1e-2, weight_decay=0.1),
               TrainConfig(lr=3e-3, weight_decay=0.0, group_lr={"hidden": 1e-3})]
    models = [decoder_for_task(task, seed=s, d_model=8) for s in (0, 1)]
    refs = [decoder_for_task(task, seed=s, d_model=8) for s in (0, 1)]
    stack = StackedDecoders(models, "cpu")
    dims = {n: p.dim() for n, p in models[0].named_parameters()}
    roles, decays = stack.layout(models[0].parameter_roles(), dims)
    optimizer = StackedAdamW(stack.leaves(), roles, decays, configs, "cpu")
    torch_opts = [make_optimizer(m, c, "cpu") for m, c in zip(refs, configs)]
    for step in range(3):
        stack.flat.grad = torch.randn(stack.flat.shape,
                                      generator=torch.Generator().manual_seed(step))
        for i, (ref, opt) in enumerate(zip(refs, torch_opts)):
            for name, p in ref.named_parameters():
                p.grad = stack.split_leaves({"flat": stack.flat.grad[i]})[name].clone()
            for group in opt.param_groups:
                group["lr"] = configs[i].lr * group.get("lr_scale", 1.0)
            opt.step()
        optimizer.step(torch.tensor([c.lr for c in configs]))
    for i, ref in enumerate(refs):
        for name, p in ref.named_parameters():
            torch.testing.assert_close(stack.params[name][i], p, atol=1e-6, rtol=1e-5)


def test_clipping_scales_each_member_by_its_own_norm():
    grads = [torch.tensor([[3.0, 0.0], [0.3, 0.0]]), torch.tensor([[4.0], [0.4]])]
    norms = clip_per_member(grads, torch.tensor([1.0, 1.0]))
    torch.testing.assert_close(norms, torch.tensor([5.0, 0.5]))
    torch.testing.assert_close(grads[0][0], torch.tensor([0.6, 0.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(grads[0][1], torch.tensor([0.3, 0.0]))   # under the norm: kept


def _job(task_id, seed, **train):
    base = dict(steps=40, eval_every=10, eval_samples=64, lr=3e-3, max_len=10, seed=seed)
    return Job(task_id, {"n_layers": 1, "n_heads": 2, "d_model": 16,
                         "pe": "ape" if seed % 2 else "nope"}, TrainConfig(**{**base, **train}))


JOBS = [_job("binary_majority", 0), _job("binary_majority", 1, lr=1e-2, schedule="cosine"),
        _job("tomita2", 2, warmup_steps=5, steps=30), _job("parity_task", 3, grad_clip=None),
        _job("copy_repeat", 5, schedule="linear", weight_decay=0.1, stop_accuracy=0.5)]


def test_a_group_matches_separate_runs_history_stop_and_weights():
    """Five jobs with different tasks, encodings, seeds, learning rates, schedules, caps, clipping
    and stop rules train as one group; each ends where `train` alone ends it, with the same
    evaluation accuracies (losses and weights to float tolerance)."""
    outcomes = train_jobs(JOBS, sampler="host")
    assert {o.group_size for o in outcomes} == {len(JOBS)}
    for job, outcome in zip(JOBS, outcomes):
        task, model = job.build()
        alone = train(model, task, job.train)
        got = outcome.result
        assert (got.steps, got.stopped_early, got.abandoned) == \
            (alone.steps, alone.stopped_early, alone.abandoned), job.task
        assert [h["step"] for h in got.history] == [h["step"] for h in alone.history]
        assert [h["accuracy"] for h in got.history] == [h["accuracy"] for h in alone.history]
        for a, b in zip(got.history, alone.history):
            assert math.isclose(a["loss"], b["loss"], rel_tol=1e-3, abs_tol=1e-5)
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=1e-3, abs_tol=1e-5)
            assert a["lr"] == b["lr"]
        for (name, p), q in zip(model.named_parameters(), outcome.model.parameters()):
            torch.testing.assert_close(q, p, atol=2e-4, rtol=1e-3, msg=name)
    assert any(o.result.stopped_early for o in outcomes)   # a stop rule acted inside the group


def test_tied_embeddings_train_in_groups():
    jobs = [Job("copy_repeat", {"d_model": 16, "tied_embeddings": True},
                TrainConfig(steps=20, eval_every=10, eval_samples=32, max_len=6, seed=s))
            for s in (0, 1, 2)]
    outcomes = train_jobs(jobs, sampler="host")
    for job, outcome in zip(jobs, outcomes):
        task, model = job.build()
        alone = train(model, task, job.train)
        assert [h["accuracy"] for h in outcome.result.history] == \
            [h["accuracy"] for h in alone.history]
        assert outcome.model.unembed.weight is outcome.model.token_embeddings.weight


def test_a_diverging_member_stops_alone_and_says_where():
    jobs = [_job("binary_majority", 0), _job("binary_majority", 2, lr=1e30, grad_clip=None)]
    ok, bad = train_jobs(jobs, sampler="host")
    assert bad.result.history[-1].get("diverged_at") is not None and bad.result.abandoned
    task, model = jobs[0].build()
    assert ok.result.steps == train(model, task, jobs[0].train).steps
    with pytest.raises(LengthgenError, match="diverged"):
        train_jobs(jobs, sampler="host", diverged="raise")


def test_a_member_that_gives_up_leaves_at_the_step_a_run_alone_gives_up():
    """abandon_below applies per member: each stops (or not) where its own run would."""
    jobs = [Job("tomita2", {"d_model": 16}, TrainConfig(steps=20, eval_every=5, eval_samples=16,
                                                        abandon_below=0.99, lr=1e-3, seed=s))
            for s in (0, 1)]
    outcomes = train_jobs(jobs, sampler="host")
    for job, outcome in zip(jobs, outcomes):
        task, model = job.build()
        alone = train(model, task, job.train)
        assert (outcome.result.steps, outcome.result.abandoned) == (alone.steps, alone.abandoned)
    assert any(o.result.abandoned for o in outcomes)   # the rule did act


def test_groups_form_by_shape_and_refuse_mixing_what_a_step_shares():
    jobs = [_job("binary_majority", 0), replace(_job("binary_majority", 1),
                                                model={"d_model": 32})]
    outcomes = train_jobs(jobs, sampler="host")
    assert [o.group_size for o in outcomes] == [1, 1]
    with pytest.raises(LengthgenError, match="sampler"):
        train_jobs(jobs, sampler="gpu")


# ---- batches made on the device ----------------------------------------------------------
def _device_jobs(steps=30):
    return [Job("binary_majority", {"d_model": 16, "pe": "ape"},
                TrainConfig(steps=steps, eval_every=10, eval_samples=32, max_len=10, seed=s,
                            stop_accuracy=None)) for s in (0, 1, 2)]


def test_a_members_device_batches_depend_only_on_its_seed_and_step():
    from lengthgen.engine.feeds import DeviceFeed
    jobs = _device_jobs()
    tasks = [j.build()[0] for j in jobs]
    width = tasks[0].max_tokens(10)
    feed = lambda idx: DeviceFeed([tasks[i] for i in idx], [jobs[i].train for i in idx],
                                  [64] * len(idx), [True] * len(idx), "cpu", width, pool=4)
    alone, together = feed([1]), feed([0, 1, 2])
    for step in (0, 3, 4, 9):   # inside a pool, across pools, after a jump
        a, b = alone.batch(step), together.batch(step)
        for x, y in zip(a, b):
            assert torch.equal(x[0], y[1])
    assert not torch.equal(together.batch(5)[0][0], together.batch(5)[0][1])  # seeds differ
    assert not torch.equal(alone.batch(5)[0], alone.batch(6)[0])              # steps differ
    offsets, real = together.batch(2)[3], (together.batch(2)[0] != 0).sum(-1)
    assert (offsets >= 0).all() and (offsets + real <= 64).all()


def test_a_state_at_step_0_trains_beside_fresh_jobs_of_its_shape():
    """A slice stopped before its first step leaves states at step 0; resumed beside fresh jobs
    of the same shape (one group key) it trains in a group of its own, as a fresh job would."""
    import time
    jobs = _device_jobs()
    stopped = train_jobs(jobs[:1], sampler="device", deadline=time.perf_counter())
    assert stopped[0].result is None and stopped[0].state["step"] == 0
    whole = train_jobs(jobs, sampler="device")
    mixed = train_jobs(jobs, sampler="device", resume={0: stopped[0].state})
    for a, b in zip(whole, mixed):
        assert [h["accuracy"] for h in a.result.history] == \
            [h["accuracy"] for h in b.result.history]
        for p, q in zip(a.model.parameters(), b.model.parameters()):
            torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-4)


def test_a_job_trained_in_slices_follows_the_job_trained_at_once():
    """Stop at a deadline, keep the state, resume in a new group: the same evaluations and
    weights as one uninterrupted training (device batches are keyed by seed and step)."""
    import time
    jobs = _device_jobs()
    whole = train_jobs(jobs, sampler="device")
    first = train_jobs(jobs, sampler="device", until_step=13)   # between two evaluations
    assert all(o.result is None and o.state["step"] == 13 for o in first)
    assert train_jobs(jobs, deadline=time.perf_counter())[0].state["step"] == 0
    # a second slice resumes two of them in a group of their own (a different composition)
    resumed = train_jobs(jobs[1:], sampler="device",
                         resume={i: first[i + 1].state for i in range(2)})
    for a, b in zip(whole[1:], resumed):
        assert [h["accuracy"] for h in a.result.history] == \
            [h["accuracy"] for h in b.result.history]
        assert b.result.steps == a.result.steps == 30
        for p, q in zip(a.model.parameters(), b.model.parameters()):
            torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-4)


def test_the_device_sampler_is_refused_for_tasks_without_one():
    with pytest.raises(LengthgenError, match="no device sampler"):
        train_jobs([Job("dyck-32", {"d_model": 16}, TrainConfig(steps=2))], sampler="device")
    # "auto" falls back to the host's sampler there (and everywhere on a CPU)
    (outcome,) = train_jobs([Job("dyck-32", {"d_model": 16},
                                 TrainConfig(steps=2, eval_every=1, eval_samples=4))])
    assert outcome.result.steps == 2


def test_attention_in_slices_is_attention_over_the_whole_batch():
    from lengthgen.engine.stacked import _attention_in_chunks
    q, k, v = (torch.randn(10, 2, 7, 4, generator=torch.Generator().manual_seed(i))
               for i in range(3))
    whole = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(_attention_in_chunks(q, k, v, limit=3), whole)


def test_length_chunks_in_a_group_give_the_padded_groups_step():
    """Chunked (sorted, trimmed, accumulated) and padded steps of a group end in the same
    weights, as `length_chunks` does for one model."""
    from lengthgen.engine.feeds import HostFeed
    from lengthgen.engine.groups import StackedGroup
    tasks = [get_task("sort"), get_task("copy_repeat")]
    out = []
    for chunks in (1, 3):
        configs = [TrainConfig(seed=s, max_len=12, length_chunks=chunks, lr=1e-2,
                               eval_samples=4) for s in (0, 1)]
        models = [decoder_for_task(t, seed=s, d_model=16, pe="ape") for s, t in enumerate(tasks)]
        group = StackedGroup(models, tasks, configs, "cpu")
        feed = HostFeed(tasks, configs, [m.cfg.n_positions for m in models], [True, True],
                        torch.long, "cpu")
        losses = []
        for step in range(3):
            group.set_rates(step)
            losses.append(group.train_step(*feed.batch(step)))
        out.append((group.stack.flat.detach().clone(), torch.stack(losses)))
    torch.testing.assert_close(out[0][1], out[1][1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[0][0], out[1][0], atol=1e-5, rtol=1e-4)


@pytest.mark.filterwarnings("ignore:CUDA is not available")
def test_a_card_without_bf16_trains_in_full_precision(monkeypatch):
    """bf16 autocast only where the card has it (compute capability 8 on); a T4 (7.5) gets fp32."""
    import contextlib

    import lengthgen.evaluate as ev
    for capability, expected in (((7, 5), contextlib.nullcontext), ((8, 0), torch.autocast),
                                 ((9, 0), torch.autocast)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None, c=capability: c)
        assert isinstance(ev.autocast("cuda"), expected), capability
    assert isinstance(ev.autocast("cpu"), contextlib.nullcontext)


def test_a_config_dict_becomes_train_settings_in_one_place():
    """TrainConfig.from_config takes the keys named as its fields (and the registered alias
    max_steps), ignores the figure's other keys, lets the experiment's fixed choices win, and
    refuses a setting given twice or a bad value in one line."""
    config = {"max_steps": 300, "lr": 0.02, "batch_size": 16, "d_model": 64, "seeds": [0, 1],
              "eval_every": 50, "stop_loss": 1e-3}
    cfg = TrainConfig.from_config(config, seed=7, eval_every=25, stop_accuracy=None)
    assert (cfg.steps, cfg.lr, cfg.batch_size, cfg.stop_loss) == (300, 0.02, 16, 1e-3)
    assert (cfg.seed, cfg.eval_every, cfg.stop_accuracy) == (7, 25, None)   # fixed wins
    assert cfg.weight_decay == TrainConfig().weight_decay                   # not named: default
    with pytest.raises(LengthgenError, match="given twice"):
        TrainConfig.from_config({"steps": 10, "max_steps": 20})
    with pytest.raises(LengthgenError, match="lr must be"):
        TrainConfig.from_config({"lr": float("nan")})


def test_device_half_offsets_stay_below_half_the_table_for_every_length():
    """The device feed draws ape_offsets="half" as the host does: uniform in [0, n // 2),
    whatever a sequence's length, per member (a "table" member beside it keeps its rule)."""
    from dataclasses import replace as with_
    from lengthgen.engine.feeds import DeviceFeed
    jobs = _device_jobs()
    tasks = [j.build()[0] for j in jobs]
    configs = [with_(jobs[0].train, ape_offsets="half"), jobs[1].train]
    feed = DeviceFeed(tasks[:2], configs, [64, 64], [True, True], "cpu",
                      tasks[0].max_tokens(10), pool=64)
    inputs, _, _, offsets = feed.batch(0)
    half = torch.stack([feed.batch(k)[3][0] for k in range(64)])
    assert half.min() == 0 and half.max() == 31          # every shift in [0, 32) drawn
    real = (inputs != 0).sum(-1)
    assert (offsets[1] + real[1] <= 64).all() and offsets[1].max() > 31   # "table" goes past
