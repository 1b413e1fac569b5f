"""Shared pytest setup: tests and notebooks run at test scale, kernels get time to start."""
import os
from pathlib import Path

import pytest
from nbclient import NotebookClient

os.environ.setdefault("LENGTHGEN_SCALE", "test")
os.environ.setdefault("MPLBACKEND", "Agg")
# Tiny models on a shared 2-core machine run 10-30x faster on one thread than on two
# (measured by benchmarks/bench_train.py); notebook kernels inherit this too.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Under pytest-xdist every core already runs a test process, so a chapter's kernel (or a test)
# that drew in a pool of workers (`viz.parallel`) would gain nothing and pay the pool's start
# and its pickling: the nine chapters on one core took 132.4 s with two drawing processes and
# 111.8 s with one (2026-11-28). The tests of the pool set their own number of processes.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("LENGTHGEN_DRAW_WORKERS", "1")

# A first kernel start can take over a minute on a loaded 2-core machine, and nbmake has no
# flag for nbclient's 60 s startup timeout: give every client 300 s unless told otherwise.
_original_init = NotebookClient.__init__


def _patient_init(self, *args, **kwargs):
    kwargs.setdefault("startup_timeout", 300)
    _original_init(self, *args, **kwargs)


NotebookClient.__init__ = _patient_init


# ---- each notebook runs once per session -----------------------------------------------------
# nbmake executes every chapter; the site build (tests/conftest.py, `built_site`) then renders
# those executed copies instead of executing the chapters a second time. nbmake has no hook for
# its executed notebook, so its run is wrapped here; a chapter nbmake did not run (or that
# failed) is executed by the site build as before.
_executed: dict = {}

try:
    from nbmake.nb_run import NotebookRun
except ImportError:  # without nbmake the site build executes every chapter itself
    NotebookRun = None

if NotebookRun is not None:
    _original_execute = NotebookRun.execute

    def _keep_executed(self):
        result = _original_execute(self)
        if result.error is None:
            _executed[Path(self.filename).resolve()] = result.nb
        return result

    NotebookRun.execute = _keep_executed


@pytest.fixture(scope="session")
def executed_notebooks() -> dict:
    """{absolute notebook path: the notebook as nbmake executed it, outputs included}."""
    return _executed


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The notebooks run first and the tests of the built site right after them, so that the
    build can reuse their runs; every other test follows.

    `make test` runs two pytest-xdist workers with `--dist loadgroup`: the notebooks and the
    site's tests are one group (`xdist_group("book")`), which one worker runs in this order,
    starting first as it is the longest; the other tests share the other worker (and this one
    once the book is done)."""
    site = [item for item in items if "built_site" in getattr(item, "fixturenames", ())]
    notebooks = [item for item in items if item.path.suffix == ".ipynb"]
    book = notebooks + [item for item in site if item not in notebooks]
    for item in book:
        item.add_marker(pytest.mark.xdist_group("book"))
    chosen = set(book)
    items[:] = book + [item for item in items if item not in chosen]
