"""Try your own language (book/try_your_own.ipynb): the try gallery, its tables, the comparison
with Fig. 1, and the live cell.

Everything the notebook calls from lengthgen, in one import. The records are the try gallery's
(`lengthgen.experiments.try_gallery`, committed under results/try-gallery/) and, for the
comparison, the APE vs NoPE sweep's next-symbol cells of Fig. 1's languages (read through the
registry and `huang.sweep.analysis.table`, as the APE vs NoPE chapter reads them).
"""
import functools

from lengthgen.config import get_device, get_scale
from lengthgen.experiments import try_gallery, try_program, try_rows
from lengthgen.experiments.huang.sweep import analysis
from lengthgen.experiments.prose import listing, pct
from lengthgen.runs.records import caption, committed_records
from lengthgen.tasks.metadata import YES
from lengthgen.viz.book import book_figure, book_table, book_text, glue_numbers
from lengthgen.viz.tables import HTMLTable
from lengthgen.viz.try_widget import train_program, try_widget

__all__ = ["book_figure", "comparison_table", "get_device", "get_scale", "glue_gallery",
           "glue_numbers", "print_programs", "program_tables", "program_verdicts",
           "train_program", "try_widget", "CLI"]

# the command the page tells the reader to run (a program in a file, or a library name)
CLI = "python -m lengthgen try my_language.crasp"
SAID = {"yes": "yes", "no": "no", "n/a": "no prediction"}


@functools.lru_cache(maxsize=None)
def gallery_records() -> tuple[str, list]:
    """(scale, records) of the try gallery, read once per kernel."""
    scale, records = committed_records(try_gallery.FIGURE_ID)
    return scale, try_rows.ordered(records)


@functools.lru_cache(maxsize=None)
def fig1_rows() -> tuple:
    """Fig. 1's cells of the regular languages (none where the sweep has no records)."""
    found = committed_records(try_rows.FIG1_FIGURE, missing_ok=True)
    return tuple(analysis.table(found[1])) if found else ()


def print_programs() -> None:
    """Every gallery program as the reader would write it, with its fragment and prediction."""
    from lengthgen.crasp import parse_program
    for name, text in try_rows.GALLERY.items():
        program = parse_program(text, filename=name, name=name)
        pred = try_program.predictions(program)
        print(f"// {name}: {try_rows.DESCRIPTIONS[name]}   [{program.fragment()}; APE: "
              f"{pred['ape']}, NoPE: {pred['nope']}]")
        print(text)


def _cells(records, kind: str):
    """(program, encoding, the Len 101-150 cell) of every predicted cell of one kind of run."""
    longest = try_rows.LONGEST
    return [(r["metrics"]["program"], encoding, r["metrics"]["encodings"][encoding]["bins"][longest])
            for r in records if r["metrics"]["kind"] == kind
            for encoding in try_program.ENCODINGS
            if r["metrics"]["encodings"][encoding]["predicted"] == YES]


def glue_gallery() -> str:
    """The numbers the page's prose pastes, and the gallery figure's provenance. Returns the
    records' caption."""
    scale, records = gallery_records()
    summary = try_rows.summary(records)
    high = summary[try_rows.HIGH_BASELINE]
    book_text("try-high-baseline", pct(high["baseline_train"]))
    book_text("try-high-baseline-long", pct(high["baseline_long"]))
    book_text("try-high-name", try_rows.HIGH_BASELINE)
    highest = max((s for s in summary.values() if s["kind"] == "gallery"),
                  key=lambda s: s["baseline_train"])
    book_text("try-high-is-highest", "the highest" if highest is high else "not the highest")
    cells = _cells(records, "gallery")
    agree = [c for c in cells if c[2]["agrees"] == "yes"]
    book_text("try-agree", f"{len(agree)} of {len(cells)}")
    misses = [f"{p} ({try_program.label(encoding)}, {pct(c['mean_accuracy'])})"
              for p, encoding, c in cells if c["agrees"] != "yes"]
    book_text("try-misses", listing(misses) if misses else "none")
    unfit = [f"{p} ({try_program.label(encoding)})" for p, s in summary.items()
             for encoding in try_program.ENCODINGS if s["fit"][encoding] == 0]
    book_text("try-unfit", listing(unfit) if unfit else "none")
    nope = [(p, s["nope_long"]) for p, s in summary.items()
            if s["kind"] == "gallery" and s["nope_agrees"] == "n/a"]
    book_text("try-nope-free", listing([f"{p} ({pct(v)})" for p, v in nope]) if nope else "none")
    minutes = [r["wall_time_s"] / 60 for r in records]
    book_text("try-minutes", f"{min(minutes):.1f} to {max(minutes):.1f} minutes")
    book_text("try-scale", scale)
    return caption(records)


