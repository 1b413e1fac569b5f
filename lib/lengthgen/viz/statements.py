"""Where each theorem, definition, lemma and corollary box of the chapters comes from.

The sources are data (lengthgen/data/statement_sources.csv): per box label, the chapter, the
kind of box, the source (a key of book/references.bib, or "this book" for the book's own
rules), the numbered statement as the source numbers it, and the section or appendix where it
stands (the copies of the papers the book was written from carry no page numbers), and the
phrases of the source statement's hypotheses and conclusion that the box must state (written
from the source; `hypotheses`). tests/test_book_hygiene.py requires one row per box and checks
each box against its phrases.
"""
import csv
from importlib import resources

FIELDS = ("label", "chapter", "kind", "source", "statement", "where", "note", "hypotheses")


def statement_sources() -> dict[str, dict]:
    """{box label: its row}, in the file's order."""
    text = resources.files("lengthgen").joinpath("data/statement_sources.csv").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return {row["label"]: row for row in csv.DictReader(lines)}


def source_line(label: str) -> str:
    """One line naming a box's source, e.g. 'huang2025formal, Theorem 7, Sec. 3.3'."""
    row = statement_sources()[label]
    return f"{row['source']}, {row['statement']}, {row['where']}"


def hypotheses(label: str) -> tuple[list[str], list[str]]:
    """(the phrases a box must state, the phrases it must not), from its row's `hypotheses`:
    separated by " | ", a leading "!" marks a phrase the box must not contain."""
    phrases = [p.strip() for p in statement_sources()[label]["hypotheses"].split(" | ")]
    return ([p for p in phrases if p and not p.startswith("!")],
            [p[1:] for p in phrases if p.startswith("!")])
