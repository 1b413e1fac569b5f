"""Drawing on more than one core: the book's figures and slider frames in worker processes.

Building the site draws every figure twice (for the column and for a phone) and every slider
frame, hundreds of drawings that need nothing from each other. `in_parallel(jobs)` runs a
list of such jobs (functions of no arguments) in `config.draw_workers()` processes: this one
and workers of a pool. Each worker runs a contiguous block of the jobs, so that a job that
reuses what the one before it built keeps doing so, and sends its results back pickled (PNG
bytes, pictures). `InWorker(job)` runs one job in a worker from now on, for `result()` to
collect later (`viz.book.draw_ahead`: a figure drawn for phones while the cells before it run).

The workers are started by a fork server (multiprocessing's "forkserver"): a small process
started afresh, which imports the library once and forks a worker from itself, a process with
one thread. They are never forked from this process, which in a notebook's kernel runs several
threads (its sockets, its heartbeat, torch's): a fork copies only the thread that forks, and a
lock another thread held stays locked in the copy for ever (Python 3.12 warns of it). Until
issue 56 this module forked the kernel, which shared what it had built without pickling it.

A job goes to a worker pickled, so it must be a function the worker can import (a function of
a module, a functools.partial of one, with arguments that pickle: a figure id and its records,
say; `FrameSlider.redrawn` sends its figures laid out, as matplotlib pickles them). A job
that does not pickle (a notebook's own function, a closure) runs here, in turn, as does a job
that fails in a worker, so that its error is raised here with its traceback. Where there is
no fork server (not Unix) or one process draws, every job runs here, with the same results.
As with any use of multiprocessing, a script that draws in workers keeps its own work under
`if __name__ == "__main__":` (a worker imports the script it was started from).

In a kernel the pool ends as the kernel shuts down (`shutdown`), before the kernel ends its
children: ipykernel sends every process of its group SIGTERM, waiting longer between rounds,
and multiprocessing's resource tracker ignores SIGTERM by design, so a kernel that had drawn
in workers took about 2.5 s more to shut down (the client's patience, then its SIGTERM): in
each of the book's nine chapters, at every build and every `make test`. The ending runs in a
thread of its own that the interpreter waits for as it exits (not a daemon): ipykernel stops
the kernel's main loop 0.1 s after it starts to shut down, and under load the interpreter
then exited while the pool was still ending, leaving its fork server and tracker to end by
themselves after the kernel (issue 56's CI run, about 1 kernel in 20 on a loaded machine).
"""
import functools
import pickle
import threading
from collections.abc import Callable, Sequence

from lengthgen.config import draw_workers

# What a worker imports before its first job (the fork server imports it once, and each
# worker is forked with it): the drawing library and matplotlib, which every job needs.
PRELOAD = ["lengthgen.viz.book", "matplotlib.pyplot"]

_pool = None   # the pool of workers, started at the first job sent to one
_watching = False   # whether a kernel's shutdown ends the pool (`_end_with_the_kernel`)
_exiting = threading.Event()   # the kernel has started to shut down
_ended = threading.Event()     # ... and the pool has ended (`_ender`)
_helpers = False    # whether this process started multiprocessing's fork server and tracker


def blocks(count: int, workers: int) -> list[range]:
    """`count` jobs in `workers` contiguous blocks as even as can be (the first ones larger)."""
    workers = max(1, min(workers, count))
    size, extra = divmod(count, workers)
    starts = [k * size + min(k, extra) for k in range(workers + 1)]
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def in_parallel(jobs: Sequence[Callable], workers: int | None = None, done: int = 0) -> list:
    """Each job's result, in the jobs' order. The first block of jobs runs in this process,
    every other block in a worker (or here, where it does not pickle or fails there). `done`:
    how many jobs before these this process ran already (a slider's first frame), counted in
    its block, so that the blocks are those of all the jobs (a slider's figure per program,
    say, is then built in one process, not in both)."""
    parts = blocks(len(jobs) + done, draw_workers() if workers is None else workers)
    parts = [range(max(part.start - done, 0), part.stop - done) for part in parts]
    if len(parts) <= 1:
        return [job() for job in jobs]
    sent = [InWorker(functools.partial(_run, jobs, part)) for part in parts[1:]]
    try:
        results = _run(jobs, parts[0])
    finally:   # every worker's block is waited for, even when a job here failed
        answers = [block.result() for block in sent]
    for answer in answers:
        results.extend(answer)
    return results


def _run(jobs, part) -> list:
    return [jobs[k]() for k in part]