def program_verdicts() -> dict:
    """{program key: its outcome on Len 101-150 in words}, for glue_numbers(prefix=...)."""
    _, records = gallery_records()
    out = {}   # glue keys: try-verdict-<program> (the page's prefix, one key per program)
    for r in records:
        m = r["metrics"]
        parts = []
        for encoding in try_program.ENCODINGS:
            cell = m["encodings"][encoding]["bins"][try_rows.LONGEST]
            parts.append(f"{try_program.label(encoding)} {pct(cell['mean_accuracy'])} "
                         f"({SAID[cell['agrees']]})")
        base = pct(m["baseline"][try_rows.LONGEST])
        out[key(m["program"])] = (f"on Len {try_rows.LONGEST}, " + ", ".join(parts)
                                  + f", constant baseline {base}")
    return out


def _table(metrics: dict) -> str:
    rows = []
    for b in try_rows.BINS:
        row = [f"Len {b}", pct(metrics["accepted_share"][b]), pct(metrics["baseline"][b])]
        for encoding in try_program.ENCODINGS:
            cell = metrics["encodings"][encoding]["bins"][b]
            rows_read = "" if metrics["encodings"][encoding]["fit"] else " (no seed fit)"
            row += [f"{pct(cell['mean_accuracy'])}{rows_read}",
                    f"{pct(cell['min'])} to {pct(cell['max'])}", SAID[cell["agrees"]]]
        rows.append(row)
    header = ["bin", "accepted", "constant baseline"]
    for encoding in try_program.ENCODINGS:
        name = try_program.label(encoding)
        header += [f"{name} mean", f"{name} seeds", f"{name} agrees"]
    return HTMLTable(header, rows).markdown


def key(program: str) -> str:
    """A program's name in a glue key (lowercase letters, digits and dashes)."""
    return program.replace("_", "-").lower()


def program_tables() -> None:
    """One table per program (`try-table-NAME`): per bin, the accepted share, the constant
    baseline, and per encoding the mean over the seeds read, their range and the agreement."""
    _, records = gallery_records()
    for r in records:   # glue keys: try-table-<program>
        book_table(f"try-table-{key(r['metrics']['program'])}", _table(r["metrics"]))


def comparison_table() -> None:
    """try's verdicts on four of Fig. 1's languages beside Fig. 1's next-symbol cells
    (`try-fig1-comparison`), and a sentence on where they agree and differ (`try-fig1-same`)."""
    _, records = gallery_records()
    rows = try_rows.fig1_comparison(records, list(fig1_rows()))
    said = {True: "yes", False: "no", None: "no record yet"}
    table = [[r["program"], r["fragment"], try_program.label(r["encoding"]),
              "yes" if r["predicted"] == YES else "no prediction",
              f"{pct(r['try_accuracy'])} (baseline {pct(r['try_baseline'])})",
              said[r["try_generalizes"]],
              "" if r["fig1_accuracy"] is None else pct(r["fig1_accuracy"]),
              said[r["fig1_generalizes"]], said[r["same"]]] for r in rows]
    header = ["language", "fragment", "encoding", "C-RASP predicts", "try: Len 101-150",
              "try generalizes", "Fig. 1: Len 101-150", "Fig. 1 generalizes", "same verdict"]
    book_table("try-fig1-comparison", HTMLTable(header, table).markdown)
    known = [r for r in rows if r["same"] is not None]
    differ = [f"{r['program']} with {try_program.label(r['encoding'])} (try: "
              f"{said[r['try_generalizes']]}, Fig. 1: {said[r['fig1_generalizes']]})"
              for r in known if not r["same"]]
    missing = [f"{r['program']} with {try_program.label(r['encoding'])}"
               for r in rows if r["same"] is None]
    text = f"the two tasks give the same verdict on {len(known) - len(differ)} of the " \
           f"{len(known)} cells that both have"
    text += f"; they differ on {listing(differ)}" if differ else "; they differ on none"
    if missing:
        text += f"; Fig. 1's sweep has no record yet for {listing(missing)}"
    book_text("try-fig1-same", text)
