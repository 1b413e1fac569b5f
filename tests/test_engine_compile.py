"""A compiled stacked step trains as the eager step does (`lengthgen.engine.compiled`).

Two groups of the same members take the same batches, one eager and one through torch.compile:
after every step their losses agree within 1e-5 (relative) and their weights within 1e-6
(absolute; the learning rate is 1e-3, so a thousandth of one step's move), with clipping
active, members of two encodings and a member leaving the group half way (a new member count:
a second trace, with that dimension symbolic). Measured differences are about 1e-7 (traced and
generated code add in another order, so not bit for bit).

The suite compiles with the "aot_eager" backend: torch.compile traces both halves of the step
whole (fullgraph, so a trace that breaks fails), with AOTAutograd's forward/backward split and
the optimizer's in-place updates, then runs the traced graphs without generating code: about
10 s a trace here. TorchInductor (the engine's backend) generates C++ on a CPU, 10 to 80 s a
trace on this project's 2-core machines, and two length chunks (widths that vary: a third
trace) add as much again: those cases run only with LENGTHGEN_COMPILE_TESTS=1. On a card the
`-k gpu` tests train with TorchInductor (Triton kernels), with and without CUDA graphs, against
the eager step within bf16 rounding (this file is not in the checks of the GPU script at
6718b49, so a card where compiling fails does not stop its other measurements).
"""
import os

import pytest
import torch

from lengthgen.engine.compiled import CompiledOrEager
from lengthgen.engine.feeds import DeviceFeed
from lengthgen.engine.groups import StackedGroup
from lengthgen.engine.stacked import StackedDecoders
from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, decoder_for_task

STEPS = 6


def _group(compile, chunks: int = 2, device: str = "cpu", graphs: bool = False):
    task = get_task("binary_majority")
    configs = [TrainConfig(steps=100, lr=1e-3, seed=i, max_len=20, eval_every=1000,
                           eval_samples=8, grad_clip=0.05, length_chunks=chunks)
               for i in range(3)]
    models = [decoder_for_task(task, seed=i, n_layers=2, n_heads=2, d_model=16,
                               pe="nope" if i == 1 else "ape") for i in range(3)]
    group = StackedGroup(models, [task] * 3, configs, device, compile=compile, graphs=graphs)
    feed = DeviceFeed([task] * 3, configs, [m.cfg.n_positions for m in models],
                      [True] * 3, device, task.max_tokens(20))
    return group, feed


def _train(group, feed, steps: int = STEPS, leave_at: int | None = 3) -> list[torch.Tensor]:
    losses = []
    for step in range(steps):
        if step == leave_at:
            group.retain([0, 2])
            feed.retain([0, 2])
        group.set_rates(step)
        losses.append(group.train_step(*feed.batch(step)).detach().cpu())
    return losses


def _same_training(compile, device="cpu", chunks=2, graphs=False) -> StackedGroup:
    eager, feed_a = _group(False, chunks, device)
    compiled, feed_b = _group(compile, chunks, device, graphs)
    for a, b in zip(_train(eager, feed_a), _train(compiled, feed_b)):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-7)
    assert not torch.equal(eager.stack.flat, _group(False, chunks, device)[0].stack.flat[[0, 2]])
    torch.testing.assert_close(compiled.stack.flat, eager.stack.flat, rtol=0, atol=1e-6)
    torch.testing.assert_close(compiled.optimizer.exp_avg["flat"],
                               eager.optimizer.exp_avg["flat"], rtol=1e-4, atol=1e-9)
    # the compiled path ran (a fallback to eager would pass the comparisons trivially)
    assert compiled._losses.failure is None and compiled._update.failure is None
    return compiled


SLOW = pytest.mark.skipif(not os.environ.get("LENGTHGEN_COMPILE_TESTS"),
                          reason="compiles for minutes on a 2-core CPU: set "
                                 "LENGTHGEN_COMPILE_TESTS=1")


@pytest.mark.parametrize("backend, chunks", [
    ("aot_eager", 1),
    pytest.param("aot_eager", 2, marks=SLOW),
    pytest.param(True, 1, marks=SLOW),   # TorchInductor
    pytest.param(True, 2, marks=SLOW)])
def test_a_compiled_step_trains_as_the_eager_step(backend, chunks):
    _same_training(backend, chunks=chunks)


def test_a_compiled_step_under_bf16_autocast_traces_whole(monkeypatch):
    """A card trains under bf16 autocast, with the one cast of the weights (cast_once): the
    traced step reads the autocast state and still traces whole (no fallback), training as the
    eager step does. CPU autocast stands in for the card's here."""
    import lengthgen.engine.groups as groups
    monkeypatch.setattr(groups, "autocast",
                        lambda device, precision: torch.autocast("cpu", dtype=torch.bfloat16))
    eager, feed_a = _group(False, chunks=1)
    compiled, feed_b = _group("aot_eager", chunks=1)
    for a, b in zip(_train(eager, feed_a, 3, None), _train(compiled, feed_b, 3, None)):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(compiled.stack.flat, eager.stack.flat, rtol=0, atol=1e-6)
    assert compiled._losses.failure is None and compiled._update.failure is None


