"""viz.parallel: the book's figures and slider frames drawn in worker processes give what one
process gives, and no worker is a fork of this process (issue 56: a notebook's kernel runs
several threads, and a fork of it can deadlock)."""
import functools
import multiprocessing
import os
import threading
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from lengthgen.config import draw_workers
from lengthgen.errors import LengthgenError
from lengthgen.viz import parallel
from lengthgen.viz.parallel import InWorker, blocks, in_parallel

matplotlib.use("Agg")

forks = pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(),
                           reason="no fork server on this system")


def _pid_of(k):
    return k, os.getpid()


def _fails_at(bad, k):
    if k == bad:
        raise ValueError(f"job {k} failed")
    return k


@pytest.fixture
def no_fork_here(monkeypatch):
    """This process runs a thread beside the main one (as a kernel does), and may not fork: a
    fork raises, and so does Python's warning that a fork of a process with threads can
    deadlock (3.12 and later). The pool of workers starts anew, so that starting it is
    checked too."""
    parallel._forget_pool()

    def fork():
        raise AssertionError("os.fork called in a process with threads")
    monkeypatch.setattr(os, "fork", fork)
    stop = threading.Event()
    beside = threading.Thread(target=stop.wait, daemon=True)
    beside.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield
    stop.set()
    beside.join()


def test_jobs_are_cut_into_contiguous_blocks_one_per_process():
    assert blocks(7, 2) == [range(0, 4), range(4, 7)]
    assert blocks(7, 3) == [range(0, 3), range(3, 5), range(5, 7)]
    assert blocks(1, 2) == [range(0, 1)]
    assert sum(map(len, blocks(10, 4))) == 10


@forks
def test_results_come_back_in_order_from_other_processes(monkeypatch, no_fork_here):
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    results = in_parallel([functools.partial(_pid_of, k) for k in range(5)], workers=2)
    assert [k for k, _ in results] == list(range(5))
    pids = [pid for _, pid in results]
    assert pids[:3] == [os.getpid()] * 3          # the first block here
    assert set(pids[3:]) != {os.getpid()} and len(set(pids[3:])) == 1
    # a job run here before these (a slider's first frame) counts in this process's block
    results = in_parallel([functools.partial(_pid_of, k) for k in range(5)], workers=2, done=1)
    assert [k for k, _ in results] == list(range(5))
    pids = [pid for _, pid in results]
    assert pids[:2] == [os.getpid()] * 2 and os.getpid() not in pids[2:]


@forks
def test_a_job_that_fails_in_a_worker_raises_here(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    with pytest.raises(ValueError, match="job 4 failed"):
        in_parallel([functools.partial(_fails_at, 4, k) for k in range(6)], workers=2)


def test_a_job_that_does_not_pickle_runs_here(monkeypatch):
    """A notebook's own function or a closure cannot go to a worker: it runs here."""
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    results = in_parallel([lambda k=k: (k, os.getpid()) for k in range(4)], workers=2)
    assert results == [(k, os.getpid()) for k in range(4)]
    assert not InWorker(lambda: 1).sent


@pytest.mark.parametrize("text", ["0", "two", "-1"])
def test_a_bad_number_of_workers_is_one_clear_error(monkeypatch, text):
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", text)
    with pytest.raises(LengthgenError, match="LENGTHGEN_DRAW_WORKERS"):
        draw_workers()


def test_the_number_of_workers_can_be_set(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "3")
    assert draw_workers() == 3
    monkeypatch.delenv("LENGTHGEN_DRAW_WORKERS")
    assert 1 <= draw_workers() <= 2


class _LogFigure:
    """A figure full of math text (log-scale ticks, a formula), redrawn per frame."""

    def __init__(self, settings):
        self.fig, self.ax = plt.subplots(figsize=(6, 3))
        (self.line,) = self.ax.loglog([1, 1e4], [1, 1e4])
        self.ax.set_xlabel(r"$N = 2^{\tau} \Delta$")

    def show(self, slope):
        n = np.logspace(0, 4, 20)
        self.line.set_data(n, n ** slope)
        self.ax.set_ylim(1, 1e4 ** max(slope, 1))
        self.ax.set_title(rf"$N^{{{slope}}}$ against $N$")
        return self.fig


def _log_frame(slope):
    return _LogFigure(None).show(slope)


@forks
def test_frames_of_a_redrawn_figure_drawn_by_workers_are_those_drawn_by_one_process(
        monkeypatch, no_fork_here, tmp_path):
    """A slider that redraws one figure per frame (`FrameSlider.redrawn`) sends its frames after
    the first to a worker with its figures laid out here (pickled): the worker lays out
    nothing (`make` ran in this process only, once per rendition), and draws the frames this
    process draws."""
    from lengthgen.viz import frames
    from lengthgen.viz.frames import FrameSlider
    slopes = [round(0.5 + 0.1 * k, 1) for k in range(8)]
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "1")
    alone = FrameSlider.redrawn(_LogFigure, {"slope": slopes})
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    sent = []

    class Watched(InWorker):
        def __init__(self, job):
            super().__init__(job)
            sent.append(self)
    monkeypatch.setattr(parallel, "InWorker", Watched)
    built = []
    figures = frames._Redraw.figures
    monkeypatch.setattr(frames._Redraw, "figures", lambda self: built.append(
        self._built is None) or figures(self))   # (here only)
    made = tmp_path / "made"   # (each process that runs make writes its pid there)
    shared = FrameSlider.redrawn(_CountedLogFigure, {"slope": slopes}, fixed={"made": str(made)})
    assert shared.frames == alone.frames and shared.narrow_frames == alone.narrow_frames
    assert len(set(alone.frames)) == len(slopes)
    assert [block.ran_in_worker for block in sent] == [True]
    assert built.count(True) == 1   # here, the figures were built once
    assert made.read_text().split() == [str(os.getpid())] * 2   # and nowhere else


