"""Check a program against an independent definition: a language's DFA, a task's solver, or a
reference function of the library. Every check returns a Report with what was compared and the
disagreements found (as readable strings), so tests, the CLI and the tables share one code path.

Languages: every string up to a length (all of them, vectorized: the verdicts on all prefixes of
all strings of the longest length cover every shorter string too), plus random strings up to a
longer length, a mix of members (uniform, from the language's sampler), members with one symbol
changed, and uniform strings. Tasks: random instances from the task's sampler at many lengths,
plus every instance over a small vocabulary when the program is generated from its vocabulary.
"""
import itertools
from dataclasses import dataclass, field

import numpy as np

from lengthgen.crasp.interpret import accept_batch, encode, run_ids, shown_alphabet
from lengthgen.crasp.ir import Program
from lengthgen.crasp.library import NEXT_REFERENCES, REFERENCES
from lengthgen.errors import LengthgenError
from lengthgen.tasks.algorithmic import get_algorithmic
from lengthgen.tasks.languages import get_language

MAX_EXHAUSTIVE_STRINGS = 300_000   # default cap on |alphabet|^length for the exhaustive part
CHUNK = 200_000                    # strings per batch when enumerating
MAX_SHOWN = 10


@dataclass
class Report:
    program: str
    against: str
    checked: int = 0        # verdicts compared (languages: one per prefix) or instances (tasks)
    exhaustive_length: int = 0             # every string up to this length was checked
    disagreements: list = field(default_factory=list)
    n_disagreements: int = 0

    @property
    def ok(self) -> bool:
        return self.n_disagreements == 0

    def add(self, examples: list[str]) -> None:
        self.n_disagreements += len(examples)
        self.disagreements += examples[:MAX_SHOWN - len(self.disagreements)]

    def summary(self) -> dict:
        return {"program": self.program, "against": self.against, "checked": self.checked,
                "exhaustive_length": self.exhaustive_length,
                "disagreements": self.n_disagreements, "examples": self.disagreements}


# ----- languages ------------------------------------------------------------------------------
def _dfa_prefix_verdicts(dfa, codes: np.ndarray) -> np.ndarray:
    """Membership of every prefix of every row of codes (dfa symbol indices): bool [B, n + 1]."""
    state = np.full(len(codes), dfa.start, dtype=np.int64)
    out = [dfa.accepting[state]]
    for k in range(codes.shape[1]):
        state = dfa.delta[state, codes[:, k]]
        out.append(dfa.accepting[state])
    return np.stack(out, axis=1)


def _exhaustive_length(n_symbols: int, max_length: int, cap: int | None) -> int:
    length = max_length
    while cap is not None and length > 0 and n_symbols ** length > cap:
        length -= 1
    return length


