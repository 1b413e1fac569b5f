"""The single attention head of Richard (2024), Eq. (1), and its closed-form solutions.

Eq. (1): X = E_s + B (token plus positional embeddings), logits = att(X) X V E^T with the token
embeddings tied as unembedding. With uniform attention (Q = 0) row r of att(X) X is the mean of
the first r rows of X, so with E = [1, -1] the head reads the stack size of the prefix.

- ClosedFormHead: d = 1, E = [1, -1], V = v, B(s) from Eq. (4) for one training word s: 2N + 3
  weights. gamma = -1/2 with v < -2N^2 completes any prefix into a balanced word (Theorem 4.1).
- NoPositionHead: Claim 5.3, E = [1 - 1/(2N+1), -1] and no positional embedding.
- MemorizationHead: Theorem 3.1, any token sequence memorized in d dimensions with random
  (Johnson-Lindenstrauss) token embeddings and B = R E (Lemma 5.1).
- SelfAttentionHead: the same Eq. (1) as a trainable torch module (d dimensions, optional
  fixed +-1 token embeddings, uniform or softmax attention), used in the ablation and Fig. 7.
"""
import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from lengthgen.errors import LengthgenError
from lengthgen.models.positions import PositionalEncoding
from lengthgen.models.protocol import default_roles
from lengthgen.theory.dyck_bound import (theorem31_bound, theorem31_epsilon,  # noqa: F401
                                         theorem31_min_dimension)
from lengthgen.tasks.dyck import BOS, CLOSE, OPEN, TOKEN_ID, check_brackets, is_prefix

BRACKET_IDS = (TOKEN_ID[OPEN], TOKEN_ID[CLOSE])


def to_signs(word: str) -> np.ndarray:
    """'(' -> 0, ')' -> 1: row indices into the two-token embedding E."""
    return np.array([0 if c == OPEN else 1 for c in check_brackets(word)], dtype=np.int64)


def to_word(tokens) -> str:
    return "".join(OPEN if int(t) == 0 else CLOSE for t in tokens)


def uniform_attention(x: np.ndarray) -> np.ndarray:
    """Causal uniform attention: row r is the mean of rows 1..r of x ([B, T, d])."""
    return np.cumsum(x, axis=1) / np.arange(1, x.shape[1] + 1)[None, :, None]


def positional_embeddings(tokens: np.ndarray, embedding: np.ndarray, gamma: float) -> np.ndarray:
    """Eq. (4): B_1 = -E_{s1} + g E_{s2}, B_i = -E_{si} + g (E_{s(i+1)} - E_{si}).

    The telescoping sum gives sum_{i<=r} B_i = -sum_{i<=r} E_{si} + g E_{s(r+1)}, so the mean
    of X over the first r positions points at the next training token. The last row has no
    next token; E_{s(n+1)} is taken as 0 there (it never predicts anything).
    """
    e = embedding[tokens]                                   # [n, d]
    nxt = np.concatenate([e[1:], np.zeros_like(e[:1])])      # E_{s(i+1)}, 0 past the end
    b = -e + gamma * (nxt - e)
    b[0] = -e[0] + gamma * nxt[0]
    return b


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=-1, keepdims=True)


