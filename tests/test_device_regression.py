"""Device batches of Izzo et al.'s regression tasks (lengthgen.engine.device_regression).

Layout: every row is what `RegressionTask.batch` makes of the same strings (fed through the
host's code), and its target is the task's vectorized `targets` and its per-string `target`.
Laws: the whole law of the strings at a short length against the exact law, computed here from
the Dirichlet(1) integrals (not from the samplers), with the host sampler put through the same
test (so both are shown to have that law); the targets' distribution at mixed lengths against
the host's by a two-sample test; the lengths uniform. Each law test rejects at p = 1e-4
(P_MIN, test_engine_sampling's rate: Pearson's chi-square, and the two-sample
Kolmogorov-Smirnov test, conservative on the targets' discrete values so its rate is at most
that); deliberately wrong samplers show the tests can fail. Keys: a row depends only on (seed,
step, row), in any feed, group or pool. Training: a stacked limit-style group learns from
device batches on the CPU.
"""
import itertools
import math
from collections import Counter

import numpy as np
import pytest
import torch
from scipy.stats import ks_2samp

from lengthgen.engine import rng
from lengthgen.engine.device_data import device_sampler, real_lengths
from lengthgen.engine.device_regression import KGramSampler, SimpleSampler, _pick
from lengthgen.engine.feeds import DeviceFeed, HostFeed
from lengthgen.engine.jobs import Job, make_group, train_jobs, use_device_sampler
from lengthgen.errors import LengthgenError
from lengthgen.tasks.izzo import KGramTask, ModPTask, SimpleTask
from lengthgen.train import TrainConfig
from test_engine_sampling import P_MIN, assert_law, goodness_of_fit

TASKS = [SimpleTask(4.0), SimpleTask(100.0), ModPTask(5, 2), ModPTask(1, 0), ModPTask(3, 1),
         KGramTask(2, 2), KGramTask(3, 2), KGramTask(2, 3), KGramTask(4, 3), KGramTask(2, 5)]
IDS = [t.id for t in TASKS]


def draw(task, n_items, batch_size, lo, hi, seed=0, step=0, width=None):
    seeds = torch.arange(seed, seed + n_items, dtype=torch.int64)
    steps = torch.full((n_items,), step, dtype=torch.int64)
    return device_sampler(task).sample(seeds, steps, batch_size, lo, hi,
                                       hi if width is None else width)


def strings(batch) -> tuple[np.ndarray, np.ndarray]:
    """The rows as the host's `draw` gives them: symbol values [rows, longest], -1 past each
    length; and the lengths."""
    lengths = batch.lengths.reshape(-1).numpy()
    inputs = batch.inputs.reshape(len(lengths), -1).numpy()[:, :lengths.max()]
    return inputs.astype(np.int64) - 1, lengths


def host_strings(task, rows, lo, hi, seed=0):
    batch = task.sample(np.random.default_rng(seed), rows, lo, hi)
    return batch.inputs - 1, batch.lengths


def string_keys(values, lengths) -> list[str]:
    return ["".join(map(str, row[:n])) for row, n in zip(values, lengths)]


# --- layout and targets --------------------------------------------------------------------------

