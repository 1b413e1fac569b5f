"""Chapter 5, quantitative bounds (book/quantitative_bounds.ipynb).

Everything the notebook calls from lengthgen, in one import. Izzo et al. (2026): the bound of
Theorem 4.1 on explicit models (`lengthgen.theory.izzo_bound`), the tasks, and the chapter's
numbers, verdicts and "Paper vs this book" rows (`lengthgen.experiments.izzo.analysis`).

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError
from lengthgen.experiments.izzo.analysis import (headline, izzo_kgram_verdict,
                                                 izzo_paper_vs_book_rows, stop_counts,
                                                 summary_table)
from lengthgen.experiments.izzo.drawing import BoundFigure, scaling_figure
from lengthgen.experiments.izzo.rows import pair_summary
from lengthgen.experiments.izzo.tables import (bound_z_shares, hardmax_headline, hardmax_table,
                                               kgram_attention_rows, kgram_attention_summary,
                                               kgram_gap_table, kgram_table, scaling_growth,
                                               simulation_table, smoothing_gap_rows,
                                               theorem_lengths)
from lengthgen.experiments.prose import sig
from lengthgen.runs.records import caption, committed_records
from lengthgen.runs.registry import experiment
from lengthgen.tasks.izzo import ModPTask, SimpleTask
from lengthgen.theory.izzo_bound import (logit_margin, modp_task_model, simple_task_model,
                                         simulate, theorem41_length, theorem_norm)
from lengthgen.viz.book import book_figure, draw_ahead, book_table, book_text, glue_numbers, show
from lengthgen.viz.frames import FrameSlider
from lengthgen.viz.costs import cause_numbers, chapter_cost_table, compare_table, reader_method
from lengthgen.viz.rerun import rerun_figure
from lengthgen.viz.tables import HTMLTable

__all__ = ["book_figure", "draw_ahead", "book_table", "book_text", "BoundFigure",
           "bound_z_shares", "caption", "committed_records", "experiment", "FrameSlider",
           "get_device", "get_scale", "glue_numbers", "hardmax_headline", "hardmax_table",
           "headline", "HTMLTable", "izzo_kgram_verdict", "izzo_paper_vs_book_rows",
           "kgram_attention_rows", "kgram_attention_summary", "kgram_gap_table", "kgram_table",
           "LengthgenError", "logit_margin", "modp_task_model", "ModPTask", "pair_summary",
           "rerun_figure", "scaling_figure", "scaling_growth", "show", "sig",
           "simple_task_model", "SimpleTask", "simulate", "simulation_table",
           "smoothing_gap_rows", "stop_counts", "summary_table", "theorem41_length",
           "theorem_lengths", "theorem_norm"]


# The chapter's figures this book does not reproduce (the "Paper vs this book" verdicts); each
# has its cause in numbers in the section "At the paper's scale, on a GPU".
NOT_REPRODUCED = ("izzo-kgram",)


def glue_paper_scale() -> None:
    """The section "At the paper's scale, on a GPU": the paper-scale cost of every trained
    figure the chapter's pages show (`lengthgen.viz.costs`) and, for those not reproduced, the
    book's scale against the paper's."""
    book_table("izzo-paper-scale", chapter_cost_table("quantitative_bounds"))
    book_text("izzo-paper-scale-method", reader_method())
    book_table("izzo-paper-scale-causes", compare_table(list(NOT_REPRODUCED)))


__all__ += ["cause_numbers", "glue_paper_scale"]
