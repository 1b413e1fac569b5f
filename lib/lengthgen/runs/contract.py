"""What a figure module offers, checked where the registry finds it.

A figure module assigns FIGURE_ID at its top level. It then offers

    FIGURE_ID   its id (the records' folder: results/<FIGURE_ID>/<scale>/)
    TITLE       one line saying what the figure shows
    figure(records) -> matplotlib Figure
    data(records) -> list[dict]    optional: the numbers behind the figure, one row per plotted
                                   value (`figure data ID` prints them; without it, every
                                   scalar metric of every record is one row)
    SPREAD_BY   optional: the params that make a setting, for `figure data --over-seeds`
    check_record(record) -> str | None   optional: what a record lacks that the figure's
                                   readers index (None: nothing), checked as its records load
    phone_figure(records) -> matplotlib Figure   optional: the figure drawn for a phone's
                                   column, where laying figure() out again is not enough
                                   (`viz.book.book_figure` shows it on narrow screens)
    trainings(config) -> list[lengthgen.runs.cost.Training]   a figure that trains models:
                                   what a config trains (shapes, batch, steps, how many), for
                                   `figure cost`'s GPU estimate
    PAPER_SCALE  a figure that trains: what its `paper` config takes from the paper and what it
                 chooses where the paper is silent (`figure cost --notes` prints it)

and one of three ways to get its records:

    runs its own    CONFIGS  {"test": {...}, "book": {...}, "paper": {...}} (JSON-able)
                    runs(config) -> list[dict]   one dict of params per run, each with a unique
                                                 "name" (and a "seed" where it trains)
                    run_one(params, config, device) -> dict   the metrics of one run
                    host_key(params, config) -> hashable | None   optional, without torch:
                                                 runs of one key share host work in a process
                                                 (a set of Dyck words, drawn once while kept):
                                                 a sweep takes them one after another, in one
                                                 worker (lengthgen.runs.execute.host_units)
    planned         CONFIGS  as above, or "test" and any of "book", "paper" and "gpu" (the
                             paper's budget on a GPU) where it has no runs of its own
                    plan(config, records) -> jobs   the trainings the records call for now
                    spec(params) -> job     the job of a record's params
                    engine_job(job, config) -> lengthgen.engine.jobs.Job, or None for a
                             job that trains nothing (scored at a slice's start)
                    score(model, job, result, config, device, group_size) -> dict
                             (lengthgen.runs.planned says what each is): its jobs train in GPU
                             slices and GPU queues, and its records are a figure's records. A
                             figure that runs its own may be planned too (`planned.plan_runs`);
                             one with no runs of its own is run by `figure run` in one slice
                             until its plan is empty. QUEUE_FIRST = True puts it at the head of
                             a GPU queue (lengthgen.runs.queue). Optional:
                             deferred(config, records) -> jobs   what the records call for
                             but no slice can train (too long for one): left, so the
                             figure is not complete while any is
                             shared_key(job, config) -> str | None   the training a job
                             shares with other planned figures' jobs (equal keys: the same
                             training), so that a slice scores it from the weights another
                             slice trained (lengthgen.runs.trained), and a GPU queue counts
                             it once; None for a job of its own
    draws others'   SOURCE   the figure id (or a tuple of ids) whose records it draws, and no
                             CONFIGS, runs or run_one of its own

A chapter's numbers, its verdicts and its "Paper vs this book" rows are not part of a figure:
they usually read several figures, so each paper's package computes them in its analysis
module, from the records, read through the registry; what it needs from a figure's code (its
rows) lives below both, in a module the figure imports (tests/test_architecture.py counts a
look-up by id as an import). So a figure module's public names are the contract's (NAMES) and
no others: its own helpers start with "_" (tests/test_figure_contract_exports.py).

FIGURE_ID is a plain name (it names a folder of results/), and the run names of one scale
have one record file each (`a/b` and `a_b` would share `a_b.json`).

The registry reads the names a module defines (functions, assignments, imports) from its
source, without importing it, so a module that breaks the contract, or cannot be parsed,
stops `figure list` with one line naming the module and what it lacks; commands that need no
figure (`language sample`, `task`, `crasp`) go on working. `experiment()` checks the values
once it is imported, and the runs when a scale's runs are listed.
"""
import ast
import re

from lengthgen.errors import LengthgenError

COMMON = ("FIGURE_ID", "TITLE", "figure")
OWN_RUNS = ("CONFIGS", "runs", "run_one")
PLANNED = ("CONFIGS", "plan", "spec", "engine_job", "score")
SCALES = {"test", "book", "paper"}
PLANNED_SCALES = SCALES | {"gpu"}   # "gpu": the paper's budget on a GPU (a planned figure's)
CALLABLE = ("figure", "phone_figure", "data", "runs", "run_one", "trainings", "check_record",
            "plan", "spec", "engine_job", "score", "deferred", "shared_key", "host_key")
