"""The communication chapter's slider: Alice's message per program and input length, from the
records of `comm-protocol-bits` (frames drawn now, switched in the browser, no kernel).
MessageFigure is the widget's figure, built once per program and redrawn per N."""

import matplotlib.pyplot as plt
import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.comm.protocol import PARTS
from lengthgen.viz.book import Picture
from lengthgen.viz.fit import fit_to_column
from lengthgen.viz.layout import COLUMN_PX, DPI, NARROW_DPI, NARROW_PX, save_png
from lengthgen.viz.frames import FrameSlider


class MessageFigure:
    """The message of one program at one N: bits per layer split by part (left) and the
    program's bits against N/2 with the chosen N marked (right). Built once per program and
    updated per N, because a slider draws many frames."""

    def __init__(self, records: list[dict], program: str):
        record = next((r for r in records if r["params"]["program"] == program), None)
        if record is None:
            raise LengthgenError(f"no record for program {program!r}")
        self.program, self.rows = program, record["metrics"]["by_n"]
        self.layers = record["metrics"]["layers"]
        tallest = max(sum(b for key, b in r["parts"].items() if key.split("/")[0] == str(layer))
                      for r in self.rows for layer in range(self.layers))
        self.fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.6),
                                          gridspec_kw={"width_ratios": [1.4, 1]})
        self.fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
        self.bars = {part: ax.bar(range(self.layers), np.zeros(self.layers), label=part)
                     for part in PARTS}
        ax.set_xticks(range(self.layers))
        ax.set_ylim(0, tallest * 1.1)    # fixed across N, so the slider shows the growth
        ax.set_xlabel("layer")
        ax.set_ylabel("bits")
        ax.legend(fontsize=7, loc="upper right")
        self.ax = ax
        ns = np.array([r["n"] for r in self.rows], dtype=float)
        bx.plot(ns, [r["max_bits"] for r in self.rows], "o-", ms=3, label="message (measured)")
        bx.plot(ns, ns / 2, "k-", label="N/2")
        (self.marker,) = bx.plot([], [], "o", ms=9, mfc="none", mec="tab:red")
        bx.set_xscale("log")
        bx.set_yscale("log")
        bx.set_xlabel("N")
        bx.set_title("message vs equality")
        bx.legend(fontsize=7, loc="upper left")

    def show(self, n: int):
        row = next((r for r in self.rows if r["n"] == n), None)
        if row is None:
            raise LengthgenError(f"program {self.program!r} was not measured at N = {n}")
        bottom = np.zeros(self.layers)
        for part, bars in self.bars.items():
            for layer, bar in enumerate(bars):
                height = row["parts"].get(f"{layer}/{part}", 0)
                bar.set_y(bottom[layer])
                bar.set_height(height)
                bottom[layer] += height
        self.ax.set_title(f"{self.program}, N = {n:,}: {row['max_bits']} bits in all")
        self.marker.set_data([n], [row["max_bits"]])
        return self.fig


def message_frame(records: list[dict], program: str, n: int):
    """The worst input's message at one N for one program, as a Figure."""
    return MessageFigure(records, program).show(n)


class _MessageFrames:
    """The slider's frames, drawn on two MessageFigures per program (the column's and the
    phone's) laid out at the program's first frame and redrawn for each N after it: the frames
    come program by program. It pickles without its figures, so that a worker
    (`viz.parallel`) draws a block of frames too, laying out its own figures at its first
    frame of each program (its block starts in another program than this process's first
    frame, whose figures would not serve it)."""

    def __init__(self, records: list[dict]):
        self.records = records
        self.program, self.figures, self.text_px = None, (), [None, None]

    def __getstate__(self) -> dict:
        return {**vars(self), "program": None, "figures": (), "text_px": [None, None]}

    def __call__(self, program: str, n: int) -> Picture:
        if program != self.program:
            figures = (MessageFigure(self.records, program), MessageFigure(self.records, program))
            for figure, width in zip(figures, (COLUMN_PX, NARROW_PX)):
                fit_to_column(figure.fig, width_px=width)
                plt.close(figure.fig)   # drawn only into PNGs (and freed with this object)
            # each figure's smallest text, measured on its first frame (the same texts after)
            self.program, self.figures, self.text_px = program, figures, [None, None]
        (wide, wide_px), (narrow, narrow_px) = pngs = [
            save_png(figure.show(n), dpi, tight=False, text_px=known)
            for figure, dpi, known in zip(self.figures, (DPI, NARROW_DPI), self.text_px)]
        self.text_px = [px for _, px in pngs]
        alt = (f"Bar chart of the bits of Alice's message per layer for program {program} at "
               f"N = {n:,}, split by what they carry, beside a log-log plot of the message's "
               f"bits against N with the line N/2")
        return Picture(wide, alt, narrow, wide_px, narrow_px)


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
    return FrameSlider(_MessageFrames(records), {"program": programs, "n": ns},
                       initial={"program": programs[0], "n": ns[len(ns) // 2]},
                       labels={"program": "program", "n": "N"},
                       caption="Alice's message for the input of each length that needed the "
                               "most bits, split by layer and by what it carries.")
