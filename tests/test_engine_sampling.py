"""Device-side batches (lengthgen.engine): valid samples, the host's layout, the host's laws.

The device samplers must be drop-in replacements for the tasks' numpy samplers, so every check
here compares with the host: samples are valid by the task's own reference (solve, accepts, the
regex oracles of test_languages_dfa), rows are laid out exactly as host `sample` lays out the
same inputs (fed through host code paths), and the laws pass chi-square goodness-of-fit tests
against the exact law (computed here from combinatorics, not from the samplers' tables; the
p-value is scipy.stats.chi2's). Two deliberately wrong samplers show that the tests have the
power to fail. Everything is seeded, so a pass is a pass forever; each test rejects at p = 1e-4,
its false-alarm rate for a right sampler.
"""
import itertools
import math
from collections import Counter

import numpy as np
import pytest
import torch
from scipy.stats import chi2

from lengthgen.engine import rng
from lengthgen.engine.device_data import (DeviceBatch, DeviceSampler, LanguageSampler,
                                          SortSampler, device_sampler, real_lengths)
from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task, task_ids
from lengthgen.tasks.algorithmic import TASKS, AlgorithmicTask
from lengthgen.tasks.izzo import RegressionTask
from lengthgen.tasks.languages import Language
from lengthgen.tasks.metadata import language_ids
from test_languages_dfa import ORACLES

ALGORITHMIC = sorted(TASKS)
LANGUAGE_IDS = language_ids()
P_MIN = 1e-4   # the false-alarm rate: a right sampler fails a law test once in 10,000


# --- chi-square ----------------------------------------------------------------------------------

def goodness_of_fit(observed: Counter, law: dict) -> tuple[float, float]:
    """(statistic, p-value) of Pearson's chi-square test of the counts against the law
    {outcome: probability}; cells expected below 5 are pooled. An outcome outside the law's
    support fails at once."""
    outside = set(observed) - {k for k, p in law.items() if p > 0}
    assert not outside, f"outcomes of probability 0: {sorted(outside)[:5]}"
    total = sum(observed.values())
    cells, pooled_o, pooled_e = [], 0, 0.0
    for outcome, p in law.items():
        if total * p >= 5:
            cells.append((observed.get(outcome, 0), total * p))
        else:
            pooled_o, pooled_e = pooled_o + observed.get(outcome, 0), pooled_e + total * p
    if pooled_e > 0:
        cells.append((pooled_o, pooled_e))
    stat = sum((o - e) ** 2 / e for o, e in cells)
    if len(cells) < 2:   # one cell holds every outcome: nothing to test beyond the support
        return stat, 1.0
    return stat, float(chi2.sf(stat, len(cells) - 1))


def assert_law(observed, law):
    stat, p = goodness_of_fit(Counter(observed), law)
    assert p > P_MIN, f"chi-square {stat:.1f} on {len(law)} cells: p = {p:.2e}"
    return stat, p


# --- drawing ------------------------------------------------------------------------------------

def draw(task, n_items, batch_size, lo, hi, seed=0, step=0, width=None) -> DeviceBatch:
    seeds = torch.arange(seed, seed + n_items, dtype=torch.int64)
    steps = torch.full((n_items,), step, dtype=torch.int64)
    width = task.max_tokens(hi) if width is None else width
    return device_sampler(task).sample(seeds, steps, batch_size, lo, hi, width)


def flat(batch: DeviceBatch):
    """inputs, targets, mask [rows, W] and lengths [rows] as numpy."""
    w = batch.inputs.shape[-1]
    return (batch.inputs.reshape(-1, w).numpy(), batch.targets.reshape(-1, w).numpy(),
            batch.mask.reshape(-1, w).numpy(), batch.lengths.reshape(-1).numpy())


def input_tokens(task, batch) -> list[list[str]]:
    """Each row's input symbols (Len of them), as the task's vocabulary tokens."""
    inputs, _, _, lengths = flat(batch)
    return [[task.vocab[i] for i in row[1:n + 1]] for row, n in zip(inputs, lengths)]


# --- the random number generator ----------------------------------------------------------------

def _lowbias32(x):
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def _reference_bits32(*keys):
    """The documented construction in plain Python integers."""
    state = rng._INIT
    for k in keys:
        k &= 2 ** 64 - 1
        word = (k & 0xFFFFFFFF) ^ (((k >> 32) * rng._FOLD) & 0xFFFFFFFF)
        state = _lowbias32(state ^ word)
    return state


