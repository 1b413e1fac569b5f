"""The run layer: which figures exist, how their runs are described and executed, and how
their records are read back.

    registry.py     figure id -> module, derived from the figure modules' own FIGURE_ID
                    (read from their source); titles, sources, the runs a scale registers
    contract.py     what a figure module offers (its own runs, or a SOURCE it draws), checked
                    by the registry: one line naming a module that breaks it
    config_keys.py  strict configs: a config key that no code of the figure reads (a typo)
                    is refused by the registry, naming the closest known key
    execute.py      RunSpec (one run, described completely), execute (compute a run and write
                    its record), preflight checks, cache freshness under --force
    runner.py       run_experiment: a figure's whole sweep (lock, resume, thread checks,
                    the in-progress marker), in process or through a backend
    pool.py         the local backend: spawned worker processes that survive a dead worker
    ray_backend.py  the Ray backend (optional dependency, imported only when asked for)
    records.py      the committed records of a figure, their checks, provenance caption and
                    tidy numbers
    slices.py       slices of a sweep's jobs on a GPU (lock, claims, states and their packs,
                    signals, the loop that starts only jobs that can finish)
    rates.py        measured model-steps per second of the engine, what slices plan with

This layer states the figure modules' contract (contract.py) but knows no figure module by
name: it finds them in the package `lengthgen.experiments` and its paper packages by reading
their source, and imports one only when its id is asked for.
"""
