"""How long drawing the book's figures takes: every registered figure a chapter shows, drawn
from its committed records for the column and for a phone, as `book_figure` draws it.

    OMP_NUM_THREADS=1 LENGTHGEN_DRAW_WORKERS=1 .venv/bin/python benchmarks/bench_figures.py \
        [--figures ID ...] [--digests FILE]

Each figure is drawn by `show`, then laid out and saved for the column (`picture`), and drawn
again by `_phone_figure` and laid out and saved for a phone, in this process when
LENGTHGEN_DRAW_WORKERS is 1 (the default of this script). Records are read once, before the
clock starts, so the numbers are the drawing's alone. Prints one line per figure (wall and CPU
seconds) and the totals; CPU seconds move less than wall seconds on a shared machine.
`--digests FILE` writes the sha256 of each PNG, to compare two trees' pixels.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_figures.py --notebook dyck_appendix \
        [--no-ahead]

runs one chapter's notebook in a Jupyter kernel, as the book's build does (nothing is saved),
and prints its wall time and the CPU seconds of the kernel and every process under it (its
drawing workers, or forked copies in older trees), which a last cell added to the notebook
reads; `--no-ahead` first sets `viz.book.AHEAD` to 0, so that no figure is drawn for phones
ahead of its cell (`draw_ahead`), only beside its column's drawing.
"""
import argparse
import functools
import hashlib
import json
import os
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figures", nargs="*", help="figure ids (default: every one the book "
                                                     "shows by id)")
    parser.add_argument("--digests", help="write {figure id: [column sha256, phone sha256]}")
    parser.add_argument("--notebook", help="run this chapter (book/NAME.ipynb) in a kernel")
    parser.add_argument("--no-ahead", action="store_true",
                        help="with --notebook: draw no figure ahead of its cell")
    args = parser.parse_args(argv)
    if args.notebook:
        return run_notebook(args.notebook, ahead=not args.no_ahead)
    os.environ.setdefault("LENGTHGEN_DRAW_WORKERS", "1")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen.results import REPO_ROOT
    from lengthgen.runs.records import committed_records, reading, records_for
    from lengthgen.runs.registry import experiment
    from lengthgen.viz.book import _phone_figure, figures_shown, picture

    figures = args.figures
    if not figures:
        figures = []
        for notebook in sorted((REPO_ROOT / "book").glob("*.ipynb")):
            figures += [f for f in figures_shown(notebook) if f not in figures]
    figures = [f for f in figures if committed_records(f, missing_ok=True) is not None]
    records = {f: records_for(f, None, False, None)[1] for f in figures}   # (not timed)
    for figure_id in figures:   # imports the figure modules and their libraries, untimed
        experiment(figure_id)

    digests, wall, cpu = {}, 0.0, 0.0
    for figure_id in figures:
        start, start_cpu = time.perf_counter(), time.process_time()
        fig = reading(figure_id, experiment(figure_id).figure, records[figure_id])
        shown = picture(fig, phone=functools.partial(_phone_figure, figure_id,
                                                     records[figure_id]))
        plt.close("all")
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
        wall, cpu = wall + seconds, cpu + cpu_seconds
        digests[figure_id] = [hashlib.sha256(png).hexdigest() for png in (shown.wide,
                                                                           shown.narrow)]
        print(f"{figure_id:40s} {seconds:6.2f} s  {cpu_seconds:6.2f} s CPU")
    print(f"{len(figures)} figures, both renditions: {wall:.1f} s, {cpu:.1f} s CPU "
          f"(LENGTHGEN_DRAW_WORKERS={os.environ['LENGTHGEN_DRAW_WORKERS']})")
    if args.digests:
        with open(args.digests, "w") as out:
            json.dump(digests, out, indent=1, sort_keys=True)
    return 0


def run_notebook(name: str, ahead: bool) -> int:
    """Run book/NAME.ipynb in a kernel, in the book's folder; print its wall time."""
    import nbclient
    import nbformat

    from lengthgen.results import REPO_ROOT
    path = REPO_ROOT / "book" / (name if name.endswith(".ipynb") else name + ".ipynb")
    notebook = nbformat.read(path, as_version=4)
    if not ahead:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(
            "import lengthgen.viz.book\nlengthgen.viz.book.AHEAD = 0"))
    notebook.cells.append(nbformat.v4.new_code_cell(KERNEL_CPU))
    client = nbclient.NotebookClient(notebook, timeout=1200, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    cpu = json.loads(notebook.cells[-1].outputs[0]["text"])
    print(f"{path.name}: {seconds:.1f} s in a kernel, {cpu['kernel'] + cpu['below']:.1f} s CPU "
          f"({cpu['kernel']:.1f} in the kernel, {cpu['below']:.1f} in processes under it), "
          f"figures drawn ahead: {'yes' if ahead else 'no'} (LENGTHGEN_DRAW_WORKERS="
          f"{os.environ.get('LENGTHGEN_DRAW_WORKERS', 'default')}, LENGTHGEN_SCALE="
          f"{os.environ.get('LENGTHGEN_SCALE', 'default')})")
    return 0


# The notebook's last cell: the CPU seconds of the kernel, and of the processes under it (those
# running, with what they waited for, and those it waited for), as JSON.
KERNEL_CPU = """\
import json as _json, resource as _resource, psutil as _psutil
_own = _resource.getrusage(_resource.RUSAGE_SELF)
_below = _resource.getrusage(_resource.RUSAGE_CHILDREN)
_below = _below.ru_utime + _below.ru_stime
for _p in _psutil.Process().children(recursive=True):
    try:
        _t = _p.cpu_times()
        _below += _t.user + _t.system + _t.children_user + _t.children_system
    except _psutil.Error:
        pass
print(_json.dumps({"kernel": _own.ru_utime + _own.ru_stime, "below": _below}))"""


if __name__ == "__main__":
    sys.exit(main())
