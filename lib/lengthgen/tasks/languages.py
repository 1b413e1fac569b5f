"""The 17 regular languages of Bhattamishra et al. (2020) and PARITY, as next-symbol-set tasks.

Each language is defined by a step function that follows its definition literally (a counter, a
phase, a run length ...; None once the string can never be accepted); `DFA.from_step` turns it
into the minimal DFA. Everything else comes from that DFA:

- targets: after each prefix the model predicts the set of legal next symbols: s is legal iff
  the state reached by s can still reach acceptance, and "$" (end of string) is legal iff the
  current state accepts. Each distinct set at a live state is one output class. (Bhattamishra
  et al.'s hand-made encodings differ in a few places, e.g. Tomita 3; we use this definition.)
- sampling: members only, exactly uniform among the members of the requested length, by
  counting accepting paths (dynamic programming over the DFA with exact integers) and unranking
  a uniform random rank. Lengths with no member are skipped, never padded.
"""
import numpy as np

from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.tasks import register
from lengthgen.tasks.base import PAD, Batch, Task
from lengthgen.tasks.dfa import DFA, END
from lengthgen.tasks.metadata import LANGUAGES

BOS = "<bos>"
N_SPECIALS = 2  # <pad>, <bos>; symbol ids follow


def _tomita3_step(state, s):
    """state = (symbol of the current run, is its length odd, did an odd run of 1s precede it)."""
    run, odd, after_odd_ones = state
    if s == run:
        return run, not odd, after_odd_ones
    if run == "0" and odd and after_odd_ones:
        return None  # an odd run of 0s right after an odd run of 1s has ended
    return s, True, run == "1" and odd


def _tomita3_accepts(state):
    run, odd, after_odd_ones = state
    return not (run == "0" and odd and after_odd_ones)


def _first_phase_from(pattern):
    """Step for pattern[0]* pattern[1]* ...: move to the first phase >= now that reads s."""
    def step(phase, s):
        return next((j for j in range(phase, len(pattern)) if pattern[j] == s), None)
    return step


def _plus_phases(letters):
    """Step for letters[0]+ letters[1]+ ...: stay on the current letter or move to the next."""
    def step(phase, s):
        j = letters.index(s)
        return j if j in (phase, phase + 1) else None
    return step


def _cycle(word):
    """Step for word*: the phase is the position in word; the symbol must be the expected one."""
    return lambda phase, s: (phase + 1) % len(word) if s == word[phase] else None


def _dyck(n):
    """Step for depth-bounded Dyck-1: the depth, which must stay in [0, n]."""
    def step(depth, s):
        depth += 1 if s == "a" else -1
        return depth if 0 <= depth <= n else None
    return step


def _counts_mod(symbol, m):
    """Step counting occurrences of symbol modulo m."""
    return lambda count, s: (count + (s == symbol)) % m


# id -> (start value, step(value, symbol) -> value | None, accepts(value))
DEFINITIONS = {
    "tomita1": (0, lambda q, s: q if s == "1" else None, lambda q: True),
    "tomita2": (0, _cycle("10"), lambda q: q == 0),
    "tomita3": (("", False, False), _tomita3_step, _tomita3_accepts),
    "tomita4": (0, lambda zeros, s: (zeros + 1 if zeros < 2 else None) if s == "0" else 0,
                lambda q: True),
    "tomita5": ((0, 0), lambda q, s: (q[0] ^ (s == "0"), q[1] ^ (s == "1")),
                lambda q: q == (0, 0)),
    "tomita6": (0, lambda q, s: (q + (1 if s == "0" else -1)) % 3, lambda q: q == 0),
    "tomita7": (0, _first_phase_from("0101"), lambda q: True),
    "d2": (0, _dyck(2), lambda depth: depth == 0),
    "d3": (0, _dyck(3), lambda depth: depth == 0),
    "d4": (0, _dyck(4), lambda depth: depth == 0),
    "d12": (0, _dyck(12), lambda depth: depth == 0),
    "aa_star": (0, _counts_mod("a", 2), lambda q: q == 0),
    "aaaa_star": (0, _counts_mod("a", 4), lambda q: q == 0),
    "abab_star": (0, _cycle("abab"), lambda q: q == 0),
    "abcde_plus": (-1, _plus_phases("abcde"), lambda q: q == 4),
    "ab_d_bc": (0, lambda q, s: {(0, "a"): 0, (0, "b"): 0, (0, "d"): 1, (1, "b"): 1,
                                 (1, "c"): 1}.get((q, s)), lambda q: q == 1),
    # the state says whether the last symbol other than 2 is a 0
    "012_02": (False, lambda q, s: {"0": True, "1": False, "2": q}[s], lambda q: q),
    "parity": (0, _counts_mod("1", 2), lambda q: q == 0),
}