def test_bits32_is_the_documented_hash_without_overflow():
    """Against plain Python integers, on keys that reach every bit (64-bit and negative
    components too): equal values mean no int64 product overflowed."""
    g = np.random.default_rng(0)
    a = [int(v) for v in g.integers(-2 ** 63, 2 ** 63 - 1, size=400, dtype=np.int64)]
    b = [int(v) for v in g.integers(0, 2 ** 32, size=400)] + [0, 2 ** 32 - 1, 2 ** 31]
    a += [0, -1, 2 ** 63 - 1]
    got = rng.bits32(torch.tensor(a), 7, torch.tensor(b)).tolist()
    assert got == [_reference_bits32(x, 7, y) for x, y in zip(a, b)]
    # Python ints and tensors give the same value
    assert rng.bits32(2 ** 40 + 3, -5).item() == rng.bits32(torch.tensor(2 ** 40 + 3),
                                                              torch.tensor(-5)).item()


def test_bits32_looks_uniform_and_every_component_matters():
    keys = (torch.tensor(11), torch.tensor(3), rng.STREAM_SYMBOL, torch.arange(1 << 15))
    h = rng.bits32(*keys)
    assert 0 <= int(h.min()) and int(h.max()) < 2 ** 32
    uniform256 = {v: 1 / 256 for v in range(256)}
    assert_law((h >> 24).tolist(), uniform256)          # top 8 bits
    assert_law((h & 255).tolist(), uniform256)          # low 8 bits
    for i in range(len(keys)):                          # change one component at a time
        changed = list(keys)
        changed[i] = changed[i] + 1
        assert (rng.bits32(*changed) != h).float().mean() > 0.999
    # avalanche: flipping one bit of a component flips about half of the 32 output bits
    x = torch.arange(4096)
    for bit in (0, 7, 31, 40):
        flips = rng.bits32(5, x) ^ rng.bits32(5, x ^ (1 << bit))
        ones = sum(((flips >> k) & 1).sum().item() for k in range(32)) / len(x)
        assert abs(ones - 16) < 0.5, (bit, ones)


def test_stream_constants_are_distinct():
    streams = {name: value for name, value in vars(rng).items() if name.startswith("STREAM_")}
    assert len(streams) >= 7 and len(set(streams.values())) == len(streams)


def test_uniform_and_below():
    u = rng.uniform(1, rng.STREAM_ORDER, torch.arange(1 << 14))
    assert u.dtype == torch.float64 and 0 <= float(u.min()) and float(u.max()) < 1
    assert torch.equal(u * 2 ** 53, torch.floor(u * 2 ** 53))     # multiples of 2**-53
    assert ((u * 2 ** 53) % 2).sum() > 1000                          # and the last bit is used
    assert_law(torch.floor(u * 100).long().tolist(), {v: 0.01 for v in range(100)})
    high = torch.tensor([1, 2, 26, 1000])[:, None]
    b = rng.below(high, 2, torch.arange(5000))
    assert (b >= 0).all() and (b < high).all() and (b[0] == 0).all()
    assert_law(b[2].tolist(), {v: 1 / 26 for v in range(26)})


# --- which tasks have a sampler -----------------------------------------------------------------

def test_every_algorithmic_task_and_language_has_a_sampler_and_no_other_task():
    # (and Izzo et al.'s regression tasks: tests/test_device_regression.py)
    for task_id in task_ids():
        task = get_task(task_id)
        sampler = device_sampler(task)
        if isinstance(task, (AlgorithmicTask, Language, RegressionTask)):
            assert isinstance(sampler, DeviceSampler), task_id
        else:
            assert sampler is None, task_id
    assert len(ALGORITHMIC) == 8 and len(LANGUAGE_IDS) == 18


def test_bad_arguments_are_clear_errors():
    task = get_task("sort")
    sampler = device_sampler(task)
    seeds = steps = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(LengthgenError, match="width"):
        sampler.sample(seeds, steps, 4, 1, 10, task.max_tokens(10) - 1)
    with pytest.raises(LengthgenError, match="no input"):
        sampler.sample(seeds, steps, 4, 151, 160, 400)
    with pytest.raises(LengthgenError, match="impossible"):
        sampler.sample(seeds, steps, 4, 10, 5, 400)
    with pytest.raises(LengthgenError, match="no member"):
        device_sampler(get_task("abcde_plus")).sample(seeds, steps, 4, 1, 4, 10)


