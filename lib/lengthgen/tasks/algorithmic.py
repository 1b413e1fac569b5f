"""The 8 algorithmic sequence-to-sequence tasks of Huang et al. (2025), App. E.2.1.

Every example reads `<bos> input <sep> answer <eos>`; the model is trained and scored only on
the answer and <eos>. Len is the number of input tokens (the paper's LEN), so for addition the
input already ends with "=", which plays the part of <sep> (the vocabulary still has <sep> at id
2 so that every task shares the ids of its special tokens).

Each task has two independent answer computations: a vectorized one used to build batches, and
`solve`, a plain reference solver on token lists; the tests check that they agree.
"""
from collections import Counter

import numpy as np

from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.tasks import register
from lengthgen.tasks.base import PAD, Batch, Task

BOS, SEP, EOS = "<bos>", "<sep>", "<eos>"
SPECIALS = (PAD, BOS, SEP, EOS)
N_SPECIALS = len(SPECIALS)
TEST_MAX = 150  # the longest test length; also the number of distinct numbers in sort and copy


class AlgorithmicTask(Task):
    """Shared format, batching and length handling; subclasses say how to draw and answer."""
    symbols: tuple[str, ...]
    min_len = 1
    max_len: int | None = None   # longest possible Len (None: unbounded)
    sep: str | None = SEP        # token appended after the input (None: the input ends with it)

    def __init__(self):
        self.vocab = SPECIALS + tuple(self.symbols)
        self.n_classes = len(self.vocab)
        self.index = {token: i for i, token in enumerate(self.vocab)}
        self.train_range = (self.min_len, 50)
        self.test_bins = ((self.min_len, 50), (51, 100), (101, TEST_MAX))

    # --- what each task defines -------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, length: int, k: int) -> np.ndarray:
        """k inputs of Len = length as vocabulary ids, int64 [k, length]."""
        raise NotImplementedError

    def _answers(self, inputs: np.ndarray) -> list[np.ndarray]:
        """The answer ids of each row of `inputs` (vectorized where possible)."""
        raise NotImplementedError

    def solve(self, input_tokens: list[str]) -> list[str]:
        """Reference solver: the answer tokens of one input, written for clarity, not speed."""
        raise NotImplementedError

    def max_answer_length(self, length: int) -> int:
        raise NotImplementedError

    def feasible(self, length: int) -> bool:
        """Whether some input has Len = length."""
        return length >= self.min_len and (self.max_len is None or length <= self.max_len)

    # --- shared -------------------------------------------------------------------------------
    def feasible_lengths(self, min_len: int, max_len: int) -> list[int]:
        self.check_length_range(min_len, max_len)
        lengths = [n for n in range(min_len, max_len + 1) if self.feasible(n)]
        if not lengths:
            raise LengthgenError(f"{self.id}: no input has a length in [{min_len}, {max_len}]")
        return lengths

    def sample_instances(self, rng: np.random.Generator, length: int, k: int) -> list[list[str]]:
        """k random inputs (token lists) of Len = length, from the task's distribution."""
        self.feasible_lengths(length, length)
        return [[self.vocab[i] for i in row] for row in self._draw(rng, length, k)]

    def format(self, input_tokens: list[str]) -> list[str]:
        """The full sequence `<bos> input <sep> answer <eos>` of one input."""
        bad = [t for t in input_tokens if t not in self.index or t in SPECIALS]
        if bad:
            raise LengthgenError(f"{self.id}: token {bad[0]!r} is not an input symbol "
                                 f"(symbols: {' '.join(self.symbols)})")
        sep = [self.sep] if self.sep else []
        return [BOS, *input_tokens, *sep, *self.solve(list(input_tokens)), EOS]

    def max_tokens(self, length: int) -> int:
        # the model reads every token but the last (<eos>)
        return 1 + length + (1 if self.sep else 0) + self.max_answer_length(length)

    def sample(self, rng: np.random.Generator, batch_size: int, min_len: int,
               max_len: int) -> Batch:
        """Len uniform over the feasible lengths in [min_len, max_len], then an input of that Len
        from the task's distribution (see the task's docstring)."""
        choices = self.feasible_lengths(min_len, max_len)
        if batch_size < 1:
            raise LengthgenError(f"{self.id}: batch_size must be >= 1, got {batch_size}")
        lengths = rng.choice(np.asarray(choices, dtype=np.int64), size=batch_size)
        sep = [self.index[self.sep]] if self.sep else []
        sequences: list = [None] * batch_size
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            inputs = self._draw(rng, int(length), len(rows))
            for row, x, answer in zip(rows, inputs, self._answers(inputs)):
                sequences[row] = np.concatenate([[1], x, sep, answer, [3]])
        width = max(len(s) for s in sequences) - 1
        inputs = np.zeros((batch_size, width), dtype=np.int64)
        targets = np.zeros((batch_size, width), dtype=np.int64)
        mask = np.zeros((batch_size, width), dtype=bool)
        prompt = lengths + 1 + len(sep)
        for row, s in enumerate(sequences):
            n = len(s) - 1
            inputs[row, :n] = s[:-1]
            targets[row, :n] = s[1:]
            mask[row, prompt[row] - 1:n] = True
        return Batch(inputs, targets, mask, lengths, prompt)


