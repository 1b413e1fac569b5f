"""Chapter 2, C-RASP (book/crasp.ipynb).

Everything the notebook calls from lengthgen, in one import. Huang et al. (2025): the C-RASP
language (parser, interpreter, checks, the compiler into Limit Transformers), the expressiveness
tables and the chapter's "Paper vs this book" table (`lengthgen.experiments.huang.crasp`).

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.crasp import accepts, parse_program, run_program
from lengthgen.crasp.check import check_language, check_task
from lengthgen.crasp.compile import compile_and_verify, verify_up_to
from lengthgen.crasp.library import get_program, program_text
from lengthgen.crasp.trace import trace_figure, trace_html
from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.crasp.expressiveness import (ALGORITHMIC_COLUMNS,
                                                              LANGUAGE_COLUMNS, table_markdown)
from lengthgen.experiments.huang.crasp.analysis import crasp_paper_vs_book
from lengthgen.runs.records import caption, committed_records
from lengthgen.viz.book import book_figure, draw_ahead, book_table
from lengthgen.viz.playground import playground_html
from lengthgen.viz.rerun import rerun_figure

__all__ = ["accepts", "book_figure", "draw_ahead", "book_table", "check_language", "check_task",
           "compile_and_verify", "expressiveness_table", "get_device", "get_program", "get_scale",
           "LengthgenError", "paper_vs_book_table", "parse_program", "playground_html",
           "program_text",
           "rerun_figure", "run_program", "trace_figure", "trace_html", "verify_up_to"]

# The expressiveness tables of Huang et al. (Tables 2 and 3), by the figure id of their records:
# the columns each has beyond the verdicts
TABLES = {"huang-table2-languages": LANGUAGE_COLUMNS,
          "huang-table3-algorithmic": ALGORITHMIC_COLUMNS}


def expressiveness_table(figure_id: str) -> tuple[str, str]:
    """Table 2 (languages) or 3 (algorithmic tasks) from its committed records: (the Markdown
    table, its provenance line), for the notebook's book_table."""
    if figure_id not in TABLES:
        raise LengthgenError(f"no expressiveness table {figure_id!r}; valid: "
                             f"{', '.join(TABLES)}")
    _, records = committed_records(figure_id)
    return table_markdown(records, TABLES[figure_id]), caption(records)


def paper_vs_book_table() -> None:
    """Show and glue the chapter's "Paper vs this book" table."""
    book_table("crasp-paper-vs-book", crasp_paper_vs_book())
