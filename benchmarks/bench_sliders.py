"""How long drawing the book's slider frames takes: every `FrameSlider` a chapter shows, made
as its cell makes it at book scale, in CPU seconds of every process that draws.

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/bench_sliders.py [--sliders NAME ...] \
        [--workers N] [--digests FILE]

Each slider is made in a fresh Python process (as each chapter runs in a kernel of its own),
after its chapter's module is imported and a small figure drawn in that process and in a
drawing worker (`viz.parallel`), as the figures before a slider have done in a chapter, so
that only the slider's drawing is timed: the layout of its figures, every frame for the
column and for a phone, the PNGs. CPU seconds count the process that makes the slider
and every process under it (the fork server's workers, or the forked copies of older trees),
so they hold still on a shared machine where wall seconds do not. `--workers N` sets
LENGTHGEN_DRAW_WORKERS (default: unset, as in the book's build, two processes on two cores).
`--digests FILE` writes the sha256 of every frame's two PNGs and their text sizes, to compare
two trees' pixels. The file runs against another tree's library by PYTHONPATH (it imports the
chapters' facades only), which is how the numbers below were taken for tree 7fea4c9 (the
matplotlib patches and a forked kernel) and after (issue 56, item 5).

Measured on 2026-11-28, book scale, two processes drawing, at a load of about 1 on the shared
2-core machine (one run each, one after the other; runs at a load of 3 to 5 gave 10 to 25%
more CPU seconds, in the same order): CPU seconds of all processes, and wall seconds.
7fea4c9 had the matplotlib patches and forked the kernel; 7faed68 (= d796ac8 for drawing)
had neither; "now" is after the changes listed below. All 136 frames have the same PNG
bytes at 7faed68 and now (`--digests`); 7fea4c9's limit-slider frames differ from both, by
layout changes made in between.

    slider             frames   7fea4c9 CPU/wall   7faed68 CPU/wall   now CPU/wall
    izzo-bound-slider      24         2.5   1.6          5.2   3.2        2.8   1.9
    izzo-bound-knobs       24         2.5   1.6          5.3   3.3        3.0   2.1
    limit-slider           64         7.3   4.1          8.6   4.7        8.3   4.6
    comm-slider            24         5.4   3.2          5.7   5.7        5.6   3.7
    all                   136        17.8  10.5         24.7  16.9       19.8  12.3

In one process (`--workers 1`, at a load of 2.6 to 4): 18.0 and 18.0 s at 7fea4c9, 24.3 and
22.9 s at 7faed68, 19.8 and 18.9 s with the first change below alone. What made the
difference: (1) pyplot's `close` leaves a figure a canvas that cannot draw, so each savefig
of a redrawn slider's figures made a new agg canvas and renderer, whose parser of math text
started empty: every $10^k$ tick and legend formula was parsed again at every frame
(`layout.keep_canvas`); (2) a redrawn slider's worker unpickles the figures laid out here
instead of laying them out again; (3) the message slider drew all its frames in the kernel,
its drawing a closure that does not pickle (a forked copy had run it), and now a class that
does; (4) the slider's first frame counts in the kernel's block, so that the message slider
lays out each program's figures in one process.
"""
import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
import time

# The sliders of the book, by chapter, made as the chapters' cells make them at book scale
# (cell ids in brackets). Each maker returns the FrameSlider.
COMM_PROGRAMS = ["majority_ab", "tomita4", "binary_majority_interleave", "copy_unique"]


def _bound_slider():   # quantitative_bounds.ipynb, "izzo-bound-slider"
    from lengthgen.chapters.quantitative_bounds import BoundFigure, FrameSlider
    return FrameSlider.redrawn(
        BoundFigure, {"delta": [1, 2, 4, 8, 16, 32], "tau": [1, 2, 4, 8]},
        fixed={"L": 4.0, "eps": 0.1, "p": 8, "gamma": 0.5}, initial={"delta": 4, "tau": 2},
        labels={"delta": "period Δ", "tau": "locality τ"})


def _bound_knobs():   # quantitative_bounds.ipynb, "izzo-bound-knobs"
    from lengthgen.chapters.quantitative_bounds import BoundFigure, FrameSlider
    return FrameSlider.redrawn(
        BoundFigure, {"eps": [0.2, 0.1, 0.05], "L": [1.0, 4.0], "p": [8, 16], "gamma": [0.5, 2.0]},
        fixed={"delta": 4, "tau": 2}, initial={"eps": 0.1, "L": 4.0, "p": 8, "gamma": 2.0},
        labels={"eps": "error ε", "L": "norm L", "p": "bits p", "gamma": "margin γ"})


