"""The trainer: it learns, its APE offsets cover the table, it resumes exactly, it refuses bad
settings; evaluation scores whole sequences."""
import numpy as np
import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.evaluate import bin_rng, evaluate, generation_accuracy, greedy_predictions
from lengthgen.tasks import get_task
from lengthgen.train import (TrainConfig, decoder_for_task, learning_rate, load_checkpoint,
                             sample_offsets, train, train_and_evaluate)

SMALL = dict(n_layers=1, n_heads=1, d_model=16)


class Killed(Exception):
    """Stands for the process being killed mid-run."""


def dies_at_sample(task, call: int):
    """The task, except that its call-th sample() raises Killed (a kill mid-training)."""
    class DiesAtSample(type(task)):
        calls = 0

        def sample(self, *args):
            DiesAtSample.calls += 1
            if DiesAtSample.calls == call:
                raise Killed
            return super().sample(*args)
    return DiesAtSample()



@pytest.fixture(scope="module")
def majority():
    return get_task("binary_majority")


@pytest.fixture(scope="module")
def trained(majority):
    """A 1-layer decoder trained on binary majority, lengths 1..20, until 100% in-distribution."""
    cfg = TrainConfig(steps=1500, lr=1e-2, min_len=1, max_len=20, eval_every=50,
                      eval_samples=512, seed=0)
    model = decoder_for_task(majority, seed=0, bins=[(1, 20)], **SMALL)
    result = train(model, majority, cfg)
    return model, result


def test_one_layer_decoder_learns_binary_majority(trained, majority):
    model, result = trained
    assert result.final_accuracy == 1.0 and result.stopped_early
    assert result.history[-1]["step"] == result.steps < 1500
    fresh = evaluate(model, majority, [(1, 20)], samples_per_bin=512, seed=123)
    assert fresh["1-20"]["accuracy"] >= 0.98


def test_evaluation_counts_a_sequence_only_if_every_masked_position_is_right(trained, majority):
    model, _ = trained

    class NeverEos(torch.nn.Module):  # the answer bit stays right, <eos> (id 3) never wins
        def __init__(self):
            super().__init__()
            self.inner, self.cfg = model, model.cfg

        def forward(self, inputs, offsets=None):
            logits = self.inner(inputs, offsets).clone()
            logits[..., 3] = -1e4
            return logits

    spoiled = NeverEos()
    scores = evaluate(spoiled, majority, [(1, 20)], samples_per_bin=64, seed=5)
    batch = majority.sample(bin_rng(5, 1, 20), 64, 1, 20)
    with torch.no_grad():
        predicted = spoiled(torch.as_tensor(batch.inputs)).argmax(-1).numpy()
    rows = [all(predicted[b, p] == batch.targets[b, p]
                for p in range(batch.inputs.shape[1]) if batch.loss_mask[b, p])
            for b in range(64)]
    answer_bit_right = [predicted[b, batch.prompt_lengths[b] - 1] == batch.targets[
        b, batch.prompt_lengths[b] - 1] for b in range(64)]
    assert sum(answer_bit_right) >= 60
    assert scores["1-20"]["accuracy"] == sum(rows) / 64 == 0.0


def test_greedy_generation_feeds_back_its_own_predictions(trained, majority):
    model, _ = trained
    batch = majority.sample(np.random.default_rng(3), 4, 5, 9)
    inputs = torch.as_tensor(batch.inputs)
    prompts = torch.as_tensor(batch.prompt_lengths)
    got = greedy_predictions(model, inputs, prompts)
    for b in range(4):  # one sequence at a time, appending each argmax to the prompt
        seq = inputs[b, : prompts[b]].tolist()
        while len(seq) < inputs.shape[1] + 1:
            nxt = int(model(torch.tensor([seq])).argmax(-1)[0, -1])
            assert nxt == int(got[b, len(seq) - 1])
            seq.append(nxt)
    scores = generation_accuracy(model, majority, [(1, 20)], samples_per_bin=64, seed=5)
    assert scores["1-20"]["accuracy"] >= 0.95


