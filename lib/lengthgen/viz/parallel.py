"""Drawing on more than one core: the book's figures and slider frames in forked copies.

Building the site draws every figure twice (for the column and for a phone) and every slider
frame, hundreds of drawings that need nothing from each other. `in_parallel(jobs)` runs a
list of such jobs (functions of no arguments) in `config.draw_workers()` processes: this one
and copies of it made by fork, which share everything built so far (records read, figures
laid out) without pickling it. Each copy runs a contiguous block of the jobs, so that a job
that reuses what the one before it built (a slider's figure per program) keeps doing so, and
sends its results back pickled (PNG bytes, pictures). A copy that fails sends back what went
wrong, and this process runs its jobs again itself, so the error is raised here with its
traceback. Where forking is not safe (`draw_workers`) the jobs run here in turn, with the
same results.
"""
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
    children = []
    # Objects made so far stay out of the collector's reach while the copies run: a collection
    # that walked them would write to every page of the heap, and each write to a page the
    # copies share makes the system copy that page.
    gc.freeze()
    try:
        for part in parts[1:]:
            try:
                children.append((part, *_fork(jobs, part)))
            except OSError:   # no process to be had: the block runs here after the others
                children.append((part, None, None))
        results = [jobs[k]() for k in parts[0]]
    finally:   # read every copy's answer (a copy blocks on a full pipe) and wait for it
        answers = [(part, _answer(pid, reader)) for part, pid, reader in children]
        gc.unfreeze()
    for part, answer in answers:
        if answer is None:   # the copy failed: its jobs again here, raising what they raise
            answer = [jobs[k]() for k in part]
        results.extend(answer)
    return results


def _fork(jobs, part) -> tuple[int, int]:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid:
        os.close(writer)
        return pid, reader
    # The copy: never return into the caller's code, never run its exit handlers (a kernel's
    # sockets, a test runner's reports), never flush what this process had buffered.
    code = 1
    try:
        os.close(reader)
        # what the jobs print (a warning) would go through the kernel's sockets, which belong
        # to this process's original
        sys.stdout = sys.stderr = open(os.devnull, "w")
        try:
            payload = pickle.dumps([jobs[k]() for k in part], protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:   # (its traceback comes when this process runs the jobs)
            payload = b""
        with os.fdopen(writer, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        os._exit(code)


def _answer(pid: int, reader: int) -> list | None:
    """The results a copy sent, or None where it failed or sent nothing."""
    if pid is None:
        return None
    with os.fdopen(reader, "rb") as answer:
        payload = answer.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return None
    return pickle.loads(payload)