def _all_strings(n_symbols: int, length: int):
    """Every string of this length as symbol indices, in batches of at most CHUNK rows."""
    total = n_symbols ** length
    for start in range(0, total, CHUNK):
        index = np.arange(start, min(total, start + CHUNK), dtype=np.int64)
        powers = n_symbols ** np.arange(length - 1, -1, -1, dtype=np.int64)
        yield (index[:, None] // powers[None, :]) % n_symbols


def _random_strings(rng, language, alphabet_size: int, n_random: int, max_length: int):
    """(length, codes) groups: per random length a third members, a third members with one
    symbol changed, a third uniform strings (all as symbol indices of the language)."""
    per_length = 12
    lengths = rng.integers(1, max_length + 1, size=max(1, n_random // per_length))
    for n in lengths.tolist():
        rows = [rng.integers(0, alphabet_size, size=(per_length // 3, n))]
        if language is not None and hasattr(language, "count_members") and \
                language.count_members(n) > 0:
            index = {s: k for k, s in enumerate(language.alphabet)}
            members = np.array([[index[s] for s in w] for w in
                                language.sample_members(rng, n, 2 * per_length // 3)])
            changed = members[per_length // 3:].copy()
            where = rng.integers(0, n, size=len(changed))
            changed[np.arange(len(changed)), where] = rng.integers(0, alphabet_size, len(changed))
            rows += [members[:per_length // 3], changed]
        else:
            rows.append(rng.integers(0, alphabet_size, size=(2 * per_length // 3, n)))
        yield n, np.concatenate(rows)


def check_language(program: Program, language_id: str, max_length: int = 10,
                   n_random: int = 2000, max_random_length: int = 300, seed: int = 0,
                   exhaustive_cap: int | None = MAX_EXHAUSTIVE_STRINGS) -> Report:
    """Compare the program's verdict with the DFA of a language of lengthgen.tasks (or with a
    reference function of the library) on every prefix of the strings described above.

    The exhaustive part stops at the longest length <= max_length with at most exhaustive_cap
    strings (None: no cap; large alphabets then take a while)."""
    if max_length < 0 or n_random < 0 or max_random_length < 1:
        raise LengthgenError(f"need max_length >= 0, n_random >= 0 and max_random_length >= 1, "
                             f"got {max_length}, {n_random}, {max_random_length}")
    rng = np.random.default_rng(seed)
    if language_id in REFERENCES:
        letters, member = REFERENCES[language_id]
        alphabet, language, truth = tuple(letters), None, None
    else:
        language = get_language(language_id)
        alphabet, member = tuple(language.alphabet), None
        truth = lambda codes: _dfa_prefix_verdicts(language.dfa, codes)  # noqa: E731
    if set(program.alphabet) != set(alphabet):
        raise LengthgenError(f"program {program.name!r} has alphabet "
                             f"{shown_alphabet(program.alphabet)} but {language_id} has "
                             f"{shown_alphabet(alphabet)}")
    to_program = np.array([program.alphabet.index(s) for s in alphabet])
    report = Report(program.name, language_id)
    report.exhaustive_length = _exhaustive_length(len(alphabet), max_length, exhaustive_cap)
    longest = report.exhaustive_length
    if member is None:   # all prefixes of the longest strings cover every shorter string
        groups = [(longest, codes) for codes in _all_strings(len(alphabet), longest)]
    else:                # a python reference is slow: each length on its own, final verdicts
        groups = [(n, codes) for n in range(longest + 1)
                  for codes in _all_strings(len(alphabet), n)]
        n_random //= 10
    groups += list(_random_strings(rng, language, len(alphabet), n_random, max_random_length))
    for n, codes in groups:
        got = accept_batch(program, to_program[codes])
        if member is None:
            want = truth(codes)
        else:
            got = got[:, -1:]
            want = np.array([[member("".join(alphabet[c] for c in row))] for row in codes])
        report.checked += want.size
        bad_rows, bad_cols = np.nonzero(got != want)
        prefix_lengths = list(range(n + 1)) if got.shape[1] == n + 1 else [n]
        report.add([f"{''.join(alphabet[c] for c in codes[r, :prefix_lengths[k]]) or '(empty)'}:"
                    f" program {'accepts' if got[r, k] else 'rejects'}"
                    for r, k in zip(bad_rows.tolist(), bad_cols.tolist())])
    return report


# ----- next-token programs --------------------------------------------------------------------
def check_instances(program: Program, instances: list[list[str]], solve,
                    sep: str | None = "<sep>", eos: str = "<eos>", against: str = "") -> Report:
    """Run the program on `input <sep> answer` for each instance (answer = solve(input)) and
    require, from <sep> to the last answer token, that exactly the next token is predicted.
    sep=None: the input ends with its own separator (addition's "=")."""
    report = Report(program.name, against)
    groups: dict[int, list] = {}
    for x in instances:
        groups.setdefault(len(x), []).append(list(x))
    tokens = list(program.token_outputs)
    for rows in groups.values():
        seqs = [x + ([sep] if sep else []) + list(solve(x)) for x in rows]
        if len({len(s) for s in seqs}) > 1:   # answers of different lengths: one at a time
            batches = [[s] for s in seqs]
        else:
            batches = [seqs]
        for batch in batches:
            values = run_ids(program, encode(program, batch))
            pred = np.stack([values[program.token_outputs[t]] for t in tokens], axis=-1)
            start = len(rows[0]) + (1 if sep else 0)   # position of the last prompt token
            for r, seq in enumerate(batch):
                targets = seq[start:] + [eos]
                for k, target in enumerate(targets):
                    chosen = [tokens[t] for t in np.flatnonzero(pred[r, start + k])]
                    if chosen != [target]:
                        report.add([f"{' '.join(seq[:start + k])}: predicts "
                                    f"{{{', '.join(chosen)}}}, next is {target}"])
            report.checked += len(batch)
    return report


def check_task(program: Program, task_id: str, n_random: int = 2000, max_length: int = 150,
               n_lengths: int = 40, seed: int = 0) -> Report:
    """Random instances of an algorithmic task at n_lengths lengths spread over 1..max_length
    (always including the shortest and the longest)."""
    task = get_algorithmic(task_id)
    rng = np.random.default_rng(seed)
    feasible = task.feasible_lengths(1, max_length)
    picks = sorted(set(rng.choice(feasible, size=min(len(feasible), n_lengths), replace=False).tolist()))
    picks = sorted(set(picks) | {feasible[0], feasible[-1]})
    per_length = max(1, n_random // len(picks))
    instances = [x for n in picks for x in task.sample_instances(rng, n, per_length)]
    return check_instances(program, instances, task.solve, sep=task.sep, against=task_id)


def all_instances(symbols, solve_ok, max_length: int):
    """Every input over `symbols` up to max_length that the task accepts (solve_ok(x) true)."""
    for n in range(1, max_length + 1):
        for x in itertools.product(symbols, repeat=n):
            if solve_ok(list(x)):
                yield list(x)


def check_next_reference(program: Program, name: str, max_length: int = 8, n_random: int = 200,
                         max_random_length: int = 300, seed: int = 0) -> Report:
    """A next-symbol program with a reference function (the induction head): at every position
    1..n exactly the reference symbol is predicted. The reference is a slow python loop, so
    the exhaustive part stops at the longest length with at most 20,000 strings."""
    letters, reference = NEXT_REFERENCES[name]
    rng = np.random.default_rng(seed)
    max_length = _exhaustive_length(len(letters), max_length, 20_000)
    report = Report(program.name, name, exhaustive_length=max_length)
    groups = [codes for n in range(1, max_length + 1) for codes in _all_strings(len(letters), n)]
    groups += [rng.integers(0, len(letters), size=(n_random // 20, n))
               for n in rng.integers(1, max_random_length + 1, size=20).tolist()]
    tokens = list(program.token_outputs)
    to_program = np.array([program.alphabet.index(s) for s in letters])
    for codes in groups:
        values = run_ids(program, to_program[codes])
        pred = np.stack([values[program.token_outputs[t]][:, 1:] for t in tokens], axis=-1)
        for r, row in enumerate(codes):
            w = "".join(letters[c] for c in row)
            for k, target in enumerate(reference(w)):
                chosen = [tokens[t] for t in np.flatnonzero(pred[r, k])]
                if chosen != [target]:
                    report.add([f"{w[:k + 1]}: predicts {{{', '.join(chosen)}}}, "
                                f"reference {target}"])
            report.checked += 1
    return report