@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_rows_are_the_hosts_batch_of_their_strings_with_the_tasks_targets(task):
    lo, hi, width = task.min_len, task.min_len + 13, task.min_len + 17
    batch = draw(task, 6, 40, lo, hi, seed=3, step=5, width=width)
    n, b = 6, 40
    assert batch.inputs.shape == batch.mask.shape == (n, b, width)
    assert batch.targets.shape == (n, b, width, *(() if task.n_classes == 1 else (task.S,)))
    assert batch.inputs.dtype == torch.int64 and batch.targets.dtype == torch.float32
    values, lengths = strings(batch)
    assert lengths.min() >= lo and lengths.max() <= hi
    assert torch.equal(real_lengths(batch), batch.lengths)          # no symbol is PAD
    assert values.max() < len(task.symbols) and (values >= -1).all()
    host = task.batch(values.copy(), lengths)
    t = host.inputs.shape[1]
    inputs = batch.inputs.reshape(n * b, width).numpy()
    mask = batch.mask.reshape(n * b, width).numpy()
    targets = batch.targets.reshape(n * b, width, -1).numpy()
    assert np.array_equal(inputs[:, :t], host.inputs) and not inputs[:, t:].any()
    assert np.array_equal(mask[:, :t], host.loss_mask) and not mask[:, t:].any()
    assert mask.sum(axis=1).tolist() == [1] * (n * b)
    host_targets = host.targets.reshape(n * b, t, -1)
    tolerance = 1e-6 if isinstance(task, SimpleTask) else 0   # the sine's last bits
    np.testing.assert_allclose(targets[:, :t], host_targets, rtol=0, atol=tolerance)
    assert not targets[:, t:].any() and not targets[~mask].any()
    # the per-string reference, written for clarity
    at_end = targets[np.arange(n * b), lengths - 1]
    for row, (string, length) in enumerate(zip(values, lengths)):
        reference = np.atleast_1d(task.target([int(s) for s in string[:length]]))
        np.testing.assert_allclose(at_end[row], reference, rtol=0, atol=1e-6)


def test_targets_cover_their_cases():
    """The layout test above sees the rare cases: a SimpleTask string of 2s only (target 0), a
    k-gram context seen before and one never seen (the string's frequencies)."""
    task = SimpleTask(4.0)
    values, lengths = strings(draw(task, 8, 64, 1, 3, seed=3, step=5))
    assert any(set(s[:n]) == {2} for s, n in zip(values, lengths))
    task = KGramTask(4, 3)
    values, lengths = strings(draw(task, 6, 40, 2, 15, seed=3, step=5))
    seen = [any(tuple(s[n - 2:n]) == tuple(s[e - 1:e + 1]) for e in range(1, n - 1))
            for s, n in zip(values, lengths)]
    assert 0 < sum(seen) < len(seen)


def test_kgram_draws_each_context_law_once_per_string():
    """The thresholds are keyed by (row, context): drawn all at once (few contexts) or at each
    position (many) they are the same, so a string's first symbols do not depend on the
    longest length of its batch (S = 2, k = 3: 4 contexts; Len 3 draws per position, Len 9
    from the table)."""
    task = KGramTask(2, 3)
    short = strings(draw(task, 4, 64, 3, 3, seed=1))[0]
    long = strings(draw(task, 4, 64, 9, 9, seed=1))[0]
    assert np.array_equal(short, long[:, :3])
    task = KGramTask(4, 3)     # 16 contexts: per position at Len 15, from the table at 16
    assert np.array_equal(strings(draw(task, 2, 64, 15, 15))[0],
                          strings(draw(task, 2, 64, 16, 16))[0][:, :15])


def test_bad_ranges_are_clear_errors():
    seeds = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(LengthgenError, match="impossible"):
        device_sampler(ModPTask(5, 2)).sample(seeds, seeds, 4, 2, 10, 10)   # Len 2 < k + 1
    with pytest.raises(LengthgenError, match="width"):
        device_sampler(SimpleTask()).sample(seeds, seeds, 4, 1, 10, 9)


# --- laws ---------------------------------------------------------------------------------------

def _polya(counts) -> float:
    """The integral of prod_s p_s^{n_s} over Dirichlet(1) on S symbols:
    (S-1)! prod n_s! / (n + S - 1)!."""
    s, n = len(counts), sum(counts)
    return (math.factorial(s - 1) * math.prod(map(math.factorial, counts))
            / math.factorial(n + s - 1))


def simple_law(n: int) -> dict:
    """A mixture uniform on the simplex, then n i.i.d. symbols of {0, 1, 2}."""
    return {"".join(map(str, w)): _polya([w.count(s) for s in range(3)])
            for w in itertools.product(range(3), repeat=n)}


def modp_law(n: int, p: int) -> dict:
    """Independent uniform rates per residue: each residue's symbols are a Polya draw."""
    return {"".join(map(str, w)): math.prod(_polya([w[r::p].count(1), w[r::p].count(0)])
                                            for r in range(p))
            for w in itertools.product(range(2), repeat=n)}


