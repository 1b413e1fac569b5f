"""The language DFAs against membership rules written independently of them.

The oracles below are regular expressions (re.fullmatch) or direct counting rules taken from
the definitions; the DFAs come from step functions in lengthgen.tasks.languages.
"""
import itertools
import re
from itertools import groupby

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task
from lengthgen.tasks.dfa import DFA
from lengthgen.tasks.languages import get_language
from lengthgen.tasks.metadata import language_ids


def _regex(pattern):
    compiled = re.compile(pattern)
    return lambda w: compiled.fullmatch(w) is not None


def _tomita3(w):
    runs = [(symbol, len(list(run))) for symbol, run in groupby(w)]
    return not any(a == "1" and m % 2 and b == "0" and n % 2
                   for (a, m), (b, n) in zip(runs, runs[1:]))


def _dyck(depth_bound):
    def check(w):
        depth = 0
        for c in w:
            depth += 1 if c == "a" else -1
            if not 0 <= depth <= depth_bound:
                return False
        return depth == 0
    return check


ORACLES = {
    "tomita1": _regex("1*"),
    "tomita2": _regex("(10)*"),
    "tomita3": _tomita3,
    "tomita4": lambda w: "000" not in w,
    "tomita5": lambda w: w.count("0") % 2 == 0 and w.count("1") % 2 == 0,
    "tomita6": lambda w: (w.count("0") - w.count("1")) % 3 == 0,
    "tomita7": _regex("0*1*0*1*"),
    "d2": _dyck(2), "d3": _dyck(3), "d4": _dyck(4), "d12": _dyck(12),
    "aa_star": _regex("(aa)*"),
    "aaaa_star": _regex("(aaaa)*"),
    "abab_star": _regex("(abab)*"),
    "abcde_plus": _regex("a+b+c+d+e+"),
    "ab_d_bc": _regex("[ab]*d[bc]*"),
    "012_02": _regex("[012]*02*"),
    "parity": lambda w: w.count("1") % 2 == 0,
}

# states of the minimal complete DFA, counted by hand from the definitions (dead state included)
EXPECTED_STATES = {"tomita1": 2, "tomita2": 3, "tomita3": 5, "tomita4": 4, "tomita5": 4,
                   "tomita6": 3, "tomita7": 5, "d2": 4, "d3": 5, "d4": 6, "d12": 14,
                   "aa_star": 2, "aaaa_star": 4, "abab_star": 5, "abcde_plus": 7, "ab_d_bc": 3,
                   "012_02": 2, "parity": 2}

ENUMERATION_BUDGET = 40_000  # strings per language in the exhaustive checks


def _count_strings(alphabet, max_length):
    return sum(len(alphabet) ** j for j in range(max_length + 1))


def _max_enumerated_length(alphabet):
    """Longest L such that all strings of length <= L fit the budget (13 for binary)."""
    length = 0
    while _count_strings(alphabet, length + 1) <= ENUMERATION_BUDGET and length < 40:
        length += 1
    return length


def _all_strings(alphabet, max_length):
    for n in range(max_length + 1):
        for letters in itertools.product(alphabet, repeat=n):
            yield "".join(letters)


def test_every_language_has_an_oracle():
    assert sorted(ORACLES) == sorted(language_ids()) and len(language_ids()) == 18


@pytest.mark.parametrize("language_id", sorted(ORACLES))
def test_dfa_agrees_with_oracle_exhaustively_and_on_random_strings(language_id):
    language, oracle = get_language(language_id), ORACLES[language_id]
    max_length = _max_enumerated_length(language.alphabet)
    if len(language.alphabet) <= 2:
        assert max_length >= 12
    for w in _all_strings(language.alphabet, max_length):
        assert language.accepts(w) == oracle(w), w
    rng = np.random.default_rng(0)
    members = [m for n in language.member_lengths(100, 150)[:3]
               for m in language.sample_members(rng, n, 20)]
    for _ in range(150):  # random strings, and members with one symbol changed
        n = int(rng.integers(1, 151))
        w = "".join(rng.choice(list(language.alphabet), size=n))
        assert language.accepts(w) == oracle(w), w
    for m in members:
        i = int(rng.integers(len(m)))
        w = m[:i] + str(rng.choice(list(language.alphabet))) + m[i + 1:]
        assert language.accepts(m) and language.accepts(w) == oracle(w), w