def _bits_without_ties(rng: np.random.Generator, length: int, k: int) -> np.ndarray:
    """Uniform bit strings (0/1) of the given length, conditioned on #0 != #1 (redraw ties)."""
    bits = rng.integers(0, 2, size=(k, length))
    while True:
        tied = np.flatnonzero(2 * bits.sum(axis=1) == length)
        if tied.size == 0:
            return bits
        bits[tied] = rng.integers(0, 2, size=(tied.size, length))


def _majority_bit(tokens: list[str]) -> str:
    ones = sum(1 for t in tokens if t == "1")
    return "1" if 2 * ones > len(tokens) else "0"


class BinaryMajority(AlgorithmicTask):
    """The majority bit of a bit string. Inputs: uniform over the bit strings of length Len with
    #0 != #1 (ties are redrawn). Len >= 1."""
    id = "binary_majority"
    symbols = ("0", "1")

    def _draw(self, rng, length, k):
        return _bits_without_ties(rng, length, k) + self.index["0"]

    def _answers(self, inputs):
        ones = (inputs == self.index["1"]).sum(axis=1)
        return (self.index["0"] + (2 * ones > inputs.shape[1]))[:, None]

    def solve(self, input_tokens):
        return [_majority_bit(input_tokens)]

    def max_answer_length(self, length):
        return 1


