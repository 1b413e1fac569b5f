"""Sampling members: right length, members only, every member reachable, uniform; batches."""
import itertools
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.tasks.languages import get_language
from lengthgen.tasks.metadata import LANGUAGES, info, language_ids
from test_languages_dfa import ORACLES

IDS = language_ids()
# The uniformity tests' false-alarm rate: a uniform sampler fails one of them once in 10,000
# (their draws are seeded, so a pass stays a pass).
FALSE_ALARM = 1e-4


def _members_by_enumeration(alphabet, oracle, n):
    return sorted(w for w in map("".join, itertools.product(alphabet, repeat=n)) if oracle(w))


@pytest.mark.parametrize("language_id", IDS)
def test_counts_agree_with_enumeration(language_id):
    language, oracle = get_language(language_id), ORACLES[language_id]
    for n in range(0, 9 if len(language.alphabet) <= 3 else 6):
        assert language.count_members(n) == len(_members_by_enumeration(language.alphabet,
                                                                         oracle, n))


@pytest.mark.parametrize("language_id", IDS)
def test_samples_are_members_of_the_requested_length(language_id):
    language, oracle = get_language(language_id), ORACLES[language_id]
    rng = np.random.default_rng(1)
    for n in language.member_lengths(1, 20) + language.member_lengths(140, 150)[-2:]:
        for w in language.sample_members(rng, n, 5):
            assert len(w) == n and oracle(w), w


@pytest.mark.parametrize("language_id", IDS)
def test_sampler_reaches_every_member_uniformly(language_id):
    """At a small length with several members: every member appears and the counts pass
    Pearson's chi-square test of uniformity at the false-alarm rate FALSE_ALARM."""
    language, oracle = get_language(language_id), ORACLES[language_id]
    n = next((n for n in range(1, 40) if 6 <= language.count_members(n) <= 60), None)
    if n is None:  # only a few members at every length: check all of them at a longer length
        n = max(language.member_lengths(1, 12))
    members = _members_by_enumeration(language.alphabet, oracle, n) if n <= 12 else None
    draws = 80 * language.count_members(n)
    counts = Counter(language.sample_members(np.random.default_rng(2), n, draws))
    if members is not None:
        assert sorted(counts) == members
    m = language.count_members(n)
    if m > 1:   # members never drawn count too, as zeros
        test = chisquare(list(counts.values()) + [0] * (m - len(counts)))
        assert test.pvalue > FALSE_ALARM, (n, m, test)


def test_large_uniformity_by_statistics():
    """At length 100 a uniform member of PARITY has each bit uniform: check the mean."""
    ws = get_language("parity").sample_members(np.random.default_rng(3), 100, 400)
    assert abs(np.mean([w.count("1") for w in ws]) - 50) < 2


def test_member_lengths_skip_lengths_without_members():
    assert get_language("aa_star").member_lengths(1, 10) == [2, 4, 6, 8, 10]
    assert get_language("abab_star").member_lengths(1, 13) == [4, 8, 12]
    assert get_language("abcde_plus").member_lengths(1, 6) == [5, 6]
    assert get_language("tomita1").count_members(150) == 1
    with pytest.raises(LengthgenError, match="no member"):
        get_language("aaaa_star").sample_members(np.random.default_rng(0), 6, 1)
    with pytest.raises(LengthgenError, match="no member"):
        get_task("abcde_plus").sample(np.random.default_rng(0), 4, 1, 4)


@pytest.mark.parametrize("language_id", IDS)
def test_batch_inputs_targets_and_masks(language_id):
    task = get_task(language_id)
    language = get_language(language_id)
    assert task.vocab == ("<pad>", "<bos>") + language.alphabet
    assert task.n_classes == len(task.class_names()) == len(set(task.class_names()))
    assert task.train_range == (1, 50) and task.test_bins == ((1, 50), (51, 100), (101, 150))
    batch = task.sample(np.random.default_rng(4), 32, 1, 30)
    assert set(batch.lengths.tolist()) <= set(language.member_lengths(1, 30))
    assert batch.inputs.shape[1] == task.max_tokens(int(batch.lengths.max()))
    names = task.class_names()
    for row, n in enumerate(batch.lengths.tolist()):
        assert batch.inputs[row, 0] == 1 and not batch.inputs[row, n + 1:].any()
        w = "".join(task.vocab[i] for i in batch.inputs[row, 1:n + 1])
        assert ORACLES[language_id](w)
        assert batch.loss_mask[row].tolist() == [t <= n for t in range(batch.inputs.shape[1])]
        for t in range(n + 1):
            legal = language.legal_next(w[:t])
            assert names[batch.targets[row, t]] == "{" + ",".join(
                s for s in language.alphabet + ("$",) if s in legal) + "}"
        assert "$" in names[batch.targets[row, n]]


