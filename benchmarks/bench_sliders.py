"""How long drawing the book's slider frames takes: every `FrameSlider` a chapter shows, made
as its cell makes it at book scale, in CPU seconds of every process that draws.

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/bench_sliders.py [--sliders NAME ...] \
        [--workers N] [--digests FILE]

Each slider is made in a fresh Python process (as each chapter runs in a kernel of its own),
after its chapter's module is imported in that process and in a drawing worker
(`viz.parallel`), so that only the drawing is timed: the layout of its figures, every frame
for the column and for a phone, the PNGs. CPU seconds count the process that makes the slider
and every process under it (the fork server's workers, or the forked copies of older trees),
so they hold still on a shared machine where wall seconds do not. `--workers N` sets
LENGTHGEN_DRAW_WORKERS (default: unset, as in the book's build, two processes on two cores).
`--digests FILE` writes the sha256 of every frame's two PNGs and their text sizes, to compare
two trees' pixels. The file runs against another tree's library by PYTHONPATH (it imports the
chapters' facades only), which is how the numbers below were taken for tree 7fea4c9 (the
matplotlib patches and a forked kernel) and after (issue 56, item 5).

CPU seconds, all processes, two of them drawing (book scale, load 2-4 on 2 cores):

    slider                               frames   7fea4c9   d796ac8   now
    (filled in by the measurements of issue 56's time budget)
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


def _import(module: str) -> None:
    import importlib
    importlib.import_module(module)


def measure(name: str) -> dict:
    """(in the process made for it) Make one slider, timed; its frames' digests."""
    import importlib

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen.config import draw_workers
    from lengthgen.viz.parallel import in_parallel
    chapter, make = SLIDERS[name]
    module = f"lengthgen.chapters.{chapter}"
    importlib.import_module(module)
    # the workers started and the chapter imported there too (a forked copy has it already)
    in_parallel([functools.partial(_import, module)] * draw_workers())

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