class BinaryMajorityInterleave(AlgorithmicTask):
    """Three binary-majority inputs of length Len/3, interleaved (x1_1 x2_1 x3_1 x1_2 ...); the
    answer is their three majority bits in order. Each of the three strings is independently
    uniform among tie-free bit strings. Len is a multiple of 3 (other lengths are skipped)."""
    id = "binary_majority_interleave"
    symbols = ("0", "1")
    min_len = 3

    def feasible(self, length):
        return super().feasible(length) and length % 3 == 0

    def _draw(self, rng, length, k):
        x = np.empty((k, length), dtype=np.int64)
        for j in range(3):
            x[:, j::3] = _bits_without_ties(rng, length // 3, k)
        return x + self.index["0"]

    def _answers(self, inputs):
        ones = np.stack([(inputs[:, j::3] == self.index["1"]).sum(axis=1) for j in range(3)], 1)
        return self.index["0"] + (2 * ones > inputs.shape[1] // 3)

    def solve(self, input_tokens):
        return [_majority_bit(input_tokens[j::3]) for j in range(3)]

    def max_answer_length(self, length):
        return 3


class Majority(AlgorithmicTask):
    """The most frequent of 26 letters. Inputs: uniform over the letter strings of length Len
    whose most frequent letter is unique (strings with a tie for the top count are redrawn)."""
    id = "majority"
    symbols = tuple("abcdefghijklmnopqrstuvwxyz")

    def _draw(self, rng, length, k):
        n = len(self.symbols)
        x = rng.integers(0, n, size=(k, length))
        while True:
            counts = np.zeros((k, n), dtype=np.int64)
            np.add.at(counts, (np.arange(k)[:, None], x), 1)
            top = counts.max(axis=1)
            tied = np.flatnonzero((counts == top[:, None]).sum(axis=1) > 1)
            if tied.size == 0:
                return x + N_SPECIALS
            x[tied] = rng.integers(0, n, size=(tied.size, length))

    def _answers(self, inputs):
        counts = np.zeros((len(inputs), self.n_classes), dtype=np.int64)
        np.add.at(counts, (np.arange(len(inputs))[:, None], inputs), 1)
        return counts.argmax(axis=1)[:, None]

    def solve(self, input_tokens):
        (best, n), *rest = Counter(input_tokens).most_common(2)
        if rest and rest[0][1] == n:
            raise LengthgenError(f"{self.id}: the input has no unique most frequent letter")
        return [best]

    def max_answer_length(self, length):
        return 1


def _distinct_numbers(rng: np.random.Generator, length: int, k: int) -> np.ndarray:
    """Uniform over the sequences of `length` distinct numbers from 0..TEST_MAX-1."""
    return rng.permuted(np.tile(np.arange(TEST_MAX), (k, 1)), axis=1)[:, :length]


class Sort(AlgorithmicTask):
    """Sort distinct numbers ascending. Inputs: uniform over the sequences of Len distinct numbers
    from 0..149 (so Len <= 150)."""
    id = "sort"
    symbols = tuple(str(i) for i in range(TEST_MAX))
    max_len = TEST_MAX

    def _draw(self, rng, length, k):
        return _distinct_numbers(rng, length, k) + N_SPECIALS

    def _answers(self, inputs):
        return np.sort(inputs, axis=1)  # ids grow with the numbers they stand for

    def solve(self, input_tokens):
        return sorted(input_tokens, key=int)

    def max_answer_length(self, length):
        return length


class _Copy(AlgorithmicTask):
    """The answer is the input itself; subclasses say how inputs are drawn."""

    def _answers(self, inputs):
        return inputs

    def solve(self, input_tokens):
        return list(input_tokens)

    def max_answer_length(self, length):
        return length


class CopyUnique(_Copy):
    """Copy a sequence of distinct numbers. Inputs: uniform over the sequences of Len distinct
    numbers from 0..149 (so Len <= 150)."""
    id = "copy_unique"
    symbols = tuple(str(i) for i in range(TEST_MAX))
    max_len = TEST_MAX

    def _draw(self, rng, length, k):
        return _distinct_numbers(rng, length, k) + N_SPECIALS


class CopyRepeat(_Copy):
    """Copy a string over {a, b}. Inputs: each symbol independent and uniform."""
    id = "copy_repeat"
    symbols = ("a", "b")

    def _draw(self, rng, length, k):
        return rng.integers(0, 2, size=(k, length)) + N_SPECIALS


class ParityTask(AlgorithmicTask):
    """Whether a bit string has an even ("e") or odd ("o") number of 1s. Inputs: the number of
    1s is uniform in 0..Len, then their positions are a uniform subset of that size."""
    id = "parity_task"
    symbols = ("0", "1", "e", "o")

    def _draw(self, rng, length, k):
        ones = rng.integers(0, length + 1, size=(k, 1))
        ranks = rng.random((k, length)).argsort(axis=1).argsort(axis=1)
        return (ranks < ones) + self.index["0"]

    def _answers(self, inputs):
        odd = (inputs == self.index["1"]).sum(axis=1) % 2
        return np.where(odd == 1, self.index["o"], self.index["e"])[:, None]

    def solve(self, input_tokens):
        even = True
        for t in input_tokens:
            if t == "1":
                even = not even
        return ["e" if even else "o"]

    def max_answer_length(self, length):
        return 1


class Addition(AlgorithmicTask):
    """Binary addition `a + b =` -> a + b in binary, most significant bit first. Len counts the
    operands, "+" and "=" (Len >= 4). Inputs: the length of a is uniform in [1, Len - 3] (the
    paper writes [1, Len - 2], which would leave b empty), b takes the rest, and every operand bit
    is uniform (operands may start with 0; they are not padded to equal length). The answer has
    no leading zeros ("0" for a zero sum)."""
    id = "addition"
    symbols = ("0", "1", "+", "=")
    min_len = 4
    sep = None

    def _draw(self, rng, length, k):
        x = rng.integers(0, 2, size=(k, length)) + self.index["0"]
        first = rng.integers(1, length - 2, size=k)  # length of a, in [1, length - 3]
        x[np.arange(k), first] = self.index["+"]
        x[:, -1] = self.index["="]
        return x

    def _answers(self, inputs):
        digits = "".join(self.vocab[i][0] for i in range(self.n_classes))  # id -> one character
        answers = []
        for row in inputs:
            a, b = "".join(digits[i] for i in row[:-1]).split("+")
            total = bin(int(a, 2) + int(b, 2))[2:]
            answers.append(np.array([self.index[c] for c in total], dtype=np.int64))
        return answers

    def solve(self, input_tokens):
        if input_tokens.count("+") != 1 or input_tokens[-1:] != ["="]:
            raise LengthgenError(f"{self.id}: an input must look like 'bits + bits ='")
        plus = input_tokens.index("+")
        a, b = input_tokens[:plus], input_tokens[plus + 1:-1]
        result, carry = [], 0
        for i in range(1, max(len(a), len(b)) + 1):
            s = carry + (a[-i] == "1" if i <= len(a) else 0) + (b[-i] == "1" if i <= len(b) else 0)
            result.append("1" if s % 2 else "0")
            carry = s // 2
        if carry:
            result.append("1")
        while len(result) > 1 and result[-1] == "0":
            result.pop()
        return result[::-1]

    def max_answer_length(self, length):
        return length - 2  # the longer operand has at most Len - 3 bits, plus a carry


TASKS = {cls.id: cls for cls in (BinaryMajority, BinaryMajorityInterleave, Majority, Sort,
                                 CopyUnique, CopyRepeat, ParityTask, Addition)}
for _id, _cls in TASKS.items():
    register(_id, _cls)


def get_algorithmic(task_id: str) -> AlgorithmicTask:
    """The algorithmic task with this id (its own API: sample_instances, solve, format)."""
    if task_id not in TASKS:
        raise unknown_name("algorithmic task", task_id, TASKS)
    return TASKS[task_id]()
