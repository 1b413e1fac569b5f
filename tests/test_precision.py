"""A run's precision (`TrainConfig.precision`) is honoured wherever one of its steps or
evaluations is computed.

There is no card here, so the decision is made as a CUDA card with bf16 would make it and
entered on the CPU: `card` replaces `lengthgen.evaluate.low_precision` (the one function that
decides, read by `autocast` at every call) by the real rule asked about a "cuda" device with
bf16, and records what each call asked (the precision) and got (bf16 or None). An "auto" run
then trains under a real bf16 autocast on the CPU; an "fp32" run must never ask for one. Each
path is run alone and must ask at least once, only with its run's precision: a path that
forgets the precision asks with "auto" and gets bf16 (the fp32 test fails), and a path that
stops entering autocast asks nothing (the auto test fails).

Paths: `train()` (ModuleGroup's step and in-training evaluation), `train_and_evaluate`'s test
bins and generation accuracy, stacked decoders (the step, its evaluation and the one cast of
the weights, `StackedDecoders._low_precision`), stacked limit-style models through
`train_jobs`, the compiled step (aot_eager), and Izzo et al.'s protocol (fp32 for every run).
A CUDA graph (`GraphStep`) captures the eager step (`_eager_step`, checked here) and cannot be
captured without a card.
"""
import pytest
import torch

import lengthgen.evaluate as ev
from lengthgen.engine.groups import StackedGroup
from lengthgen.engine.jobs import Job, group_key, train_jobs
from lengthgen.engine.feeds import HostFeed
from lengthgen.engine.stacked import StackedDecoders
from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.tasks.izzo import ModPTask, SimpleTask
from lengthgen.train import TrainConfig, decoder_for_task, train, train_and_evaluate

BF16 = ("auto", torch.bfloat16)      # what every call of an "auto" run gets on a bf16 card
FP32 = ("fp32", None)                # and of an "fp32" run
SMALL = {"n_layers": 1, "n_heads": 1, "d_model": 16}


@pytest.fixture
def card(monkeypatch):
    """Every autocast decision made as on a CUDA card with bf16, and entered on the CPU; the
    list of (precision asked, dtype got) it returns grows with each call."""
    real, seen = ev.low_precision, []
    monkeypatch.setattr(ev, "bf16_supported", lambda device: True)

    def as_on_a_card(device, precision="auto"):
        dtype = real("cuda", precision)
        seen.append((precision, dtype))
        return dtype
    monkeypatch.setattr(ev, "low_precision", as_on_a_card)
    return seen


def _cfg(precision, **change):
    return TrainConfig(**{"steps": 4, "eval_every": 2, "eval_samples": 8, "batch_size": 8,
                          "max_len": 8, "lr": 1e-3, "precision": precision, **change})


def _forward_autocast(model, log):
    """Record, at each forward of `model`, whether a CPU autocast is on (what ran, not only
    what was decided)."""
    return model.register_forward_pre_hook(
        lambda module, args: log.append(torch.is_autocast_enabled("cpu")))


def _asked_only(seen, expected, path):
    assert seen, f"{path}: no autocast decision at all"
    assert set(seen) == {expected}, f"{path}: {sorted(set(seen), key=str)}"
    seen.clear()


@pytest.mark.parametrize("precision, expected", [("auto", BF16), ("fp32", FP32)])
def test_train_and_its_evaluations_compute_in_the_runs_precision(card, precision, expected):
    task = get_task("copy_repeat")
    model = decoder_for_task(task, **SMALL)
    entered = []
    hook = _forward_autocast(model, entered)
    train(model, task, _cfg(precision))                       # ModuleGroup: steps, evaluations
    _asked_only(card, expected, "train()")
    assert entered and set(entered) == {precision == "auto"}
    hook.remove()
    ev.evaluate(model, task, [(2, 4)], 8, precision=precision)
    _asked_only(card, expected, "evaluate()")
    train_and_evaluate(task, _cfg(precision), bins=[(2, 4)], samples_per_bin=4,
                       generation=True, **SMALL)
    _asked_only(card, expected, "train_and_evaluate (test bins and generation)")


@pytest.mark.parametrize("precision, expected", [("auto", BF16), ("fp32", FP32)])
def test_a_stacked_decoder_group_steps_and_evaluates_in_its_precision(card, monkeypatch,
                                                                      precision, expected):
    """The eager step (what a CUDA graph captures) and the group's evaluation; the one cast of
    the weights to bf16 happens under "auto" and never under "fp32"."""
    casts = []
    real_cast = StackedDecoders._low_precision
    monkeypatch.setattr(StackedDecoders, "_low_precision",
                        lambda self: casts.append(len(real_cast(self))) or real_cast(self))
    tasks = [get_task("sort"), get_task("copy_repeat")]
    configs = [_cfg(precision, seed=s) for s in (0, 1)]
    models = [decoder_for_task(t, seed=s, pe="ape", **SMALL) for s, t in enumerate(tasks)]
    group = StackedGroup(models, tasks, configs, "cpu")
    feed = HostFeed(tasks, configs, [m.cfg.n_positions for m in models], [True, True],
                    torch.long, "cpu")
    group.set_rates(0)
    group.train_step(*feed.batch(0))
    _asked_only(card, expected, "StackedGroup.train_step")
    assert casts and all((n > 0) == (precision == "auto") for n in casts)
    group.evaluate()
    _asked_only(card, expected, "StackedGroup.evaluate")