def generate(forward, prefixes: np.ndarray, length: int, rng: np.random.Generator | None = None,
             greedy: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Apply Eq. (1) repeatedly: extend equal-length prefixes [B, r] to [B, length].

    forward maps tokens [B, T] to logits [B, T, t]. Returns the sequences and the probability
    that the model generates exactly those tokens (the product of the chosen softmax entries).
    """
    seqs = np.asarray(prefixes, dtype=np.int64)
    prob = np.ones(len(seqs))
    rng = rng if rng is not None else np.random.default_rng(0)
    while seqs.shape[1] < length:
        p = softmax(forward(seqs)[:, -1])
        if greedy:
            nxt = p.argmax(axis=1)
        else:
            nxt = (rng.random((len(p), 1)) > np.cumsum(p, axis=1)).sum(axis=1)
            nxt = np.minimum(nxt, p.shape[1] - 1)
        prob *= p[np.arange(len(p)), nxt]
        seqs = np.concatenate([seqs, nxt[:, None]], axis=1)
    return seqs, prob


class OneDimensionalHead:
    """Eq. (1) in d = 1 on the two brackets: uniform attention, V = v, tied unembedding."""
    n: int
    embedding: np.ndarray   # [2, 1]: E('('), E(')')
    positions: np.ndarray   # [2N, 1]
    v: float

    def forward(self, tokens: np.ndarray) -> np.ndarray:
        """Logits [B, T, 2] for tokens [B, T] (0 = '(', 1 = ')')."""
        x = self.embedding[tokens] + self.positions[None, : tokens.shape[1]]
        return self.v * uniform_attention(x) @ self.embedding.T

    def complete(self, prefixes: list[str], rng: np.random.Generator | None = None,
                 greedy: bool = False) -> tuple[list[str], np.ndarray]:
        """Completions (the generated suffixes) of each prefix up to length 2N, and the
        probability of each generated suffix."""
        completions, probs = [""] * len(prefixes), np.ones(len(prefixes))
        groups: dict[int, list[int]] = {}
        for i, prefix in enumerate(prefixes):
            if not prefix or not is_prefix(prefix, self.n):
                raise LengthgenError(f"{prefix!r} is not a non-empty prefix of a word of "
                                     f"D_{2 * self.n}")
            groups.setdefault(len(prefix), []).append(i)
        for r, idx in groups.items():
            tokens = np.stack([to_signs(prefixes[i]) for i in idx])
            seqs, p = generate(self.forward, tokens, 2 * self.n, rng, greedy)
            for j, i in enumerate(idx):
                completions[i], probs[i] = to_word(seqs[j, r:]), p[j]
        return completions, probs


def check_finite_logits(gamma: float, v: float) -> None:
    """Refuse gamma and v for which the head's logits are not finite numbers (NaN or infinity,
    or so large that v times a mean of embeddings, at most 2 + 2|gamma| in size, overflows), or
    are all zero (v = 0)."""
    if not (math.isfinite(gamma) and math.isfinite(v)):
        raise LengthgenError(f"gamma and v must be finite numbers, got gamma={gamma}, v={v}")
    if v == 0:
        raise LengthgenError("v = 0 makes every logit 0: the head would ignore its input")
    if not math.isfinite(abs(v) * (2.0 + 2.0 * abs(gamma))):
        raise LengthgenError(f"gamma={gamma:g} and v={v:g} overflow the head's logits; choose "
                             f"smaller values")


class ClosedFormHead(OneDimensionalHead):
    """Theorem 4.1: the head built from one training word s of D_2N (2N + 3 weights).

    v defaults to the theorem's regime: v = -(2N^2 + 1) when gamma < 0 (generalization), and
    v gamma = N^2 + 1 when gamma > 0 (memorization with a repulsive model).
    """

    def __init__(self, train_word: str, gamma: float = -0.5, v: float | None = None):
        check_brackets(train_word)
        if len(train_word) < 2 or len(train_word) % 2:
            raise LengthgenError(f"the training word must have even length >= 2, got {len(train_word)}")
        self.train_word, self.n, self.gamma = train_word, len(train_word) // 2, float(gamma)
        if v is None:
            if gamma == 0:
                raise LengthgenError("gamma = 0 needs an explicit v (the head would be constant)")
            v = -(2 * self.n ** 2 + 1) if gamma < 0 else (self.n ** 2 + 1) / gamma
        self.v = float(v)
        check_finite_logits(self.gamma, self.v)
        self.embedding = np.array([[1.0], [-1.0]])
        self.positions = positional_embeddings(to_signs(train_word), self.embedding, self.gamma)

    @property
    def n_weights(self) -> int:
        return self.positions.size + self.embedding.size + 1


class NoPositionHead(OneDimensionalHead):
    """Claim 5.3: E = [1 - 1/(2N+1), -1], no positional embedding, v < -2N^2 (2N+1).

    The slightly shorter '(' makes the sum negative exactly when the stack is empty, so the
    head opens on an empty stack and closes otherwise: it completes into ...()()().
    """

    def __init__(self, n: int, v: float | None = None):
        self.n = n
        self.v = float(v) if v is not None else -(2 * n ** 2 * (2 * n + 1) + 1)
        check_finite_logits(0.0, self.v)
        self.embedding = np.array([[1.0 - 1.0 / (2 * n + 1)], [-1.0]])
        self.positions = np.zeros((2 * n, 1))

    @property
    def n_weights(self) -> int:
        return self.embedding.size + 1


class MemorizationHead:
    """Theorem 3.1: memorize one sequence s in [t]^n with d-dimensional token embeddings.

    E has i.i.d. N(0, 1/d) entries (a Johnson-Lindenstrauss map of the one-hot embeddings),
    B = R E with R from Lemma 5.1, V = v I_d, uniform attention. The logits at row r are
    (v gamma / r) E_{s(r+1)} E^T, so s(r+1) wins when E E^T is close to the identity.
    """

    def __init__(self, sequence, vocab_size: int, d: int, gamma: float, v: float,
                 rng: np.random.Generator):
        self.sequence = np.asarray(sequence, dtype=np.int64)
        self.t, self.d, self.gamma, self.v = vocab_size, d, float(gamma), float(v)
        self.embedding = rng.normal(0.0, 1.0 / math.sqrt(d), size=(vocab_size, d))
        one_hot = np.eye(vocab_size)
        r = positional_embeddings(self.sequence, one_hot, self.gamma)   # Lemma 5.1's R
        self.positions = r @ self.embedding

    def forward(self, tokens: np.ndarray) -> np.ndarray:
        x = self.embedding[tokens] + self.positions[None, : tokens.shape[1]]
        return self.v * uniform_attention(x) @ self.embedding.T

    def regeneration_probability(self, r: int) -> float:
        """Exact probability that the prefix s_{:r} is completed into s (no sampling)."""
        n = len(self.sequence)
        logits = self.forward(self.sequence[None, :])[0]
        p = softmax(logits)
        return float(np.prod(p[np.arange(r - 1, n - 1), self.sequence[r:]]))


@dataclass
class HeadConfig:
    """What the trainer reads from a model: its positional encoding and table size."""
    d_model: int
    n_positions: int
    pe: PositionalEncoding = PositionalEncoding.APE

    def __post_init__(self):
        self.pe = PositionalEncoding.parse(self.pe, (PositionalEncoding.APE,), "attention head")

    def to_dict(self) -> dict:
        return {**asdict(self), "pe": self.pe.value}


class SelfAttentionHead(nn.Module):
    """Eq. (1) as a trainable module on the Dyck task's tokens (<pad>, <bos>, '(', ')').

    fixed_tokens=True freezes E('(') = +1, E(')') = -1 in every dimension and E(<bos>) = 0,
    as in the paper's ablation; uniform=True fixes Q = 0. The output logits are att X V E^T
    over the whole vocabulary; generation only ever reads the two bracket logits.
    """

    def __init__(self, d: int, n_positions: int, uniform: bool = True, fixed_tokens: bool = True,
                 vocab_size: int = 4):
        super().__init__()
        self.uniform = uniform
        self.cfg = HeadConfig(d_model=d, n_positions=n_positions)
        self.tok = nn.Embedding(vocab_size, d)
        if fixed_tokens:
            with torch.no_grad():
                self.tok.weight.zero_()
                self.tok.weight[TOKEN_ID[OPEN]] = 1.0
                self.tok.weight[TOKEN_ID[CLOSE]] = -1.0
            self.tok.weight.requires_grad_(False)
        self.pos = nn.Parameter(torch.zeros(n_positions, d))
        self.value = nn.Linear(d, d, bias=False)
        if not uniform:
            self.query = nn.Linear(d, d, bias=False)
            self.key = nn.Linear(d, d, bias=False)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor | None = None,
                check: bool = True) -> torch.Tensor:
        """Logits [B, T, vocab]; offsets shift each sequence's positions (as in the decoder)."""
        t = ids.shape[1]
        positions = torch.arange(t, device=ids.device)
        if offsets is not None:
            positions = (offsets[:, None] + positions).clamp(max=self.cfg.n_positions - 1)
        if check and t > self.cfg.n_positions:
            raise LengthgenError(f"{t} positions do not fit the table of {self.cfg.n_positions}")
        x = self.tok(ids) + self.pos[positions]
        if self.uniform:
            mixed = torch.cumsum(x, dim=1) / torch.arange(1, t + 1, device=x.device)[None, :, None]
        else:
            scores = self.query(x) @ self.key(x).transpose(1, 2)
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            mixed = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ x
        return self.value(mixed) @ self.tok.weight.T

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def parameter_roles(self) -> dict[str, str]:
        """Roles for per-group learning rates (lengthgen.models.protocol.ROLES)."""
        return default_roles(self, embeddings=("tok.weight", "pos"))


