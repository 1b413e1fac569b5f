"""Chapter 4, communication (book/communication.ipynb).

Everything the notebook calls from lengthgen, in one import. Huang et al. (2025), Theorem 12 and
Corollary 13: the protocol (`lengthgen.theory.protocol`), communication matrices (`cc`,
`lengthgen.theory.communication`), copying, and the measured message length with its analysis,
drawings and tables (`lengthgen.experiments.huang.comm`).

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
from lengthgen.config import get_device, get_scale
from lengthgen.crasp.library import program_names
from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.comm.analysis import paper_vs_book_rows, rounding_numbers
from lengthgen.experiments.huang.comm.comm_agreement import data as agreement_data
from lengthgen.experiments.huang.comm.comm_matrices import data as matrices_data
from lengthgen.experiments.huang.comm.comm_messages import data as messages_data
from lengthgen.experiments.huang.comm.comm_rounding import data as rounding_data
from lengthgen.experiments.huang.comm.drawing import matrix_figure
from lengthgen.experiments.huang.comm.protocol import load as load_program
from lengthgen.experiments.huang.comm.tables import (agreement_table, agreement_worst,
                                                    matrix_table, messages_table, program_table,
                                                    rounding_table)
from lengthgen.models.limit import LimitTransformer
from lengthgen.runs.records import caption, committed_records
from lengthgen.theory import communication as cc
from lengthgen.theory.copying import copy_model, copy_steps, step_rows
from lengthgen.theory.protocol import alice, bob, count_messages, flip, replay, run_protocol
from lengthgen.viz.book import book_figure, draw_ahead, book_table, book_text
from lengthgen.viz.message_slider import message_slider
from lengthgen.viz.rerun import rerun_figure
from lengthgen.viz.tables import HTMLTable

__all__ = ["agreement_data", "agreement_table", "agreement_worst", "alice", "bob", "book_figure", "draw_ahead", "book_table", "book_text", "caption", "cc",
           "committed_records", "copy_model", "copy_steps", "count_messages", "flip", "get_device",
           "get_scale", "HTMLTable", "LengthgenError", "LimitTransformer", "load_program",
           "matrices_data", "matrix_figure", "matrix_table", "message_slider", "messages_data",
           "messages_table",
           "paper_vs_book_rows", "program_names", "program_table", "replay", "rerun_figure",
           "rounding_data", "rounding_numbers", "rounding_table",
           "run_protocol", "step_rows"]