# fp32 only: the compiled step runs the eager step's `_chunk_losses` through torch.compile, whose
# "auto" path (bf16 on a card) the stacked decoder group's eager test above covers; compiling
# costs about 6-10 s a case on a CPU
@pytest.mark.parametrize("precision, expected", [("fp32", FP32)])
def test_a_compiled_step_computes_in_its_precision(card, precision, expected):
    from lengthgen.engine.feeds import DeviceFeed
    task = get_task("binary_majority")
    configs = [_cfg(precision, seed=s, max_len=12) for s in (0, 1)]
    models = [decoder_for_task(task, seed=s, pe="ape", **SMALL) for s in (0, 1)]
    group = StackedGroup(models, [task] * 2, configs, "cpu", compile="aot_eager")
    feed = DeviceFeed([task] * 2, configs, [m.cfg.n_positions for m in models], [True] * 2,
                      "cpu", task.max_tokens(12))
    for step in range(2):
        group.set_rates(step)
        assert torch.isfinite(group.train_step(*feed.batch(step))).all()
    assert group._losses.failure is None   # the compiled step ran, not an eager fallback
    _asked_only(card, expected, "the compiled step")


def _limit_job(seed, precision, steps=4):
    task = ModPTask(2, 0, train_max=8)
    cfg = _cfg(precision, steps=steps, seed=seed, min_len=task.min_len, stop_accuracy=None,
               weight_decay=0.0)
    return Job(task, {"n_layers": 1, "d_model": 8, "mlp_width": 16, "pe": "periodic",
                      "period": 2}, cfg, kind="limit-style")


@pytest.mark.parametrize("precision, expected", [("auto", BF16), ("fp32", FP32)])
def test_stacked_limit_style_jobs_train_in_their_precision(card, precision, expected):
    outcomes = train_jobs([_limit_job(s, precision) for s in (0, 1)], sampler="host")
    assert [o.group_size for o in outcomes] == [2, 2]
    _asked_only(card, expected, "train_jobs (limit-style group)")


def test_jobs_of_two_precisions_never_share_a_group():
    jobs = [_limit_job(0, "auto"), _limit_job(1, "fp32"), _limit_job(2, "fp32")]
    keys = [group_key(j) for j in jobs]
    assert keys[0] != keys[1] == keys[2]
    assert [o.group_size for o in train_jobs(jobs, sampler="host")] == [1, 2, 2]
    tasks = [j.get_task() for j in jobs[:2]]
    models = [j.build_model() for j in jobs[:2]]
    with pytest.raises(LengthgenError, match="must share a precision, not auto, fp32"):
        StackedGroup(models, tasks, [j.train for j in jobs[:2]], "cpu")


def test_the_izzo_protocol_trains_and_measures_in_fp32(card):
    """Every Izzo run (`run_one`'s train(), a slice's stacked jobs, `measure`) is fp32: its
    1e-5 stop rule is far below bf16's error floor."""
    from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, job, train_and_test
    config = {**PAPER_PROTOCOL, "max_steps": 3, "eval_every": 3, "eval_samples": 8,
              "batch_size": 8, "test_lengths": [6, 12], "test_samples": 8}
    run = job(SimpleTask(2.0, train_max=8), config, 0, 8, pe="nope")
    assert run.train.precision == "fp32"
    metrics, _ = train_and_test(run, config, "cpu")
    assert set(metrics["test_loss"]) == {"6", "12"}
    _asked_only(card, FP32, "the Izzo protocol")


def test_a_precision_is_one_setting_read_round_trip_and_refused_in_one_line():
    cfg = TrainConfig.from_config({"precision": "fp32", "steps": 5, "d_model": 16})
    assert cfg.precision == "fp32" and TrainConfig(**cfg.to_dict()) == cfg
    assert TrainConfig().precision == "auto"
    for bad in ("bf16", "FP32", None, 32):
        with pytest.raises(LengthgenError) as error:
            TrainConfig(precision=bad)
        assert "\n" not in str(error.value) and "valid: auto, fp32" in str(error.value)
    with pytest.raises(LengthgenError, match="unknown precision 'half'"):
        ev.autocast("cpu", "half")
    with pytest.raises(LengthgenError, match="unknown precision 'half'"):
        ev.evaluate(decoder_for_task(get_task("copy_repeat"), **SMALL),
                    get_task("copy_repeat"), [(2, 4)], 4, precision="half")


def test_on_the_cpu_fp32_is_todays_training_bit_for_bit(tmp_path):
    """The CPU never autocasts: an "fp32" run ends in the very weights of an "auto" one. A
    checkpoint of one does not resume the other, and a default run's checkpoint settings are
    those saved before the field existed (old checkpoints resume)."""
    from lengthgen.engine.checkpoints import _resumable_fields
    task = get_task("copy_repeat")
    weights = []
    for precision in ("auto", "fp32"):
        model = decoder_for_task(task, **SMALL)
        train(model, task, _cfg(precision))
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert torch.equal(*weights)
    assert "precision" not in _resumable_fields(TrainConfig())
    assert _resumable_fields(TrainConfig(precision="fp32"))["precision"] == "fp32"
    path = str(tmp_path / "run.pt")
    train(decoder_for_task(task, **SMALL), task, _cfg("auto", checkpoint_path=path))
    with pytest.raises(LengthgenError, match="different run"):
        train(decoder_for_task(task, **SMALL), task, _cfg("fp32", checkpoint_path=path))
