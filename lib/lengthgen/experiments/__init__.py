"""One module per figure id, and the protocol modules that several figures share.

A figure module defines:
    FIGURE_ID  the id from the book's figure list (e.g. "huang-fig5-6-positional")
    TITLE      one line saying what the figure shows
    CONFIGS    {"test": {...}, "book": {...}, "paper": {...}}, plain JSON-able dicts
    runs(config) -> list[dict]        one dict of parameters per run; each has a unique
                                      "name" and, where it trains, a "seed" (and a "task")
    run_one(params, config, device) -> dict   the metrics of one run (JSON-able)
    figure(records) -> matplotlib.figure.Figure
and may define:
    data(records) -> list[dict]       the numbers behind the figure, one row per plotted value
                                      (`figure data ID` prints them as CSV; without it, every
                                      scalar metric of every record is one row)
    run_group(params_list, config, device) -> list[dict]
                                      runs whose params share a "group" value are handed over
                                      together (e.g. seeds trained as one batch on a GPU)
    SOURCE     another figure id whose records this figure draws (no runs of its own)

Protocol modules (no FIGURE_ID) hold what several figures share: huang_sweep/ (the APE vs
NoPE sweep: protocol, analysis, drawing, tables), huang_expressiveness (the C-RASP tables),
richard_dyck_training (the Dyck models and the configs several Dyck figures train),
izzo_common (the Izzo et al. setup), spread (seeds and their spread). Each paper's chapter
module computes the numbers its chapter quotes, its verdicts and its "Paper vs this book" table
from the committed records: limit_chapter and crasp_chapter (Huang et al.), richard_chapter
and richard_chapter_sweeps (Richard), izzo_chapter (Izzo et al.), all written with prose
(numbers in prose and tables); they reach figure modules through the registry. A figure module
imports protocol modules, never another figure module (tests/test_architecture.py).

Which modules are figures, and how their runs are executed (in process, in worker processes,
on a cluster), is the business of the run layer, `lengthgen.runs`; a figure module never
knows which executor runs it.
"""
