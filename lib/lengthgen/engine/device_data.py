"""Training batches drawn on the device, with the same law as the tasks' host samplers.

Why: a GPU engine that trains many small models at once cannot afford host work per step (a
numpy draw, a Python loop over rows, a copy to the device) for every model of the group. Here a
batch is made with torch ops on the tensors' device: loops run over positions, bit positions or
rejection rounds, never over rows.

Keys instead of generator state: row b of item n is a function of (seeds[n], steps[n], b) only
(lengthgen.engine.rng hashes the key), so a model's batch at a step is the same whichever group
it trains in, whatever else is in the call, after a resumption, and on CPU or CUDA (integer
ops, and float64 ops that are exactly rounded the same way everywhere).

What is exact: each sampler reproduces the probability law of its task's `sample` (read the
task's docstring) and its layout: Len uniform over the feasible lengths in [lo, hi], inputs
`<bos> x <sep> answer` (algorithmic tasks; targets the next token at every real position,
the mask on the answer and <eos>) or `<bos> w` (languages; targets the legal-next class at
positions 0..n, all masked in), PAD (0 / False) after each sequence, up to a fixed `width`.
"Exact" is up to float64 rounding: a uniform has 53 random bits, so a probability p is drawn
with probability p +- 2**-53 (for below(k): at most k / 2**53), and k random 53-bit sort keys
tie with probability about k**2 / 2**54 (ties are broken by position, the same way on every
device). Nothing else is approximated: tie-free bit strings
draw their number of ones from its exact conditional law, majority strings are drawn by
rejection like the host's, language members by the exact completion counts of the DFA.

The regression tasks of Izzo et al. have their samplers in `engine.device_regression`
(real-valued targets, one per string), registered in the same lookup (`device_sampler`).

Public: DeviceBatch, DeviceSampler (sample, real_lengths), real_lengths, device_sampler.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from importlib import import_module
from math import comb

import torch

from lengthgen.engine import rng
from lengthgen.errors import LengthgenError
from lengthgen.tasks.algorithmic import (N_SPECIALS, TEST_MAX, Addition, BinaryMajority,
                                         BinaryMajorityInterleave, CopyRepeat, CopyUnique,
                                         Majority, ParityTask, Sort)
from lengthgen.tasks.base import Task
from lengthgen.tasks.languages import N_SPECIALS as LANGUAGE_SPECIALS
from lengthgen.tasks.languages import Language

BOS_ID, SEP_ID, EOS_ID = 1, 2, 3  # ids of <bos>, <sep>, <eos> in every algorithmic vocabulary


@dataclass
class DeviceBatch:
    inputs: torch.Tensor   # int64 [N, B, W] token ids, PAD (0) after each sequence
    targets: torch.Tensor  # int64 [N, B, W] the class to predict at each position, 0 past the end;
    #                        a regression task's: float32 [N, B, W] or [N, B, W, C] real values
    mask: torch.Tensor     # bool  [N, B, W] positions that count for loss and accuracy
    lengths: torch.Tensor  # int64 [N, B]    the task's Len of each example


def real_lengths(batch: DeviceBatch) -> torch.Tensor:
    """int64 [N, B]: the number of non-PAD input tokens of each row (no real token is PAD)."""
    return (batch.inputs != 0).sum(dim=-1)


class DeviceSampler(ABC):
    """Draws batches of one task on the device of the `seeds` tensor.

    sample(seeds, steps, batch_size, lo, hi, width): seeds and steps are int64 [N]; item n gets
    batch_size rows; row b is a function of (seeds[n], steps[n], b) (and of lo, hi, width).
    target_dtype and target_shape: the dtype of the batches' targets and their shape past
    [N, B, W] (() for class ids and for one real value per position, (C,) for C of them)."""
    target_dtype = torch.int64
    target_shape: tuple = ()

    def __init__(self, task: Task):
        self.task = task
        self._cache: dict = {}

    real_lengths = staticmethod(real_lengths)

    def sample(self, seeds: torch.Tensor, steps: torch.Tensor, batch_size: int, lo: int,
               hi: int, width: int) -> DeviceBatch:
        if seeds.dim() != 1 or seeds.shape != steps.shape or seeds.device != steps.device:
            raise LengthgenError("seeds and steps must be 1-D tensors of one shape, one device")
        if batch_size < 1:
            raise LengthgenError(f"{self.task.id}: batch_size must be >= 1, got {batch_size}")
        feasible = self._feasible_lengths(lo, hi)  # raises on an empty or invalid range
        if width < self.task.max_tokens(hi):
            raise LengthgenError(f"{self.task.id}: width {width} is below the "
                                 f"{self.task.max_tokens(hi)} tokens of Len {hi}")
        device = seeds.device
        choices = self._cached(("lengths", lo, hi), device,
                               lambda: torch.tensor(feasible, dtype=torch.int64))
        rows = torch.arange(batch_size, device=device)
        # one hash per row; every later draw of the row hashes this key with a stream constant
        key = rng.bits32(seeds.to(torch.int64)[:, None], steps.to(torch.int64)[:, None], rows)
        lengths = choices[rng.below(len(feasible), key, rng.STREAM_LENGTH)]
        return self._build(key, lengths, max(feasible), width)

    def _feasible_lengths(self, lo: int, hi: int) -> list[int]:
        return self.task.feasible_lengths(lo, hi)

    @abstractmethod
    def _build(self, key: torch.Tensor, lengths: torch.Tensor, longest: int,
               width: int) -> DeviceBatch:
        """The batch for row keys and Len [N, B]; longest = the largest feasible Len."""

    def _cached(self, name, device, make):
        """A constant tensor (a table of the law) made once per name and device."""
        if (name, device) not in self._cache:
            self._cache[(name, device)] = make().to(device)
        return self._cache[(name, device)]


# --- helpers shared by the algorithmic samplers --------------------------------------------------

def _positions(n: int, like: torch.Tensor) -> torch.Tensor:
    return torch.arange(n, device=like.device)


def _ranks(keys: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Rank of each valid position's key among the valid ones of its row (invalid ones rank
    after them): a uniform random ordering of the valid positions."""
    keys = torch.where(valid, keys, 2.0)  # uniforms are < 1
    order = torch.argsort(keys, dim=-1, stable=True)
    return torch.argsort(order, dim=-1, stable=True)


