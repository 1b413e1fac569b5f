"""Shared pytest setup: tests and notebooks run at test scale, kernels get time to start."""
import os

from nbclient import NotebookClient

os.environ.setdefault("LENGTHGEN_SCALE", "test")
os.environ.setdefault("MPLBACKEND", "Agg")
# Tiny models on a shared 2-core machine run 10-30x faster on one thread than on two
# (measured by benchmarks/bench_train.py); notebook kernels inherit this too.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A first kernel start can take over a minute on a loaded 2-core machine, and nbmake has no
# flag for nbclient's 60 s startup timeout: give every client 300 s unless told otherwise.
_original_init = NotebookClient.__init__


def _patient_init(self, *args, **kwargs):
    kwargs.setdefault("startup_timeout", 300)
    _original_init(self, *args, **kwargs)


NotebookClient.__init__ = _patient_init