class _CountedLogFigure(_LogFigure):
    """_LogFigure, which notes in the file `made` the process that made it."""

    def __init__(self, settings):
        super().__init__(settings)
        with open(settings[0]["made"], "a") as out:
            out.write(f"{os.getpid()}\n")

    def show(self, slope, made):
        return super().show(slope)


def _log_figure():
    return _LogFigure(None).show(1.5)


@forks
def test_frames_drawn_by_workers_are_those_drawn_by_one_process(monkeypatch, no_fork_here):
    """A slider whose drawing function is a module's: its frames after the first go to a
    worker in a block, and come back as this process draws them."""
    from lengthgen.viz.frames import FrameSlider
    slopes = [round(0.5 + 0.1 * k, 1) for k in range(4)]
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "1")
    alone = FrameSlider(_log_frame, {"slope": slopes})
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    sent = []

    class Watched(InWorker):
        def __init__(self, job):
            super().__init__(job)
            sent.append(self)
    monkeypatch.setattr(parallel, "InWorker", Watched)
    shared = FrameSlider(_log_frame, {"slope": slopes})
    assert shared.frames == alone.frames and shared.narrow_frames == alone.narrow_frames
    assert len(set(alone.frames)) == len(slopes)
    # the first frame and 1 of the 3 others here, 2 in a worker
    assert [block.ran_in_worker for block in sent] == [True]


@forks
def test_a_figure_and_its_phone_drawing_give_one_picture_in_one_or_two_processes(monkeypatch,
                                                                                no_fork_here):
    from lengthgen.viz.book import picture
    pictures = []
    for workers in ("1", "2"):
        monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", workers)
        assert InWorker(_log_figure).sent == (workers == "2")   # (one process: no pool)
        fig = _log_figure()
        pictures.append(picture(fig, phone=_log_figure))
        plt.close(fig)
    one, two = pictures
    assert (one.wide, one.narrow, one.alt) == (two.wide, two.narrow, two.alt)
    assert one.narrow != one.wide and one.narrow_text_px == two.narrow_text_px


@forks
def test_the_message_slider_draws_its_frames_in_a_worker_as_one_process_does(monkeypatch,
                                                                              no_fork_here):
    """The communication chapter's slider (figures per program, redrawn per N) sends a block of
    its frames to a worker, which lays out its own figures for its programs: the frames are
    those one process draws."""
    from lengthgen.experiments.huang.comm import comm_protocol_bits as exp
    from lengthgen.viz.message_slider import message_slider
    config = dict(exp.CONFIGS["test"], programs=["dyck1", "majority_ab"], ns=[8, 16, 32])
    records = [{"params": params, "metrics": exp.run_one(params, config, "cpu")}
               for params in exp.runs(config)]
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "1")
    alone = message_slider(records, ["dyck1", "majority_ab"])
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    sent = []

    class Watched(InWorker):
        def __init__(self, job):
            super().__init__(job)
            sent.append(self)
    monkeypatch.setattr(parallel, "InWorker", Watched)
    shared = message_slider(records, ["dyck1", "majority_ab"])
    assert len(set(alone.frames)) == 6 and len(set(alone.narrow_frames)) == 6
    assert shared.frames == alone.frames and shared.narrow_frames == alone.narrow_frames
    assert shared.alts == alone.alts
    assert [block.ran_in_worker for block in sent] == [True]


