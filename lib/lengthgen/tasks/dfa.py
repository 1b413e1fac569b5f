"""Minimal deterministic finite automata, built by unfolding a language's step function.

A language is written as a start value, a step function (value, symbol) -> value, or None once
the string can never be accepted, and an acceptance test on values. `DFA.from_step` explores the
reachable values, adds one dead state for None, and minimizes, so every language gets the unique
minimal complete DFA whatever bookkeeping its definition used. States are numbered in
breadth-first order from the start state (symbols in alphabet order), so the numbering is
canonical: two definitions of the same language give identical DFAs.

The DFA answers what the tasks need: membership, the legal next symbols at a state, and the
number of accepted continuations of each length (for exact uniform sampling).
"""
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Hashable

import numpy as np

from lengthgen.errors import LengthgenError

END = "$"  # the end-of-string symbol in legal-next sets


@dataclass(frozen=True, eq=False)
class DFA:
    alphabet: tuple[str, ...]
    delta: np.ndarray      # int64 [n_states, n_symbols]: next state
    accepting: np.ndarray  # bool [n_states]
    start: int = 0

    @property
    def n_states(self) -> int:
        return len(self.accepting)

    @classmethod
    def from_step(cls, alphabet: str, start: Hashable,
                  step: Callable[[Hashable, str], Hashable | None],
                  accepts: Callable[[Hashable], bool]) -> "DFA":
        """The minimal DFA of the language {w : accepts(step*(start, w))} (None = rejected)."""
        dead = object()  # the one state of strings that can never be accepted
        ids, values, rows = {start: 0}, [start], []
        queue = deque([start])
        while queue:
            value = queue.popleft()
            for symbol in alphabet:
                nxt = dead if value is dead else step(value, symbol)
                if nxt is None:
                    nxt = dead
                if nxt not in ids:
                    ids[nxt] = len(values)
                    values.append(nxt)
                    queue.append(nxt)
                rows.append(ids[nxt])
        delta = np.array(rows, dtype=np.int64).reshape(len(values), len(alphabet))
        accepting = np.array([v is not dead and bool(accepts(v)) for v in values])
        return cls(tuple(alphabet), delta, accepting).minimized()

    def minimized(self) -> "DFA":
        """Merge indistinguishable states (Moore's partition refinement), renumber canonically."""
        block = self.accepting.astype(np.int64)
        n_blocks = len(set(block.tolist()))
        while True:  # split blocks by where their states go until no block splits
            signatures = [(block[q], *block[self.delta[q]]) for q in range(self.n_states)]
            numbering = {sig: i for i, sig in enumerate(dict.fromkeys(signatures))}
            block = np.array([numbering[sig] for sig in signatures], dtype=np.int64)
            if len(numbering) == n_blocks:
                return self._quotient(block)
            n_blocks = len(numbering)

    def _quotient(self, block: np.ndarray) -> "DFA":
        """The DFA on the blocks of `block`, numbered breadth-first from the start state."""
        order = {block[self.start]: 0}
        representative = [self.start]
        queue = deque([self.start])
        while queue:
            q = queue.popleft()
            for r in self.delta[q]:
                if block[r] not in order:
                    order[block[r]] = len(order)
                    representative.append(r)
                    queue.append(r)
        delta = np.array([[order[block[r]] for r in self.delta[q]] for q in representative],
                         dtype=np.int64).reshape(len(representative), len(self.alphabet))
        accepting = self.accepting[representative]
        return DFA(self.alphabet, delta, accepting, 0)

    # --- reading strings ----------------------------------------------------------------------
    def codes(self, string: str) -> list[int]:
        """Symbol indices of a string; a symbol outside the alphabet is a clear error."""
        index = {s: i for i, s in enumerate(self.alphabet)}
        try:
            return [index[ch] for ch in string]
        except KeyError as e:
            raise LengthgenError(f"symbol {e.args[0]!r} is not in the alphabet "
                                 f"{{{','.join(self.alphabet)}}}") from None

    def run(self, string: str) -> int:
        """The state reached from the start state by reading `string`."""
        q = self.start
        for code in self.codes(string):
            q = self.delta[q, code]
        return int(q)

    def accepts(self, string: str) -> bool:
        return bool(self.accepting[self.run(string)])

    # --- what can follow ----------------------------------------------------------------------
    @cached_property
    def live(self) -> np.ndarray:
        """bool [n_states]: states from which some accepting state can be reached."""
        live = self.accepting.copy()
        while True:
            grown = live | live[self.delta].any(axis=1)
            if (grown == live).all():
                return live
            live = grown

    def legal_next(self, state: int) -> frozenset[str]:
        """Symbols after which acceptance is still possible, plus END if `state` accepts."""
        live = self.live
        legal = {s for s, r in zip(self.alphabet, self.delta[state]) if live[r]}
        return frozenset(legal | ({END} if self.accepting[state] else set()))

    def path_counts(self, max_length: int) -> list[list[int]]:
        """counts[m][q] = number of strings of length m that lead from q to acceptance (exact)."""
        counts = [[int(a) for a in self.accepting]]
        for _ in range(max_length):
            last = counts[-1]
            counts.append([sum(last[r] for r in row) for row in self.delta.tolist()])
        return counts
