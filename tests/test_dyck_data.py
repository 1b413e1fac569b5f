"""Bounded Dyck words: counts, uniform sampling, depth bands, prefixes, task batches."""
from collections import Counter
from itertools import product

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.tasks.dyck import (DyckTask, catalan, count_words, decode, deep_prefix, depth,
                                  depth_split, distinct_words, enumerate_words, is_balanced, is_prefix,
                                  sample_words)


def brute_force(n):
    """D_2n by filtering all 4^n strings with a plain counter (independent of the library)."""
    out = []
    for chars in product("()", repeat=2 * n):
        height, ok = 0, True
        for c in chars:
            height += 1 if c == "(" else -1
            ok &= height >= 0
        if ok and height == 0:
            out.append("".join(chars))
    return out


@pytest.mark.parametrize("n", range(0, 8))
def test_enumeration_matches_brute_force_and_catalan(n):
    words = enumerate_words(n)
    assert words == sorted(brute_force(n))
    assert len(words) == catalan(n) == count_words(n)


def test_catalan_values():
    assert [catalan(n) for n in range(11)] == [1, 1, 2, 5, 14, 42, 132, 429, 1430, 4862, 16796]
    assert catalan(16) == 35357670  # the size of D_32 quoted in the paper (about 3.5e7)


@pytest.mark.parametrize("lo,hi", [(0, 2), (3, None), (2, 4), (5, 5)])
def test_depth_band_counts(lo, hi):
    words = enumerate_words(6)
    expected = sum(lo <= depth(w) <= (hi if hi is not None else 99) for w in words)
    assert count_words(6, lo, hi) == expected


def test_uniform_sampler_reaches_every_word_evenly():
    rng = np.random.default_rng(1)
    counts = Counter(sample_words(rng, 4, 14 * 800))
    assert set(counts) == set(enumerate_words(4))
    chi2 = sum((c - 800) ** 2 / 800 for c in counts.values())
    assert chi2 < 40  # 13 degrees of freedom: p < 1e-4 for a uniform sampler


def test_depth_band_sampler_is_uniform_in_band():
    rng = np.random.default_rng(2)
    band = [w for w in enumerate_words(5) if 2 <= depth(w) <= 3]
    counts = Counter(sample_words(rng, 5, len(band) * 400, 2, 3))
    assert set(counts) == set(band)
    assert max(counts.values()) / min(counts.values()) < 1.5


def test_deep_samples_and_prefixes():
    rng = np.random.default_rng(3)
    words = sample_words(rng, 16, 200, min_depth=13)
    assert all(is_balanced(w, 16) and depth(w) >= 13 for w in words)
    for w in words[:50]:
        p = deep_prefix(w, 13, rng)
        assert w.startswith(p) and depth(p) >= 13 and 0 < len(p) < 32 and is_prefix(p, 16)


def test_distinct_words_and_errors():
    rng = np.random.default_rng(4)
    words = distinct_words(rng, 5, 42)
    assert sorted(words) == enumerate_words(5)
    with pytest.raises(LengthgenError):
        distinct_words(rng, 5, 43)
    with pytest.raises(LengthgenError):
        sample_words(rng, 4, 3, min_depth=5)
    with pytest.raises(LengthgenError):
        depth("(]")


def test_balance_checks():
    assert is_balanced("(()())", 3) and not is_balanced("(()())", 4)
    assert not is_balanced("())(()") and not is_balanced("((")
    assert is_prefix("(((", 3) and not is_prefix("((((", 3) and not is_prefix("())", 3)


def test_task_batches_shift_words_by_one():
    rng = np.random.default_rng(5)
    task = DyckTask(4, words=["(()())()", "()()()()"])
    batch = task.sample(rng, 8, 8, 8)
    assert batch.inputs.shape == batch.targets.shape == (8, 8) and batch.loss_mask.all()
    for inp, tgt in zip(batch.inputs, batch.targets):
        assert inp[0] == 1 and (inp[1:] == tgt[:-1]).all()
        assert decode(tgt) in ("(()())()", "()()()()")
    with pytest.raises(LengthgenError):
        task.sample(rng, 2, 9, 10)
    with pytest.raises(LengthgenError):
        DyckTask(2, words=["(()"])


def test_depth_split_separates_by_depth():
    rng = np.random.default_rng(6)
    words = sample_words(rng, 16, 500)
    train, test = depth_split(words, 8)
    assert len(train) + len(test) == 500
    assert max(map(depth, train)) <= 8 < min(map(depth, test))