def kgram_law(n: int, S: int, k: int) -> dict:
    """Uniform first k-1 symbols, then a Dirichlet(1) law per context: the transitions out of
    each context are a Polya draw of their own."""
    law = {}
    for w in itertools.product(range(S), repeat=n):
        after = {}
        for t in range(k - 1, n):
            after.setdefault(w[t - k + 1:t], []).append(w[t])
        p = S ** -(k - 1) * math.prod(_polya([nxt.count(s) for s in range(S)])
                                      for nxt in after.values())
        law["".join(map(str, w))] = p
    return law


LAWS = [(SimpleTask(4.0), 4, lambda: simple_law(4)),
        (ModPTask(2, 0), 5, lambda: modp_law(5, 2)),
        (ModPTask(3, 1), 5, lambda: modp_law(5, 3)),
        (KGramTask(2, 2), 6, lambda: kgram_law(6, 2, 2)),
        (KGramTask(3, 2), 4, lambda: kgram_law(4, 3, 2)),
        (KGramTask(2, 3), 6, lambda: kgram_law(6, 2, 3))]


@pytest.mark.parametrize("task,n,law", LAWS, ids=[f"{t.id}-n{n}" for t, n, _ in LAWS])
def test_strings_have_the_exact_law_as_the_hosts_do(task, n, law):
    law = law()
    assert math.isclose(sum(law.values()), 1.0)
    rows = 80 * len(law)
    device = string_keys(*strings(draw(task, rows // 64 + 1, 64, n, n, seed=17)))
    assert_law(device, law)
    assert_law(string_keys(*host_strings(task, rows, n, n, seed=17)), law)


@pytest.mark.parametrize("task", [SimpleTask(4.0), ModPTask(5, 2), KGramTask(3, 2),
                                  KGramTask(2, 3)], ids=lambda t: t.id)
def test_targets_and_lengths_are_distributed_as_the_hosts(task):
    lo, hi = task.min_len, 20
    batch = draw(task, 64, 64, lo, hi, seed=29)
    lengths = batch.lengths.reshape(-1).tolist()
    assert_law(lengths, {n: 1 / (hi - lo + 1) for n in range(lo, hi + 1)})
    device = batch.targets[batch.mask].reshape(len(lengths), -1).numpy()
    host = task.sample(np.random.default_rng(29), len(lengths), lo, hi)
    host = host.targets[host.loss_mask].reshape(len(lengths), -1)
    for column in range(device.shape[1]):
        p = ks_2samp(device[:, column], host[:, column]).pvalue
        assert p > P_MIN, (column, p)


class _UniformMixture(SimpleSampler):
    """A plausible bug: the mixture as normalized uniforms, not uniform on the simplex."""

    def _draw(self, key, lengths, longest):
        w = rng.uniform(key[..., None], rng.STREAM_WEIGHTS, torch.arange(3))
        cum = (w / w.sum(-1, keepdim=True)).cumsum(-1)[..., :2]
        u = rng.uniform(key[..., None], rng.STREAM_SYMBOL, torch.arange(longest))
        return _pick(u, cum[..., None, :])


class _OneLawPerString(KGramSampler):
    """A plausible bug: one next-symbol law for every context of the string."""

    def _draw(self, key, lengths, longest):
        v = rng.uniform(key[..., None], rng.STREAM_WEIGHTS, torch.arange(self.task.S - 1))
        u = rng.uniform(key[..., None], rng.STREAM_SYMBOL, torch.arange(longest))
        x = _pick(u, v[..., None, :])
        return torch.where(torch.arange(longest) < self.task.k - 1,
                           torch.floor(u * self.task.S).long(), x)


def test_the_law_tests_have_power():
    for sampler, n, law in ((_UniformMixture(SimpleTask(4.0)), 4, simple_law(4)),
                            (_OneLawPerString(KGramTask(2, 2)), 6, kgram_law(6, 2, 2))):
        seeds = torch.arange(17, 17 + 80 * len(law) // 64 + 1)
        batch = sampler.sample(seeds, torch.zeros_like(seeds), 64, n, n, n)
        stat, p = goodness_of_fit(Counter(string_keys(*strings(batch))), law)
        assert p < 1e-8, (type(sampler).__name__, stat, p)


# --- keys ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("task", [SimpleTask(4.0), ModPTask(5, 2), KGramTask(3, 2)],
                         ids=lambda t: t.id)
def test_rows_depend_only_on_seed_step_and_row(task):
    sampler = device_sampler(task)
    lo, hi, width = task.min_len, 30, 32
    seeds, steps = torch.tensor([5, 9, 11, 5]), torch.tensor([3, 3, 4, 4])
    big = sampler.sample(seeds, steps, 24, lo, hi, width)
    alone = sampler.sample(torch.tensor([11]), torch.tensor([4]), 10, lo, hi, width)
    mixed = sampler.sample(torch.tensor([2, 11]), torch.tensor([8, 4]), 16, lo, hi, width)
    wide = sampler.sample(seeds, steps, 24, lo, hi, width + 5)
    for field in ("inputs", "targets", "mask", "lengths"):
        ref = getattr(big, field)[2]
        assert torch.equal(getattr(alone, field)[0], ref[:10])
        assert torch.equal(getattr(mixed, field)[1], ref[:16])
        if field != "lengths":   # a wider batch only pads
            assert torch.equal(getattr(wide, field)[:, :, :width], getattr(big, field))
            assert not getattr(wide, field)[:, :, width:].any()
    for a, b in ((0, 1), (0, 3), (2, 3)):     # other seeds, other steps: other batches
        assert (big.inputs[a] != big.inputs[b]).any(dim=-1).float().mean() > 0.6


def _configs(tasks, seeds, batch_size=8):
    return [TrainConfig(seed=s, batch_size=batch_size, min_len=t.min_len,
                        max_len=t.train_range[1], stop_accuracy=None)
            for t, s in zip(tasks, seeds)]


def _feed(tasks, seeds, pool, width=12):
    return DeviceFeed(tasks, _configs(tasks, seeds), [64] * len(tasks), [False] * len(tasks),
                      "cpu", width, pool=pool)


def test_a_members_batches_are_the_same_in_any_group_pool_or_resumption():
    """A feed of three tasks (targets of 3, 1 and 1 values: padded to 3) gives each member its
    own sampler's rows; another group, another pool size, or a feed started at a later step
    (a resumed run) gives it the same batches."""
    simple, modp, kgram = SimpleTask(2.0, train_max=10), ModPTask(2, 0, train_max=10), \
        KGramTask(3, 2, train_max=10)
    feed = _feed([kgram, simple, modp], [7, 8, 9], pool=4)
    later = _feed([modp, simple], [9, 8], pool=3)
    for step in (0, 3, 4, 6):
        inputs, targets, mask, offsets = feed.batch(step)
        assert targets.shape == (3, 8, 12, 3) and targets.dtype == torch.float32
        assert offsets is None
        for row, (task, seed) in enumerate(((kgram, 7), (simple, 8), (modp, 9))):
            own = draw(task, 1, 8, task.min_len, 10, seed=seed, step=step, width=12)
            assert torch.equal(inputs[row], own.inputs[0])
            assert torch.equal(mask[row], own.mask[0])
            values = own.targets[0] if task is kgram else own.targets[0][..., None]
            c = values.shape[-1]
            assert torch.equal(targets[row, ..., :c], values) and not targets[row, ..., c:].any()
        if step >= 3:
            i2, t2, m2, _ = later.batch(step)
            assert torch.equal(i2[0], inputs[2]) and torch.equal(i2[1], inputs[1])
            assert t2.shape == (2, 8, 12)   # one value each: no extra dimension
            assert torch.equal(t2[0], targets[2, ..., 0]) and torch.equal(m2[1], mask[1])


def test_a_pool_is_bounded_in_tokens():
    import lengthgen.engine.feeds as feeds
    task = ModPTask(2, 0, train_max=10)
    configs = _configs([task] * 2, [0, 1], batch_size=1024)
    steps = lambda width: DeviceFeed([task] * 2, configs, [64] * 2, [False] * 2, "cpu",
                                     width).pool_steps
    assert steps(64) == 64                                     # 2**23 tokens: unbound
    assert steps(2 ** 14) == feeds.POOL_TOKENS // 2 ** 25 == 8  # 2**25 tokens a step
    assert steps(2 ** 20) == 1                                  # at least one step


# --- training -----------------------------------------------------------------------------------

def _job(task, seed, steps=80, **model):
    cfg = TrainConfig(steps=steps, eval_every=20, eval_samples=256, batch_size=64, lr=1e-2,
                      weight_decay=0.0, grad_clip=None, stop_accuracy=None,
                      min_len=task.min_len, max_len=task.train_range[1], seed=seed,
                      group_lr={"hidden": 1e-2 / 8, "readout": 1e-2 / 8})
    return Job(task, {"n_layers": 1, "d_model": 8, "mlp_width": 32, **model}, cfg,
               kind="limit-style")


def test_a_stacked_group_learns_from_device_batches_on_the_cpu():
    jobs = [_job(ModPTask(2, 0, train_max=8), 0, pe="periodic", period=2),
            _job(SimpleTask(2.0, train_max=8), 1, pe="nope"),
            _job(KGramTask(2, 2, train_max=8), 2, pe="nope", local_tau=1)]
    outcomes = train_jobs(jobs, sampler="device")
    assert {o.group_size for o in outcomes} == {3}
    for outcome in outcomes:
        history = outcome.result.history
        assert outcome.result.steps == 80 and "accuracy" not in history[-1]
        assert history[-1]["loss"] < 0.7 * history[0]["loss"], history


def test_a_job_resumed_in_another_group_sees_the_batches_it_would_have_seen():
    """Device batches are keyed by (seed, step, row): a job stopped at step 13 and resumed
    without its former group mates ends where one unbroken run ends."""
    def jobs():
        return [_job(ModPTask(2, 0, train_max=8), 0, pe="periodic", period=2, steps=30),
                _job(KGramTask(3, 2, train_max=8), 1, pe="nope", local_tau=1, steps=30)]
    whole = train_jobs(jobs(), sampler="device")
    first = train_jobs(jobs(), sampler="device", until_step=13)
    assert all(o.result is None and o.state["step"] == 13 for o in first)
    (resumed,) = train_jobs(jobs()[1:], sampler="device", resume={0: first[1].state})
    a, b = whole[1].result, resumed.result
    assert [h["step"] for h in a.history] == [h["step"] for h in b.history]
    for x, y in zip(a.history, b.history):
        assert math.isclose(x["loss"], y["loss"], rel_tol=1e-4, abs_tol=1e-7)
    for p, q in zip(whole[1].model.parameters(), resumed.model.parameters()):
        torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-4)


def test_auto_picks_the_host_on_a_cpu_and_the_device_on_cuda():
    tasks = [ModPTask(2, 0, train_max=8), KGramTask(2, 2, train_max=8)]
    assert not use_device_sampler("auto", "cpu", tasks)
    assert use_device_sampler("auto", "cuda", tasks)   # decided without touching a card
    jobs = [_job(t, i, pe="nope") for i, t in enumerate(tasks)]
    built = [j.build() for j in jobs]
    _, feed = make_group([t for t, _ in built], [m for _, m in built], [j.train for j in jobs],
                         "cpu", "auto")
    assert isinstance(feed, HostFeed)
    _, feed = make_group([t for t, _ in built], [m for _, m in built], [j.train for j in jobs],
                         "cpu", "device")
    assert isinstance(feed, DeviceFeed)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_cuda_batches_are_the_cpus(task):
    sampler = device_sampler(task)
    seeds, steps = torch.arange(8) * 1000 + 7, torch.arange(8) + 123456
    cpu = sampler.sample(seeds, steps, 64, task.min_len, 40, 40)
    gpu = sampler.sample(seeds.cuda(), steps.cuda(), 64, task.min_len, 40, 40)
    for field in ("inputs", "mask", "lengths"):
        assert torch.equal(getattr(gpu, field).cpu(), getattr(cpu, field)), field
    # exact but for the sine's last float64 bit (SimpleTask), which can move a float32 by 1 ulp
    torch.testing.assert_close(gpu.targets.cpu(), cpu.targets, rtol=0,
                               atol=1e-7 if isinstance(task, SimpleTask) else 0)