def test_a_notebook_lists_the_registered_figures_it_shows_in_order(tmp_path):
    import json

    from lengthgen.viz.book import figures_shown
    cells = [{"cell_type": "code", "source": ['book_figure("richard-fig2-closed-form-paths")\n']},
             {"cell_type": "markdown", "source": ['book_figure("not-code")']},
             {"cell_type": "code", "source": ['x = 1\n', 'book_figure("izzo-kgram")\n',
                                              'book_figure("limit-slider", slider)\n']}]
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert figures_shown(path) == ["richard-fig2-closed-form-paths", "izzo-kgram"]
    assert figures_shown(tmp_path / "missing.ipynb") == []
    from lengthgen.results import REPO_ROOT
    assert figures_shown(REPO_ROOT / "book" / "dyck_appendix.ipynb") == [
        "richard-fig1-boolean", "richard-fig5-sign-study", "richard-fig7-order-study"]


@forks
def test_figures_drawn_ahead_for_phones_are_those_drawn_in_their_cells(tmp_path, monkeypatch,
                                                                        no_fork_here):
    """draw_ahead starts the first figure's phone rendition at once in a worker, each
    book_figure the next one's; the picture shown is the one drawn in the figure's own cell."""
    import json

    from lengthgen.runs.records import committed_records
    from lengthgen.viz import book
    figures = ["richard-fig2-closed-form-paths", "richard-fig6-ablation"]
    if any(committed_records(f, missing_ok=True) is None for f in figures):
        pytest.skip("no committed records")
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    shown = []
    monkeypatch.setattr(book, "_glue", lambda key, obj: shown.append((key, obj)))
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": [
        f'book_figure("{f}")\n' for f in figures]}]}))
    book.draw_ahead(str(path))
    assert list(book._drawing) == figures[:1]
    first = book._drawing[figures[0]]
    book.book_figure(figures[0])
    assert first.ran_in_worker
    assert list(book._drawing) == figures[1:]
    book.book_figure(figures[1])
    assert book._drawing == {}
    pictures = {key: obj for key, obj in shown if isinstance(obj, book.Picture)}
    for figure_id in figures:
        fig, _ = book.show(figure_id)
        alone = book.picture(fig, pictures[figure_id].alt,
                             phone=functools.partial(book._phone_figure, figure_id))
        plt.close(fig)
        assert (alone.wide, alone.narrow) == (pictures[figure_id].wide,
                                              pictures[figure_id].narrow), figure_id
    book.draw_ahead(str(tmp_path / "missing.ipynb"))
    assert book._upcoming == [] and book._drawing == {}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_figure_given_as_the_function_that_draws_it_is_drawn_again_for_phones(monkeypatch,
                                                                                   workers):
    from lengthgen.viz import book
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", workers)
    calls, shown = [], []
    monkeypatch.setattr(book, "_glue", lambda key, obj: shown.append((key, obj)))

    def draw():
        calls.append(os.getpid())
        return _LogFigure(None).show(1.5)

    book.book_figure("a-drawn-figure", draw, provenance="made here")
    (key, shown_picture), (provenance_key, _) = shown
    assert (key, provenance_key) == ("a-drawn-figure", "a-drawn-figure-provenance")
    fig = draw()
    expected = book.picture(fig, shown_picture.alt, phone=draw)
    plt.close(fig)
    assert (shown_picture.wide, shown_picture.narrow) == (expected.wide, expected.narrow)
    # (a function of the notebook's own does not pickle: it draws both renditions here)
    assert calls == [os.getpid()] * 4


@forks
def test_a_figure_drawn_ahead_from_records_that_changed_since_is_drawn_again(tmp_path,
                                                                            monkeypatch):
    """A reader who re-runs a figure's experiment (rerun_figure) after the setup cell started
    drawing it for phones gets both renditions from the new records."""
    import json

    from lengthgen.runs import records as records_module
    from lengthgen.runs.records import committed_records
    from lengthgen.viz import book
    figure_id = "richard-fig6-ablation"
    if committed_records(figure_id, missing_ok=True) is None:
        pytest.skip("no committed records")
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "2")
    monkeypatch.setattr(book, "_glue", lambda key, obj: None)
    drawn_here = []
    phone_png = book._phone_png
    monkeypatch.setattr(book, "_phone_png", lambda draw: drawn_here.append(1) or phone_png(draw))
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code",
                                           "source": [f'book_figure("{figure_id}")']}]}))
    for changed in (False, True):
        drawn_here.clear()
        book.draw_ahead(str(path))   # the copy draws from the records as they are now
        if changed:
            records_for = records_module.records_for
            monkeypatch.setattr(records_module, "records_for",
                                lambda *a, **k: (lambda s, r: (s, r[::-1]))(*records_for(*a, **k)))
        book.book_figure(figure_id)
        assert drawn_here == ([1] if changed else [])


