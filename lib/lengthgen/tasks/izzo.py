"""The regression tasks of Izzo, Nichani and Lee (2026): SimpleTask and ModPTask (section 5 and
App. B), and an in-context k-gram task for two layers (our design; see KGramTask).

Each example is a string of symbols with one real-valued target, read at its last token: the
batch's loss mask is on at that one position, and `Task.objective` is "regression" (mean
squared error). Every task computes its targets twice: vectorized for batches, and with a plain
per-string `target` used by the tests as the reference.

Len is the number of symbols. There is no <bos> or separator: the model reads x_1..x_T and
answers at x_T, as in the paper's f*(x_{1:T}).
"""
import math

import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks import register
from lengthgen.tasks.base import PAD, Batch, Task

OMEGA_MAX = 100.0   # sin(omega z) with z in [-1, 1]: beyond this a width-256 MLP has no hope
PERIOD_MAX = 64
KGRAM_S_MAX = 16
KGRAM_K_MAX = 5


def _lengths(rng, batch_size, min_len, max_len):
    return rng.integers(min_len, max_len + 1, size=batch_size)


class RegressionTask(Task):
    """Shared batching: symbols are vocabulary ids 1..S (0 is PAD), one target per string."""
    objective = "regression"
    symbols: tuple[str, ...]
    min_len = 1

    def __init__(self, train_max: int = 20):
        self.vocab = (PAD, *self.symbols)
        self.train_range = (self.min_len, train_max)
        self.test_bins = tuple((n, n) for n in (train_max, 2 * train_max, 4 * train_max))

    def max_tokens(self, length: int) -> int:
        return length

    def check_length_range(self, min_len, max_len, smallest=None):
        super().check_length_range(min_len, max_len, self.min_len if smallest is None
                                   else smallest)

    def draw(self, rng: np.random.Generator, lengths: np.ndarray) -> np.ndarray:
        """Strings of the given lengths as symbol values 0..S-1, [B, max length], -1 past each
        string's end. Drawn at full width and then cut, so all rows use the same calls."""
        raise NotImplementedError

    def targets(self, strings: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Target of each row (values 0..S-1, padded with -1), vectorized: [B] or [B, C]."""
        raise NotImplementedError

    def target(self, string) -> float | np.ndarray:
        """Reference: the target of one string of symbol values, written for clarity."""
        raise NotImplementedError

    def sample(self, rng, batch_size, min_len, max_len) -> Batch:
        self.check_length_range(min_len, max_len)
        lengths = _lengths(rng, batch_size, min_len, max_len)
        values = self.draw(rng, lengths)
        values[np.arange(values.shape[1])[None, :] >= lengths[:, None]] = -1
        return self.batch(values, lengths)

    def batch(self, values: np.ndarray, lengths: np.ndarray) -> Batch:
        """The Batch of given strings (symbol values, -1 past each length)."""
        b, t = values.shape
        inputs = np.where(values >= 0, values + 1, 0).astype(np.int64)
        mask = np.zeros((b, t), dtype=bool)
        mask[np.arange(b), lengths - 1] = True
        y = np.asarray(self.targets(values, lengths), dtype=np.float32)
        targets = np.zeros((b, t, *y.shape[1:]), dtype=np.float32)
        targets[np.arange(b), lengths - 1] = y
        return Batch(inputs=inputs, targets=targets, loss_mask=mask,
                     lengths=lengths.astype(np.int64))


class SimpleTask(RegressionTask):
    """f*(x) = sin(omega (c0 - c1) / (c0 + c1)) over {0, 1, 2}, with c_s the count of s; the
    mixture of each string is uniform on the simplex (Izzo et al. App. B). A string without 0s
    and 1s has target sin(0) = 0 (the paper leaves it undefined; it is rare past a few tokens)."""
    symbols = ("0", "1", "2")
    n_classes = 1

    def __init__(self, omega: float = 4.0, train_max: int = 20):
        if isinstance(omega, bool) or not isinstance(omega, (int, float)) \
                or not math.isfinite(omega) or not 0 < omega <= OMEGA_MAX:
            raise LengthgenError(f"SimpleTask: omega must be a number in (0, {OMEGA_MAX:g}], "
                                 f"got {omega!r}")
        self.omega = float(omega)
        self.id = f"izzo_simple_w{omega:g}"
        super().__init__(train_max)

    def draw(self, rng, lengths):
        cumulative = rng.dirichlet(np.ones(3), size=len(lengths)).cumsum(axis=1)
        u = rng.random((len(lengths), int(lengths.max())))
        return (u >= cumulative[:, :1]).astype(np.int64) + (u >= cumulative[:, 1:2])

    def targets(self, values, lengths):
        c0 = (values == 0).sum(axis=1)
        c1 = (values == 1).sum(axis=1)
        ratio = np.where(c0 + c1 > 0, (c0 - c1) / np.maximum(c0 + c1, 1), 0.0)
        return np.sin(self.omega * ratio)

    def target(self, string):
        c0 = sum(1 for s in string if s == 0)
        c1 = sum(1 for s in string if s == 1)
        return math.sin(self.omega * (c0 - c1) / (c0 + c1)) if c0 + c1 else 0.0


class ModPTask(RegressionTask):
    """f*(x) = the mean of x_t over positions t = k mod p (0-based t here; the paper counts
    from 1, which only renames k). Symbols {0, 1}; x_t ~ Bernoulli(q_{t mod p}) with each q_r
    uniform on [0, 1] per string (Izzo et al. App. B)."""
    symbols = ("0", "1")
    n_classes = 1

    def __init__(self, p: int = 5, k: int = 0, train_max: int = 20):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 1 <= p <= PERIOD_MAX:
            raise LengthgenError(f"ModPTask: the period p must be an integer in "
                                 f"[1, {PERIOD_MAX}], got {p!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < p:
            raise LengthgenError(f"ModPTask: k must be an integer in [0, p-1] = [0, {p - 1}], "
                                 f"got {k!r}")
        self.p, self.k = int(p), int(k)
        self.min_len = self.k + 1  # a shorter string has no position = k mod p
        self.id = f"izzo_modp_p{p}_k{k}"
        super().__init__(train_max)

    def draw(self, rng, lengths):
        q = rng.random((len(lengths), self.p))
        width = int(lengths.max())
        return (rng.random((len(lengths), width)) < q[:, np.arange(width) % self.p]
                ).astype(np.int64)

    def targets(self, values, lengths):
        chosen = (np.arange(values.shape[1]) % self.p == self.k)[None, :] & (values >= 0)
        return (values * chosen).sum(axis=1) / chosen.sum(axis=1)

    def target(self, string):
        picked = [s for t, s in enumerate(string) if t % self.p == self.k]
        return sum(picked) / len(picked)


class KGramTask(RegressionTask):
    """In-context k-gram (our design; Izzo et al. describe their two-layer experiment only in
    words). Each string is drawn from its own random order-(k-1) Markov chain over S symbols:
    the next-symbol distribution of every context of k-1 symbols is Dirichlet(1), fresh per
    string; the first k-1 symbols are uniform. The target at the last token x_T is the
    in-context estimate of what follows its context c = x_{T-k+2..T}:

        target_s = n_s / n,  n_s = #{t < T : x_{t-k+2..t} = c and x_{t+1} = s},  n = sum_s n_s,

    a vector of S values; when c never occurred before (n = 0) it is the frequency of s in the
    whole string. k = 2 is the induction-head setting (c is x_T alone). Two layers compute it
    (Izzo et al. Thm 5.2's application): the first reads the previous k-1 tokens, the second
    averages the symbol after each earlier occurrence of c. Its difficulty grows with S and k.

    An earlier version used the Laplace-smoothed (n_s + 1) / (n + S). That target depends on
    the absolute count n, not only on proportions, which attention (an average) does not
    give; trained models reached a loss of only about 1e-2 and their loss rose with the test
    length (the smoothing they learned at train lengths was wrong at other lengths). The
    unsmoothed proportion is a length-free function of the in-context statistics."""
    def __init__(self, S: int = 2, k: int = 2, train_max: int = 20):
        if isinstance(S, bool) or not isinstance(S, (int, np.integer)) \
                or not 2 <= S <= KGRAM_S_MAX:
            raise LengthgenError(f"KGramTask: S must be an integer in [2, {KGRAM_S_MAX}], "
                                 f"got {S!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                or not 2 <= k <= KGRAM_K_MAX:
            raise LengthgenError(f"KGramTask: k must be an integer in [2, {KGRAM_K_MAX}], "
                                 f"got {k!r}")
        self.S, self.k = int(S), int(k)
        self.symbols = tuple(str(s) for s in range(self.S))
        self.n_classes = self.S
        self.min_len = self.k - 1
        self.id = f"izzo_kgram_S{S}_k{k}"
        super().__init__(train_max)

    def draw(self, rng, lengths):
        b, width, contexts = len(lengths), int(lengths.max()), self.S ** (self.k - 1)
        cumulative = rng.dirichlet(np.ones(self.S), size=(b, contexts)).cumsum(axis=2)
        u = rng.random((b, width))
        out = rng.integers(0, self.S, size=(b, width))  # the first k-1 symbols stay uniform
        rows, context = np.arange(b), np.zeros(b, dtype=np.int64)
        for t in range(width):
            if t >= self.k - 1:  # inverse CDF of the row's next-symbol law in its context
                out[:, t] = np.minimum((u[:, t:t + 1] >= cumulative[rows, context]).sum(axis=1),
                                       self.S - 1)
            context = (context * self.S + out[:, t]) % contexts
        return out

    def targets(self, values, lengths):
        b, t = values.shape
        width = self.k - 1
        # code of the context ending at each position (the k-1 symbols up to and including it)
        codes = np.full((b, t), -1, dtype=np.int64)
        safe = np.where(values >= 0, values, 0)
        for end in range(width - 1, t):
            code = np.zeros(b, dtype=np.int64)
            for j in range(end - width + 1, end + 1):
                code = code * self.S + safe[:, j]
            codes[:, end] = code
        rows = np.arange(b)
        last = lengths - 1
        current = codes[rows, last]
        out = np.zeros((b, self.S))
        for end in range(width - 1, t - 1):
            match = (codes[:, end] == current) & (end + 1 <= last)  # x_{end+1} is before x_T
            out[rows[match], safe[match, end + 1]] += 1
        unseen = out.sum(axis=1) == 0                # c never occurred: the string's frequencies
        inside = (np.arange(t)[None, :] <= last[:, None])
        frequencies = np.stack([((safe == s) & inside).sum(axis=1) for s in range(self.S)], 1)
        out[unseen] = frequencies[unseen]
        return out / out.sum(axis=1, keepdims=True)

    def target(self, string):
        string = list(string)
        width = self.k - 1
        context = string[len(string) - width:]
        counts = np.zeros(self.S)
        for end in range(width - 1, len(string) - 1):
            if string[end - width + 1: end + 1] == context:
                counts[string[end + 1]] += 1
        if counts.sum() == 0:
            counts = np.array([string.count(s) for s in range(self.S)], dtype=float)
        return counts / counts.sum()


register("izzo_simple", SimpleTask)
register("izzo_modp", ModPTask)
register("izzo_kgram", KGramTask)
