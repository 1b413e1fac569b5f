"""Shared by Huang et al. (2025) Fig. 1, 2, 4 and Tables 6-7: the APE vs NoPE sweep. Not a
figure itself; split by job:

- `protocol`: the configs, the ladder of settings, training, selection and seeds (what runs);
- `analysis`: records to per-cell rows, agreement with C-RASP's prediction (numbers);
- `drawing`: the Fig. 1 panels;
- `tables`: the chapter's tables and sentences (protocol side by side, cells, headline).

The names below are the package's surface for figure modules and the chapter; each is defined
once, in the module named above.
"""
from lengthgen.experiments.huang_sweep.analysis import (
    PERFECT, SUCCESS_ACCURACY, SUCCESS_MARGIN, abandon_savings, agreement, differences,
    longest_bin_points, succeeded, table, tidy)
from lengthgen.experiments.huang_sweep.drawing import BIN_COLORS, MARK, draw_fig1
from lengthgen.experiments.huang_sweep.protocol import (
    DATA, ENCODINGS, HELDOUT_BIN, LONGEST_BIN, SELECTION_RULES, Setting, cache_dir, cell_runs,
    check_cache_writable, chunks_for, configs, estimated_cost, ladder, paper_grid,
    paper_setting, predicted, reference, reference_hparams, run_baseline, run_cell, run_one,
    select, settle, train_setting, unnamed_rows)
from lengthgen.experiments.huang_sweep.tables import (
    CELL_HEADER, DIFFERENCES_HEADER, HEADLINE_HEADER, PROTOCOL_HEADER, abandoned_text,
    cell_names, cell_rows, cell_text, differences_rows, headline, headline_rows, pct,
    protocol_rows, sweep_status)

__all__ = [
    "PERFECT", "SUCCESS_ACCURACY", "SUCCESS_MARGIN", "abandon_savings", "agreement",
    "differences", "longest_bin_points", "succeeded", "table", "tidy",
    "BIN_COLORS", "MARK", "draw_fig1",
    "DATA", "ENCODINGS", "HELDOUT_BIN", "LONGEST_BIN", "SELECTION_RULES", "Setting",
    "cache_dir", "cell_runs", "check_cache_writable", "chunks_for", "configs",
    "estimated_cost", "ladder", "paper_grid", "paper_setting", "predicted", "reference",
    "reference_hparams", "run_baseline", "run_cell", "run_one", "select", "settle",
    "train_setting", "unnamed_rows",
    "CELL_HEADER", "DIFFERENCES_HEADER", "HEADLINE_HEADER", "PROTOCOL_HEADER",
    "abandoned_text", "cell_names", "cell_rows", "cell_text", "differences_rows", "headline",
    "headline_rows", "pct", "protocol_rows", "sweep_status",
]
