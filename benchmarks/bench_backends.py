"""What Ray costs per task against the local path, on this machine. Prints numbers; not a test.

    .venv/bin/python benchmarks/bench_backends.py [--rounds 2] [--noop 200]   # needs Ray

1. A whole test-scale sweep (huang-fig1-languages: 6 tiny trainings) into a fresh folder:
   serial in process, --workers 2 (spawned processes), and on a local Ray of 2 CPUs, once with
   cold Ray workers (their first task imports torch and lengthgen) and once warm. Each is the
   best of --rounds, since load from other jobs only ever slows a run down.
2. The round trip of an empty unit (no training, no record), --noop of them: through the Ray
   backend (submit, schedule, run, return, driver-side save) and through the local process
   pool (submit, pickle, run, return). This is the per-task overhead a long training hides.
Also the time to start the local Ray (`ray.init(num_cpus=2)`). The load average is printed:
absolute numbers mean little on a busy machine.
"""
import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

FIGURE = "huang-fig1-languages"


def sweep_seconds(**options) -> float:
    from lengthgen.runs.runner import run_experiment
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        run_experiment(FIGURE, "test", "cpu", root=root, **options)
        return time.perf_counter() - start


def noop_units(n: int):
    from lengthgen.runs.execute import plan
    spec = plan(FIGURE, "test")[0]
    return [[spec] for _ in range(n)]


def empty(unit, write=True):
    """A unit that does nothing: what is left is the executor's own cost."""
    from lengthgen.runs.execute import Outcome
    return Outcome()


def pool_noop_seconds(units) -> float:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(empty, units[:4]))  # start the workers first: only round trips count
        start = time.perf_counter()
        for future in [pool.submit(empty, unit) for unit in units]:
            future.result()
        return time.perf_counter() - start


def ray_noop_seconds(ray, units) -> float:
    from lengthgen.runs.ray_backend import Cluster
    cluster = Cluster(ray, "cpu", 1, execute=empty)
    list(cluster(units[:4]))  # warm workers
    start = time.perf_counter()
    list(cluster(units))
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--noop", type=int, default=200)
    args = parser.parse_args()
    import ray
    print(f"load average {os.getloadavg()[0]:.1f} before; {os.cpu_count()} cores; "
          f"ray {ray.__version__}; {FIGURE} at test scale (6 runs), 1 torch thread per run")
    serial = min(sweep_seconds() for _ in range(args.rounds))
    pool = min(sweep_seconds(workers=2) for _ in range(args.rounds))
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    started = time.perf_counter() - start
    try:
        cold = sweep_seconds(backend="ray")
        warm = min(sweep_seconds(backend="ray") for _ in range(args.rounds))
        units = noop_units(args.noop)
        ray_noop = ray_noop_seconds(ray, units)
    finally:
        ray.shutdown()
    pool_noop = pool_noop_seconds(units)
    print(f"sweep: serial {serial:.1f} s | --workers 2 {pool:.1f} s | Ray 2 CPUs cold workers "
          f"{cold:.1f} s, warm {warm:.1f} s | Ray start {started:.1f} s")
    print(f"empty unit round trip ({args.noop}): Ray {ray_noop / args.noop * 1e3:.1f} ms | "
          f"process pool {pool_noop / args.noop * 1e3:.2f} ms")
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