def test_ape_offsets_cover_the_whole_position_table_and_never_overflow():
    rng = np.random.default_rng(0)
    n_positions, seen = 40, np.zeros(40, dtype=bool)
    for _ in range(300):
        lengths = rng.integers(1, 31, size=64)
        inputs = (np.arange(30)[None, :] < lengths[:, None]).astype(np.int64)  # real then PAD
        offsets = sample_offsets(rng, inputs, n_positions)
        assert np.all(offsets >= 0) and np.all(offsets + lengths <= n_positions)
        for o, n in zip(offsets, lengths):
            seen[o: o + n] = True
    assert seen.all()
    assert sample_offsets(rng, np.ones((500, 40), dtype=np.int64), 40).max() == 0


def test_half_offsets_shift_every_length_alike_within_half_the_table():
    """ape_offsets="half" (the authors' language code): a shift uniform in [0, n // 2) whatever
    the sequence's length, each value drawn, and refused where the table is too small; the
    default rule draws exactly what it drew before the option existed."""
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, 31, size=20000)
    inputs = (np.arange(30)[None, :] < lengths[:, None]).astype(np.int64)
    offsets = sample_offsets(np.random.default_rng(2), inputs, 60, "half")
    assert offsets.min() == 0 and offsets.max() == 29 and np.all(offsets + lengths <= 60)
    short, long = offsets[lengths <= 10], offsets[lengths >= 21]
    assert abs(short.mean() - 14.5) < 0.5 and abs(long.mean() - 14.5) < 0.5  # no tie to length
    assert np.array_equal(sample_offsets(np.random.default_rng(3), inputs, 60),
                          np.random.default_rng(3).integers(0, 60 - lengths + 1))
    with pytest.raises(LengthgenError, match="does not fit"):
        sample_offsets(rng, inputs, 40, "half")
    with pytest.raises(LengthgenError, match="twice the longest input"):
        train(decoder_for_task(get_task("binary_majority"), n_positions=40, **SMALL),
              get_task("binary_majority"),
              TrainConfig(steps=2, max_len=30, ape_offsets="half", eval_samples=8))


def test_trainer_feeds_offsets_that_cover_the_table_and_evaluation_uses_none(majority):
    model = decoder_for_task(majority, n_positions=40, **SMALL)
    seen, calls = torch.zeros(40, dtype=torch.bool), []
    forward = model.forward

    def spy(inputs, offsets=None, check=True):
        calls.append((model.training, offsets))
        if offsets is not None:
            for o, n in zip(offsets.tolist(), (inputs != 0).sum(1).tolist()):
                assert 0 <= o and o + n <= 40
                seen[o: o + n] = True
        return forward(inputs, offsets, check)

    model.forward = spy
    train(model, majority, TrainConfig(steps=30, min_len=1, max_len=20, eval_every=30,
                                       eval_samples=8))
    assert seen.all()
    assert all(offsets is not None for training, offsets in calls if training)
    assert any(not training and offsets is None for training, offsets in calls)


def test_resumed_run_ends_bit_identical_to_an_uninterrupted_one(tmp_path, majority):
    cfg = dict(steps=30, lr=3e-3, min_len=1, max_len=10, eval_every=10, eval_samples=32,
               stop_accuracy=None, seed=4, warmup_steps=5, schedule="cosine",
               checkpoint_every=10)
    whole = decoder_for_task(majority, seed=4, **SMALL)
    reference = train(whole, majority, TrainConfig(**cfg))

    path = tmp_path / "run.pt"
    with pytest.raises(Killed):  # mid-way, after the checkpoint at step 20
        train(decoder_for_task(majority, seed=4, **SMALL), dies_at_sample(majority, 25),
              TrainConfig(**cfg, checkpoint_path=str(path)))
    assert load_checkpoint(path)["step"] in (10, 20)
    resumed_model = decoder_for_task(majority, seed=99, **SMALL)  # weights come from the file
    resumed = train(resumed_model, majority, TrainConfig(**cfg, checkpoint_path=str(path)))
    assert resumed.steps == reference.steps == 30
    for name, value in whole.state_dict().items():
        assert torch.equal(value, resumed_model.state_dict()[name]), name
    assert resumed.history == reference.history
    assert not list(tmp_path.glob(".tmp-*"))
    again = train(resumed_model, majority, TrainConfig(**cfg, checkpoint_path=str(path)))
    assert again.history == reference.history  # a finished run resumes to its result
    with pytest.raises(LengthgenError, match="belongs to a different run"):
        train(resumed_model, majority, TrainConfig(**{**cfg, "lr": 1e-3},
                                                   checkpoint_path=str(path)))