@torch.no_grad()
def complete_with_model(model: nn.Module, prefixes: list[str], n: int, rng: np.random.Generator,
                        greedy: bool = False, device="cpu") -> list[str]:
    """Complete bracket prefixes with a trained next-token model on the Dyck task's vocabulary.

    The model sees <bos> + prefix and picks among '(' and ')' only (softmax over those two
    logits), until the word has 2n brackets. All prefixes share one buffer: at each position,
    rows whose prefix is already used up take the model's sample, the others keep their own
    bracket (a causal model's output at a position never depends on later tokens).
    Returns the completions (suffixes).
    """
    model.eval()
    lengths = np.array([len(check_brackets(p)) for p in prefixes])
    if len(prefixes) == 0:
        return []
    if lengths.min() < 1 or lengths.max() > 2 * n:
        raise LengthgenError(f"prefixes must have 1 to {2 * n} brackets")
    buffer = torch.full((len(prefixes), 2 * n + 1), TOKEN_ID[BOS], dtype=torch.long)
    for i, p in enumerate(prefixes):
        buffer[i, 1: len(p) + 1] = torch.tensor([TOKEN_ID[c] for c in p])
    buffer = buffer.to(device)
    bracket_ids = torch.tensor(BRACKET_IDS, device=device)
    for t in range(int(lengths.min()), 2 * n):
        free = np.flatnonzero(lengths <= t)   # rows whose next bracket (position t + 1) is generated
        logits = model(buffer[free, : t + 1])[:, -1, list(BRACKET_IDS)].double().cpu().numpy()
        p = softmax(logits)
        pick = p.argmax(axis=1) if greedy else (rng.random(len(p)) >= p[:, 0]).astype(int)
        buffer[torch.as_tensor(free, device=device), t + 1] = bracket_ids[torch.as_tensor(pick, device=device)]
    rows = buffer.cpu().numpy()
    return ["".join(OPEN if tok == TOKEN_ID[OPEN] else CLOSE for tok in rows[i, lengths[i] + 1:])
            for i in range(len(prefixes))]
