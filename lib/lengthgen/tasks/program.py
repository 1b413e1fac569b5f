"""The task a recognizer defines: output its verdict on the prefix read so far, at every position.

A C-RASP program (or any recognizer) computes, at every position, whether the prefix read so far
is accepted. As a task, the model reads <bos> w_1..w_n and outputs at position t (t = 0..n) the
verdict on w_1..w_t: class 1 for accepted, 0 for not. For a language of the library this is the
end-of-string part of the next-symbol sets that Fig. 1 trains on; a reader's program gives no
next-symbol sets (it cannot say which prefixes can still be extended), so its verdicts are the
whole task.

The verdicts come from a function given to the task, `verdicts(ids) -> bool [B, n + 1]` on a
batch of encoded strings of one length (the interpreter's `accept_batch`, lengthgen.crasp.task):
this layer knows nothing of C-RASP. It is called on whole batches, never one symbol at a time.

Strings: uniform strings make most programs' verdicts nearly constant (a uniform string of
length 100 is almost never a Dyck word), so the task draws them *balanced*: each string is given
a wanted verdict by a fair coin, then drawn among the strings of its length whose verdict at the
last position is that one, by rejection from pools of candidates. Half of a pool's rows are
uniform strings; the other half draw their symbols i.i.d. from frequencies of their own, drawn
uniformly from the simplex (a Dirichlet(1, ..., 1) draw per row), so that verdicts that depend on
how often symbols occur (a majority, "twice as many a's as b's") are found at long lengths too,
where uniform strings almost never reach them. Rejection uses the prefixes: one pool row of the
longest length serves any shorter length (a prefix of such a row is drawn the same way), and its
verdicts on all prefixes come from one call. A wanted verdict that is not found within the
rejection budget (some verdicts are rare, some impossible at some lengths) gets a uniform string
instead, so the share is *toward* half; the task records the sampler's name, and callers
measure the accepted share they got. The uniform sampler (UNIFORM) draws uniform strings only.

Score: Fig. 1's rule and bins. A string counts only if every position is right; training on Len
1..50, testing on 1-50, 51-100 and 101-150.
"""
import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks.base import PAD, Batch, Task

BOS = "<bos>"
N_SPECIALS = 2                         # <pad>, <bos>; symbol ids follow
TRAIN_RANGE = (1, 50)                  # Fig. 1's training lengths
FIG1_BINS = ((1, 50), (51, 100), (101, 150))
BALANCED = "balanced-last-position"    # the sampler's name in records
UNIFORM = "uniform"
SAMPLERS = (BALANCED, UNIFORM)
# Rejection rounds: round r draws POOL_FACTOR x 2^r pool rows per request still open (at least
# POOL_MIN, at most POOL_MAX), so a rare verdict gets about POOL_FACTOR x 2^ROUNDS tries in a
# few numpy calls, and an impossible one (an odd-length Dyck word) costs a few rounds, not many.
POOL_FACTOR = 8
POOL_MIN = 64
POOL_MAX = 4096
ROUNDS = 4


