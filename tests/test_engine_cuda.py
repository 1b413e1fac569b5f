"""The engine on a GPU agrees with the engine on the CPU (skipped where there is no CUDA device).

Run on a GPU before any measurement there (benchmarks/gpu_engine_session.sh does): batches made
on the device are the CPU's bit for bit; a stacked group's logits match the decoders' own; a
group trained on the card ends where its members trained alone on the card end, within the
rounding of bf16 autocast. (The compiled step on a GPU: tests/test_engine_compile.py.)
"""
import math

import pytest
import torch

from lengthgen.engine.feeds import DeviceFeed
from lengthgen.engine.jobs import Job, train_jobs
from lengthgen.engine.stacked import StackedDecoders
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, decoder_for_task, train

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_device_batches_on_the_card_are_the_cpus():
    for task_id in ("majority", "tomita3", "addition", "sort"):
        task = get_task(task_id)
        cfgs = [TrainConfig(seed=s, max_len=50) for s in (0, 7)]
        width = task.max_tokens(50)
        on = [DeviceFeed([task] * 2, cfgs, [160] * 2, [True] * 2, d, width, pool=3)
              for d in ("cpu", "cuda")]
        for step in (0, 2, 5):
            for a, b in zip(on[0].batch(step), on[1].batch(step)):
                assert torch.equal(a, b.cpu()), task_id


def test_stacked_logits_on_the_card_match_each_decoder():
    tasks = [get_task(t) for t in ("binary_majority", "tomita3")]
    models = [decoder_for_task(t, seed=i, n_layers=2, n_heads=2, d_model=64, pe="ape")
              for i, t in enumerate(tasks)]
    stack = StackedDecoders(models, "cuda")
    inputs = torch.randint(1, 4, (2, 8, 30), device="cuda")
    with torch.no_grad():
        logits = stack.forward(inputs)
        for i, (task, model) in enumerate(zip(tasks, models)):
            alone = model.to("cuda")(inputs[i])
            torch.testing.assert_close(logits[i, ..., :task.n_classes], alone, atol=1e-4,
                                       rtol=1e-4)


def test_a_group_on_the_card_ends_where_its_members_end_alone():
    jobs = [Job(t, {"d_model": 16, "pe": pe}, TrainConfig(steps=300, eval_every=100,
                                                          eval_samples=256, lr=3e-3, seed=s))
            for t, pe, s in (("tomita2", "ape", 0), ("tomita1", "nope", 1),
                             ("tomita1", "ape", 2))]
    outcomes = train_jobs(jobs, "cuda", sampler="host")
    for job, outcome in zip(jobs, outcomes):
        task, model = job.build()
        alone = train(model, task, job.train, "cuda")
        assert outcome.result.steps == alone.steps, job.task
        for a, b in zip(outcome.result.history, alone.history):
            assert abs(a["accuracy"] - b["accuracy"]) <= 0.02, job.task
            assert math.isclose(a["loss"], b["loss"], rel_tol=0.05, abs_tol=1e-3), job.task


def test_device_sampled_training_on_the_card_learns():
    jobs = [Job("tomita2", {"d_model": 16}, TrainConfig(steps=600, eval_every=200,
                                                        eval_samples=256, lr=3e-3, seed=s))
            for s in range(4)]
    outcomes = train_jobs(jobs, "cuda", sampler="device")
    assert all(o.result.final_accuracy == 1.0 for o in outcomes)


def test_a_step_replayed_as_a_cuda_graph_is_the_eager_step():
    """GraphStep: the same losses and weights as eager steps, through a pool refill, a change
    of learning rate and a member leaving (which captures again)."""
    from lengthgen.engine.groups import StackedGroup
    tasks = [get_task(t) for t in ("tomita3", "tomita5", "tomita2")]
    configs = [TrainConfig(seed=s, lr=3e-3, schedule="linear", steps=50, eval_samples=8,
                           max_len=20) for s in range(3)]
    out = []
    for graphs in (False, True):
        models = [decoder_for_task(t, seed=i, n_layers=2, n_heads=2, d_model=32, pe="ape")
                  for i, t in enumerate(tasks)]
        group = StackedGroup(models, tasks, configs, "cuda", graphs=graphs)
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
    torch.testing.assert_close(out[0][0], out[1][0], atol=1e-4, rtol=1e-3)
    torch.testing.assert_close(out[0][1], out[1][1], atol=1e-4, rtol=1e-3)



def _limit_style_steps(device, graphs: bool):
    """Ten steps of a stacked group of Izzo's limit-style models in fp32 (its protocol's
    precision) on the device's regression batches, a member leaving at step 6: (losses, the
    group's weights)."""
    from lengthgen.engine.jobs import make_group
    tasks = [get_task(t) for t in ("izzo_modp", "izzo_simple", "izzo_modp")]
    jobs = [Job(task, {"d_model": 16, "mlp_width": 32, "pe": pe, "period": 5},
                TrainConfig(seed=s, lr=3e-3, schedule="linear", steps=50, eval_samples=8,
                            max_len=12, stop_accuracy=None, precision="fp32"),
                kind="limit-style")
            for s, (task, pe) in enumerate(zip(tasks, ("periodic", "nope", "ape")))]
    models = [job.build_model() for job in jobs]
    group, feed = make_group(tasks, models, [job.train for job in jobs], device,
                             sampler="device", graphs=graphs)
    losses = []
    for step in range(10):
        if step == 6:
            group.retain([0, 2])
            feed.retain([0, 2])
        group.set_rates(step)
        losses.append(group.train_step(*feed.batch(step)).cpu())
    return torch.cat(losses), group.stack.flat.detach().cpu()


def test_a_limit_style_step_replayed_as_a_cuda_graph_is_the_eager_step():
    """Izzo's figures on the card (benchmarks/gpu_engine_session.sh leaves them out of the
    queue where this fails): a captured step of stacked limit-style models in fp32 gives the
    eager steps' losses and weights."""
    eager, graph = _limit_style_steps("cuda", False), _limit_style_steps("cuda", True)
    torch.testing.assert_close(eager[0], graph[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(eager[1], graph[1], atol=1e-5, rtol=1e-4)
