"""Drawing on more than one core: the book's figures and slider frames in forked copies.

Building the site draws every figure twice (for the column and for a phone) and every slider
frame, hundreds of drawings that need nothing from each other. `in_parallel(jobs)` runs a
list of such jobs (functions of no arguments) in `config.draw_workers()` processes: this one
and copies of it made by fork, which share everything built so far (records read, figures
laid out) without pickling it. Each copy runs a contiguous block of the jobs, so that a job
that reuses what the one before it built (a slider's figure per program) keeps doing so, and
sends its results back pickled (PNG bytes, pictures). `Forked(job)` runs one job in a copy
from now on, for `result()` to collect later (`viz.book.draw_ahead`: a figure drawn for
phones while the cells before it run). A copy that fails sends back nothing, and this
process runs its jobs again itself, so the error is raised here with its traceback. Where
forking is not safe (`draw_workers`) the jobs run here in turn, with the same results. (A
copy reads fonts through files of its own: matplotlib empties its cache of fonts in a copy,
and `viz.layout` its cache of parsed math text.)
"""
import functools
import gc
import os
import pickle
import sys
from collections.abc import Callable, Sequence

from lengthgen.config import draw_workers


def blocks(count: int, workers: int) -> list[range]:
    """`count` jobs in `workers` contiguous blocks as even as can be (the first ones larger)."""
    workers = max(1, min(workers, count))
    size, extra = divmod(count, workers)
    starts = [k * size + min(k, extra) for k in range(workers + 1)]
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def in_parallel(jobs: Sequence[Callable], workers: int | None = None) -> list:
    """Each job's result, in the jobs' order. The first block of jobs runs in this process,
    every other block in a forked copy of it; the copies must not change anything outside
    themselves (they draw, this process keeps what they return)."""
    parts = blocks(len(jobs), draw_workers() if workers is None else workers)
    if len(parts) <= 1:
        return [job() for job in jobs]
    copies = [Forked(functools.partial(_run, jobs, part)) for part in parts[1:]]
    try:
        results = _run(jobs, parts[0])
    finally:   # every copy is waited for, even when a job here failed
        answers = [copy.result() for copy in copies]
    for answer in answers:
        results.extend(answer)
    return results


def _run(jobs, part) -> list:
    return [jobs[k]() for k in part]


class Forked:
    """A job (a function of no arguments) running in a forked copy of this process from now
    on; `result()` waits for it and returns what it returned. Where the copy could not be made
    or failed, `result()` runs the job here, raising what it raises."""

    _running = 0   # copies not yet waited for: the collector's objects stay frozen meanwhile

    def __init__(self, job: Callable):
        self.job, self.pid, self.reader = job, None, None
        # Objects made so far stay out of the collector's reach while copies run: a
        # collection that walked them would write to every page of the heap, and each write
        # to a page a copy shares makes the system copy that page.
        gc.freeze()
        Forked._running += 1
        try:
            self.pid, self.reader = _fork(job)
        except OSError:   # no process to be had: the job runs here when its result is asked
            self._done()

    def result(self):
        if self.reader is None:   # (asked before, or never forked)
            if not hasattr(self, "value"):
                self.value = self.job()
            return self.value
        with os.fdopen(self.reader, "rb") as answer:   # (a copy blocks on a full pipe)
            payload = answer.read()
        self.reader = None
        _, status = os.waitpid(self.pid, 0)
        self._done()
        self.value = pickle.loads(payload) if status == 0 and payload else self.job()
        return self.value

    def cancel(self) -> None:
        """Stop the copy, its result unwanted."""
        if self.reader is not None:
            import signal
            os.kill(self.pid, signal.SIGKILL)
            os.close(self.reader)
            self.reader = None
            os.waitpid(self.pid, 0)
            self._done()
            self.value = None

    @staticmethod
    def _done() -> None:
        Forked._running -= 1
        if Forked._running == 0:
            gc.unfreeze()


def _fork(job) -> tuple[int, int]:
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        raise
    if pid:
        os.close(writer)
        return pid, reader
    # The copy: never return into the caller's code, never run its exit handlers (a kernel's
    # sockets, a test runner's reports), never flush what this process had buffered.
    code = 1
    try:
        os.close(reader)
        # what the job prints (a warning) would go through the kernel's sockets, which belong
        # to this process's original
        sys.stdout = sys.stderr = open(os.devnull, "w")
        try:
            payload = pickle.dumps(job(), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:   # (its traceback comes when this process runs the job)
            payload = b""
        with os.fdopen(writer, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        os._exit(code)