# --- every sample is valid and laid out as the host lays it out ---------------------------------

def _support_ok(task_id, x: list[str]) -> bool:
    """The input law's support, written from the tasks' docstrings."""
    n = len(x)
    if task_id in ("binary_majority", "binary_majority_interleave"):
        strings = [x] if task_id == "binary_majority" else [x[j::3] for j in range(3)]
        return n % (1 if task_id == "binary_majority" else 3) == 0 and all(
            set(s) <= {"0", "1"} and 2 * s.count("1") != len(s) for s in strings)
    if task_id == "majority":
        counts = sorted(Counter(x).values(), reverse=True)
        return set(x) <= set("abcdefghijklmnopqrstuvwxyz") and (len(counts) == 1
                                                                 or counts[0] > counts[1])
    if task_id in ("sort", "copy_unique"):
        return len(set(x)) == n and all(0 <= int(t) < 150 for t in x)
    if task_id == "copy_repeat":
        return set(x) <= {"a", "b"}
    if task_id == "parity_task":
        return set(x) <= {"0", "1"}
    if task_id == "addition":
        plus = x.index("+") if "+" in x else -1
        return (x.count("+") == 1 and x.count("=") == 1 and x[-1] == "=" and
                1 <= plus <= n - 3 and set(x[:plus] + x[plus + 1:-1]) <= {"0", "1"})
    raise KeyError(task_id)


def _host_batch_for(task, length: int, rows: np.ndarray):
    """Host `sample` at Len = length on exactly these inputs / codes: the draw is replaced,
    everything after it (answers, layout, states, classes) is the host's own code."""
    k = len(rows)
    if isinstance(task, Language):
        codes = rows - 2
        states = np.zeros((k, length + 1), dtype=np.int64)
        states[:, 0] = task.dfa.start
        for t in range(length):
            states[:, t + 1] = task.dfa.delta[states[:, t], codes[:, t]]
        task._sample_codes = lambda _rng, n, m: (codes, states)
    else:
        task._draw = lambda _rng, n, m: rows.copy()
    try:
        return task.sample(np.random.default_rng(0), k, length, length)
    finally:
        del task.__dict__["_sample_codes" if isinstance(task, Language) else "_draw"]


def _check_against_host(task, batch, lo, hi):
    inputs, targets, mask, lengths = flat(batch)
    width = inputs.shape[1]
    assert batch.inputs.dtype == batch.targets.dtype == torch.int64
    assert batch.mask.dtype == torch.bool and batch.lengths.dtype == torch.int64
    assert set(lengths.tolist()) <= set(task.feasible_lengths(lo, hi))
    n_real = real_lengths(batch).reshape(-1).numpy()
    assert (n_real == (inputs != 0).sum(1)).all()
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        host = _host_batch_for(task, int(length), inputs[rows, 1:length + 1])
        w = host.inputs.shape[1]
        assert w <= width
        np.testing.assert_array_equal(inputs[rows, :w], host.inputs)
        np.testing.assert_array_equal(targets[rows, :w], host.targets)
        np.testing.assert_array_equal(mask[rows, :w], host.loss_mask)
        assert not inputs[rows, w:].any() and not targets[rows, w:].any()
        assert not mask[rows, w:].any()
        assert (n_real[rows] == (host.inputs != 0).sum(1)).all()


@pytest.mark.parametrize("task_id", ALGORITHMIC)
@pytest.mark.parametrize("lo,hi", [(1, 20), (40, 61)])
def test_algorithmic_samples_are_valid_and_laid_out_as_the_host(task_id, lo, hi):
    task = get_task(task_id)
    lo = max(lo, task.min_len)
    batch = draw(task, 3, 40, lo, hi, seed=hi, step=2, width=task.max_tokens(hi) + 3)
    inputs, targets, _, lengths = flat(batch)
    for row, x in enumerate(input_tokens(task, batch)):
        assert len(x) == lengths[row] and _support_ok(task_id, x), x
        # the whole row is the formatted sequence: the answer is task.solve's
        s = [task.index[t] for t in task.format(x)]
        n = len(s) - 1
        assert inputs[row, :n].tolist() == s[:-1] and targets[row, :n].tolist() == s[1:]
    _check_against_host(task, batch, lo, hi)