def test_a_train_checkpoint_is_the_member_state_slices_hand_back(tmp_path, majority):
    """One resume format: train()'s checkpoint after 12 steps holds what train_jobs hands back
    for the same job stopped at step 12 (weights and AdamW moments by name, step, history,
    recent losses), with the same values up to the two optimizers' rounding; and a stacked
    group loads it and trains on."""
    from lengthgen.engine.checkpoints import STATE_KEYS
    from lengthgen.engine.jobs import Job, train_jobs
    cfg = dict(steps=20, lr=3e-3, max_len=10, eval_every=5, eval_samples=16, seed=3,
               stop_accuracy=None)
    path = tmp_path / "run.pt"
    with pytest.raises(Killed):   # killed after the checkpoint at step 12
        train(decoder_for_task(majority, seed=3, **SMALL), dies_at_sample(majority, 15),
              TrainConfig(**cfg, checkpoint_path=str(path), checkpoint_every=12))
    saved = load_checkpoint(path)
    job = Job("binary_majority", SMALL, TrainConfig(**cfg))
    (sliced,) = train_jobs([job], sampler="host", until_step=12)
    state = sliced.state
    assert set(STATE_KEYS) <= set(saved) and set(STATE_KEYS) <= set(state)
    assert saved["step"] == state["step"] == 12 and saved["adam"]["step"] == state["adam"]["step"]
    assert [h["step"] for h in saved["history"]] == [h["step"] for h in state["history"]]
    assert len(saved["recent"]) == len(state["recent"]) == 2
    assert set(saved["model"]) == set(state["model"])
    for key in ("exp_avg", "exp_avg_sq"):
        assert set(saved["adam"][key]) == set(state["adam"][key])
        for name, value in saved["adam"][key].items():
            torch.testing.assert_close(value, state["adam"][key][name], atol=1e-5, rtol=1e-3)
    for name, value in saved["model"].items():
        torch.testing.assert_close(value, state["model"][name], atol=1e-5, rtol=1e-3)
    (resumed,) = train_jobs([job], sampler="host", resume={0: saved})
    assert resumed.result.steps == 20 and resumed.result.history[:2] == saved["history"]


def test_same_seed_same_run_different_seed_different_run(majority):
    def run(seed):
        model = decoder_for_task(majority, seed=seed, **SMALL)
        train(model, majority, TrainConfig(steps=5, min_len=1, max_len=8, eval_every=5,
                                           eval_samples=8, seed=seed))
        return model.unembed.weight.detach().clone()
    assert torch.equal(run(1), run(1))
    assert not torch.equal(run(1), run(2))


def test_learning_rate_schedules():
    cfg = dict(steps=110, lr=1.0, warmup_steps=10)
    constant, linear, cosine = (TrainConfig(**cfg, schedule=s) for s in
                                ("constant", "linear", "cosine"))
    assert [learning_rate(constant, s) for s in (0, 4, 9, 50)] == [0.1, 0.5, 1.0, 1.0]
    assert learning_rate(linear, 60) == pytest.approx(0.5)
    assert learning_rate(cosine, 60) == pytest.approx(0.5)
    assert learning_rate(cosine, 35) == pytest.approx(0.5 * (1 + np.cos(np.pi / 4)))
    assert learning_rate(linear, 109) == pytest.approx(0.01)


def test_bad_settings_are_refused_clearly(majority, tmp_path):
    with pytest.raises(LengthgenError, match="unknown schedule 'cosin'"):
        TrainConfig(schedule="cosin")
    with pytest.raises(LengthgenError, match="steps must be a positive integer"):
        TrainConfig(steps=0)
    model = decoder_for_task(majority, n_positions=20, **SMALL)
    with pytest.raises(LengthgenError, match="take 53 positions but the model has n_positions=20"):
        train(model, majority, TrainConfig(steps=1))
    with pytest.raises(LengthgenError, match="impossible length range"):
        train(model, majority, TrainConfig(steps=1, min_len=9, max_len=3))
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(LengthgenError, match="cannot load checkpoint"):
        train(model, majority, TrainConfig(steps=1, max_len=5, checkpoint_path=str(junk)))


def test_train_and_evaluate_returns_json_able_metrics(majority):
    import json
    metrics = train_and_evaluate("binary_majority", TrainConfig(steps=3, eval_every=3, eval_samples=8),
                                 bins=[(1, 5), (6, 9)], samples_per_bin=8, generation=True,
                                 pe="nope", **SMALL)
    json.dumps(metrics)
    assert set(metrics["bins"]) == set(metrics["generation"]) == {"1-5", "6-9"}
    assert metrics["steps"] == 3 and metrics["n_params"] > 0
    assert metrics["model"]["pe"] == "nope"


