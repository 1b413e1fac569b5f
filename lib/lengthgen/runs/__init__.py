"""The run layer: which figures exist, how their runs are described and executed, and how
their records are read back.

    registry.py     figure id -> module, derived from the figure modules' own FIGURE_ID
                    (read from their source); titles, sources, the runs a scale registers
    execute.py      RunSpec (one run, described completely), execute (compute a run and write
                    its record), preflight checks, cache freshness under --force
    runner.py       run_experiment: a figure's whole sweep (lock, resume, thread checks,
                    the in-progress marker), in process or through a backend
    pool.py         the local backend: spawned worker processes that survive a dead worker
    ray_backend.py  the Ray backend (optional dependency, imported only when asked for)
    records.py      the committed records of a figure, their checks, provenance caption and
                    tidy numbers

This layer knows the figure modules' contract (FIGURE_ID, CONFIGS, runs, run_one, ...) but
no figure module by name: it finds them in the package `lengthgen.experiments` by reading
their source, and imports one only when its id is asked for.
"""
