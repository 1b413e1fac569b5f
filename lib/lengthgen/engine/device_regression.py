"""Device samplers of Izzo et al.'s regression tasks (`lengthgen.tasks.izzo`): SimpleTask,
ModPTask and KGramTask, in the manner of `engine.device_data` (read its docstring): keyed
randomness (`engine.rng`), loops over positions and never over rows, the law of the task's host
`sample`, registered in the same lookup (`device_data.device_sampler`).

Layout, as `RegressionTask.batch` lays out a batch: inputs = symbol value + 1, PAD (0) after
each string, no <bos>; one target per string, at its last position, where the mask is on (and
nowhere else); float32 targets, [N, B, W] for one value per string (SimpleTask, ModPTask) or
[N, B, W, S] for KGramTask's S. Len is uniform over [lo, hi] (every length is feasible).

Dirichlet(1, ..., 1) without logarithms: the cumulative weights of a Dirichlet(1) vector over
S symbols have the law of the order statistics of S - 1 independent uniforms v_1..v_{S-1} (the
weights are their spacings). The host draws symbol s when cum_{s-1} <= u < cum_s, that is when
exactly s of the cumulative weights are <= u; so here the symbol is #{j : v_j <= u}, no sort
and no normalization needed. Every draw is then a comparison of 53-bit uniforms (exact, the
same on CPU and CUDA); the targets are float64 counts and ratios (exactly rounded), and
SimpleTask's sine, whose last float64 bit may differ between devices (then, rarely, the
float32 target by one ulp).

KGramTask: the transition law of context c in row b is keyed by (b's key, c), so a row's chain
is drawn only where it is used: at each position, the thresholds of the current context. Where
the contexts are few (S^(k-1) <= the longest length) all of them are drawn at once and picked
by gather; the values are the same either way (the same keys).

Public: SimpleSampler, ModPSampler, KGramSampler (through `device_sampler`).
"""
import torch

from lengthgen.engine import rng
from lengthgen.engine.device_data import DeviceBatch, DeviceSampler, _positions, _samples
from lengthgen.tasks.izzo import KGramTask, ModPTask, SimpleTask


class RegressionSampler(DeviceSampler):
    """Strings of symbol values (`_draw`), their targets (`_targets`), the host's layout."""
    target_dtype = torch.float32

    def _feasible_lengths(self, lo, hi):
        self.task.check_length_range(lo, hi)   # a clear error on a bad range
        return list(range(lo, hi + 1))

    def _draw(self, key: torch.Tensor, lengths: torch.Tensor, longest: int) -> torch.Tensor:
        """Symbol values 0..S-1, int64 [N, B, longest] (ignored past each row's Len)."""
        raise NotImplementedError

    def _targets(self, x: torch.Tensor, valid: torch.Tensor,
                 lengths: torch.Tensor) -> torch.Tensor:
        """float64 [N, B] or [N, B, C]: each string's target (x: values, valid: [N, B, T]
        positions below Len), computed as the task's vectorized `targets` computes it."""
        raise NotImplementedError

    def _build(self, key, lengths, longest, width):
        x = self._draw(key, lengths, longest)
        valid = _positions(longest, x) < lengths[..., None]
        x = torch.where(valid, x, 0)
        y = self._targets(x, valid, lengths).to(torch.float32)
        return _layout(x, valid, lengths, y, width)


def _layout(x, valid, lengths, y, width) -> DeviceBatch:
    """RegressionTask.batch's layout, PAD up to `width`."""
    pad = width - x.shape[-1]
    inputs = torch.nn.functional.pad(torch.where(valid, x + 1, 0), (0, pad))
    mask = _positions(width, x) == (lengths - 1)[..., None]
    at = mask if y.dim() == lengths.dim() else mask[..., None]
    targets = torch.where(at, y.unsqueeze(lengths.dim()), torch.zeros((), dtype=y.dtype,
                                                                      device=y.device))
    return DeviceBatch(inputs, targets, mask, lengths)


def _thresholds(key: torch.Tensor, *index) -> torch.Tensor:
    """float64 [..., S - 1]: the uniforms whose order statistics are the cumulative weights of
    a Dirichlet(1) law (the module docstring); index: what the law belongs to, the last
    component the thresholds' own positions."""
    return rng.uniform(key, rng.STREAM_WEIGHTS, *index)