def test_sampling_is_deterministic_and_lengths_uniform():
    task = get_task("aa_star")
    a = task.sample(np.random.default_rng(5), 2000, 1, 10)
    b = task.sample(np.random.default_rng(5), 2000, 1, 10)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    assert all(abs(c - 400) < 80 for c in Counter(a.lengths.tolist()).values())


def test_metadata_table():
    assert [i.number for i in LANGUAGES] == list(range(1, 18)) + [None]
    for i in LANGUAGES:
        assert get_language(i.id).alphabet == i.alphabet
        assert (i.dot_depth is not None) == bool(i.star_free)
    # the paper found C-RASP[periodic,local] programs for 13 of the 17 languages
    assert sum(i.crasp_periodic_local == "yes" for i in LANGUAGES if i.number) == 13
    assert info("012_02").crasp_periodic_local == "no" and info("012_02").dot_depth == 2
    assert info("binary_majority_interleave").crasp == "none found"
    with pytest.raises(LengthgenError, match="tomita3"):
        info("tomita33")


def test_uniform_d12_words_of_len_at_most_50_rarely_reach_depth_12_exactly():
    """The chapter's 0.3%, exactly: a D_12 word below depth 12 is a D_11 word, so per length
    the share reaching 12 is 1 - |D_11| / |D_12| (Len uniform over the lengths with members)."""
    from lengthgen.tasks.dfa import DFA
    from lengthgen.tasks.languages import DEFINITIONS
    start, _, accepts = DEFINITIONS["d12"]
    d11 = DFA.from_step("ab", start, lambda depth, s: (lambda d: d if 0 <= d <= 11 else None)(
        depth + (1 if s == "a" else -1)), accepts)
    d12, counts = get_language("d12"), d11.path_counts(50)
    lengths = d12.member_lengths(1, 50)
    share = np.mean([1 - counts[n][d11.start] / d12.count_members(n) for n in lengths])
    assert round(100 * share, 1) == 0.3


def test_full_depth_dyck_draws_uniformly_among_the_words_that_reach_depth_n():
    """The training law of the D_n lead: every word a member of D_3 that reaches depth 3, each
    such word of a length equally likely (chi-square against enumeration, at the false-alarm
    rate FALSE_ALARM), lengths uniform over
    the even ones from 6, and the batch's targets those of D_3 itself."""
    from lengthgen.tasks.languages import FullDepthDyck
    task, d3 = FullDepthDyck(3), get_language("d3")
    depth = lambda w: max(np.cumsum([1 if s == "a" else -1 for s in w]))
    wanted = [w for w in _members_by_enumeration("ab", ORACLES["d3"], 10) if depth(w) == 3]
    words = task.sample_members(np.random.default_rng(0), 10, 200 * len(wanted))
    counts = Counter(words)
    assert set(counts) == set(wanted)
    test = chisquare([counts[w] for w in wanted])
    assert test.pvalue > FALSE_ALARM, test
    assert task.feasible_lengths(1, 12) == [6, 8, 10, 12]
    batch = task.sample(np.random.default_rng(1), 256, 1, 12)
    assert set(batch.lengths.tolist()) == {6, 8, 10, 12}
    for row, n in zip(batch.inputs, batch.lengths):
        word = "".join(task.alphabet[c - 2] for c in row[1:n + 1])
        assert d3.accepts(word) and depth(word) == 3
    for row, target, n in zip(batch.inputs, batch.targets, batch.lengths):   # D_3's own targets
        word = "".join(task.alphabet[c - 2] for c in row[1:n + 1])
        assert target[:n + 1].tolist() == [d3.state_class[d3.dfa.run(word[:t])]
                                           for t in range(n + 1)]
