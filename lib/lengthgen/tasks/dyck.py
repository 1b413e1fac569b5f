"""Bounded Dyck words D_2N: one bracket type, every word of length exactly 2N and balanced.

A word is a plain string of '(' and ')'. Its path is the running stack size (the height after
each symbol); its depth is the highest point of that path. Uniform sampling, possibly within
a depth band, walks the path with exact completion counts, so every word in the band is
equally likely (no rejection). Richard (2024) splits D_32 by depth: train on shallow words,
test on prefixes that are deeper than anything seen in training.
"""
from functools import lru_cache
from math import comb

import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks import register
from lengthgen.tasks.base import PAD, Batch, Task

OPEN, CLOSE = "(", ")"
BOS = "<bos>"
VOCAB = (PAD, BOS, OPEN, CLOSE)
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}


def catalan(n: int) -> int:
    """|D_2n| = C(2n, n) / (n + 1)."""
    return comb(2 * n, n) // (n + 1)


def check_brackets(word: str) -> str:
    """The word itself if it only contains '(' and ')', else one clear error."""
    bad = sorted(set(word) - {OPEN, CLOSE})
    if bad:
        raise LengthgenError(f"a Dyck word may only contain '(' and ')'; found {''.join(bad)!r} "
                             f"in {word!r}")
    return word


def path(word: str) -> np.ndarray:
    """Stack size after each symbol (length len(word))."""
    steps = np.array([1 if c == OPEN else -1 for c in check_brackets(word)], dtype=np.int64)
    return np.cumsum(steps)


def depth(word: str) -> int:
    """Maximum stack size reached (0 for the empty word)."""
    return int(path(word).max(initial=0))


def is_prefix(word: str, n: int) -> bool:
    """True iff the word can be completed into a word of D_2n."""
    h = path(word)
    return len(word) <= 2 * n and bool((h >= 0).all()) and int(h[-1] if len(h) else 0) <= 2 * n - len(word)


def is_balanced(word: str, n: int | None = None) -> bool:
    """True iff the word is in D_2n (or is any balanced word when n is None)."""
    if n is not None and len(word) != 2 * n:
        return False
    h = path(word)
    return bool((h >= 0).all()) and int(h[-1] if len(h) else 0) == 0


def enumerate_words(n: int) -> list[str]:
    """Every word of D_2n in lexicographic order ('(' < ')'); meant for small n."""
    if n > 12:
        raise LengthgenError(f"enumerating D_{2 * n} ({catalan(n)} words) is too large; sample instead")
    out = []

    def grow(prefix: str, height: int) -> None:
        left = 2 * n - len(prefix)
        if left == 0:
            out.append(prefix)
            return
        if height < left:
            grow(prefix + OPEN, height + 1)
        if height > 0:
            grow(prefix + CLOSE, height - 1)

    grow("", 0)
    return out


@lru_cache(maxsize=64)
def completion_counts(n: int, min_depth: int = 0, max_depth: int | None = None) -> np.ndarray:
    """counts[pos, h, reached]: how many ways a path at height h after pos symbols ends a word of
    D_2n whose depth lies in [min_depth, max_depth]; reached says min_depth was already hit.

    Exact in float64 up to n = 28 (C_28 < 2^53).
    """
    if n > 28:
        raise LengthgenError("Dyck sampling supports N <= 28 (exact counts in float64)")
    top = 2 * n if max_depth is None else min(max_depth, 2 * n)
    length = 2 * n
    counts = np.zeros((length + 1, top + 2, 2))
    counts[length, 0, 1] = 1.0
    if min_depth <= 0:
        counts[length, 0, 0] = 1.0
    for pos in range(length - 1, -1, -1):
        for h in range(0, top + 1):
            for reached in (0, 1):
                total = 0.0
                if h + 1 <= top:
                    total += counts[pos + 1, h + 1, int(reached or h + 1 >= min_depth)]
                if h > 0:
                    total += counts[pos + 1, h - 1, reached]
                counts[pos, h, reached] = total
    return counts


def count_words(n: int, min_depth: int = 0, max_depth: int | None = None) -> int:
    """|{w in D_2n : min_depth <= depth(w) <= max_depth}|."""
    return int(completion_counts(n, min_depth, max_depth)[0, 0, int(min_depth <= 0)])


def sample_words(rng: np.random.Generator, n: int, count: int, min_depth: int = 0,
                 max_depth: int | None = None) -> list[str]:
    """count words drawn uniformly (with replacement) from D_2n restricted to a depth band."""
    table = completion_counts(n, min_depth, max_depth)
    if table[0, 0, int(min_depth <= 0)] == 0:
        raise LengthgenError(f"no word of D_{2 * n} has depth in [{min_depth}, {max_depth}]")
    top = table.shape[1] - 2
    height = np.zeros(count, dtype=np.int64)
    reached = np.full(count, int(min_depth <= 0))
    chars = np.zeros((count, 2 * n), dtype=bool)  # True = '('
    for pos in range(2 * n):
        up_h = np.minimum(height + 1, top + 1)
        up_reached = np.maximum(reached, (height + 1 >= min_depth).astype(int))
        up = np.where(height + 1 <= top, table[pos + 1, up_h, up_reached], 0.0)
        here = table[pos, height, reached]
        go_up = rng.random(count) * here < up
        chars[:, pos] = go_up
        height = height + np.where(go_up, 1, -1)
        reached = np.where(go_up, up_reached, reached)
    return ["".join(OPEN if c else CLOSE for c in row) for row in chars]