def test_a_kernel_that_drew_in_workers_shuts_down_without_a_traceback(tmp_path):
    """Jupyter interrupts a kernel's whole process group as it shuts it down: the workers
    ignore that SIGINT (the pool ends them), so a build's log gets no KeyboardInterrupt
    traceback from each chapter (it did, from both workers, before they ignored it)."""
    import subprocess
    import sys
    import textwrap
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import nbformat
        from nbclient import NotebookClient
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(
            "import functools, math, os\\n"
            "os.environ['LENGTHGEN_DRAW_WORKERS'] = '2'\\n"
            "from lengthgen.viz.parallel import in_parallel\\n"
            "print(in_parallel([functools.partial(math.factorial, n) for n in range(6)]))")]
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
        print("OUT", nb.cells[0].outputs[0]["text"].strip())
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert "OUT [1, 1, 2, 6, 24, 120]" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr


# A kernel whose main loop is woken often (a timer ticks), with a pool that takes 0.5 s to end:
# ipykernel stops that loop 0.1 s after it starts to shut down, and the interpreter exited
# while the pool was still ending (every time, with the ending done in the control thread;
# in CI, about one kernel in 20 on a loaded machine, without the timer).
_BUSY_KERNEL = ("\n"
                "import time\n"
                "import lengthgen.viz.parallel as parallel\n"
                "from tornado.ioloop import PeriodicCallback\n"
                "_shutdown = parallel.shutdown\n"
                "def _slow_shutdown():\n"
                "    time.sleep(0.5)\n"
                "    _shutdown()\n"
                "parallel.shutdown = _slow_shutdown\n"
                "PeriodicCallback(lambda: None, 10).start()")


@pytest.mark.parametrize("kernel", ["idle", "busy"])
def test_a_kernel_that_drew_in_workers_ends_them_and_exits_by_itself(tmp_path, kernel):
    """ipykernel ends its children with SIGTERM, then SIGKILL, waiting longer between rounds,
    and multiprocessing's resource tracker ignores SIGTERM: a kernel that had drawn in workers
    did not exit by itself, and its client terminated it after waiting (about 2.5 s at every
    chapter of every build). Now the pool, its fork server and its tracker end as the kernel
    starts to shut down, so the kernel exits by itself: its atexit handlers run, which a
    terminated kernel's never do, and no process of the pool is left when they do, also where
    the kernel's main loop stops before the pool has ended (`_BUSY_KERNEL`)."""
    import subprocess
    import sys
    import textwrap
    ran, children = tmp_path / "atexit-ran", tmp_path / "children"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import nbformat
        from nbclient import NotebookClient
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(
            "import atexit, functools, math, os, psutil\\n"
            "os.environ['LENGTHGEN_DRAW_WORKERS'] = '2'\\n"
            "from lengthgen.viz.parallel import in_parallel\\n"
            "print(in_parallel([functools.partial(math.factorial, n) for n in range(6)]))\\n"
            "def _alive(child):\\n"
            "    try:\\n"
            "        return child.status() != psutil.STATUS_ZOMBIE\\n"
            "    except psutil.Error:\\n"
            "        return False\\n"
            "def _at_exit():\\n"
            "    alive = [c for c in psutil.Process().children() if _alive(c)]\\n"
            "    open({str(children)!r}, 'w').write(str(len(alive)))\\n"
            "    open({str(ran)!r}, 'w').write('ran')\\n"
            "atexit.register(_at_exit)"
            {_BUSY_KERNEL if kernel == "busy" else ""!r})]
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
        print("OUT", nb.cells[0].outputs[0]["text"].strip())
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert "OUT [1, 1, 2, 6, 24, 120]" in done.stdout, done.stdout + done.stderr
    assert ran.exists(), "the kernel was terminated: it did not exit by itself"
    assert children.read_text() == "0"
    assert "leaked" not in done.stderr, done.stderr
