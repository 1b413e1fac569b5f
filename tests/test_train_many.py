"""Seeds trained together in one vmapped model match seeds trained one by one."""
import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, decoder_for_task, train
from lengthgen.train_many import train_seeds

OPTIONS = dict(n_layers=1, n_heads=2, d_model=16)


def test_stacked_seeds_match_separate_runs():
    task = get_task("binary_majority")
    cfg = dict(steps=12, lr=3e-3, min_len=1, max_len=12, eval_every=6, eval_samples=32,
               warmup_steps=3, schedule="cosine", grad_clip=0.5)
    together = train_seeds(task, TrainConfig(**cfg), [3, 8], **OPTIONS)
    for (model, result), seed in zip(together, [3, 8]):
        alone = decoder_for_task(task, seed=seed, **OPTIONS)
        reference = train(alone, task, TrainConfig(**cfg, seed=seed))
        for a, b in zip(alone.parameters(), model.parameters()):
            torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
        assert [h["accuracy"] for h in result.history] == [h["accuracy"]
                                                            for h in reference.history]
        assert result.steps == reference.steps


def test_train_seeds_refuses_what_it_cannot_match():
    task = get_task("binary_majority")
    with pytest.raises(LengthgenError, match="distinct seeds"):
        train_seeds(task, TrainConfig(steps=1), [1, 1], **OPTIONS)
    with pytest.raises(LengthgenError, match="dropout=0"):
        train_seeds(task, TrainConfig(steps=1), [1, 2], dropout=0.1, **OPTIONS)


def test_a_seed_that_gives_up_leaves_at_the_step_a_run_alone_gives_up():
    """abandon_below applies per seed: each seed stops (or not) where its own run would."""
    task = get_task("tomita2")
    cfg = dict(steps=20, eval_every=5, eval_samples=16, abandon_below=0.99, lr=1e-3)
    together = train_seeds(task, TrainConfig(**cfg), [0, 1], d_model=16)
    for (_, result), seed in zip(together, [0, 1]):
        alone = train(decoder_for_task(task, seed=seed, d_model=16), task,
                      TrainConfig(**cfg, seed=seed))
        assert (result.steps, result.abandoned) == (alone.steps, alone.abandoned)
    assert any(r.abandoned for _, r in together)   # the rule did act