def _limit_slider():   # limit_transformers.ipynb, "limit-slider"
    from lengthgen.chapters.limit_transformers import limit_frame_slider
    return limit_frame_slider()


def _comm_slider():   # communication.ipynb, "comm-slider"
    from lengthgen.chapters.communication import committed_records, message_slider
    return message_slider(committed_records("comm-protocol-bits")[1], COMM_PROGRAMS)


SLIDERS = {   # name: (chapter, maker)
    "izzo-bound-slider": ("quantitative_bounds", _bound_slider),
    "izzo-bound-knobs": ("quantitative_bounds", _bound_knobs),
    "limit-slider": ("limit_transformers", _limit_slider),
    "comm-slider": ("communication", _comm_slider),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sliders", nargs="*", choices=list(SLIDERS),
                        help="slider names (default: every one)")
    parser.add_argument("--workers", type=int,
                        help="processes that draw (LENGTHGEN_DRAW_WORKERS; default: the build's)")
    parser.add_argument("--digests", help="write {slider: [[column sha256, phone sha256, "
                                          "column text px, phone text px] per frame]}")
    parser.add_argument("--one", help=argparse.SUPPRESS)   # (in the process that measures one)
    args = parser.parse_args(argv)
    if args.workers is not None:
        os.environ["LENGTHGEN_DRAW_WORKERS"] = str(args.workers)
    os.environ.setdefault("LENGTHGEN_SCALE", "book")
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0

    rows, digests = [], {}
    for name in args.sliders or list(SLIDERS):
        done = subprocess.run([sys.executable, __file__, "--one", name], check=True,
                              stdout=subprocess.PIPE, text=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        digests[name] = row.pop("digests")
        rows.append(row)
        print(f"{row['chapter']:20s} {name:18s} {row['frames']:4d} frames {row['wall']:6.1f} s "
              f"{row['cpu']:6.1f} s CPU ({row['cpu_here']:.1f} here, {row['cpu_workers']:.1f} in "
              f"workers)", flush=True)
    print(f"{'chapter':20s} {'CPU s':>7s}")
    for chapter in dict.fromkeys(row["chapter"] for row in rows):
        print(f"{chapter:20s} {sum(r['cpu'] for r in rows if r['chapter'] == chapter):7.1f}")
    print(f"{'all':20s} {sum(r['cpu'] for r in rows):7.1f}   ({len(rows)} sliders, "
          f"{sum(r['frames'] for r in rows)} frames, {rows[0]['workers']} processes drawing)")
    if args.digests:
        with open(args.digests, "w") as out:
            json.dump(digests, out, indent=1, sort_keys=True)
    return 0


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds of this process, of every process under it: those still running, and
    those waited for, by this process or by the one that started them)."""
    import resource

    import psutil
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    below = reaped.ru_utime + reaped.ru_stime
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.Error:   # (ended meanwhile: counted where it was waited for)
            continue
        below += times.user + times.system + times.children_user + times.children_system
    return time.process_time(), below


def _warm(module: str) -> None:
    """Import a chapter's module and draw a small figure (a log scale, math text) for the
    column and for a phone, as a kernel and its workers have done before a chapter's slider:
    the fonts loaded, matplotlib's parser of math text built."""
    import importlib

    import matplotlib.pyplot as plt

    from lengthgen.viz.layout import DPI, NARROW_DPI, save_png
    importlib.import_module(module)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.loglog([1, 1e3], [1, 1e3], label=r"$\tau\Delta$")
    ax.legend()
    for dpi in (DPI, NARROW_DPI):
        save_png(fig, dpi)
    plt.close(fig)


def measure(name: str) -> dict:
    """(in the process made for it) Make one slider, timed; its frames' digests."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen.config import draw_workers
    from lengthgen.viz.parallel import in_parallel
    chapter, make = SLIDERS[name]
    module = f"lengthgen.chapters.{chapter}"
    # here, and in the workers (started now; a forked copy has what this process has)
    in_parallel([functools.partial(_warm, module)] * draw_workers())

    start, (here, below) = time.perf_counter(), cpu_seconds()
    slider = make()
    wall, (here_after, below_after) = time.perf_counter() - start, cpu_seconds()
    plt.close("all")
    sha = lambda png: None if png is None else hashlib.sha256(png).hexdigest()   # noqa: E731
    return {"chapter": chapter, "slider": name, "frames": len(slider.pictures),
            "workers": draw_workers(), "wall": wall, "cpu_here": here_after - here,
            "cpu_workers": below_after - below, "cpu": here_after - here + below_after - below,
            "digests": [[sha(p.wide), sha(p.narrow), p.wide_text_px, p.narrow_text_px]
                        for p in slider.pictures]}


if __name__ == "__main__":
    sys.exit(main())
