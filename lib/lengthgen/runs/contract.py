"""What a figure module offers, checked where the registry finds it.

A figure module assigns FIGURE_ID at its top level. It then offers

    FIGURE_ID   its id (the records' folder: results/<FIGURE_ID>/<scale>/)
    TITLE       one line saying what the figure shows
    figure(records) -> matplotlib Figure
    data(records) -> list[dict]    optional: the numbers behind the figure, one row per plotted
                                   value (`figure data ID` prints them; without it, every
                                   scalar metric of every record is one row)
    SPREAD_BY   optional: the params that make a setting, for `figure data --over-seeds`
    phone_figure(records) -> matplotlib Figure   optional: the figure drawn for a phone's
                                   column, where laying figure() out again is not enough
                                   (`viz.book.book_figure` shows it on narrow screens)
    trainings(config) -> list[lengthgen.runs.cost.Training]   a figure that trains models:
                                   what a config trains (shapes, batch, steps, how many), for
                                   `figure cost`'s GPU estimate
    PAPER_SCALE  a figure that trains: what its `paper` config takes from the paper and what it
                 chooses where the paper is silent (`figure cost --notes` prints it)

and one of two ways to get its records:

    runs its own    CONFIGS  {"test": {...}, "book": {...}, "paper": {...}} (JSON-able)
                    runs(config) -> list[dict]   one dict of params per run, each with a unique
                                                 "name" (and a "seed" where it trains)
                    run_one(params, config, device) -> dict   the metrics of one run
    draws others'   SOURCE   the figure id (or a tuple of ids) whose records it draws, and no
                             CONFIGS, runs or run_one of its own

A chapter's numbers, its verdicts and its "Paper vs this book" rows are not part of a figure:
they usually read several figures, so each paper's package computes them in its analysis
module, from the records, through the registry.

The registry reads the names a module defines (functions, assignments, imports) from its
source, without importing it, so a module that breaks the contract stops `figure list` with
one line naming the module and what it lacks; `experiment()` checks the values once it is
imported.
"""
import ast

from lengthgen.errors import LengthgenError

COMMON = ("FIGURE_ID", "TITLE", "figure")
OWN_RUNS = ("CONFIGS", "runs", "run_one")
SCALES = {"test", "book", "paper"}
CALLABLE = ("figure", "phone_figure", "data", "runs", "run_one", "trainings")


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
        if not isinstance(configs, dict) or set(configs) != SCALES:
            raise broken(name, f"CONFIGS must have exactly the scales {sorted(SCALES)}")
