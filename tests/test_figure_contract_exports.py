"""A figure module's public names are the figure contract's, and nobody reaches past them.

Issue 52 (item 6): figure modules exported helpers beyond the contract, and chapters, analysis
modules and tests imported them, so a figure's private drawing code was a dependency of pages
it does not draw. Two checks keep it closed:

- a figure module defines (def, class, assignment) no public top-level name beyond
  `lengthgen.runs.contract.NAMES`; its own helpers start with "_";
- no code (the library, tests, benchmarks, the book's notebooks) takes a name beyond the
  contract from a figure module: not by `from <figure module> import name`, not as an
  attribute of a figure module it imported or looked up by id. What others need lives in the
  paper's rows, protocol or analysis module, which the figure imports too.

Names a figure module imports from below (`from ...protocol import build_model`) are bound in
it, but the second check makes sure nobody takes them from there. What it reads statically: a
module bound by an import, or by `experiment("<id>")` / `experiment(NAME)` with NAME a string
constant of the same file; not one handed back by a helper function (`module().X`).
"""
import ast
import json
from pathlib import Path

from lengthgen.runs.contract import NAMES
from lengthgen.runs.registry import EXPERIMENTS, FIGURES_PACKAGE, _folder

ROOT = Path(__file__).resolve().parents[1]


def beyond_contract(tree: ast.Module) -> list[str]:
    """The public names a module's source defines at its top level beyond the contract's
    (imports are not definitions: see the module docstring)."""
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_") and n not in NAMES]


def figure_modules() -> dict[str, Path]:
    """figure module (dotted, inside the figures package) -> its file."""
    folder = _folder()
    return {name: folder / (name.replace(".", "/") + ".py") for name in EXPERIMENTS.values()}


def reaches_past(tree: ast.Module, figures: dict[str, str]) -> list[tuple[str, str, int]]:
    """(figure module, name, line) for every name beyond the contract that a source takes from
    a figure module. `figures`: figure module (dotted, inside the figures package) -> its id."""
    by_id = {figure_id: module for module, figure_id in figures.items()}
    prefix = FIGURES_PACKAGE + "."
    found = []

    def figure_of(dotted: str) -> str | None:
        inner = dotted.removeprefix(prefix) if dotted.startswith(prefix) else None
        return inner if inner in figures else None

    # the source's top-level string constants (FIGURE = "huang-fig1-languages")
    constants = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) for t in node.targets
                 if isinstance(t, ast.Name)}

    def looked_up(node) -> str | None:   # experiment("<id>") or experiment(FIGURE)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr",
                                                                             None)) == "experiment" \
                and node.args:
            arg = node.args[0]
            figure_id = (arg.value if isinstance(arg, ast.Constant) else
                         constants.get(arg.id) if isinstance(arg, ast.Name) else None)
            return by_id.get(figure_id) if isinstance(figure_id, str) else None
        return None

    def scope(node) -> list:   # the nodes of one scope: a function's own, not its inner ones
        inner, todo = [], list(ast.iter_child_nodes(node))
        while todo:
            child = todo.pop()
            inner.append(child)
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.extend(ast.iter_child_nodes(child))
        return inner

    def scan(node, outer: dict[str, str]) -> None:
        aliases = dict(outer)   # a local name bound to a figure module -> that module
        nodes = scope(node)
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                module = figure_of(node.module)
                for alias in node.names:
                    if module and alias.name not in NAMES:
                        found.append((module, alias.name, node.lineno))
                    inner = figure_of(f"{node.module}.{alias.name}")
                    if inner:
                        aliases[alias.asname or alias.name] = inner
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and figure_of(alias.name):
                        aliases[alias.asname] = figure_of(alias.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):   # bound here: a figure, or not one
                        aliases.pop(target.id, None)
                        if looked_up(node.value):
                            aliases[target.id] = looked_up(node.value)
        for node in nodes:
            if isinstance(node, ast.Attribute) and not node.attr.startswith("__") \
                    and node.attr not in NAMES:
                module = (aliases.get(node.value.id) if isinstance(node.value, ast.Name)
                          else looked_up(node.value))
                if module:
                    found.append((module, node.attr, node.lineno))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scan(node, aliases)

    scan(tree, {})
    return found


