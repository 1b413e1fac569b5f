"""The book's experiments: one package per paper, one module per figure id inside it.

    huang/     Huang et al. (2025), read in four chapters, one subpackage each:
               limit/ (Limit Transformers), crasp/ (C-RASP), sweep/ (APE vs NoPE),
               comm/ (communication)
    izzo/      Izzo et al. (2026), the quantitative bounds chapter
    richard/   Richard (2024), the Dyck chapter and its appendix
    prose      how a number is written in prose and tables (every chapter's formatters)
    spread     seeds and their spread; `group_by`, the one grouping of records by setting

Inside a paper's package (or chapter subpackage), beside its figure modules:

    protocol   what runs: configs shared by several figures, models, training, scoring
    analysis   the numbers, verdicts and "Paper vs this book" rows its chapter quotes,
               computed from the committed records (a package may split it, e.g.
               richard.analysis_sweeps; huang.sweep keeps its chapter tables in `tables`)
    rows       what the chapter's analysis needs from a figure's code (its data rows, its
               summaries), below both: the figure module imports it from here
    drawing    pictures several figures (or the chapter) draw
    tables     the chapter's tables, from analysis rows

A figure module is named after its id (huang-fig1-languages: huang/sweep/huang_fig1_languages.py)
and offers what `lengthgen.runs.contract` states: FIGURE_ID, TITLE, figure(), data(), and
either its CONFIGS, runs() and run_one() or the SOURCE whose records it draws. A figure module
imports no other figure module, and the other modules import none (tests/test_architecture.py,
which counts a registry look-up by id as an import): an analysis module reads several figures'
records through the registry (`prose.chapter_records`), and imports what it computes from them
from the modules below the figures, never `experiment(id)`.

Which modules are figures, and how their runs are executed (in process, in worker processes,
on a cluster), is the business of the run layer, `lengthgen.runs`; a figure module never
knows which executor runs it.
"""
