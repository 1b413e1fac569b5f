"""One module per figure id; this package finds them, runs them and shows their figures.

An experiment module defines:
    FIGURE_ID  the id from the book's figure list (e.g. "huang-fig5-6-positional")
    TITLE      one line saying what the figure shows
    CONFIGS    {"test": {...}, "book": {...}, "paper": {...}}, plain JSON-able dicts
    runs(config) -> list[dict]        one dict of parameters per run; each has a unique
                                      "name" and, where it trains, a "seed" (and a "task")
    run_one(params, config, device) -> dict   the metrics of one run (JSON-able)
    figure(records) -> matplotlib.figure.Figure
"""
import importlib
import time
from types import ModuleType

from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.results import load_record, load_records, provenance, record_path, write_record

# figure id -> module name inside lengthgen.experiments (add a line per new experiment)
EXPERIMENTS: dict[str, str] = {
    "richard-fig1-boolean": "richard_fig1_boolean",
    "limit-inference-procedure": "limit_inference_procedure",
    "richard-fig7-learned-pe": "richard_fig7_learned_pe",
    "richard-fig6-ablation": "richard_fig6_ablation",
    "richard-fig5-spectrum": "richard_fig5_spectrum",
    "richard-table1-deepest": "richard_table1_deepest",
    "richard-fig4-completions": "richard_fig4_completions",
    "richard-fig3-right-samples": "richard_fig3_right_samples",
    "richard-fig3-left-capacity": "richard_fig3_left_capacity",
    "huang-fig5-6-positional": "huang_fig5_6_positional",
    "crasp-compile-check": "crasp_compile_check",
    "richard-fig2-closed-form-paths": "richard_fig2_closed_form_paths",
    "richard-thm41-closed-form": "richard_thm41_closed_form",
    "huang-prop54-regularizer": "huang_prop54_regularizer",
    "huang-table2-languages": "huang_table2_languages",
    "huang-table3-algorithmic": "huang_table3_algorithmic",
    "crasp-long-unary": "crasp_long_unary",
    "izzo-fig1-simpletask": "izzo_fig1_simpletask",
    "izzo-fig2-modp": "izzo_fig2_modp",
    "izzo-fig3-hardmax": "izzo_fig3_hardmax",
    "izzo-kgram": "izzo_kgram",
    "izzo-thm41-bound": "izzo_thm41_bound",
}

SCALE_ORDER = ("paper", "book", "test")


def experiment(figure_id: str) -> ModuleType:
    """The module of one figure id; an unknown id names the closest valid ones."""
    if figure_id not in EXPERIMENTS:
        raise unknown_name("figure id", figure_id, EXPERIMENTS)
    return importlib.import_module(f"lengthgen.experiments.{EXPERIMENTS[figure_id]}")


def run_experiment(figure_id: str, scale: str | None = None, device=None, force: bool = False,
                   root=None, progress: bool = False) -> list[dict]:
    """Run every run of a figure at a scale and write one record per run.

    Runs whose record already exists with the same parameters are skipped (resume after a
    crash loses nothing); force=True re-runs them.
    """
    scale = get_scale(scale)
    module = experiment(figure_id)
    config = module.CONFIGS[scale]
    device = get_device(device)
    records = []
    for params in module.runs(config):
        path = record_path(figure_id, scale, params["name"], root)
        if path.exists() and not force:
            old = load_record(path)
            if old["params"] == params and old["config"] == config:
                records.append(old)
                continue
        if progress:
            print(f"[{figure_id}/{scale}] {params['name']}", flush=True)
        start = time.perf_counter()
        metrics = module.run_one(params, config, device)
        record = {
            "figure_id": figure_id, "run_name": params["name"], "task": params.get("task"),
            "config": config, "params": params, "scale": scale, "seed": params.get("seed"),
            "metrics": metrics,
            **provenance(str(device), time.perf_counter() - start),
        }
        write_record(record, root)
        records.append(record)
    return records


def committed_records(figure_id: str, root=None) -> tuple[str, list[dict]] | None:
    """The records of the largest scale that has any (paper over book over test)."""
    experiment(figure_id)
    for scale in SCALE_ORDER:
        records = load_records(figure_id, scale, root)
        if records:
            return scale, records
    return None


def caption(records: list[dict]) -> str:
    """Which scale, device, commit and date produced a figure: printed under every figure."""
    if not records:
        raise LengthgenError("no records to describe")
    scales = sorted({r["scale"] for r in records})
    devices = sorted({r["device"] for r in records})
    by_date = sorted(records, key=lambda r: r["date"])
    commits = list(dict.fromkeys(r["git_commit"] for r in by_date))
    commit = commits[0] if len(commits) == 1 else \
        f"{commits[0]} .. {commits[-1]} ({len(commits)} commits while the runs went on)"
    first, last = by_date[0]["date"][:10], by_date[-1]["date"][:10]
    span = first if first == last else f"{first} to {last}"
    total = sum(r["wall_time_s"] for r in records)
    return (f"Scale: {', '.join(scales)} | device: {', '.join(devices)} | commit: {commit} | "
            f"date: {span} | {len(records)} run(s), {total:.0f} s")


def show(figure_id: str, scale: str | None = None, rerun: bool = False, root=None):
    """The figure for a notebook cell, and its provenance caption.

    Uses the largest committed results unless rerun=True or none exist; then runs at the
    chosen scale (LENGTHGEN_SCALE). Returns (figure, caption).
    """
    module = experiment(figure_id)
    found = None if rerun else committed_records(figure_id, root)
    if found is None:
        records = run_experiment(figure_id, scale, root=root)
    else:
        records = found[1]
    fig = module.figure(records)
    return fig, caption(records)