# every name the contract gives a meaning (above, and CONFIG_KEYS: lengthgen.runs.config_keys):
# a figure module's public names are these and no others; its own helpers start with "_", and
# what other code needs from it lives in its paper's rows, protocol or analysis module
# (tests/test_figure_contract_exports.py)
NAMES = frozenset(COMMON + OWN_RUNS + PLANNED + CALLABLE
                  + ("SPREAD_BY", "PAPER_SCALE", "QUEUE_FIRST", "SOURCE", "CONFIG_KEYS"))
# a figure id names a folder of results/: a plain name (no separator, no leading dot)
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def broken(module: str, what: str) -> LengthgenError:
    return LengthgenError(f"figure module {module} breaks the figure contract: {what} "
                          f"(see lengthgen.runs.contract)")


def top_level_names(tree: ast.Module) -> set[str]:
    """Every name a module binds at its top level: defs, classes, assignments, imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def check_source(module: str, tree: ast.Module) -> None:
    """The contract on the names a figure module's source defines (nothing imported)."""
    names = top_level_names(tree)
    missing = [n for n in COMMON if n not in names]
    if "SOURCE" in names:
        extra = [n for n in OWN_RUNS if n in names]
        if extra:
            raise broken(module, f"it draws SOURCE's records, so it defines no "
                                 f"{', '.join(extra)} of its own")
    elif "plan" in names:   # planned; runs of its own too if it has either
        missing += [n for n in PLANNED if n not in names]
        if {"runs", "run_one"} & names:
            missing += [n for n in OWN_RUNS if n not in names]
    else:
        missing += [n for n in OWN_RUNS if n not in names]
    if missing:
        raise broken(module, f"no {', '.join(missing)}")


def check_module(module) -> None:
    """The contract on the values of an imported figure module."""
    name = module.__name__.removeprefix("lengthgen.experiments.")
    if not isinstance(getattr(module, "TITLE", None), str):
        raise broken(name, "TITLE is not a string")
    for attr in CALLABLE:
        if hasattr(module, attr) and not callable(getattr(module, attr)):
            raise broken(name, f"{attr} is not callable")
    if not hasattr(module, "SOURCE"):
        configs = getattr(module, "CONFIGS", None)
        if hasattr(module, "run_one"):
            if not isinstance(configs, dict) or set(configs) != SCALES:
                raise broken(name, f"CONFIGS must have exactly the scales {sorted(SCALES)}")
        elif not isinstance(configs, dict) or "test" not in configs \
                or not set(configs) <= PLANNED_SCALES:
            raise broken(name, f"a planned figure's CONFIGS must have the scale 'test' and no "
                               f"other than {sorted(PLANNED_SCALES)}")


def parse_source(module: str, path) -> ast.Module:
    """A figure module's source, parsed; one that cannot be read is one line naming it."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise LengthgenError(f"figure module {module} cannot be read: {e.msg} at line "
                             f"{e.lineno} of {path.name}") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise LengthgenError(f"figure module {module} cannot be read "
                             f"({e.__class__.__name__}: {str(e)[:120]})") from None


def check_figure_id(module: str, value: ast.expr) -> str:
    """The FIGURE_ID a module assigns: a string literal that is a plain name, since it names
    the module's folder of records (`../../escaped` would write outside results/)."""
    try:
        figure_id = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        raise broken(module, "FIGURE_ID is not a string literal") from None
    if not isinstance(figure_id, str) or not PLAIN_ID.fullmatch(figure_id):
        raise broken(module, f"FIGURE_ID {figure_id!r} is not a plain name (letters, digits, "
                             f"'-', '_' and '.', not starting with '.' or '-')")
    return figure_id


def check_runs(module: str, scale: str, params: list) -> None:
    """The runs a figure module registers at a scale: each a dict with a string name, and no
    two names that share a record file (`a/b` and `a_b` are both `a_b.json`: one record would
    silently replace the other)."""
    from lengthgen.results import record_file_name
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        raise broken(module, f"runs() at scale {scale} must return a list of dicts")
    files: dict[str, str] = {}
    for p in params:
        name = p.get("name")
        if not isinstance(name, str) or not name.strip():
            raise broken(module, f"a run at scale {scale} has no name (got {name!r})")
        file = record_file_name(name)
        if file in files:
            if files[file] == name:
                raise broken(module, f"run {name!r} is registered twice at scale {scale}")
            raise broken(module, f"runs {files[file]!r} and {name!r} at scale {scale} share "
                                 f"one record file ({file}): one would replace the other")
        files[file] = name