class Language(Task):
    """A regular language as a task: inputs <bos> w_1..w_n, targets the legal-next class after
    each prefix w_1..w_t (t = 0..n), all n + 1 positions scored. Samples are members only."""

    def __init__(self, language_id: str):
        meta = {info.id: info for info in LANGUAGES}[language_id]
        start, step, accepts = DEFINITIONS[language_id]
        self.id = language_id
        self.name = meta.name
        self.alphabet = meta.alphabet
        self.dfa = DFA.from_step("".join(self.alphabet), start, step, accepts)
        self.vocab = (PAD, BOS) + self.alphabet
        self.train_range = (1, 50)
        self.test_bins = ((1, 50), (51, 100), (101, 150))
        live = self.dfa.live
        sets = {self.dfa.legal_next(q) for q in range(self.dfa.n_states) if live[q]}
        order = {s: i for i, s in enumerate(self.alphabet + (END,))}
        self.classes = sorted(sets, key=lambda c: (len(c), sorted(order[s] for s in c)))
        self.n_classes = len(self.classes)
        class_id = {c: i for i, c in enumerate(self.classes)}
        # the class of each state's legal-next set (-1 at the dead state: never a target)
        self.state_class = np.array([class_id[self.dfa.legal_next(q)] if live[q] else -1
                                     for q in range(self.dfa.n_states)], dtype=np.int64)
        self._counts: list[list[int]] = []
        self._choices: list[list[list[tuple[int, int, int]]]] = []

    # --- direct API ---------------------------------------------------------------------------
    def accepts(self, string: str) -> bool:
        return self.dfa.accepts(string)

    def legal_next(self, prefix: str) -> frozenset[str]:
        """The symbols (and "$" for end of string) that can follow prefix in some member."""
        return self.dfa.legal_next(self.dfa.run(prefix))

    def class_names(self) -> list[str]:
        return ["{" + ",".join(s for s in self.alphabet + (END,) if s in c) + "}"
                for c in self.classes]

    def count_members(self, length: int) -> int:
        """The number of members of this length (exact)."""
        self._extend(length)
        return self._counts[length][self.dfa.start]

    def member_lengths(self, lo: int, hi: int) -> list[int]:
        """The lengths in [lo, hi] that have at least one member."""
        return [n for n in range(max(lo, 0), hi + 1) if self.count_members(n) > 0]

    def sample_members(self, rng: np.random.Generator, length: int, k: int) -> list[str]:
        """k members of this length, independent and exactly uniform among all its members."""
        codes, _ = self._sample_codes(rng, length, k)
        return ["".join(self.alphabet[c] for c in row) for row in codes]

    # --- Task API -----------------------------------------------------------------------------
    def feasible_lengths(self, min_len: int, max_len: int) -> list[int]:
        """The lengths in the range that have members (an error if there are none)."""
        self.check_length_range(min_len, max_len)
        lengths = self.member_lengths(min_len, max_len)
        if not lengths:
            raise LengthgenError(f"{self.id} has no member with a length in [{min_len}, {max_len}]")
        return lengths

    def max_tokens(self, length: int) -> int:
        return length + 1

    def sample(self, rng: np.random.Generator, batch_size: int, min_len: int,
               max_len: int) -> Batch:
        """Len uniform over the lengths in [min_len, max_len] that have members, then a member
        of that length uniform among all members (so each length, not each string, is equally
        likely). Sequences are padded to the longest in the batch."""
        choices = self.feasible_lengths(min_len, max_len)
        if batch_size < 1:
            raise LengthgenError(f"{self.id}: batch_size must be >= 1, got {batch_size}")
        lengths = rng.choice(np.asarray(choices, dtype=np.int64), size=batch_size)
        width = int(lengths.max()) + 1
        inputs = np.zeros((batch_size, width), dtype=np.int64)
        targets = np.zeros((batch_size, width), dtype=np.int64)
        mask = np.zeros((batch_size, width), dtype=bool)
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            codes, states = self._sample_codes(rng, int(length), len(rows))
            n = int(length)
            inputs[rows, 0] = 1
            inputs[rows, 1:n + 1] = codes + N_SPECIALS
            targets[rows, :n + 1] = self.state_class[states]
            mask[rows, :n + 1] = True
        return Batch(inputs, targets, mask, lengths)

    # --- exact uniform sampling ---------------------------------------------------------------
    def _extend(self, length: int) -> None:
        """Counts and per-state choices for every number of remaining symbols up to length."""
        if length < 0:
            raise LengthgenError(f"{self.id}: a length must be >= 0, got {length}")
        if len(self._counts) > length:
            return
        self._counts = self.dfa.path_counts(max(length, 2 * len(self._counts)))
        delta = self.dfa.delta.tolist()
        self._choices = [[]] + [
            [[(s, r, prev[r]) for s, r in enumerate(row) if prev[r] > 0] for row in delta]
            for prev in self._counts[:-1]]

    def _sample_codes(self, rng, length: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """k uniform members as symbol indices [k, length] and their DFA states [k, length + 1]:
        draw a rank uniformly below the number of members, then spell out the member of that
        rank in the order given by the alphabet (choices[m][q] lists the symbols that keep
        acceptance reachable with m symbols left, each with how many completions it has)."""
        total = self.count_members(length)
        if total == 0:
            raise LengthgenError(f"{self.id} has no member of length {length}")
        codes, states = [], []
        for _ in range(k):
            rank, q = _uniform_below(rng, total), self.dfa.start
            row, path = [], [q]
            for remaining in range(length, 0, -1):
                for s, nxt, count in self._choices[remaining][q]:
                    if rank < count:
                        break
                    rank -= count
                row.append(s)
                path.append(nxt)
                q = nxt
            codes.append(row)
            states.append(path)
        return (np.array(codes, dtype=np.int64).reshape(k, length),
                np.array(states, dtype=np.int64).reshape(k, length + 1))


class FullDepthDyck(Language):
    """D_n trained only on words that reach depth n: Len uniform over the lengths that have such
    a word (the even ones from 2n), then a word uniform among the members of that length that
    reach depth n. The book's law for D_n draws among all members, and many never reach depth n
    (they are words of D_(n-1)); Bhattamishra et al.'s nested generator, which the authors' code
    uses, makes nearly every word reach it. Training on this law tests that difference alone
    (the APE vs NoPE chapter's lead on D_3 and D_4). Not registered: a training law, not a task."""

    def __init__(self, depth: int):
        super().__init__(f"d{depth}")
        self.depth = depth
        self.id = f"d{depth}-full-depth"
        self._open = self.alphabet.index("a")

    def member_lengths(self, lo: int, hi: int) -> list[int]:
        return [n for n in super().member_lengths(lo, hi) if n >= 2 * self.depth]

    def _sample_codes(self, rng, length: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Uniform members of the length, kept when they reach depth n (rejection: uniform
        among those that do)."""
        codes, states, found = [], [], 0
        while found < k:
            c, q = super()._sample_codes(rng, length, k - found)
            depth = np.cumsum(np.where(c == self._open, 1, -1), axis=1).max(axis=1, initial=0)
            keep = depth >= self.depth
            codes.append(c[keep])
            states.append(q[keep])
            found += int(keep.sum())
        return np.concatenate(codes), np.concatenate(states)


def _uniform_below(rng: np.random.Generator, n: int) -> int:
    """An exactly uniform integer in [0, n), also for n beyond 64 bits (rejection sampling)."""
    if n < 2 ** 62:
        return int(rng.integers(n))
    bits = n.bit_length()
    n_bytes = (bits + 7) // 8
    while True:
        r = int.from_bytes(rng.bytes(n_bytes), "little") >> (8 * n_bytes - bits)
        if r < n:
            return r


for _info in LANGUAGES:
    register(_info.id, lambda language_id=_info.id: Language(language_id))


def get_language(language_id: str) -> Language:
    """The language with this id (see metadata.language_ids() for the list)."""
    if language_id not in DEFINITIONS:
        raise unknown_name("language", language_id, DEFINITIONS)
    return Language(language_id)