class VerdictTask(Task):
    """Per-position verdicts of a recognizer over `alphabet` (see the module docstring)."""

    def __init__(self, task_id: str, alphabet, verdicts, sampler: str = BALANCED,
                 train_range=TRAIN_RANGE, test_bins=FIG1_BINS):
        if sampler not in SAMPLERS:
            raise LengthgenError(f"unknown sampler {sampler!r}; valid: {', '.join(SAMPLERS)}")
        if not alphabet:
            raise LengthgenError(f"{task_id}: the alphabet is empty")
        self.id = task_id
        self.alphabet = tuple(alphabet)
        self.verdicts = verdicts
        self.sampler = sampler
        self.vocab = (PAD, BOS) + self.alphabet
        self.n_classes = 2
        self.train_range = tuple(train_range)
        self.test_bins = tuple(tuple(b) for b in test_bins)

    def class_names(self) -> list[str]:
        return ["rejected", "accepted"]

    def max_tokens(self, length: int) -> int:
        return length + 1

    def feasible_lengths(self, min_len: int, max_len: int) -> list[int]:
        self.check_length_range(min_len, max_len)
        return list(range(min_len, max_len + 1))

    # --- labels ------------------------------------------------------------------------------
    def labels(self, codes: np.ndarray) -> np.ndarray:
        """Verdict classes on every prefix of a batch of strings of one length (symbol indices
        [B, n]): int64 [B, n + 1], column t = the prefix of length t (1 accepted, 0 not)."""
        codes = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        out = np.asarray(self.verdicts(codes))
        if out.shape != (codes.shape[0], codes.shape[1] + 1):
            raise LengthgenError(f"{self.id}: the verdicts of {codes.shape[0]} strings of length "
                                 f"{codes.shape[1]} have shape {out.shape}, expected "
                                 f"{(codes.shape[0], codes.shape[1] + 1)}")
        return out.astype(np.int64)

    # --- strings -----------------------------------------------------------------------------
    def draw(self, rng: np.random.Generator, lengths) -> tuple[np.ndarray, np.ndarray]:
        """Strings of the given lengths from the task's sampler: symbol indices [B, longest]
        (0 after each string's end) and verdict classes [B, longest + 1] (0 after t = length)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        k, longest = len(lengths), int(lengths.max(initial=0))
        codes = np.zeros((k, longest), dtype=np.int64)
        labels = np.zeros((k, longest + 1), dtype=np.int64)
        open_rows = np.arange(k)
        if self.sampler == BALANCED:
            want = (rng.random(k) < 0.5).astype(np.int64)
            for round_ in range(ROUNDS):
                open_rows = self._fill(rng, lengths, want, open_rows, codes, labels, round_)
                if len(open_rows) == 0:
                    break
        if len(open_rows):   # uniform strings: the sampler's fallback (or its whole law)
            self._fill(rng, lengths, None, open_rows, codes, labels)
        return codes, labels

    def _fill(self, rng, lengths, want, open_rows, codes, labels, round_=0) -> np.ndarray:
        """One rejection round: a pool of uniform strings of the longest open length, labelled
        on all prefixes at once; each open request takes an unused pool row whose verdict at
        its length is the wanted one (any row when want is None). Returns the rows still open."""
        width = int(lengths[open_rows].max())
        size = len(open_rows) if want is None else \
            min(POOL_MAX, max(POOL_MIN, POOL_FACTOR * 2 ** round_ * len(open_rows)))
        pool = self._pool(rng, size, width, mixed=want is not None)
        verdicts = self.labels(pool)
        if want is None:
            taken, sources = open_rows, np.arange(len(open_rows))
        else:
            used = np.zeros(size, dtype=bool)
            taken, sources = [], []
            keys = 2 * lengths[open_rows] + want[open_rows]
            for key in np.unique(keys):
                n, verdict = divmod(int(key), 2)
                rows = open_rows[keys == key]
                found = np.flatnonzero((verdicts[:, n] == verdict) & ~used)[:len(rows)]
                used[found] = True
                taken.append(rows[:len(found)])
                sources.append(found)
            taken, sources = np.concatenate(taken), np.concatenate(sources)
        for n in np.unique(lengths[taken]):   # copy each string's prefix and its verdicts
            at = lengths[taken] == n
            codes[taken[at], :n] = pool[sources[at], :n]
            labels[taken[at], :n + 1] = verdicts[sources[at], :n + 1]
        return np.setdiff1d(open_rows, taken, assume_unique=True)

    def _pool(self, rng, size: int, width: int, mixed: bool) -> np.ndarray:
        """Candidate strings [size, width]: uniform, or (mixed) the second half with symbol
        frequencies of their own (see the module docstring)."""
        k = len(self.alphabet)
        pool = rng.integers(0, k, size=(size, width), dtype=np.int64)
        if mixed and k > 1:
            skewed = size // 2
            cumulative = np.cumsum(rng.dirichlet(np.ones(k), size=skewed), axis=1)
            u = rng.random((skewed, width))
            # the symbol of each position: how many cumulative frequencies its u is above
            pool[size - skewed:] = np.minimum(
                (u[:, :, None] >= cumulative[:, None, :-1]).sum(axis=2), k - 1)
        return pool

    def sample(self, rng: np.random.Generator, batch_size: int, min_len: int,
               max_len: int) -> Batch:
        """Len uniform over [min_len, max_len], then a string of that length from the sampler;
        every position 0..Len is scored."""
        self.check_length_range(min_len, max_len)
        if batch_size < 1:
            raise LengthgenError(f"{self.id}: batch_size must be >= 1, got {batch_size}")
        lengths = rng.integers(min_len, max_len + 1, size=batch_size)
        codes, labels = self.draw(rng, lengths)
        width = int(lengths.max()) + 1
        positions = np.arange(width)
        inside = positions[None, :] <= lengths[:, None]          # <bos> and the symbols
        inputs = np.where(inside, np.concatenate(
            [np.ones((batch_size, 1), dtype=np.int64), codes + N_SPECIALS], axis=1), 0)
        return Batch(inputs, np.where(inside, labels, 0), inside, lengths)

    # --- the score's companions ---------------------------------------------------------------
    @staticmethod
    def batch_verdicts(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per string of a batch: accepted at the last position, accepted at every position,
        rejected at every position (bool [B] each)."""
        last = batch.targets[np.arange(len(batch.lengths)), batch.lengths] == 1
        all_yes = ((batch.targets == 1) | ~batch.loss_mask).all(axis=1)
        all_no = ((batch.targets == 0) | ~batch.loss_mask).all(axis=1)
        return last, all_yes, all_no


def constant_baseline(batches) -> dict:
    """The best constant predictor on these strings, scored by Fig. 1's rule (a string counts
    only if every position is right): a constant verdict is right on the strings whose verdict
    never changes, so it scores max(share always accepted, share always rejected). Also the
    accepted share at the last position. batches: Batch objects of one bin."""
    n = last = all_yes = all_no = 0
    for batch in batches:
        a, y, no = VerdictTask.batch_verdicts(batch)
        n, last, all_yes, all_no = n + len(a), last + int(a.sum()), all_yes + int(y.sum()), \
            all_no + int(no.sum())
    if n == 0:
        raise LengthgenError("the baseline needs at least one string")
    verdict = "accepted" if all_yes >= all_no else "rejected"
    return {"accuracy": max(all_yes, all_no) / n, "constant": verdict,
            "accepted_share": last / n, "n": n}


__all__ = ["BALANCED", "FIG1_BINS", "SAMPLERS", "TRAIN_RANGE", "UNIFORM", "VerdictTask",
           "constant_baseline"]
