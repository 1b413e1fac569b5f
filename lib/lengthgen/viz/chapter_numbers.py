"""Where each chapter's numbers live now: with the paper's experiments (issue 40).

A re-export, kept for one commit: the numbers, verdicts and "Paper vs this book" tables moved
to lengthgen.experiments: prose (formatting), limit_chapter (Limit Transformers),
crasp_chapter (C-RASP), richard_chapter and richard_chapter_sweeps (Dyck), izzo_chapter
(quantitative bounds).
"""
from lengthgen.experiments.crasp_chapter import crasp_paper_vs_book  # noqa: F401
from lengthgen.experiments.limit_chapter import limit_numbers, limit_paper_vs_book  # noqa: F401
