"""Re-run check: re-run one seed of each trained figure and count how many re-run values fall
inside the committed spread.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rerun.py [--scale book] [--seed 0]
        [--figures ID ...] [--committed DIR] [--keep DIR]

For each figure id, the committed records of the scale are copied into a temporary results
folder, except those of the chosen seed; the runner then computes exactly the missing runs
(the chosen seed of every setting) in that folder, with an empty model cache
(XDG_CACHE_HOME points into the temporary folder, so the Dyck models are trained again). Each
numeric metric of a re-run record (nested keys joined by '.', lists and wall times left out) is
compared with the same metric over the committed seeds of its setting: inside when it lies in
[min, max] of the committed values (with one committed seed: when it equals it up to 1e-9,
relative). A re-run on the machine that made the records should find every value inside; on
another processor, a different value is expected where float rounding changes a one-seed
training outcome, and the count says how often.

The committed records are never touched. The book-scale run of the default figures costs about
the sum of their committed wall times (see the README); the test suite runs it at test scale
only (tests/test_bench_rerun.py). Prints one line per figure and a total.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

TRAINED = ("huang-fig5-6-positional", "limit-inference-procedure", "richard-fig1-boolean",
           "richard-fig3-left-capacity", "richard-fig3-right-samples", "richard-fig6-ablation",
           "richard-fig5-sign-study", "richard-fig7-order-study", "richard-fig4-completions",
           "richard-table1-deepest", "richard-fig5-spectrum", "richard-fig7-learned-pe")


def scalars(metrics, prefix="") -> dict:
    """Numeric leaves of a metrics tree (no lists, no wall times, no bools)."""
    out = {}
    for key, value in metrics.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            out.update(scalars(value, name))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) \
                and "wall_time" not in name:
            out[name] = float(value)
    return out


def setting(record) -> tuple:
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in record["params"].items()
                        if k not in ("name", "seed")))


def seed_of(record):
    return record["params"].get("seed", record.get("seed"))


def inside(value: float, committed: list[float]) -> bool:
    lo, hi = min(committed), max(committed)
    slack = 1e-9 * max(1.0, abs(lo), abs(hi))
    return lo - slack <= value <= hi + slack


def compare(rerun: list[dict], committed: list[dict]) -> dict:
    """Count re-run values inside the committed spread of their setting."""
    by_setting = {}
    for r in committed:
        by_setting.setdefault(setting(r), []).append(scalars(r["metrics"]))
    counted, within, outside = 0, 0, []
    for r in rerun:
        seeds = by_setting.get(setting(r), [])
        for name, value in scalars(r["metrics"]).items():
            values = [s[name] for s in seeds if name in s]
            if not values:
                continue
            counted += 1
            if inside(value, values):
                within += 1
            else:
                outside.append((r["run_name"], name, value, min(values), max(values)))
    return {"values": counted, "inside": within, "outside": outside}


def rerun_figure(figure_id: str, scale: str, seed, committed_root: Path, work: Path) -> dict:
    from lengthgen.runs.registry import experiment
    from lengthgen.runs.runner import run_experiment
    from lengthgen.results import load_records, record_files
    module = experiment(figure_id)
    committed = load_records(figure_id, scale, committed_root)
    if not committed:
        return {"figure_id": figure_id, "skipped": f"no committed {scale} records"}
    chosen = seed if seed is not None else min(seed_of(r) for r in committed
                                               if seed_of(r) is not None)
    folder = work / "results" / figure_id / scale
    folder.mkdir(parents=True)
    for path in record_files(committed_root / figure_id / scale):
        record = json.loads(path.read_text())
        if seed_of(record) != chosen:  # other seeds stay as committed: the runner skips them
            shutil.copy(path, folder / path.name)
    start = time.perf_counter()
    records = run_experiment(figure_id, scale, root=work / "results")
    wall = time.perf_counter() - start
    rerun = [r for r in records if seed_of(r) == chosen]
    result = compare(rerun, committed)
    return {"figure_id": figure_id, "seed": chosen, "runs": len(rerun), "wall_s": wall,
            "committed_seeds": len({seed_of(r) for r in committed}), **result,
            "module": module.__name__}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="book")
    parser.add_argument("--seed", type=int, default=None,
                        help="the seed to re-run (default: the smallest committed seed)")
    parser.add_argument("--figures", nargs="+", default=list(TRAINED))
    parser.add_argument("--committed", type=Path, default=None,
                        help="results folder holding the committed records (default: results/)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the re-run records in this folder (default: deleted)")
    args = parser.parse_args(argv)
    from lengthgen.runs.registry import EXPERIMENTS
    from lengthgen.results import results_dir
    unknown = [f for f in args.figures if f not in EXPERIMENTS]
    if unknown:
        print(f"error: unknown figure id(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    committed_root = args.committed or results_dir()
    if not committed_root.is_dir():
        print(f"error: {committed_root} is not a results folder", file=sys.stderr)
        return 2
    from lengthgen.results import cpu_description
    cpu_model, cpu_capability = cpu_description()
    print(f"re-run check, scale {args.scale}, CPU {cpu_model} ({cpu_capability}), "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"load average {os.getloadavg()[0]:.1f}")
    cache = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="lengthgen-rerun-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # Dyck models train again
        try:
            totals = [0, 0]
            _rerun_all(args, committed_root, Path(tmp), totals)
        finally:
            if cache is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = cache
    total_inside, total = totals
    print(f"total: {total_inside} of {total} re-run values inside the committed spread")
    return 0


def _rerun_all(args, committed_root: Path, tmp: Path, totals: list) -> None:
    """Re-run each figure of args.figures; add its inside and counted values to totals."""
    from lengthgen.errors import LengthgenError
    for figure_id in args.figures:
        work = tmp / figure_id
        try:
            result = rerun_figure(figure_id, args.scale, args.seed, committed_root, work)
        except LengthgenError as e:
            print(f"{figure_id}: error: {e}")
            continue
        if "skipped" in result:
            print(f"{figure_id}: skipped ({result['skipped']})")
            continue
        totals[0] += result["inside"]
        totals[1] += result["values"]
        print(f"{figure_id}: seed {result['seed']}, {result['runs']} run(s) in "
              f"{result['wall_s']:.0f} s; {result['inside']} of {result['values']} values "
              f"inside the committed spread ({result['committed_seeds']} committed "
              f"seed(s) per figure)")
        for run, name, value, lo, hi in result["outside"][:10]:
            spread = f"{lo:.4g}" if lo == hi else f"{lo:.4g}..{hi:.4g}"
            print(f"    outside: {run} {name} = {value:.4g} (committed {spread})")
        if len(result["outside"]) > 10:
            print(f"    ... and {len(result['outside']) - 10} more")
        if args.keep:
            shutil.copytree(work / "results", args.keep, dirs_exist_ok=True)


if __name__ == "__main__":
    sys.exit(main())