class InWorker:
    """A job (a function of no arguments) running in a worker from now on; `result()` waits
    for it and returns what it returned. Where it could not be sent (it does not pickle, or
    there is no pool) or failed there, `result()` runs the job here, raising what it raises."""

    def __init__(self, job: Callable):
        self.job, self.future = job, None
        self.ran_in_worker = False   # (once its result is asked: where it came from)
        try:
            payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:   # (a notebook's function, a closure: pickle says so in many ways)
            return
        pool = _workers()
        if pool is not None:
            try:
                self.future = pool.submit(_unpickled, payload, _settings())
            except RuntimeError:   # (a pool broken by a worker that died, or shut down)
                _forget_pool()

    @property
    def sent(self) -> bool:
        """Whether the job went to a worker (else it runs here when its result is asked)."""
        return self.future is not None

    def result(self):
        if self.future is not None:
            future, self.future = self.future, None
            from concurrent.futures.process import BrokenProcessPool
            try:
                self.value = future.result()
                self.ran_in_worker = True
                return self.value
            except BrokenProcessPool:   # a worker died (its memory, say): a new pool next time
                _forget_pool()
            except Exception:   # (its traceback comes when the job runs here)
                pass
        if not hasattr(self, "value"):
            self.value = self.job()
        return self.value

    def cancel(self) -> None:
        """Drop the job, its result unwanted (a job a worker has begun runs to its end)."""
        if self.future is not None:
            self.future.cancel()
            self.future = None
        self.value = None


def _settings() -> dict:
    """matplotlib's settings here, for a worker to draw with (a worker starts with the
    defaults, and a notebook may have changed some)."""
    import matplotlib
    return {key: value for key, value in matplotlib.rcParams.items()
            if key not in ("backend", "backend_fallback", "interactive")}


def _start_worker() -> None:
    """(in a worker, once) Draw without a screen: a notebook's kernel hands its own backend
    down in $MPLBACKEND, which needs the kernel. And ignore SIGINT: Jupyter interrupts a
    kernel by signalling its whole process group, workers included, as it shuts the kernel
    down; the interrupt is the kernel's to handle (a worker stopped by it printed a
    KeyboardInterrupt traceback into every build's log), and the pool ends its workers."""
    import signal

    import matplotlib
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    matplotlib.use("Agg")


def _unpickled(payload: bytes, settings: dict):
    """(in a worker) The result of the job `payload` pickles, drawn with `settings`."""
    import matplotlib
    with matplotlib.rc_context(settings):
        return pickle.loads(payload)()


def _workers():
    """The pool of workers (started now if it is not running), or None where there is no fork
    server or only one process draws."""
    global _pool, _helpers
    if _pool is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        workers = draw_workers()
        if workers < 2 or "forkserver" not in multiprocessing.get_all_start_methods():
            return None
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        # as many workers as processes draw: the jobs sent to them (a block of frames, the
        # phone's rendition of this figure, of the next one) each have one
        _pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                    initializer=_start_worker)
        _helpers = True
        _end_with_the_kernel()
    return _pool


def shutdown() -> None:
    """End the workers now, and the two processes multiprocessing started for them: the fork
    server and its resource tracker (each ends when the pipe it reads closes; `_stop` is how
    multiprocessing closes it, the one way to end the tracker, which ignores SIGTERM). The next
    job sent to a worker starts them again."""
    global _pool, _helpers
    if _pool is not None:
        pool, _pool = _pool, None
        pool.shutdown(wait=True, cancel_futures=True)
        del pool
    if not _helpers:   # (a pool forgotten as broken leaves them running: they end here too)
        return
    _helpers = False
    import gc
    gc.collect()   # the pool's queues' semaphores, released before their tracker ends: it
    #                would report them as leaked
    from multiprocessing import forkserver, resource_tracker
    for helper in (forkserver._forkserver, resource_tracker._resource_tracker):
        stop = getattr(helper, "_stop", None)   # (CPython 3.8 to 3.13; elsewhere the
        if stop is not None:                    # kernel's SIGTERM and SIGKILL end them)
            stop()


def _on_exit_now(change) -> None:
    """(in the kernel's control thread, as it starts to shut down) Have `_ender` end the pool,
    and wait for it: ipykernel signals the kernel's children next."""
    if change["new"]:
        _exiting.set()
        _ended.wait(timeout=60)


def _ender() -> None:
    """(a thread of a kernel that drew in workers) End the pool when the kernel starts to shut
    down, or when its main thread has ended without that (the interpreter, exiting, waits for
    this thread before its atexit handlers, which is why the ending is done here)."""
    main = threading.main_thread()
    while not _exiting.wait(0.5):
        if not main.is_alive():
            break
    try:
        shutdown()
    except Exception as e:   # (the kernel shuts down all the same: it ends its children)
        import sys
        print(f"lengthgen: the drawing workers did not end cleanly ({e})", file=sys.stderr)
    finally:
        _ended.set()


def _end_with_the_kernel() -> None:
    """In an IPython kernel, end the pool as the kernel starts to shut down: ipykernel marks
    its shell's `exit_now` before it ends its children (the module docstring)."""
    global _watching
    if _watching:
        return
    try:
        from IPython import get_ipython
    except ImportError:   # (not in IPython: the interpreter's exit ends the pool)
        return
    shell = get_ipython()
    if shell is None or not shell.has_trait("exit_now"):
        return
    shell.observe(_on_exit_now, names="exit_now")
    threading.Thread(target=_ender, name="lengthgen-end-drawing-workers").start()
    _watching = True


def _forget_pool() -> None:
    """Let the next job start a new pool (this one is broken: a worker died)."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
    _pool = None