def test_reference_examples():
    tomita3 = get_language("tomita3")
    assert tomita3.accepts("100") and tomita3.accepts("") and tomita3.accepts("0110")
    assert not any(tomita3.accepts(w) for w in ("10", "1000", "1101000"))
    assert get_language("012_02").accepts("1202222") and not get_language("012_02").accepts("021")
    assert get_language("d12").accepts("a" * 12 + "b" * 12)
    assert not get_language("d12").accepts("a" * 13 + "b" * 13)


@pytest.mark.parametrize("language_id", sorted(ORACLES))
def test_dfa_is_minimal(language_id):
    """Every state is reachable and every pair of states is told apart by some suffix, where the
    oracle (not the DFA) confirms the difference."""
    dfa, oracle = get_language(language_id).dfa, ORACLES[language_id]
    assert dfa.n_states == EXPECTED_STATES[language_id]
    access = {dfa.start: ""}  # a shortest string reaching each state
    frontier = [dfa.start]
    while frontier:
        nxt = []
        for q in frontier:
            for s, r in zip(dfa.alphabet, dfa.delta[q].tolist()):
                if r not in access:
                    access[r] = access[q] + s
                    nxt.append(r)
        frontier = nxt
    assert sorted(access) == list(range(dfa.n_states))
    for p, q in itertools.combinations(range(dfa.n_states), 2):
        suffix = _distinguishing_suffix(dfa, p, q)
        assert oracle(access[p] + suffix) != oracle(access[q] + suffix), (p, q)


def _distinguishing_suffix(dfa, p, q):
    seen, frontier = {(p, q)}, [(p, q, "")]
    while frontier:
        nxt = []
        for a, b, suffix in frontier:
            if dfa.accepting[a] != dfa.accepting[b]:
                return suffix
            for s, ra, rb in zip(dfa.alphabet, dfa.delta[a], dfa.delta[b]):
                if (int(ra), int(rb)) not in seen:
                    seen.add((int(ra), int(rb)))
                    nxt.append((int(ra), int(rb), suffix + s))
        frontier = nxt
    raise AssertionError(f"states {p} and {q} are equivalent")


def test_minimization_merges_redundant_states_canonically():
    # a needlessly fine definition of PARITY (count mod 6) gives the same DFA as mod 2
    fine = DFA.from_step("01", 0, lambda q, s: (q + (s == "1")) % 6, lambda q: q % 2 == 0)
    parity = get_language("parity").dfa
    assert fine.n_states == 2
    np.testing.assert_array_equal(fine.delta, parity.delta)
    np.testing.assert_array_equal(fine.accepting, parity.accepting)


@pytest.mark.parametrize("language_id", sorted(ORACLES))
def test_legal_next_agrees_with_brute_force(language_id):
    """s is legal after p iff some member of length <= L starts with p + s, for every prefix p
    short enough that any live state could still reach acceptance within L."""
    language, oracle = get_language(language_id), ORACLES[language_id]
    reach = int(language.dfa.live.sum()) - 1  # bound on the way to acceptance from a live state
    prefix_length = 2
    while (_count_strings(language.alphabet, prefix_length + 2 + reach) <= ENUMERATION_BUDGET
           and prefix_length < 12):
        prefix_length += 1
    max_length = prefix_length + 1 + reach
    members = [w for w in _all_strings(language.alphabet, max_length) if oracle(w)]
    extendable = {m[:i] for m in members for i in range(len(m) + 1)}
    for p in _all_strings(language.alphabet, prefix_length):
        expected = {s for s in language.alphabet if p + s in extendable}
        expected |= {"$"} if oracle(p) else set()
        assert language.legal_next(p) == expected, p


def test_legal_next_examples():
    abcde = get_language("abcde_plus")
    assert abcde.legal_next("") == {"a"} and abcde.legal_next("aab") == {"b", "c"}
    assert abcde.legal_next("abcdee") == {"e", "$"} and abcde.legal_next("abcdea") == set()
    assert get_language("d12").legal_next("a" * 12) == {"b"}
    assert get_language("tomita3").legal_next("10") == {"0"}
    assert get_language("ab_d_bc").legal_next("abd") == {"b", "c", "$"}


def test_bad_symbols_and_ids_are_clear_errors():
    with pytest.raises(LengthgenError, match="not in the alphabet"):
        get_language("tomita1").accepts("12")
    with pytest.raises(LengthgenError, match="tomita1"):
        get_language("tomit1")
    assert get_task("tomita3").id == "tomita3"
