"""The try gallery's programs and its rows (try-gallery, `lengthgen.experiments.try_gallery`):
below the figure module, so the chapter's facade (lengthgen.chapters.try_your_own) and the tests
read them here, and the figure module offers only the figure contract."""
from lengthgen.experiments import try_program as trying
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.program import FIG1_BINS


# name -> C-RASP source. Each line of a program is one operation (lengthgen.crasp.syntax).
GALLERY = {
    "balanced_ab": "alphabet a b\nCa := #Q(a)\nCb := #Q(b)\naccept Ca = Cb\n",
    "b_lead_small": "alphabet a b\nCa := #Q(a)\nCb := #Q(b)\naccept Cb <= Ca + 3\n",
    "more_a_than_b_some_c": ("alphabet a b c\nCa := #Q(a)\nCb := #Q(b)\n"
                             "accept Cb + Cb < Ca and exists Q(c)\n"),
    "at_least_40_a": "alphabet a b\nCa := #Q(a)\naccept Ca >= 40\n",
    "even_len_majority": ("alphabet a b\nCa := #Q(a)\nCb := #Q(b)\n"
                          "accept i mod 2 = 0 and Cb < Ca\n"),
    "no_bb_majority": ("alphabet a b\nCa := #Q(a)\nCb := #Q(b)\n"
                       "BB := Q(b) and #[j = i - 1] Q(b) >= 1\n"
                       "accept not exists BB and Cb <= Ca\n"),
    "two_back_a": "alphabet a b\naccept #[j = i - 2] Q(a) >= 1\n",
}


# what each program says, in words (the page's table and the figure's panel titles)
DESCRIPTIONS = {
    "balanced_ab": "as many a's as b's",
    "b_lead_small": "b's lead a's by at most 3",
    "more_a_than_b_some_c": "more than twice as many a's as b's, and some c",
    "at_least_40_a": "at least 40 a's",
    "even_len_majority": "even length and more a's than b's",
    "no_bb_majority": "no bb anywhere, and no more b's than a's",
    "two_back_a": "the symbol two places back is a",
    "tomita1": "Tomita 1: 1*",
    "tomita2": "Tomita 2: (10)*",
    "aa_star": "(aa)*",
    "tomita4": "Tomita 4: no 000",
}


HIGH_BASELINE = "at_least_40_a"        # the gallery's high-baseline program


# Fig. 1's languages run through try: two C-RASP[] ones, one periodic, one local
LIBRARY = ["tomita1", "tomita2", "aa_star", "tomita4"]


FIG1_FIGURE = "huang-fig1-languages"   # whose next-symbol cells the library runs are set beside


BINS = [bin_name(lo, hi) for lo, hi in FIG1_BINS]


LONGEST = BINS[-1]


def ordered(records):
    """The records in the config's order: the gallery, then the library."""
    order = {name: k for k, name in enumerate([*GALLERY, *(f"library-{n}" for n in LIBRARY)])}
    return sorted(records, key=lambda r: (order.get(r["run_name"], len(order)), r["run_name"]))


def fig1_comparison(records, fig1_rows):
    """For each library run and encoding: try's verdict on Len 101-150 beside Fig. 1's
    next-symbol cell of the same language (`huang.sweep.analysis.table` rows; None where that
    cell has no record yet). "same": both generalize or both do not."""
    cells = {(row["task"], row["encoding"]): row for row in fig1_rows}
    out = []
    for r in ordered(records):
        m = r["metrics"]
        if m["kind"] != "library":
            continue
        for encoding in trying.ENCODINGS:
            cell = m["encodings"][encoding]["bins"][LONGEST]
            fig1 = cells.get((m["program"], encoding))
            out.append({"program": m["program"], "fragment": m["fragment"], "encoding": encoding,
                        "predicted": m["encodings"][encoding]["predicted"],
                        "try_accuracy": cell["mean_accuracy"],
                        "try_baseline": m["baseline"][LONGEST],
                        "try_generalizes": cell["generalizes"],
                        "fig1_accuracy": None if fig1 is None else fig1["accuracy"][LONGEST],
                        "fig1_generalizes": None if fig1 is None else fig1["ours_success"],
                        "same": None if fig1 is None
                        else bool(fig1["ours_success"]) == bool(cell["generalizes"])})
    return out


def summary(records) -> dict:
    """Per program: fragment, the APE and NoPE means on Len 101-150, the baseline on the
    training bin and on 101-150, and the agreement with the prediction per encoding."""
    out = {}
    for r in ordered(records):
        m = r["metrics"]
        out[m["program"]] = {
            "kind": m["kind"], "fragment": m["fragment"],
            "baseline_train": m["baseline"][BINS[0]], "baseline_long": m["baseline"][LONGEST],
            **{f"{encoding}_long": m["encodings"][encoding]["bins"][LONGEST]["mean_accuracy"]
               for encoding in trying.ENCODINGS},
            **{f"{encoding}_agrees": m["encodings"][encoding]["bins"][LONGEST]["agrees"]
               for encoding in trying.ENCODINGS},
            "fit": {encoding: m["encodings"][encoding]["fit"] for encoding in trying.ENCODINGS}}
    return out
