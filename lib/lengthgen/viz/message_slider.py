"""The communication chapter's slider: Alice's message per program and input length, from the
records of `comm-protocol-bits` (frames drawn now, switched in the browser, no kernel)."""
import io

import matplotlib.pyplot as plt
import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.experiments.comm_protocol_bits import MessageFigure
from lengthgen.viz.book import DPI, compact_png, fit_to_column
from lengthgen.viz.frames import FrameSlider


def message_slider(records: list[dict], programs: list[str], ns: list[int] | None = None,
                   max_ns: int = 6):
    """A kernel-free slider over N and program (frames drawn now, switched in the browser).

    Programs without a record are left out; without ns, up to max_ns measured lengths spread
    over the range."""
    have = {r["params"]["program"] for r in records}
    programs = [p for p in programs if p in have]
    if not programs:
        raise LengthgenError(f"none of the programs has a record (have: {', '.join(sorted(have))})")
    if ns is None:
        measured = sorted({r["n"] for rec in records for r in rec["metrics"]["by_n"]})
        picks = np.linspace(0, len(measured) - 1, min(max_ns, len(measured))).round()
        ns = [measured[int(k)] for k in sorted(set(picks))]
    current = {}

    def draw(program, n):   # frames come program by program: reuse one figure per program
        if current.get("program") != program:
            if current:
                plt.close(current["figure"].fig)
            current.update(program=program, figure=MessageFigure(records, program))
            fit_to_column(current["figure"].fig)
        buffer = io.BytesIO()
        current["figure"].show(n).savefig(buffer, format="png", dpi=DPI)
        return compact_png(buffer.getvalue())

    slider = FrameSlider(draw, {"program": programs, "n": ns},
                         initial={"program": programs[0], "n": ns[len(ns) // 2]},
                         labels={"program": "program", "n": "N"},
                         caption="Alice's message for the input of each length that needed "
                                 "the most bits, split by layer and by what it carries.")
    plt.close(current["figure"].fig)
    return slider