@pytest.mark.parametrize("task_id", ["sort", "copy_unique"])
def test_all_150_numbers_at_the_longest_length(task_id):
    task = get_task(task_id)
    batch = draw(task, 2, 4, 148, 150)
    for x in input_tokens(task, batch):
        assert _support_ok(task_id, x)
    assert 150 in batch.lengths.reshape(-1).tolist()
    _check_against_host(task, batch, 148, 150)


@pytest.mark.parametrize("language_id", LANGUAGE_IDS)
def test_language_samples_are_members_laid_out_as_the_host(language_id):
    task = get_task(language_id)
    lo, hi = 1, 40
    batch = draw(task, 3, 40, lo, hi, step=1, width=hi + 5)
    inputs, targets, mask, lengths = flat(batch)
    for row, x in enumerate(input_tokens(task, batch)):
        w = "".join(x)
        assert len(w) == lengths[row] and ORACLES[language_id](w) and task.accepts(w), w
        n = len(w)
        classes = [task.state_class[task.dfa.run(w[:t])] for t in range(n + 1)]
        assert targets[row, :n + 1].tolist() == classes and not targets[row, n + 1:].any()
        assert mask[row].tolist() == [t <= n for t in range(inputs.shape[1])]
    _check_against_host(task, batch, lo, hi)


# --- laws ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("task_id,lo,hi", [
    ("binary_majority_interleave", 1, 50), ("addition", 1, 50), ("sort", 1, 50),
    ("aa_star", 1, 50), ("abab_star", 1, 50), ("abcde_plus", 1, 50), ("d4", 1, 50),
    ("tomita2", 3, 50)])
def test_lengths_are_uniform_over_the_feasible_ones(task_id, lo, hi):
    task = get_task(task_id)
    feasible = task.feasible_lengths(lo, hi)
    if task_id != "sort":   # sort is the control: every length is feasible
        assert len(feasible) < hi - lo + 1
    lengths = draw(task, 64, 64, lo, hi, seed=100).lengths.reshape(-1).tolist()
    assert_law(lengths, {n: 1 / len(feasible) for n in feasible})


def _members(language_id: str, n: int) -> list[str]:
    alphabet = get_task(language_id).alphabet
    return [w for w in map("".join, itertools.product(alphabet, repeat=n))
            if ORACLES[language_id](w)]


def _short_length(task) -> int | None:
    """A short length with a handful of members, to test the whole law of the strings."""
    return next((n for n in range(1, 30) if 6 <= task.count_members(n) <= 70), None)