def _uniform_subset(key: torch.Tensor, n: torch.Tensor, k: torch.Tensor, size: int,
                    *stream) -> torch.Tensor:
    """bool [..., size]: a uniform subset of size k of the positions < n (row-wise tensors
    key, n, k of one shape), as "the k smallest of n independent uniform keys"."""
    j = _positions(size, key)
    keys = rng.uniform(key[..., None], rng.STREAM_ORDER, *stream, j)
    return _ranks(keys, j < n[..., None]) < k[..., None]


def _tie_free_count_table(longest: int) -> torch.Tensor:
    """cum[n, k] = P(#1 <= k) for a bit string of length n uniform among those with #0 != #1:
    P(#1 = k) = C(n, k) / (2**n - [n even] C(n, n/2)), 0 at k = n/2. Exact fractions rounded
    once to float64 (equal partial sums give equal floats: the tie is never drawn)."""
    cum = torch.ones(longest + 1, longest + 1, dtype=torch.float64)
    for n in range(1, longest + 1):
        weights = [0 if 2 * k == n else comb(n, k) for k in range(n + 1)]
        total, running = sum(weights), 0
        for k, w in enumerate(weights):
            running += w
            cum[n, k] = float(Fraction(running, total))
    return cum


def _draw_from_table(u: torch.Tensor, cum_rows: torch.Tensor) -> torch.Tensor:
    """The index i with cum[i-1] <= u < cum[i] (inverse CDF; cum ends at exactly 1 > u)."""
    return (u[..., None] >= cum_rows).sum(dim=-1)


