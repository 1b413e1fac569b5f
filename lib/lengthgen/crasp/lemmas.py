"""Why each "no" of Huang et al.'s Tables 2 and 3 holds: the result that proves it.

A "yes" is backed by a program of the library (crasp.library) that is checked against the
language or task; a "no" cannot be checked by running anything, so it is backed by a reference
to its proof. Section and lemma numbers are those of Huang et al. (2025), arXiv v2 appendix.
Where a figure of the book illustrates the argument, `illustration` names its figure id.
"""
from dataclasses import dataclass

NOPE, APE = "C-RASP[]", "C-RASP[periodic,local]"
COLUMNS = (NOPE, APE)


@dataclass(frozen=True)
class Proof:
    result: str          # e.g. "Lemma 38"
    argument: str        # one sentence in our words
    illustration: str = ""


_LEMMA_38 = Proof("Lemma 38 (via Lemma 37)",
                  "every C-RASP[] program is eventually constant on a^n, so none can test the "
                  "length modulo a fixed number", "crasp-long-unary")
_PARITY = Proof("Lemma 41 (Lemma 11 (1))", "PARITY is not in C-RASP[periodic,local]")
_COPY = Proof("Corollary 13 (Theorem 12); Lemma 35",
              "a Limit Transformer exchanges only O(log N) bits between the two halves of its "
              "input, too little to copy an arbitrary string")

NO_PROOFS: dict[tuple[str, str], Proof] = {
    ("tomita3", NOPE): Proof("App. E.1.2 (argument of Lemma 38)",
                             "on strings 1^k 0^m the verdicts become constant for large k, m, "
                             "but membership alternates with the parities of k and m"),
    ("tomita3", APE): Proof("App. E.1.2 (via Krebs 2008, Thm. 6.10 and 6.12)",
                            "folding positions mod the period and the blocks around each run "
                            "boundary into the alphabet reduces it to a substring test of the "
                            "kind that C-RASP[] cannot do"),
    ("tomita4", NOPE): Proof("App. E.1.2 and C.3.2 (via Krebs 2008)",
                             "C-RASP[] cannot test for a contiguous substring such as 000"),
    ("tomita5", NOPE): Proof("App. E.1.2 (Lemma 41)", "PARITY restricted to even lengths"),
    ("tomita5", APE): Proof("App. E.1.2 (Lemma 41)", "PARITY restricted to even lengths"),
    ("tomita6", NOPE): Proof("App. E.1.2 (Lemmas 41, 42)",
                             "counting 1s mod 3 is as hard as PARITY, and a length-preserving "
                             "morphism turns it into Tomita 6"),
    ("tomita6", APE): Proof("App. E.1.2 (Lemmas 41, 42)",
                            "counting 1s mod 3 is as hard as PARITY, and a length-preserving "
                            "morphism turns it into Tomita 6"),
    ("aa_star", NOPE): _LEMMA_38,
    ("aaaa_star", NOPE): _LEMMA_38,
    ("abab_star", NOPE): Proof("Lemma 38, Lemma 42", "(ab)^n is in it exactly for even n: the "
                               "length-mod-4 test of Lemma 38 again", "crasp-long-unary"),
    ("012_02", NOPE): Proof("Lemma 36 (Lemma 11 (3))",
                            "it is the language S* b e* of Lemma 11 (3), a model of FlipFlop"),
    ("012_02", APE): Proof("Lemma 36 (Lemma 11 (3))",
                           "it is the language S* b e* of Lemma 11 (3), a model of FlipFlop"),
    ("parity", NOPE): _PARITY,
    ("parity", APE): _PARITY,
    ("copy_unique", NOPE): Proof("App. C.2.2 (via Krebs 2008, Lemma 6.11)",
                                 "unique copying's next-symbol predicate would decide a "
                                 "language known to be outside C-RASP[]"),
    ("copy_repeat", NOPE): _COPY,
    ("copy_repeat", APE): _COPY,
    ("parity_task", NOPE): _PARITY,
    ("parity_task", APE): _PARITY,
    ("addition", NOPE): Proof("Corollary 13", "adding 0 is copying, which Theorem 12 rules out"),
    ("addition", APE): Proof("Corollary 13", "adding 0 is copying, which Theorem 12 rules out"),
}

# Cells that are neither proven nor refuted ("none found" in the paper).
OPEN: dict[tuple[str, str], str] = {
    ("binary_majority_interleave", NOPE):
        "no program known; by Lemma 38 even checking that the length is a multiple of 3 is "
        "impossible in C-RASP[]",
}


def claim(task_id: str, column: str) -> tuple[str, object]:
    """Our entry for one cell: ("yes", program name) when the library has a program in the
    column's fragment, ("no", Proof), ("none found", note), or ("missing", "") if none applies."""
    from lengthgen.crasp.library import get_program, program_names
    if task_id in program_names():
        fragment = get_program(task_id).fragment()
        if column == APE or fragment == NOPE:
            return "yes", task_id
    if (task_id, column) in NO_PROOFS:
        return "no", NO_PROOFS[(task_id, column)]
    if (task_id, column) in OPEN:
        return "none found", OPEN[(task_id, column)]
    return "missing", ""
