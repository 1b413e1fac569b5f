"""Chapter 1, Limit Transformers (book/limit_transformers.ipynb).

Everything the notebook calls from lengthgen, in one import. Huang et al. (2025): the Limit
Transformer's widgets, the positional fits, Proposition 54 and the inference procedure; its
numbers and "Paper vs this book" table come from `lengthgen.experiments.huang.limit.analysis`.

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.limit.analysis import limit_numbers, limit_paper_vs_book
from lengthgen.experiments.huang.limit.rows import positional_table
from lengthgen.models.limit import LimitTransformer
from lengthgen.runs.records import caption, committed_records
from lengthgen.runs.registry import experiment
from lengthgen.viz.book import book_figure, draw_ahead, book_table, book_text, glue_numbers
from lengthgen.viz.limit_widgets import (attention, draw_small_multiples, example_model,
                                         limit_frame_slider, limit_widget, logit_margin,
                                         positional_logits)
from lengthgen.viz.costs import chapter_cost_table, reader_method
from lengthgen.viz.rerun import rerun_figure
from lengthgen.viz.tables import HTMLTable

__all__ = ["attention", "book_figure", "draw_ahead", "book_table", "caption", "committed_records",
           "draw_small_multiples", "example_model", "experiment", "get_device", "get_scale",
           "glue_numbers", "HTMLTable", "LengthgenError", "limit_frame_slider", "limit_numbers",
           "limit_paper_vs_book", "limit_widget", "LimitTransformer", "logit_margin",
           "positional_logits", "positional_table", "rerun_figure"]


def glue_paper_scale() -> None:
    """The section "At the paper's scale, on a GPU": the paper-scale cost of every trained
    figure the chapter's pages show (`lengthgen.viz.costs`)."""
    book_table("limit-paper-scale", chapter_cost_table("limit_transformers"))
    book_text("limit-paper-scale-method", reader_method())


__all__ += ["glue_paper_scale"]
