"""Which figures exist: figure id -> its module in `lengthgen.experiments`, derived.

A figure module assigns FIGURE_ID = "..." at its top level and offers what
`lengthgen.runs.contract` states, checked here; the modules beside it in its paper's package
(protocol, analysis, rows, drawing, tables) have no FIGURE_ID.
The registry reads the ids from the modules' source, so listing figures imports no torch, and
a new figure module needs no line anywhere else.
"""
import importlib
from collections.abc import Mapping
from types import ModuleType

from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.runs.config_keys import check_config_keys
from lengthgen.runs.contract import (check_figure_id, check_module, check_runs,
                                     check_source, parse_source)

FIGURES_PACKAGE = "lengthgen.experiments"   # where figure modules live (found, not listed)
SCALE_ORDER = ("paper", "gpu", "book", "test")   # which records a figure shows first ("gpu":
#                                                   a planned figure's paper budget on a GPU)


def _folder():
    from importlib.util import find_spec
    from pathlib import Path
    return Path(find_spec(FIGURES_PACKAGE).origin).parent


def _registry() -> dict[str, str]:
    """figure id -> module name (dotted, inside FIGURES_PACKAGE), derived from the modules
    themselves: every module of the figures package or of a package inside it (one per paper,
    e.g. izzo/ or huang/sweep/) that assigns FIGURE_ID = "..." at its top level is a figure;
    protocol, analysis, rows, drawing and tables modules have none. Read from the source, so listing
    figures imports no torch. A module that cannot be read, or breaks the contract, is one
    LengthgenError naming it."""
    import ast
    folder = _folder()
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        name = ".".join(path.relative_to(folder).with_suffix("").parts)
        tree = parse_source(name, path)
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FIGURE_ID"
                                                    for t in node.targets):
                figure_id = check_figure_id(name, node.value)
                if figure_id in found:
                    raise LengthgenError(f"figure id {figure_id!r} is declared by both "
                                         f"{found[figure_id]} and {name}")
                found[figure_id] = name
                check_source(name, tree)
    return found


class _Figures(Mapping):
    """figure id -> module name inside FIGURES_PACKAGE, read from the modules' source on first
    use, not at import: a figure module that cannot be read (a syntax error) or breaks the
    contract stops the commands that use the registry (`figure ...`, the chapters) with one
    line naming it, and every other command (`language sample`, `task`, `crasp`) works."""

    def __init__(self):
        self._found: dict[str, str] | None = None
        self._error: str | None = None

    def _figures(self) -> dict[str, str]:
        if self._found is None:
            if self._error is None:
                try:
                    self._found = _registry()
                except LengthgenError as e:
                    self._error = str(e)
            if self._error is not None:   # said again at every use, never half a registry
                raise LengthgenError(self._error)
        return self._found

    def __getitem__(self, figure_id):
        return self._figures()[figure_id]

    def __iter__(self):
        return iter(self._figures())

    def __len__(self):
        return len(self._figures())

    def __contains__(self, figure_id):
        return figure_id in self._figures()


# figure id -> module name inside FIGURES_PACKAGE (derived: add a module, not a line)
EXPERIMENTS: Mapping = _Figures()


def experiment(figure_id: str) -> ModuleType:
    """The module of one figure id; an unknown id names the closest valid ones, and a config
    key that no code of the figure reads is refused (`lengthgen.runs.config_keys`)."""
    if figure_id not in EXPERIMENTS:
        raise unknown_name("figure id", figure_id, EXPERIMENTS)
    module = import_figure(f"{FIGURES_PACKAGE}.{EXPERIMENTS[figure_id]}")
    if module.__name__ not in _checked:
        check_module(module)
        _checked.add(module.__name__)
    check_config_keys(figure_id, module)   # at every call: an edit of CONFIGS since is seen too
    return module


def import_figure(dotted: str) -> ModuleType:
    """Import a figure module; one that raises on import (a name error at its top level, a
    missing package) is one line naming it, not a traceback."""
    try:
        return importlib.import_module(dotted)
    except LengthgenError:
        raise
    except Exception as e:
        text = str(e).splitlines()[0][:160] if str(e) else ""
        raise LengthgenError(f"figure module {dotted.removeprefix(FIGURES_PACKAGE + '.')} "
                             f"cannot be imported ({e.__class__.__name__}: {text})") from None