def test_training_is_quiet_unless_asked(majority, capfd):
    model = decoder_for_task(majority, **SMALL)
    cfg = TrainConfig(steps=2, min_len=1, max_len=5, eval_every=2, eval_samples=4)
    train(model, majority, cfg)
    assert capfd.readouterr() == ("", "")
    train(model, majority, TrainConfig(**{**cfg.to_dict(), "steps": 4}), progress=True)
    assert "binary_majority" in capfd.readouterr().err  # the bar names the task


def test_resume_between_evaluations_logs_the_same_train_loss(tmp_path, majority):
    """Checkpoints every 5 steps, evaluations every 10: the running loss must be saved too."""
    cfg = dict(steps=20, lr=3e-3, min_len=1, max_len=10, eval_every=10, eval_samples=16,
               stop_accuracy=None, seed=2, checkpoint_every=5)
    reference = train(decoder_for_task(majority, seed=2, **SMALL), majority, TrainConfig(**cfg))

    path = tmp_path / "run.pt"
    with pytest.raises(Killed):  # after the checkpoint at step 15, before the eval at 20
        train(decoder_for_task(majority, seed=2, **SMALL), dies_at_sample(majority, 17),
              TrainConfig(**cfg, checkpoint_path=str(path)))
    resumed = train(decoder_for_task(majority, seed=2, **SMALL), majority,
                    TrainConfig(**cfg, checkpoint_path=str(path)))
    assert resumed.history == reference.history


@pytest.mark.parametrize("task_id", ["binary_majority", "copy_repeat", "tomita4"])
def test_length_chunks_give_the_same_gradient_with_less_padding(task_id):
    """Sorted, trimmed chunks with accumulated gradients equal one padded batch's gradient."""
    from lengthgen.evaluate import to_tensors
    from lengthgen.train import length_chunks, make_optimizer, training_step
    task = get_task(task_id)
    rng = np.random.default_rng(0)
    batch = task.sample(rng, 64, 1, 50)
    inputs, targets, mask = to_tensors(batch, "cpu")
    model = decoder_for_task(task, seed=0, n_layers=2, n_heads=2, d_model=32)
    offsets = torch.as_tensor(sample_offsets(rng, batch.inputs, model.cfg.n_positions))
    grads, losses = [], []
    for chunks in (1, 4):
        model.zero_grad()
        copy = decoder_for_task(task, seed=0, n_layers=2, n_heads=2, d_model=32)
        optimizer = make_optimizer(copy, TrainConfig(), "cpu")
        losses.append(training_step(copy, optimizer, inputs, targets, mask, offsets,
                                    chunks=chunks))
        grads.append([p.grad.clone() for p in copy.parameters()])
    assert torch.allclose(losses[0], losses[1], atol=1e-6)
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=2e-6, rtol=1e-4)
    parts = list(length_chunks(inputs, targets, mask, offsets, 4))
    assert sum(len(p[0]) for p in parts) == 64
    assert sum(p[0].numel() for p in parts) < inputs.numel()  # padding was cut
    assert sum(int(p[2].sum()) for p in parts) == int(mask.sum())  # no masked position lost


def test_non_finite_settings_and_divergence_are_clear_errors(majority, tmp_path):
    for bad in (float("nan"), float("inf")):
        with pytest.raises(LengthgenError, match="lr must be a finite number"):
            TrainConfig(lr=bad)
    model = decoder_for_task(majority, seed=0, **SMALL)
    path = tmp_path / "run.pt"

    class Poisoned(type(majority)):
        calls = 0

        def sample(self, *args):
            Poisoned.calls += 1
            if Poisoned.calls == 7:  # after the checkpoint at step 5: the loss becomes NaN
                model.unembed.weight.data.fill_(float("nan"))
            return super().sample(*args)

    with pytest.raises(LengthgenError, match=r"loss became nan at step 7 .*last good checkpoint"):
        train(model, Poisoned(), TrainConfig(steps=20, min_len=1, max_len=8, eval_every=10,
                                             checkpoint_every=5, checkpoint_path=str(path)))
    assert load_checkpoint(path)["step"] == 5
