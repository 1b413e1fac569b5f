"""What is known about each task and language: one table that every chapter reads.

The expressiveness columns are Huang et al. (2025), Table 2 (the 17 regular languages of
Bhattamishra et al. (2020), plus PARITY as an unnumbered row) and the table of App. E.2.2 (the
8 algorithmic tasks). C-RASP[] is the class without positional relations (the theory's match for
transformers without positional encodings, NoPE); C-RASP[periodic,local] adds periodic and
local positional relations (the match for absolute positional encodings, APE). Entries are
"yes" (a program is given), "no" (proven impossible) or "none found" (neither).

The definitions are those of the DFAs in Bhattamishra et al.'s generators. Two are worth
stating carefully: Tomita 3 forbids a maximal run of 1s of odd length immediately followed by a
maximal run of 0s of odd length (so 100 is in, 10 and 1101000 are out), and D_n is Dyck-1 of
depth at most n with a = open, b = close (D_0 = empty word, D_n = (a D_{n-1} b)*).
"""
from dataclasses import dataclass

from lengthgen.errors import unknown_name

YES, NO, NONE_FOUND = "yes", "no", "none found"


@dataclass(frozen=True)
class TaskInfo:
    id: str
    name: str                  # as the paper writes it
    kind: str                  # "language" (predict legal next symbols) or "algorithmic"
    alphabet: tuple[str, ...]  # input symbols
    definition: str
    crasp: str                 # C-RASP[] (NoPE)
    crasp_periodic_local: str  # C-RASP[periodic,local] (APE)
    ac0: bool
    star_free: bool | None = None  # languages only
    dot_depth: int | None = None   # star-free languages only
    number: int | None = None      # row 1..17 of Table 2 (None: PARITY and the tasks)


def _language(number, id, name, alphabet, definition, crasp, periodic_local, star_free,
              dot_depth, ac0):
    return TaskInfo(id, name, "language", tuple(alphabet), definition, crasp, periodic_local,
                    ac0, star_free, dot_depth, number)


def _task(id, name, alphabet, definition, crasp, periodic_local, ac0):
    return TaskInfo(id, name, "algorithmic", tuple(alphabet), definition, crasp, periodic_local,
                    ac0)


def _dyck(number, n):
    return _language(number, f"d{n}", f"D_{n}", "ab",
                     f"Dyck-1 words of depth at most {n} (a = open, b = close)",
                     YES, YES, True, n, True)


_NUMBERS = tuple(str(i) for i in range(150))

LANGUAGES = (
    _language(1, "tomita1", "Tomita 1", "01", "1*", YES, YES, True, 1, True),
    _language(2, "tomita2", "Tomita 2", "01", "(10)*", YES, YES, True, 1, True),
    _language(3, "tomita3", "Tomita 3", "01",
              "no maximal run of 1s of odd length immediately followed by a maximal run of 0s "
              "of odd length", NO, NO, False, None, True),
    _language(4, "tomita4", "Tomita 4", "01", "no substring 000", NO, YES, True, 1, True),
    _language(5, "tomita5", "Tomita 5", "01", "even number of 0s and even number of 1s",
              NO, NO, False, None, False),
    _language(6, "tomita6", "Tomita 6", "01", "(#0 - #1) divisible by 3",
              NO, NO, False, None, False),
    _language(7, "tomita7", "Tomita 7", "01", "0*1*0*1*", YES, YES, True, 1, True),
    _dyck(8, 2), _dyck(9, 3), _dyck(10, 4), _dyck(11, 12),
    _language(12, "aa_star", "(aa)*", "a", "(aa)*: an even number of a", NO, YES, False, None,
              True),
    _language(13, "aaaa_star", "(aaaa)*", "a", "(aaaa)*: a number of a divisible by 4",
              NO, YES, False, None, True),
    _language(14, "abab_star", "(abab)*", "ab", "(abab)*", NO, YES, False, None, True),
    _language(15, "abcde_plus", "aa*bb*cc*dd*ee*", "abcde", "aa*bb*cc*dd*ee*",
              YES, YES, True, 1, True),
    _language(16, "ab_d_bc", "{a,b}*d{b,c}*", "abcd", "{a,b}*d{b,c}*", YES, YES, True, 1, True),
    _language(17, "012_02", "{0,1,2}*02*", "012", "{0,1,2}*02*", NO, NO, True, 2, True),
    _language(None, "parity", "PARITY", "01", "an even number of 1s", NO, NO, False, None,
              False),
)

ALGORITHMIC = (
    _task("binary_majority", "Binary Majority", "01",
          "the more frequent bit of a bit string with #0 != #1", YES, YES, False),
    _task("binary_majority_interleave", "Binary Majority Interleave", "01",
          "the majority bits of three interleaved bit strings", NONE_FOUND, YES, False),
    _task("majority", "Majority", "abcdefghijklmnopqrstuvwxyz",
          "the unique most frequent of 26 letters", YES, YES, False),
    _task("sort", "Sort", _NUMBERS, "distinct numbers from 0..149, sorted", YES, YES, True),
    _task("copy_unique", "Copy (unique)", _NUMBERS, "copy distinct numbers from 0..149",
          NO, YES, True),
    _task("copy_repeat", "Copy (repeat)", "ab", "copy a string over {a, b}", NO, NO, True),
    _task("parity_task", "Parity", "01", "e or o: an even or odd number of 1s", NO, NO, False),
    _task("addition", "Addition", "01+=", "binary a+b= -> the binary sum", NO, NO, True),
)

TABLE = {info.id: info for info in LANGUAGES + ALGORITHMIC}


def info(task_id: str) -> TaskInfo:
    """The metadata row of a task or language id."""
    if task_id not in TABLE:
        raise unknown_name("task or language", task_id, TABLE)
    return TABLE[task_id]


def language_ids() -> list[str]:
    """The 17 languages in the paper's order, then PARITY."""
    return [i.id for i in LANGUAGES]


def algorithmic_ids() -> list[str]:
    """The 8 algorithmic tasks in the paper's order."""
    return [i.id for i in ALGORITHMIC]