def distinct_words(rng: np.random.Generator, n: int, count: int, min_depth: int = 0,
                   max_depth: int | None = None) -> list[str]:
    """count distinct words, uniform among all sets of that size (a finite training set)."""
    available = count_words(n, min_depth, max_depth)
    if count > available:
        raise LengthgenError(f"asked for {count} distinct words but D_{2 * n} has only {available} "
                             f"of depth in [{min_depth}, {max_depth}]")
    chosen: dict[str, None] = {}
    while len(chosen) < count:
        for w in sample_words(rng, n, 2 * (count - len(chosen)) + 8, min_depth, max_depth):
            if len(chosen) < count:
                chosen.setdefault(w, None)
    return list(chosen)


# Host seconds per symbol of a word `distinct_words` draws (sampling, joining into a string and
# keeping it if new), measured by benchmarks/bench_dyck_drawing.py on 2026-11-28 on the
# project's build machine (AMD EPYC, one core, shared with other work; best of 3): a median of
# 0.073 us per symbol (0.070-0.079 over 2^15-2^17 words of D_32, any depth or depth <= 8, and of
# D_24), so 2.3 us per word of D_32 drawn.
DRAW_SECONDS_PER_SYMBOL = 0.073e-6


def expected_draws(available: int, count: int) -> float:
    """How many words `distinct_words` draws, in expectation, to hold `count` distinct ones of
    `available`: each of its rounds draws 2 x (the words still missing) + 8, of which a share
    1 - exp(-draws / available) of the words not yet held comes out new (uniform draws)."""
    held, drawn = 0.0, 0.0
    for _ in range(64):
        if count - held < 0.5:
            return drawn
        draws = 2 * (count - held) + 8
        new = (available - held) * -np.expm1(-draws / available)
        drawn += draws
        held = min(float(count), held + new)
    # near the whole band, rounds shrink slowly: the coupon collector's draws for the rest,
    # twice (a round draws twice the words it misses)
    return drawn + 2 * available * np.log((available - held + 0.5) / (available - count + 0.5))


def drawing_seconds(n: int, count: int, min_depth: int = 0,
                    max_depth: int | None = None) -> float:
    """About the host seconds `distinct_words(rng, n, count, min_depth, max_depth)` takes.
    The scaling rule: time is proportional to the symbols drawn, expected_draws(words in the
    band, count) x 2n, at DRAW_SECONDS_PER_SYMBOL (the sampler's work per word is one pass
    over its 2n positions, and keeping it a dict insertion). At most 79% of the band drawn,
    one round holds every word (2 x count draws), so the time is linear in count: 4^12 words
    of D_32 take about 78 s, 10^7 words of depth <= 8 about 47 s."""
    available = count_words(n, min_depth, max_depth)
    return DRAW_SECONDS_PER_SYMBOL * 2 * n * expected_draws(available, min(count, available))


def depth_split(words: list[str], train_max_depth: int) -> tuple[list[str], list[str]]:
    """(train, test): words of depth <= train_max_depth, and the deeper rest (the paper's split)."""
    train = [w for w in words if depth(w) <= train_max_depth]
    test = [w for w in words if depth(w) > train_max_depth]
    return train, test


def deep_prefix(word: str, min_depth: int, rng: np.random.Generator) -> str:
    """A prefix of the word that already reached min_depth, cut at a random later point
    (before the last symbol), so that completing it needs depth >= min_depth."""
    h = path(word)
    first = int(np.argmax(h >= min_depth)) if (h >= min_depth).any() else -1
    if first < 0:
        raise LengthgenError(f"{word!r} never reaches depth {min_depth}")
    cut = int(rng.integers(first + 1, len(word)))
    return word[:cut]


def encode(words: list[str]) -> np.ndarray:
    """Token ids [B, len+1]: <bos> then the brackets (all words of one length)."""
    return np.array([[TOKEN_ID[BOS]] + [TOKEN_ID[c] for c in w] for w in words], dtype=np.int64)


def decode(ids) -> str:
    """Brackets from token ids (anything else is dropped)."""
    return "".join(VOCAB[int(i)] for i in ids if VOCAB[int(i)] in (OPEN, CLOSE))


class DyckTask(Task):
    """Next-bracket prediction on D_2N words: from a fixed list (a finite training set), or
    fresh uniform words within a depth band. Input = <bos> + word[:-1], target = word."""

    def __init__(self, n: int, words: list[str] | None = None, min_depth: int = 0,
                 max_depth: int | None = None, task_id: str | None = None):
        self.n = n
        self.words = list(words) if words is not None else None
        if self.words is not None:
            for w in self.words:
                if not is_balanced(w, n):
                    raise LengthgenError(f"{w!r} is not a word of D_{2 * n}")
        self.min_depth, self.max_depth = min_depth, max_depth
        self.id = task_id or f"dyck-{2 * n}"
        self.vocab = VOCAB
        self.n_classes = len(VOCAB)
        self.train_range = (2 * n, 2 * n)
        self.test_bins = ((2 * n, 2 * n),)

    def max_tokens(self, length: int) -> int:
        return length

    def sample(self, rng, batch_size, min_len, max_len) -> Batch:
        self.check_length_range(min_len, max_len)
        if not min_len <= 2 * self.n <= max_len:
            raise LengthgenError(f"{self.id}: every word has length {2 * self.n}, outside "
                                 f"[{min_len}, {max_len}]")
        if self.words is not None:
            words = [self.words[i] for i in rng.integers(0, len(self.words), batch_size)]
        else:
            words = sample_words(rng, self.n, batch_size, self.min_depth, self.max_depth)
        ids = encode(words)
        return Batch(inputs=ids[:, :-1], targets=ids[:, 1:],
                     loss_mask=np.ones((batch_size, 2 * self.n), dtype=bool),
                     lengths=np.full(batch_size, 2 * self.n, dtype=np.int64))


register("dyck-32", lambda: DyckTask(16))
register("dyck-32-depth8", lambda: DyckTask(16, max_depth=8, task_id="dyck-32-depth8"))
