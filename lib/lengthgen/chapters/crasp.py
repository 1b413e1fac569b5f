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
from lengthgen.experiments.huang.crasp import huang_table2_languages, huang_table3_algorithmic
from lengthgen.experiments.huang.crasp.analysis import crasp_paper_vs_book
from lengthgen.runs.records import caption, committed_records
from lengthgen.viz.book import book_figure, book_table
from lengthgen.viz.rerun import rerun_figure

__all__ = ["accepts", "book_figure", "book_table", "caption", "check_language", "check_task",
           "committed_records", "compile_and_verify", "crasp_paper_vs_book", "get_device",
           "get_program", "get_scale", "huang_table2_languages", "huang_table3_algorithmic",
           "LengthgenError", "parse_program", "program_text", "rerun_figure", "run_program",
           "trace_figure", "trace_html", "verify_up_to"]