def test_a_step_whose_compiling_fails_runs_eagerly_and_says_so_once(capfd):
    from torch._dynamo import register_backend

    @register_backend
    def lengthgen_test_broken(graph, example_inputs):
        raise RuntimeError("no C compiler here")

    eager, feed_a = _group(False)
    broken, feed_b = _group("lengthgen_test_broken")
    for a, b in zip(_train(eager, feed_a, leave_at=None), _train(broken, feed_b, leave_at=None)):
        assert torch.equal(a, b)   # the very same eager step, from the failed one on
    assert torch.equal(broken.stack.flat, eager.stack.flat)
    lines = [line for line in capfd.readouterr().err.splitlines() if "torch.compile" in line]
    assert len(lines) == 2 and "the step runs eagerly" in lines[0], lines   # loss and update
    assert "no C compiler here" in broken._losses.failure


def test_an_unknown_backend_is_one_clear_error():
    with pytest.raises(LengthgenError, match="unknown torch.compile backend 'nonsense'"):
        _group("nonsense")


def test_compiled_or_eager_keeps_what_fn_returns():
    double = CompiledOrEager(lambda x: x * 2 + 1, "test", "aot_eager")
    x = torch.arange(5.0)
    assert torch.equal(double(x), x * 2 + 1) and double.failure is None


@pytest.mark.parametrize("tied", [False, True])
def test_one_cast_of_the_weights_gives_autocasts_numbers_bit_for_bit(tied):
    """StackedDecoders.cast_once under a bf16 autocast (CPU here, a card's in training): the
    logits and every gradient are those of autocast casting each product's weight itself."""
    task = get_task("copy_repeat")
    models = [decoder_for_task(task, seed=i, n_layers=2, n_heads=2, d_model=16,
                               tied_embeddings=tied, pe="nope" if i else "ape")
              for i in range(2)]
    gen = torch.Generator().manual_seed(0)
    inputs = torch.randint(1, len(task.vocab), (2, 4, 10), generator=gen)
    out = []
    for cast_once in (True, False):
        stack = StackedDecoders(models, "cpu")
        stack.cast_once = cast_once
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert bool(stack._low_precision()) == cast_once
            logits = stack.forward(inputs)
        assert logits.dtype == torch.bfloat16
        logits.float().masked_fill(torch.isinf(logits), 0).square().sum().backward()
        out.append((logits, stack.flat.grad))
    assert torch.equal(out[0][0], out[1][0])
    assert torch.equal(out[0][1], out[1][1]) and out[0][1].abs().sum() > 0
    assert len(stack._low_precision()) == 0   # no autocast: full precision, no cast


ON_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _compiled_against_eager(graphs: bool):
    """On a GPU: losses and weights of a group stepped eagerly and compiled by TorchInductor
    (with or without CUDA graphs), through a member leaving; and that the compiled path ran."""
    tasks = [get_task(t) for t in ("tomita3", "tomita5", "tomita2")]
    configs = [TrainConfig(seed=s, lr=3e-3, schedule="linear", steps=50, eval_samples=8,
                           max_len=20) for s in range(3)]
    out = []
    for compile in (False, True):
        models = [decoder_for_task(t, seed=i, n_layers=2, n_heads=2, d_model=32,
                                   pe="nope" if i == 1 else "ape") for i, t in enumerate(tasks)]
        group = StackedGroup(models, tasks, configs, "cuda", graphs=graphs and compile,
                             compile=compile)
        feed = DeviceFeed(tasks, configs, [m.cfg.n_positions for m in models], [True] * 3,
                          "cuda", tasks[0].max_tokens(20), pool=4)
        losses = []
        for step in range(10):
            if step == 6:
                group.retain([0, 2])
                feed.retain([0, 2])
            group.set_rates(step)
            losses.append(group.train_step(*feed.batch(step)).cpu())
        out.append((torch.cat(losses), group.stack.flat.detach().cpu()))
    assert group._losses.failure is None and group._update.failure is None
    torch.testing.assert_close(out[1][0], out[0][0], atol=1e-4, rtol=1e-3)
    torch.testing.assert_close(out[1][1], out[0][1], atol=1e-4, rtol=1e-3)


@ON_GPU
def test_a_compiled_step_on_the_gpu_trains_as_the_eager_step():
    """torch.compile (TorchInductor, Triton kernels) on a card: the eager step's training
    within bf16 rounding. A GPU session should train compiled only where this passes
    (`pytest tests/test_engine_compile.py -k gpu`)."""
    _compiled_against_eager(graphs=False)


@ON_GPU
def test_a_compiled_step_replayed_as_a_cuda_graph_on_the_gpu_is_the_eager_step():
    _compiled_against_eager(graphs=True)
