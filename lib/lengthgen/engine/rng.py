"""A counter-based random number generator in plain torch integer ops.

Every random number is a hash of a key: a tuple of integers that says what the number is for
(seed, step, row, a stream constant naming the use, column, rejection round ...). Nothing is
carried from one draw to the next, so

- the same key gives bit-identical numbers on CPU and CUDA (only integer ops, and for the
  floats a single exactly rounded float64 division or product),
- a row of a batch can be drawn alone, or among any other rows, in any order, with the same
  result: its numbers depend on its own key only.

The hash is Chris Wellons' "lowbias32" (a multiply-xorshift bijection of 32-bit words), applied
after xor-ing in each key component in turn (a sponge with a 32-bit state). It is computed in
int64 on values below 2**32; its multiplications are arranged so that no intermediate value
reaches 2**63, so signed overflow never happens (it is undefined behaviour in C++, and torch
promises nothing about it).

Public API (every argument is a Python int or an integer tensor; they broadcast together, so
coarse components can have small shapes and the fine ones (columns) add the trailing dims):

    bits32(*keys)        -> int64 tensor of hashes in [0, 2**32)
    uniform(*keys)       -> float64 tensor in [0, 1), a multiple of 2**-53 (53 random bits)
    below(high, *keys)   -> int64 tensor uniform in [0, high) (high >= 1; bias <= high / 2**53)

Key components are integers taken as 64-bit two's complement words; the state is 32 bits, so
about 2**32 keys can be told apart: two distinct keys give the same numbers with probability
2**-32 (harmless for training data; every single draw still has exactly its stated law).
The named STREAM_* constants below are the component that separates different uses of the same
(seed, step, row), so that, say, the draw of a length never reuses the bits of a symbol.
"""
import torch

MASK32 = 0xFFFFFFFF
_INIT = 0x9E3779B9          # the state before the first component (any fixed word)
_M1 = 0x7FEB352D            # lowbias32's multipliers; _M1 < 2**31,
_M2_LOW = 0x846CA68B - 2 ** 31  # and the second one is 2**31 + _M2_LOW (see _mul_m2)
_FOLD = 0x61C88647          # odd, < 2**31: folds the high word of a 64-bit component in

# Stream constants: one per use of randomness (any distinct integers would do).
STREAM_LENGTH = 0x1001      # which feasible length a row gets
STREAM_SYMBOL = 0x1002      # independent uniform symbols / bits at each position
STREAM_ORDER = 0x1003       # random sort keys (permutations, uniform subsets)
STREAM_COUNT = 0x1004       # a count drawn from a tabulated law (number of ones, ...)
STREAM_SPLIT = 0x1005       # a split position (addition's "+")
STREAM_ROUND = 0x1006       # rejection sampling: draws of round r
STREAM_PATH = 0x1007        # languages: the next symbol at each position
STREAM_WEIGHTS = 0x1008     # a string's own law (Izzo's tasks: its mixture, rates, chain)


def _as_tensor(k, device=None) -> torch.Tensor:
    if isinstance(k, torch.Tensor):
        if k.dtype.is_floating_point or k.dtype == torch.bool:
            raise TypeError(f"key components must be integers, got a {k.dtype} tensor")
        return k.to(torch.int64)
    return torch.tensor(int(k), dtype=torch.int64, device=device)


def _mul_m1(x: torch.Tensor) -> torch.Tensor:
    # x < 2**32 and _M1 < 2**31: the product is below 2**63
    return (x * _M1) & MASK32


def _mul_m2(x: torch.Tensor) -> torch.Tensor:
    # x * (2**31 + _M2_LOW) mod 2**32, where x * 2**31 mod 2**32 = (x & 1) << 31; the sum stays
    # below (2**32 - 1) * (2**31 - 1) + 2**31 < 2**63
    return (x * _M2_LOW + ((x & 1) << 31)) & MASK32


def _mix(x: torch.Tensor) -> torch.Tensor:
    """lowbias32: a bijection of [0, 2**32) with good avalanche."""
    x = x ^ (x >> 16)
    x = _mul_m1(x)
    x = x ^ (x >> 15)
    x = _mul_m2(x)
    return x ^ (x >> 16)


def _word(k) -> torch.Tensor | int:
    """A key component as one 32-bit word: its low word, xor the high word times an odd
    constant (so a component below 2**32 is itself, and a fixed low word with different high
    words gives different words). Python ints stay Python ints (no tensor op per constant)."""
    if not isinstance(k, torch.Tensor):
        k = int(k) & (2 ** 64 - 1)
        return (k & MASK32) ^ (((k >> 32) * _FOLD) & MASK32)
    k = _as_tensor(k)
    high = (k >> 32) & MASK32          # arithmetic shift, then the two's complement high word
    return (k & MASK32) ^ ((high * _FOLD) & MASK32)


def _absorb(state: torch.Tensor, k) -> torch.Tensor:
    return _mix(state ^ _word(k))


def _state(keys, device=None) -> torch.Tensor:
    if not keys:
        raise ValueError("a key needs at least one component")
    if device is None:
        device = next((k.device for k in keys if isinstance(k, torch.Tensor)), None)
    state = torch.tensor(_INIT, dtype=torch.int64, device=device)
    for k in keys:
        state = _absorb(state, k)
    return state


def bits32(*keys) -> torch.Tensor:
    """The hash of the key (k1, k2, ...): int64 in [0, 2**32), the broadcast shape of the
    components. Changing any component gives an unrelated value. The hash of a key that starts
    with a tensor of earlier hashes, bits32(bits32(a, b), c), is as good a key for (a, b, c)
    and lets callers hash a common prefix once (per row) and the fine part per column."""
    return _state(keys)


def uniform(*keys) -> torch.Tensor:
    """float64 in [0, 1): 53 random bits, from the hashes of (*keys, 0) and (*keys, 1)."""
    state = _state(keys)
    high = _absorb(state, 0) >> 6   # 26 bits
    low = _absorb(state, 1) >> 5    # 27 bits
    return ((high << 27) | low).to(torch.float64) * (2.0 ** -53)


def below(high, *keys) -> torch.Tensor:
    """int64 uniform in [0, high) (high: int or int64 tensor >= 1, broadcast with the key):
    floor(uniform * high), which is exact up to a bias of at most high / 2**53."""
    u = uniform(*keys)
    high = _as_tensor(high, u.device)
    out = torch.floor(u * high.to(torch.float64)).to(torch.int64)
    return torch.minimum(out, high - 1)
