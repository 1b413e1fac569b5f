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


# The compute ladder toward the paper's Fig. 1 (issue 53): shown from its paper- or book-scale
# records only, never from a test run's
LADDER = "richard-fig1-ladder"
LADDER_SCALES = ("paper", "book")
LADDER_COMMAND = f"python -m lengthgen figure run {LADDER} --scale book"


def show_ladder() -> dict[str, str]:
    """The compute ladder toward the paper's Fig. 1, in the section "Why three findings are not
    reproduced": shows (and glues) its figure where it has paper- or book-scale records, and
    otherwise a one-line note with the command that makes them in the figure's place. Returns
    the numbers the page glues as ladder-KEY: its plan, from its book config whatever has run
    (plan-rungs, plan-seeds, plan-span: the top rung's training operations over rung 0's, gap:
    the paper's model's over the top rung's, by `lengthgen.runs.cost`), then `ladder_numbers`
    of its records (the sentence `result` among them), or `result` as the note."""
    # glue keys: ladder-{plan-rungs,plan-seeds,plan-span,gap,result}
    from IPython.display import Markdown

    from lengthgen.experiments.prose import num
    from lengthgen.experiments.richard.analysis_sweeps import ladder_numbers
    from lengthgen.runs.records import figure_records
    from lengthgen.viz.costs import figure_cost

    def operations(training):
        return training.flops_per_step() * training.steps
    plan = figure_cost(LADDER, "book").trainings
    paper = max(operations(t) for t in figure_cost("richard-fig1-boolean", "paper").trainings)
    numbers = {"plan-rungs": str(len(plan)), "plan-seeds": str(plan[0].count),
               "plan-span": num(operations(plan[-1]) / operations(plan[0])),
               "gap": num(paper / operations(plan[-1]))}
    records = next((found for scale in LADDER_SCALES
                    if (found := figure_records(LADDER, scale))), None)
    if records:
        book_figure("richard-fig1-ladder")
        return {**numbers, **ladder_numbers(records)}
    note = f"Not yet run at book scale: `{LADDER_COMMAND}`."
    book_figure("richard-fig1-ladder", Markdown(note),
                provenance="no records yet, at book or paper scale")   # the note names the command
    return {**numbers, "result": note}


__all__ += ["cause_numbers", "glue_paper_scale", "show_ladder"]