def _string_counts(task, n, draws, seed=0, sampler=None):
    sampler = sampler or device_sampler(task)
    items = -(-draws // 64)
    seeds = torch.arange(seed, seed + items)
    batch = sampler.sample(seeds, torch.zeros_like(seeds), 64, n, n, n + 1)
    return Counter(map("".join, input_tokens(task, batch)))


@pytest.mark.parametrize("language_id",
                         [i for i in LANGUAGE_IDS if _short_length(get_task(i)) is not None])
def test_language_strings_are_uniform_among_the_members_of_their_length(language_id):
    task = get_task(language_id)
    n = _short_length(task)
    members = _members(language_id, n)
    assert len(members) == task.count_members(n)
    counts = _string_counts(task, n, 60 * len(members))
    assert set(counts) == set(members)
    assert_law(counts.elements(), {w: 1 / len(members) for w in members})


def test_parity_task_number_of_ones_and_strings():
    task = get_task("parity_task")
    ones = [x.count("1") for x in input_tokens(task, draw(task, 40, 64, 10, 10))]
    assert_law(ones, {k: 1 / 11 for k in range(11)})
    # the whole law at Len 4: P(w) = 1 / (5 C(4, #1))
    strings = ["".join(x) for x in input_tokens(task, draw(task, 40, 64, 4, 4, seed=7))]
    assert_law(strings, {"".join(w): 1 / (5 * math.comb(4, w.count("1")))
                         for w in itertools.product("01", repeat=4)})


def test_binary_majority_counts_and_strings():
    task = get_task("binary_majority")
    for n in (10, 7):
        ones = [x.count("1") for x in input_tokens(task, draw(task, 40, 64, n, n, seed=n))]
        z = 2 ** n - (math.comb(n, n // 2) if n % 2 == 0 else 0)
        assert_law(ones, {k: (0 if 2 * k == n else math.comb(n, k)) / z for k in range(n + 1)})
    tie_free = ["".join(w) for w in itertools.product("01", repeat=4) if w.count("1") != 2]
    strings = ["".join(x) for x in input_tokens(task, draw(task, 20, 64, 4, 4, seed=3))]
    assert_law(strings, {w: 1 / 10 for w in tie_free})


def test_binary_majority_interleave_three_independent_tie_free_strings():
    task = get_task("binary_majority_interleave")
    xs = input_tokens(task, draw(task, 40, 64, 12, 12, seed=5))
    tie_free = ["".join(w) for w in itertools.product("01", repeat=4) if w.count("1") != 2]
    for j in range(3):
        assert_law(["".join(x[j::3]) for x in xs], {w: 1 / 10 for w in tie_free})
    answers = ["".join(task.solve(x)) for x in xs]  # independent strings: 8 equally likely
    assert_law(answers, {"".join(a): 1 / 8 for a in itertools.product("01", repeat=3)})


def _majority_pattern_law(n: int, letters: int = 26) -> dict:
    """P(sorted letter counts = pattern) for a string uniform among those of length n whose
    top count is unique: (number of strings with the pattern) / (all such strings)."""
    weights = {}
    for k in range(1, n + 1):
        for parts in itertools.combinations_with_replacement(range(n, 0, -1), k):
            if sum(parts) != n or (k > 1 and parts[0] == parts[1]):
                continue
            arrangements = math.factorial(n) // math.prod(map(math.factorial, parts))
            labelings = math.perm(letters, k) // math.prod(
                map(math.factorial, Counter(parts).values()))
            weights[parts] = arrangements * labelings
    total = sum(weights.values())
    return {p: w / total for p, w in weights.items()}


def test_majority_law():
    task = get_task("majority")
    xs = input_tokens(task, draw(task, 40, 64, 1, 50, seed=11))
    assert_law([task.solve(x)[0] for x in xs], {c: 1 / 26 for c in task.symbols})
    for n in (2, 4, 6):   # rejection gives the conditional law, not "fix the tie somehow"
        xs = input_tokens(task, draw(task, 40, 64, n, n, seed=n))
        patterns = [tuple(sorted(Counter(x).values(), reverse=True)) for x in xs]
        assert_law(patterns, _majority_pattern_law(n))


def test_addition_split_and_bits():
    task = get_task("addition")
    n = 12
    xs = input_tokens(task, draw(task, 40, 64, n, n, seed=2))
    assert_law([x.index("+") for x in xs], {k: 1 / (n - 3) for k in range(1, n - 2)})
    ones = [x.count("1") for x in xs]   # n - 2 uniform independent operand bits
    assert_law(ones, {k: math.comb(n - 2, k) / 2 ** (n - 2) for k in range(n - 1)})


def test_copy_repeat_symbols_are_independent_and_uniform():
    task = get_task("copy_repeat")
    xs = input_tokens(task, draw(task, 40, 64, 8, 8, seed=4))
    patterns = {"".join(w): 1 / 16 for w in itertools.product("ab", repeat=4)}
    assert_law(["".join(x[:4]) for x in xs], patterns)
    assert_law(["".join(x[::2]) for x in xs], patterns)


def test_sort_and_copy_unique_numbers():
    uniform150 = {str(v): 1 / 150 for v in range(150)}
    task = get_task("sort")
    xs = input_tokens(task, draw(task, 64, 64, 1, 50, seed=9))
    stat, _ = assert_law([x[0] for x in xs], uniform150)
    assert stat < 200   # about 149 +- 17 for a uniform first number
    xs = input_tokens(get_task("copy_unique"), draw(get_task("copy_unique"), 30, 64, 150, 150))
    assert_law([x[-1] for x in xs], uniform150)
    assert_law([x[75] for x in xs], uniform150)


# --- the tests have power: deliberately wrong samplers fail them ---------------------------------

class _FewBitKeysSort(SortSampler):
    """A plausible bug: sort keys of 8 random bits. Ties are broken by position (stable sort),
    so small numbers come first too often."""

    def _draw(self, key, lengths, longest):
        keys = rng.bits32(key[..., None], rng.STREAM_ORDER, torch.arange(150)) >> 24
        return 4 + torch.argsort(keys, dim=-1, stable=True)[..., :longest]


class _NaiveWalk(LanguageSampler):
    """A plausible bug: each next symbol uniform among those that keep acceptance reachable
    (instead of in proportion to their numbers of completions)."""

    def _table(self, longest):
        counts = self.task.dfa.path_counts(longest)
        delta = self.task.dfa.delta.tolist()
        cum = torch.ones(longest + 1, len(delta), len(delta[0]), dtype=torch.float64)
        for m in range(1, longest + 1):
            for q, row in enumerate(delta):
                ok = [counts[m - 1][r] > 0 for r in row]
                if any(ok):
                    cum[m, q] = torch.tensor(np.cumsum(ok) / sum(ok))
        return cum


def test_the_law_tests_have_power():
    uniform150 = {str(v): 1 / 150 for v in range(150)}
    task = get_task("sort")
    seeds = torch.arange(9, 9 + 64)
    batch = _FewBitKeysSort(task).sample(seeds, torch.zeros_like(seeds), 64, 1, 50,
                                         task.max_tokens(50))
    stat, p = goodness_of_fit(Counter(x[0] for x in input_tokens(task, batch)), uniform150)
    assert p < 1e-8, (stat, p)    # chi-square about 300 on 149 degrees of freedom
    good, _ = goodness_of_fit(Counter(x[0] for x in input_tokens(task, draw(task, 64, 64, 1, 50,
                                                                            seed=9))),
                              uniform150)
    assert good < 200 < 250 < stat   # (the right sampler: about 130)
    language = get_task("d3")
    n = _short_length(language)
    members = _members("d3", n)
    counts = _string_counts(language, n, 60 * len(members), sampler=_NaiveWalk(language))
    _, p = goodness_of_fit(counts, {w: 1 / len(members) for w in members})
    assert p < 1e-10


# --- determinism --------------------------------------------------------------------------------

@pytest.mark.parametrize("task_id", ["majority", "addition", "binary_majority", "tomita3", "d12"])
def test_rows_depend_only_on_seed_step_and_row(task_id):
    task = get_task(task_id)
    sampler = device_sampler(task)
    width = task.max_tokens(30) + 2
    seeds, steps = torch.tensor([5, 9, 11, 5]), torch.tensor([3, 3, 4, 4])
    big = sampler.sample(seeds, steps, 24, 1, 30, width)
    # item (11, 4) alone, with fewer rows, among other items, in another position
    alone = sampler.sample(torch.tensor([11]), torch.tensor([4]), 10, 1, 30, width)
    mixed = sampler.sample(torch.tensor([2, 11]), torch.tensor([8, 4]), 16, 1, 30, width)
    for field in ("inputs", "targets", "mask", "lengths"):
        ref = getattr(big, field)[2]
        assert torch.equal(getattr(alone, field)[0], ref[:10])
        assert torch.equal(getattr(mixed, field)[1], ref[:16])
        assert torch.equal(getattr(sampler.sample(seeds, steps, 24, 1, 30, width), field),
                           getattr(big, field))                       # the same call again
    # a wider batch only pads
    wide = sampler.sample(seeds, steps, 24, 1, 30, width + 7)
    assert torch.equal(wide.inputs[..., :width], big.inputs) and not wide.inputs[..., width:].any()
    # other steps and other seeds give other batches
    for a, b in ((0, 1), (0, 3), (2, 3)):     # (5,3)/(9,3): seeds; (5,3)/(5,4): steps
        assert (big.inputs[a] != big.inputs[b]).any(dim=-1).float().mean() > 0.6


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("task_id", ALGORITHMIC + LANGUAGE_IDS)
def test_cuda_batches_are_bit_identical_to_cpu(task_id):
    task = get_task(task_id)
    sampler = device_sampler(task)
    seeds, steps = torch.arange(8) * 1000 + 7, torch.arange(8) + 123456
    cpu = sampler.sample(seeds, steps, 32, 1, 50, task.max_tokens(50))
    gpu = sampler.sample(seeds.cuda(), steps.cuda(), 32, 1, 50, task.max_tokens(50))
    for field in ("inputs", "targets", "mask", "lengths"):
        assert torch.equal(getattr(gpu, field).cpu(), getattr(cpu, field)), field
