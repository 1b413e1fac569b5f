"""Traces: the value of every operation at every position, as text, HTML or a heat map.

Rows are operations in program order, columns are positions 0..n (0 is the start position, ^).
Booleans show as 1/0, counts as integers. Used by `crasp run --trace` and by the book.
"""
import html

import numpy as np

from lengthgen.crasp import ir
from lengthgen.crasp.interpret import run_program, tokens_of

START = "^"


def trace_rows(program: ir.Program, text, names=None) -> tuple[list[str], list[str], list[list]]:
    """(header symbols, operation names, rows of values) for one input."""
    values = run_program(program, text)
    names = list(program.ops) if names is None else list(names)
    header = [START, *tokens_of(program, text)]
    rows = [[int(x) for x in values[name]] for name in names]
    return header, names, rows


def trace_text(program: ir.Program, text, names=None, width: int = 24) -> str:
    """A plain-text table, one line per operation."""
    header, names, rows = trace_rows(program, text, names)
    cells = [[str(x) for x in r] for r in [header, *rows]]
    col = max(len(c) for r in cells for c in r)
    label = [""] + [n if len(n) <= width else n[:width - 1] + "~" for n in names]
    pad = max(len(x) for x in label)
    return "\n".join(f"{lab:>{pad}}  " + " ".join(f"{c:>{col}}" for c in r)
                     for lab, r in zip(label, cells))


def trace_html(program: ir.Program, text, names=None) -> str:
    """An HTML table (for a notebook cell); the output operation is marked with a star."""
    header, names, rows = trace_rows(program, text, names)
    th = "".join(f"<th>{html.escape(s)}</th>" for s in header)
    body = []
    for name, row in zip(names, rows):
        is_bool = ir.sort_of(program.ops[name]) is ir.Sort.BOOL
        star = " &#9733;" if name == program.output else ""
        tds = "".join(
            f'<td style="background:{"#cde8c8" if is_bool and v else "transparent"}">{v}</td>'
            for v in row)
        body.append(f"<tr><th style='text-align:right'>{html.escape(name)}{star}</th>{tds}</tr>")
    return (f"<table style='font-family:monospace;font-size:90%'><tr><th></th>{th}</tr>"
            + "".join(body) + "</table>")


def trace_figure(program: ir.Program, text, names=None, annotate: bool | None = None):
    """A heat map of operations by positions (Booleans 0/1, counts scaled per row to [0, 1])."""
    import matplotlib.pyplot as plt
    header, names, rows = trace_rows(program, text, names)
    values = np.array(rows, dtype=float)
    span = values.max(axis=1, keepdims=True) - values.min(axis=1, keepdims=True)
    shade = (values - values.min(axis=1, keepdims=True)) / np.where(span == 0, 1, span)
    fig, ax = plt.subplots(figsize=(min(16, 3 + 0.4 * len(header)), 1 + 0.3 * len(names)))
    ax.imshow(shade, aspect="auto", cmap="Greens", vmin=0, vmax=1.4)
    ax.set_xticks(range(len(header)), header)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("position i (symbol read there)")
    ax.set_ylabel("operation")
    if annotate if annotate is not None else len(header) <= 40:
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                ax.text(c, r, str(v), ha="center", va="center", fontsize=7)
    ax.set_title(f"{program.name or 'program'} on {''.join(header[1:]) or '(empty)'}")
    fig.tight_layout()
    return fig