_checked: set[str] = set()   # modules whose values met the contract (checked once each)


def experiment_title(figure_id: str) -> str:
    """A figure's TITLE read from its module's source, without importing the module (and its
    torch): `figure list` starts in a fraction of a second. A TITLE that is not a plain string
    in the source is read by importing the module."""
    import ast
    from importlib.util import find_spec
    if figure_id not in EXPERIMENTS:
        raise unknown_name("figure id", figure_id, EXPERIMENTS)
    spec = find_spec(f"{FIGURES_PACKAGE}.{EXPERIMENTS[figure_id]}")
    try:
        tree = ast.parse(open(spec.origin, encoding="utf-8").read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TITLE"
                                                    for t in node.targets):
                value = ast.literal_eval(node.value)
                if isinstance(value, str):
                    return value
    except (OSError, SyntaxError, ValueError, TypeError, AttributeError):
        pass
    return experiment(figure_id).TITLE


def figure_listing() -> list[str]:
    """One line per figure id, sorted: the id and its TITLE (for `figure list` and `train
    --list`)."""
    return [f"{figure_id:32s} {experiment_title(figure_id)}" for figure_id in sorted(EXPERIMENTS)]


def source_ids(figure_id: str) -> tuple[str, ...]:
    """The figure ids whose records a figure draws: its own, or its module's SOURCE (one id or
    a tuple of ids)."""
    source = getattr(experiment(figure_id), "SOURCE", figure_id)
    return (source,) if isinstance(source, str) else tuple(source)


def source_id(figure_id: str) -> str:
    """The first (for most figures the only) figure id whose records a figure draws."""
    return source_ids(figure_id)[0]


def expected_runs(figure_id: str, scale: str, records: list[dict] | None = None) -> list[str]:
    """The run names a complete set of records of a figure at a scale has. A planned figure
    without runs of its own (`runs.planned`) has no fixed list: its expected runs are the
    registered ones of `records` and those its plan calls for next (without records: its
    plan's first jobs)."""
    names = []
    for source in source_ids(figure_id):
        module = experiment(source)
        if planned_only(module):
            mine = {r["run_name"]: r for r in records or ()
                    if r.get("figure_id") == source and r.get("scale") == scale}
            done = [n for n, r in mine.items() if run_matcher(module, scale)(n, r["params"])]
            names += done + [j.name for j in module.plan(module.CONFIGS[scale], mine)
                             if j.name not in mine]
        else:
            names += [p["name"] for p in module_runs(module, scale)]
    return names


def planned_only(module: ModuleType) -> bool:
    """A planned figure with no runs of its own: its runs are what its plan calls for."""
    return hasattr(module, "plan") and not hasattr(module, "run_one")


def module_runs(module: ModuleType, scale: str) -> list[dict]:
    """A figure module's runs at a scale, their names checked (one record file each); for a
    planned figure without runs of its own, the first jobs of its plan (no records yet)."""
    config = module.CONFIGS[scale]
    if planned_only(module):
        params = [job.params() for job in module.plan(config, {})]
    else:
        params = module.runs(config)
    check_runs(module.__name__.removeprefix(FIGURES_PACKAGE + "."), scale, params)
    return params


def run_matcher(module: ModuleType, scale: str):
    """(run name, params) -> whether they are a registered run of the figure at the scale: one
    of its runs(config), or for a planned figure without runs, a job its `spec` rebuilds as
    they are (`runs.planned.registered`)."""
    config = module.CONFIGS.get(scale)
    if config is None:
        return lambda name, params: False
    if planned_only(module):
        def rebuilt(name, params) -> bool:
            try:
                job = module.spec(params)
            except (KeyError, TypeError, ValueError, IndexError):
                return False
            return job.name == name == params.get("name") and job.params() == params
        return rebuilt
    runs = {p["name"]: p for p in module.runs(config)}
    return lambda name, params: runs.get(name) == params
