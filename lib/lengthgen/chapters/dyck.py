"""Chapter 6, Dyck languages (book/dyck.ipynb and its appendix).

Everything the notebook calls from lengthgen, in one import. Richard (2024): Dyck words and the
closed-form heads, Boolean expressions for the appendix, and the chapter's numbers, verdicts and
"Paper vs this book" table (`lengthgen.experiments.richard.analysis`).

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.experiments.richard.analysis import dyck_numbers, dyck_paper_vs_book, dyck_verdicts
from lengthgen.models.dyck import ClosedFormHead, NoPositionHead
from lengthgen.tasks.boolean import random_expression, render, simplify
from lengthgen.tasks.dyck import catalan, count_words, depth, enumerate_words, is_balanced
from lengthgen.viz.book import book_figure, draw_ahead, book_table, book_text, glue_numbers
from lengthgen.viz.costs import cause_numbers, chapter_cost_table, compare_table, reader_method
from lengthgen.viz.rerun import rerun_figure

__all__ = ["book_figure", "draw_ahead", "book_table", "catalan", "ClosedFormHead", "count_words", "depth",
           "dyck_numbers", "dyck_paper_vs_book", "dyck_verdicts", "enumerate_words", "get_device",
           "get_scale", "glue_numbers", "is_balanced", "NoPositionHead", "random_expression",
           "render", "rerun_figure", "simplify"]


# The chapter's figures this book does not reproduce (the "Paper vs this book" verdicts); each
# has its cause in numbers in the section "At the paper's scale, on a GPU".
NOT_REPRODUCED = ("richard-fig1-boolean", "richard-fig7-learned-pe",
                  "richard-fig7-order-study")


def glue_paper_scale() -> None:
    """The section "At the paper's scale, on a GPU": the paper-scale cost of every trained
    figure the chapter's pages show (`lengthgen.viz.costs`) and, for those not reproduced, the
    book's scale against the paper's."""
    book_table("dyck-paper-scale", chapter_cost_table("dyck"))
    book_text("dyck-paper-scale-method", reader_method())
    book_table("dyck-paper-scale-causes", compare_table(list(NOT_REPRODUCED)))


__all__ += ["cause_numbers", "glue_paper_scale"]