class AlgorithmicSampler(DeviceSampler):
    """`<bos> input <sep> answer <eos>`; subclasses draw the inputs and compute the answers."""

    @abstractmethod
    def _draw(self, key: torch.Tensor, lengths: torch.Tensor, longest: int) -> torch.Tensor:
        """Inputs as vocabulary ids [N, B, longest] (positions >= the row's Len are ignored)."""

    @abstractmethod
    def _answer(self, x: torch.Tensor, lengths: torch.Tensor,
                longest: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The answer ids [N, B, A] (ignored past each row's answer length) and the answer
        lengths [N, B]."""

    def _build(self, key, lengths, longest, width):
        x = self._draw(key, lengths, longest)
        answer, answer_lengths = self._answer(x, lengths, longest)
        return _layout(x, lengths, 1 if self.task.sep else 0, answer, answer_lengths, width)


def _layout(x, lengths, sep, answer, answer_lengths, width) -> DeviceBatch:
    """The host's layout (AlgorithmicTask.sample): s = <bos> x [<sep>] answer <eos>, inputs =
    s[:-1], targets = s[1:] (the next token at every real position, the prompt included), the
    mask from the last prompt token (it predicts the first answer token) to the end."""
    trash = width + 1  # a column that collects the writes past a row's end; dropped below
    seq = torch.zeros(*lengths.shape, width + 2, dtype=torch.int64, device=x.device)
    seq[..., 0] = BOS_ID
    j = _positions(x.shape[-1], x)
    seq.scatter_(-1, torch.where(j < lengths[..., None], 1 + j, trash), x)
    if sep:
        seq.scatter_(-1, (1 + lengths)[..., None], SEP_ID)
    start = 1 + lengths + sep
    j = _positions(answer.shape[-1], answer)
    seq.scatter_(-1, torch.where(j < answer_lengths[..., None], start[..., None] + j, trash),
                 answer)
    end = start + answer_lengths        # the position of <eos>: s has end + 1 tokens
    seq.scatter_(-1, end[..., None], EOS_ID)
    pos = _positions(width, x)
    real = pos < end[..., None]
    inputs = seq[..., :width] * real
    targets = seq[..., 1:width + 1] * real
    mask = real & (pos >= (lengths + sep)[..., None])
    return DeviceBatch(inputs, targets, mask, lengths)


# --- the 8 algorithmic tasks -------------------------------------------------------------------

_SAMPLERS: dict[type, type[DeviceSampler]] = {}


def _samples(task_class):
    """Register a sampler class for exactly this task class."""
    def register(sampler_class):
        _SAMPLERS[task_class] = sampler_class
        return sampler_class
    return register


@_samples(BinaryMajority)
class BinaryMajoritySampler(AlgorithmicSampler):
    """Uniform over tie-free bit strings: #1 from its exact law given no tie, then a uniform
    subset of that size holds the 1s (the host redraws ties; the law is the same)."""

    def _draw(self, key, lengths, longest):
        cum = self._cached(("ones", longest), key.device, lambda: _tie_free_count_table(longest))
        ones = _draw_from_table(rng.uniform(key, rng.STREAM_COUNT), cum[lengths])
        bits = _uniform_subset(key, lengths, ones, longest)
        return N_SPECIALS + bits.long()

    def _answer(self, x, lengths, longest):
        valid = _positions(longest, x) < lengths[..., None]
        ones = ((x == N_SPECIALS + 1) & valid).sum(-1)
        return (N_SPECIALS + (2 * ones > lengths).long())[..., None], torch.ones_like(lengths)


@_samples(BinaryMajorityInterleave)
class BinaryMajorityInterleaveSampler(AlgorithmicSampler):
    """Three independent tie-free strings of length Len/3 (as binary_majority), interleaved."""

    def _draw(self, key, lengths, longest):
        m, size = lengths // 3, longest // 3
        cum = self._cached(("ones", size), key.device, lambda: _tie_free_count_table(size))
        which = _positions(3, key)
        u = rng.uniform(key[..., None], rng.STREAM_COUNT, which)            # [N, B, 3]
        ones = _draw_from_table(u, cum[m][..., None, :])                     # [N, B, 3]
        j = _positions(size, key)
        keys = rng.uniform(key[..., None, None], rng.STREAM_ORDER, which[:, None], j)
        bits = _ranks(keys, (j < m[..., None, None])) < ones[..., None]      # [N, B, 3, size]
        # x[3 i + j] = string j's bit i
        return N_SPECIALS + bits.transpose(-1, -2).reshape(*lengths.shape, 3 * size).long()

    def _answer(self, x, lengths, longest):
        m = lengths // 3
        strings = x.reshape(*lengths.shape, longest // 3, 3)
        valid = (_positions(longest // 3, x) < m[..., None])[..., None]
        ones = ((strings == N_SPECIALS + 1) & valid).sum(-2)                  # [N, B, 3]
        answer = N_SPECIALS + (2 * ones > m[..., None]).long()
        return answer, torch.full_like(lengths, 3)


@_samples(Majority)
class MajoritySampler(AlgorithmicSampler):
    """Uniform letters, redrawn (rejection, like the host) while the top count is tied. Round r
    of a row uses the key (row, r) only, so a row accepts its first tie-free round whatever the
    other rows do. Rounds are drawn a few at a time for the rows still tied, and only as many
    positions as the longest of them has (the rows that stay tied longest are short: at Len 2
    a round succeeds with probability 1/26)."""
    ALPHABET = 26
    # rounds per pass (the last repeats): doubling keeps both the number of passes (each waits
    # for the device) and the wasted draws small; it affects the speed only, never the values
    CHUNKS = (1, 2, 4, 8, 16, 32, 64)

    def _counts(self, letters, n):
        """Letter counts [..., 26] over the positions < n."""
        valid = _positions(letters.shape[-1], letters) < n[..., None]
        index = torch.where(valid, letters, self.ALPHABET)  # bucket 26 collects the padding
        counts = torch.zeros(*letters.shape[:-1], self.ALPHABET + 1, dtype=torch.int64,
                             device=letters.device)
        return counts.scatter_add_(-1, index, torch.ones_like(index))[..., :self.ALPHABET]

    def _draw(self, key, lengths, longest):
        keys, ns = key.reshape(-1), lengths.reshape(-1)
        x = torch.zeros(len(keys), longest, dtype=torch.int64, device=key.device)
        todo = torch.arange(len(keys), device=key.device)  # rows with no tie-free round yet
        first_round, pass_no = 0, 0
        while todo.numel():
            chunk = self.CHUNKS[min(pass_no, len(self.CHUNKS) - 1)]
            rounds = torch.arange(first_round, first_round + chunk, device=key.device)
            k, n = keys[todo], ns[todo]
            j = _positions(int(n.max()), key)   # position j's letter is the same at any width
            letters = rng.below(self.ALPHABET, k[:, None, None], rng.STREAM_ROUND,
                                rounds[:, None], j)                       # [R, chunk, len(j)]
            counts = self._counts(letters, n[:, None])
            top = counts.max(dim=-1, keepdim=True).values
            unique = (counts == top).sum(-1) == 1                          # [R, chunk]
            done = unique.any(-1)
            first = unique.long().argmax(-1)  # the first tie-free round (argmax: first max)
            rows = done.nonzero().squeeze(-1)
            x[todo[rows], :len(j)] = letters[rows, first[rows]]
            todo = todo[~done]
            first_round += chunk
            pass_no += 1
        return N_SPECIALS + x.reshape(*lengths.shape, longest)

    def _answer(self, x, lengths, longest):
        counts = self._counts(x - N_SPECIALS, lengths)
        return (N_SPECIALS + counts.argmax(-1))[..., None], torch.ones_like(lengths)


def _distinct_numbers(key: torch.Tensor, longest: int) -> torch.Tensor:
    """The first `longest` entries of a uniform permutation of 0..149 (the order of 150 uniform
    keys), so the first Len of them are a uniform sequence of Len distinct numbers. The keys'
    53 bits, then the number, make integer keys without ties (topk then has one answer on every
    device); the `longest` smallest are all we need, and topk is twice as fast as a sort."""
    numbers = _positions(TEST_MAX, key)
    u = rng.uniform(key[..., None], rng.STREAM_ORDER, numbers)
    keys = (u * 2.0 ** 53).to(torch.int64) * 256 + numbers      # < 2**61
    return torch.topk(keys, min(longest, TEST_MAX), dim=-1, largest=False, sorted=True).indices


@_samples(Sort)
class SortSampler(AlgorithmicSampler):
    def _draw(self, key, lengths, longest):
        return N_SPECIALS + _distinct_numbers(key, longest)

    def _answer(self, x, lengths, longest):
        valid = _positions(longest, x) < lengths[..., None]
        # ids grow with the numbers; the padding sorts last
        return torch.sort(torch.where(valid, x, TEST_MAX + N_SPECIALS), dim=-1).values, lengths


class _CopySampler(AlgorithmicSampler):
    def _answer(self, x, lengths, longest):
        return x, lengths


@_samples(CopyUnique)
class CopyUniqueSampler(_CopySampler):
    def _draw(self, key, lengths, longest):
        return N_SPECIALS + _distinct_numbers(key, longest)


@_samples(CopyRepeat)
class CopyRepeatSampler(_CopySampler):
    """Independent uniform symbols: the top bit of a hash per position."""

    def _draw(self, key, lengths, longest):
        bits = rng.bits32(key[..., None], rng.STREAM_SYMBOL, _positions(longest, key)) >> 31
        return N_SPECIALS + bits


@_samples(ParityTask)
class ParitySampler(AlgorithmicSampler):
    """#1 uniform in 0..Len, then a uniform subset of that size (as the host)."""

    def _draw(self, key, lengths, longest):
        ones = rng.below(lengths + 1, key, rng.STREAM_COUNT)
        return N_SPECIALS + _uniform_subset(key, lengths, ones, longest).long()

    def _answer(self, x, lengths, longest):
        valid = _positions(longest, x) < lengths[..., None]
        odd = ((x == N_SPECIALS + 1) & valid).sum(-1) % 2
        even_id, odd_id = N_SPECIALS + 2, N_SPECIALS + 3
        return torch.where(odd == 1, odd_id, even_id)[..., None], torch.ones_like(lengths)


@_samples(Addition)
class AdditionSampler(AlgorithmicSampler):
    """Uniform bits; "+" after a uniform length of a in [1, Len - 3]; "=" last."""
    ZERO, ONE, PLUS, EQUALS = N_SPECIALS, N_SPECIALS + 1, N_SPECIALS + 2, N_SPECIALS + 3

    def _draw(self, key, lengths, longest):
        j = _positions(longest, key)
        x = self.ZERO + (rng.bits32(key[..., None], rng.STREAM_SYMBOL, j) >> 31)
        plus = 1 + rng.below(lengths - 3, key, rng.STREAM_SPLIT)
        x = torch.where(j == plus[..., None], self.PLUS, x)
        return torch.where(j == (lengths - 1)[..., None], self.EQUALS, x)

    def _answer(self, x, lengths, longest):
        bits = (x == self.ONE).long()
        len_a = (x == self.PLUS).long().argmax(-1)    # the position of "+"
        len_b = lengths - 2 - len_a
        i = _positions(longest - 3, x)                  # bit i counts from the least significant
        a = torch.where(i < len_a[..., None],
                        bits.gather(-1, (len_a[..., None] - 1 - i).clamp(min=0)), 0)
        b = torch.where(i < len_b[..., None],
                        bits.gather(-1, (lengths[..., None] - 2 - i).clamp(min=0)), 0)
        total, carry = [], torch.zeros_like(lengths)
        for t in range(longest - 3):                    # ripple-carry addition, all rows at once
            s = a[..., t] + b[..., t] + carry
            total.append(s & 1)
            carry = s >> 1
        total = torch.stack(total + [carry], dim=-1)    # [N, B, longest - 2], LSB first
        width = total.shape[-1]
        # the most significant 1 (0 for a zero sum), then the bits from there down
        top = ((total * (_positions(width, x) + 1)).max(-1).values - 1).clamp(min=0)
        k = _positions(width, x)
        answer = total.gather(-1, (top[..., None] - k).clamp(min=0))
        return self.ZERO + answer, top + 1


# --- the regular languages -----------------------------------------------------------------------

@_samples(Language)
class LanguageSampler(DeviceSampler):
    """Members exactly uniform among those of their length: with m symbols still to write at
    state q, symbol s is chosen with probability counts[m-1][delta[q, s]] / counts[m][q] (the
    share of the members' completions that start with s), which multiplies out to
    1 / counts[n][start] for every member. One uniform per position picks the symbol of every
    row at once from the cumulative table."""

    def _table(self, longest: int) -> torch.Tensor:
        """cum[m, q, s] = P(next symbol <= s | m left, state q), float64, exact fractions rounded
        once (the last column is exactly 1; rows with no completion are all 1)."""
        counts = self.task.dfa.path_counts(longest)
        delta = self.task.dfa.delta.tolist()
        n_states, n_symbols = len(delta), len(delta[0])
        cum = torch.ones(longest + 1, n_states, n_symbols, dtype=torch.float64)
        for m in range(1, longest + 1):
            for q in range(n_states):
                if counts[m][q] == 0:
                    continue
                running = 0
                for s, r in enumerate(delta[q]):
                    running += counts[m - 1][r]
                    cum[m, q, s] = float(Fraction(running, counts[m][q]))
        return cum

    def _build(self, key, lengths, longest, width):
        device = key.device
        cum = self._cached(("paths", longest), device, lambda: self._table(longest))
        delta = self._cached("delta", device, lambda: torch.as_tensor(self.task.dfa.delta))
        state_class = self._cached("classes", device,
                                   lambda: torch.as_tensor(self.task.state_class))
        u = rng.uniform(key[..., None], rng.STREAM_PATH, _positions(longest, key))
        q = torch.full_like(lengths, self.task.dfa.start)
        codes, states = [], [q]
        for t in range(longest):
            left = lengths - t                          # symbols still to write, this one included
            symbol = _draw_from_table(u[..., t], cum[left.clamp(min=1), q])
            q = torch.where(left > 0, delta[q, symbol], q)
            codes.append(symbol)
            states.append(q)
        codes, states = torch.stack(codes, -1), torch.stack(states, -1)
        pos = _positions(width, key)
        real = pos <= lengths[..., None]                # <bos> and the n symbols
        inputs = torch.zeros(*lengths.shape, width, dtype=torch.int64, device=device)
        inputs[..., 0] = BOS_ID
        inputs[..., 1:longest + 1] = LANGUAGE_SPECIALS + codes
        targets = torch.zeros_like(inputs)
        targets[..., :longest + 1] = state_class[states]
        return DeviceBatch(inputs * real, targets * real, real, lengths)


def device_sampler(task: Task) -> DeviceSampler | None:
    """The device sampler of a task (by its exact class: a subclass may change the law), or
    None for tasks that have none (Dyck, Boolean expressions, C-RASP programs ...)."""
    sampler_class = _SAMPLERS.get(type(task))
    return None if sampler_class is None else sampler_class(task)


# the regression samplers register themselves in _SAMPLERS (imported last: they build on this)
import_module("lengthgen.engine.device_regression")
