"""Chapter 3, APE vs NoPE (book/ape_vs_nope.ipynb and its appendix).

Everything the notebook calls from lengthgen, in one import. Huang et al. (2025), Figs. 1, 2, 4
and Tables 6-7: the sweep's modules are offered as namespaces, as the chapter reads them
(`protocol`, `analysis`, `tables`, `budget`, and the figure modules for their configs and per-
figure rows), from `lengthgen.experiments.huang.sweep`.

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.experiments.huang.sweep import (analysis, budget, huang_ape_leads,
                                               huang_fig1_algorithmic, huang_fig1_languages,
                                               huang_fig4_starfree, huang_table6_7_hparams,
                                               protocol, tables)
from lengthgen.results import results_dir
from lengthgen.runs.records import caption, records_for
from lengthgen.viz.book import book_figure, book_table, book_text
from lengthgen.viz.rerun import rerun_figure
from lengthgen.viz.tables import HTMLTable

__all__ = ["analysis", "book_figure", "book_table", "book_text", "budget", "caption", "get_device",
           "get_scale", "HTMLTable", "huang_ape_leads", "huang_fig1_algorithmic",
           "huang_fig1_languages", "huang_fig4_starfree", "huang_table6_7_hparams", "protocol",
           "records_for", "rerun_figure", "results_dir", "tables"]
