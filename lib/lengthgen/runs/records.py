"""A figure's records read back: the committed ones, checks that they are the registered runs,
the provenance caption printed under every figure, and the numbers behind a figure."""
from lengthgen.config import get_scale
from lengthgen.errors import LengthgenError
from lengthgen.results import load_records
from lengthgen.runs.registry import (SCALE_ORDER, experiment, expected_runs, module_runs,
                                     run_matcher, source_id, source_ids)
from lengthgen.runs.runner import run_experiment


def committed_records(figure_id: str, root=None,
                      missing_ok: bool = False) -> tuple[str, list[dict]] | None:
    """The records of the largest scale that has any (paper over book over test); none at all
    is an error that says what is missing and the command that produces it (None instead with
    missing_ok=True, for a caller that has its own answer to "nothing yet")."""
    from lengthgen.results import results_dir
    for scale in SCALE_ORDER:
        records = figure_records(figure_id, scale, root)
        if records:
            return scale, records
    if missing_ok:
        return None
    raise LengthgenError(missing_message(figure_id, root if root is not None else results_dir()))


def figure_records(figure_id: str, scale: str, root=None) -> list[dict]:
    """The records a figure draws at a scale (its own or its SOURCE's), each validated on
    load, and checked by its module's check_record where it has one (the keys its readers
    index): a record that fails is one line naming its file."""
    return [r for source in source_ids(figure_id)
            for r in load_records(source, scale, root,
                                  getattr(experiment(source), "check_record", None))]


def missing_message(figure_id: str, root) -> str:
    """What a figure lacks (no record folder of its own or of its sources), and how to make it."""
    from lengthgen.results import RESULTS_ENV
    scale = get_scale()
    sources = source_ids(figure_id)
    runs = sum(len(module_runs(experiment(s), scale)) for s in sources
               if scale in experiment(s).CONFIGS)
    folders = " and ".join(f"{s}/<scale>/" for s in sources)
    commands = "; ".join(f"python -m lengthgen figure run {s} --scale {scale}" for s in sources)
    return (f"{figure_id}: no records in {root} (looked for {folders} at the scales "
            f"{', '.join(SCALE_ORDER)}). Produce them with `{commands}` ({runs} run(s) at "
            f"scale {scale}), or call lengthgen.viz.book.show({figure_id!r}, rerun=True) to "
            f"compute them here; if {RESULTS_ENV} is set, the committed records are in the "
            f"repository's results/")


def missing_runs(figure_id: str, scale: str, records: list[dict]) -> list[str]:
    """Registered runs that have no record (a deleted record, an unfinished sweep)."""
    have = {r["run_name"] for r in records if r["scale"] == scale}
    return [name for name in expected_runs(figure_id, scale, records) if name not in have]


def records_for(figure_id: str, scale: str | None = None, rerun: bool = False,
                root=None) -> tuple[str, list[dict]]:
    """(scale, records) a figure is drawn from: the largest committed scale, or with
    rerun=True a run at the chosen scale (LENGTHGEN_SCALE). Without rerun=True nothing is
    computed: a figure with no records is an error naming what is missing and the command that
    produces it (a page must never start a sweep of hours on its own)."""
    experiment(figure_id)
    if not rerun:
        return committed_records(figure_id, root)
    records = [r for source in source_ids(figure_id)
               for r in run_experiment(source, scale, root=root)]
    if not records:
        raise LengthgenError(f"{figure_id}: the experiment has no runs at this scale")
    return records[0]["scale"], records


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
    threads = sorted({r["torch_threads"] for r in records if "torch_threads" in r})
    workers = sorted({r["workers"] for r in records if "workers" in r})
    setup = ""
    cards = sorted({r["gpu_model"] for r in records if "gpu_model" in r})
    if cards:
        setup += f" | GPU: {', '.join(cards)}"
    cpus = sorted({r["cpu_capability"] for r in records if "cpu_capability" in r})
    if cpus:  # records written since the processor is recorded (older ones do not say)
        setup += f" | CPU: {', '.join(cpus)}"
    if threads:
        setup += f" | torch threads: {', '.join(map(str, threads))}"
    if workers and workers != [1]:
        setup += f" | workers: {', '.join(map(str, workers))}"
    setup += _package_set([r for r in records if "lock_digest" in r])
    return (f"Scale: {', '.join(scales)} | device: {', '.join(devices)}{setup} | commit: "
            f"{commit} | date: {span} | {len(records)} run(s), {total:.0f} s")


def _package_set(records: list[dict]) -> str:
    """The caption's package set, ' | torch 2.13.0+cpu, lock 1a2b3c4d5e6f', for the records
    that name the lock they ran on (written since the lock exists; older ones do not say),
    with how many of its pins a run's environment did not have."""
    if not records:
        return ""
    torches = sorted({r["torch_version"] for r in records})
    locks = sorted({r["lock_digest"][:12] for r in records})
    differ = max(len(r.get("lock_differs", [])) for r in records)
    note = f" ({differ} package(s) differed from it)" if differ else ""
    return f" | torch {', '.join(torches)}, lock {', '.join(locks)}{note}"


def reading(figure_id: str, draw, records: list[dict]):
    """draw(records), with records that do not hold what it reads (a missing metric, a value
    of the wrong type: records written by other code) turned into one line."""
    try:
        return draw(records)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        if isinstance(e, LengthgenError):
            raise
        kind = "missing key" if isinstance(e, KeyError) else e.__class__.__name__
        text = str(e).splitlines()[0][:160] if str(e) else ""
        raise LengthgenError(f"{figure_id}: its records do not hold what the figure reads "
                             f"({kind}: {text}); re-run it with `python -m lengthgen figure run "
                             f"{source_id(figure_id)} --force`") from None


def check_records(figure_id: str, records: list[dict]) -> None:
    """Records are the registered runs of the figure's sources: each names a source id and a
    registered run of its scale with the same params (what every figure reads first)."""
    sources = set(source_ids(figure_id))
    registered = {}
    for record in records:
        where = f"{record.get('figure_id')}/{record.get('scale')}/{record.get('run_name')}"
        if record.get("figure_id") not in sources:
            raise LengthgenError(f"{figure_id}: record {where} belongs to another figure")
        key = (record["figure_id"], record["scale"])
        if key not in registered:
            registered[key] = run_matcher(experiment(record["figure_id"]), record["scale"])
        if not registered[key](record["run_name"], record["params"]):
            raise LengthgenError(f"{figure_id}: record {where} is not a registered run of its "
                                 f"scale (stale or foreign params); re-run it with `python -m "
                                 f"lengthgen figure run {record['figure_id']} --scale "
                                 f"{record['scale']} --force`")


def figure_data(figure_id: str, records: list[dict]) -> list[dict]:
    """The numbers behind a figure as tidy rows: the module's data(), else one row per scalar
    metric of every record (nested keys joined by '.', lists left out)."""
    module = experiment(figure_id)
    if hasattr(module, "data"):
        return reading(figure_id, module.data, records)
    rows = []

    def walk(run: str, prefix: str, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(run, f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (int, float, str, bool)) or value is None:
            rows.append({"figure_id": figure_id, "run": run, "metric": prefix, "value": value})

    for record in records:
        walk(record["run_name"], "", record["metrics"])
    return rows