def _pick(u: torch.Tensor, thresholds: torch.Tensor) -> torch.Tensor:
    """The symbol #{j : v_j <= u} (u [...], thresholds [..., S - 1])."""
    return (u[..., None] >= thresholds).sum(dim=-1)


@_samples(SimpleTask)
class SimpleSampler(RegressionSampler):
    """A mixture uniform on the simplex (Dirichlet(1, 1, 1)) per string, then i.i.d. symbols
    from it: the host's draw."""

    def _draw(self, key, lengths, longest):
        cuts = _thresholds(key[..., None], _positions(2, key))                    # [N, B, 2]
        u = rng.uniform(key[..., None], rng.STREAM_SYMBOL, _positions(longest, key))
        return _pick(u, cuts[..., None, :])

    def _targets(self, x, valid, lengths):
        c0 = ((x == 0) & valid).sum(-1)
        c1 = ((x == 1) & valid).sum(-1)
        ratio = torch.where(c0 + c1 > 0, (c0 - c1) / (c0 + c1).clamp(min=1).double(), 0.0)
        return torch.sin(self.task.omega * ratio)


@_samples(ModPTask)
class ModPSampler(RegressionSampler):
    """Rates q_r uniform on [0, 1] per residue r and string, x_t ~ Bernoulli(q_{t mod p})."""

    def _draw(self, key, lengths, longest):
        p = self.task.p
        q = rng.uniform(key[..., None], rng.STREAM_WEIGHTS, _positions(p, key))   # [N, B, p]
        j = _positions(longest, key)
        u = rng.uniform(key[..., None], rng.STREAM_SYMBOL, j)
        return (u < q[..., j % p]).long()

    def _targets(self, x, valid, lengths):
        chosen = (_positions(x.shape[-1], x) % self.task.p == self.task.k) & valid
        return (x * chosen).sum(-1) / chosen.sum(-1).double()


@_samples(KGramTask)
class KGramSampler(RegressionSampler):
    """The first k-1 symbols uniform, then each symbol from its context's Dirichlet(1) law, one
    law per context and string (the module docstring)."""

    def __init__(self, task):
        super().__init__(task)
        self.target_shape = (task.S,)

    def _draw(self, key, lengths, longest):
        S, width = self.task.S, self.task.k - 1
        contexts = S ** width
        u = rng.uniform(key[..., None], rng.STREAM_SYMBOL, _positions(longest, key))
        j = _positions(S - 1, key)
        table = None
        if contexts <= longest:   # every context's thresholds at once [N, B, contexts, S - 1]
            table = _thresholds(key[..., None, None], _positions(contexts, key)[:, None], j)
        context = torch.zeros_like(lengths)
        symbols = []
        for t in range(longest):
            if t < width:
                symbol = torch.floor(u[..., t] * S).long()    # uniform (rng.below's formula)
            elif table is not None:
                index = context[..., None, None].expand(*context.shape, 1, S - 1)
                symbol = _pick(u[..., t], table.gather(-2, index).squeeze(-2))
            else:
                symbol = _pick(u[..., t], _thresholds(key[..., None], context[..., None], j))
            symbols.append(symbol)
            context = (context * S + symbol) % contexts
        return torch.stack(symbols, dim=-1)

    def _targets(self, x, valid, lengths):
        S, width = self.task.S, self.task.k - 1
        t = x.shape[-1]
        # the code of the context ending at each position (-1 before the first whole one)
        codes = torch.full_like(x, -1)
        if t >= width:
            code = torch.zeros_like(x[..., width - 1:])
            for i in range(width):
                code = code * S + x[..., i: t - width + 1 + i]
            codes[..., width - 1:] = code
        last = (lengths - 1)[..., None]
        current = codes.gather(-1, last)
        # every earlier occurrence of the context: the symbol that followed it
        ends = _positions(t - 1, x)
        match = (codes[..., :-1] == current) & (ends + 1 <= last)
        counts = torch.zeros(*x.shape[:-1], S, dtype=torch.int64, device=x.device)
        counts.scatter_add_(-1, x[..., 1:], match.long())
        # the context never occurred before: the string's own symbol frequencies
        frequencies = torch.zeros_like(counts).scatter_add_(-1, x, valid.long())
        unseen = (counts.sum(-1) == 0)[..., None]
        out = torch.where(unseen, frequencies, counts).double()
        return out / out.sum(-1, keepdim=True)