def sources() -> dict[str, str]:
    """Every source that may import a figure module: path -> Python text (a notebook's code
    cells, each `%` or `!` line read as `pass`)."""
    found = {}
    for pattern in ("lib/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "*.py"):
        for path in ROOT.glob(pattern):
            found[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in ROOT.glob("book/**/*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found[str(path.relative_to(ROOT))] = "\n".join(
            line if not line.lstrip().startswith(("%", "!"))
            else line[:len(line) - len(line.lstrip())] + "pass"
            for cell in cells if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines())
    return found


def defined_beyond() -> set[tuple[str, str]]:
    """(figure module, name) for every public name a figure module defines beyond the contract."""
    return {(module, name) for module, path in figure_modules().items()
            for name in beyond_contract(ast.parse(path.read_text(encoding="utf-8")))}


def taken() -> dict[tuple[str, str], list[str]]:
    """(figure module, name) -> where code outside the figure modules takes it from there."""
    figures = {module: figure_id for figure_id, module in EXPERIMENTS.items()}
    own = {str(path.relative_to(ROOT)) for path in figure_modules().values()}
    own.add(str(Path(__file__).resolve().relative_to(ROOT)))   # the synthetic cases below
    found: dict[tuple[str, str], list[str]] = {}
    for path, text in sources().items():
        if path not in own:
            for module, name, line in reaches_past(ast.parse(text), figures):
                found.setdefault((module, name), []).append(f"{path}:{line}")
    return found


def test_figure_modules_define_only_the_contract():
    assert len(figure_modules()) >= 30   # the registry found the figures (not an empty walk)
    assert sorted(defined_beyond()) == [], \
        "figure modules define public names beyond the contract (prefix them with '_', or " \
        "move what other code needs to the paper's rows/protocol/analysis module)"


def test_no_code_takes_a_helper_from_a_figure_module():
    assert taken() == {}, "take these from the paper's rows/protocol/analysis module instead"


SYNTHETIC = '''
import numpy as np
from lengthgen.experiments.izzo.protocol import build_model, data
FIGURE_ID = "synthetic"
TITLE = "a figure"
CONFIGS = {"test": {}, "book": {}, "paper": {}}
_SCALE = 2
HELPER_CONSTANT = 3
def figure(records): ...
def runs(config): ...
def run_one(params, config, device): ...
def _private(): ...
def helper(): ...
class Drawing: ...
'''


def test_a_helper_beyond_the_contract_is_found():
    """The checks on small synthetic sources: each fails where it should."""
    assert sorted(beyond_contract(ast.parse(SYNTHETIC))) == ["Drawing", "HELPER_CONSTANT",
                                                             "helper"]
    clean = "\n".join(line for line in SYNTHETIC.splitlines()
                      if not line.startswith(("HELPER", "def helper", "class Drawing")))
    assert beyond_contract(ast.parse(clean)) == []

    figures = {"izzo.izzo_kgram": "izzo-kgram", "izzo.izzo_fig1_simpletask": "izzo-fig1"}
    user = '''
from lengthgen.experiments.izzo.izzo_kgram import figure, gap_table
from lengthgen.experiments.izzo import izzo_fig1_simpletask as fig1, rows
from lengthgen.runs.registry import experiment
KGRAM = "izzo-kgram"
fig1.figure(records); fig1.model_for(params); rows.gap_table(records)
experiment("izzo-kgram").table_rows(records)
kgram = experiment("izzo-kgram")
kgram.data(records); kgram.attention_rows(records); kgram.__name__
experiment(KGRAM).headline(records)
'''
    assert sorted(reaches_past(ast.parse(user), figures)) == [
        ("izzo.izzo_fig1_simpletask", "model_for", 6),
        ("izzo.izzo_kgram", "attention_rows", 9),
        ("izzo.izzo_kgram", "gap_table", 2),
        ("izzo.izzo_kgram", "headline", 10),
        ("izzo.izzo_kgram", "table_rows", 7)]
