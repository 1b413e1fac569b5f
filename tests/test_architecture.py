"""The library's layers depend one way, with no import cycle, imports inside functions included.

    base (config, errors, results, data) -> tasks -> models, crasp, theory -> train, engine,
    evaluate -> runs -> experiments -> viz -> chapters (one facade per notebook); viz -> cli

A module may import its own layer or a lower one, never a higher one; and the import graph of
lengthgen (every `import` and `from ... import` anywhere in a module, read with `ast`) has no
cycle. Inside experiments (one package per paper: huang/ with a subpackage per chapter, izzo/,
richard/), a figure module (one that assigns FIGURE_ID, at any depth) imports no other figure
module, and the modules beside the figures (protocol, analysis, drawing, tables) import none;
the run layer names no figure module.
"""
import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"
PACKAGE = LIB / "lengthgen"

# (layer, its module prefixes), lowest first; a module belongs to the layer of its longest prefix
LAYERS = [
    ("base", ["lengthgen", "lengthgen.config", "lengthgen.errors", "lengthgen.results",
              "lengthgen.data"]),
    ("tasks", ["lengthgen.tasks"]),
    ("models/crasp", ["lengthgen.models", "lengthgen.crasp", "lengthgen.theory"]),
    ("train/evaluate", ["lengthgen.objectives", "lengthgen.train", "lengthgen.train_many",
                        "lengthgen.engine",
                        "lengthgen.evaluate"]),
    ("runs", ["lengthgen.runs"]),
    ("experiments", ["lengthgen.experiments"]),
    ("viz/book", ["lengthgen.viz"]),
    ("chapters", ["lengthgen.chapters"]),
    ("cli", ["lengthgen.cli", "lengthgen.__main__"]),
]


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict) -> list[tuple[str, int]]:
    """(imported lengthgen module, line) for every import statement anywhere in the module,
    inside functions and classes too. `from a.b import c` counts as a.b.c when c is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:   # relative: resolved against this module's package
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                       for a in node.names]
        for target in targets:
            if target != "lengthgen" and not target.startswith("lengthgen."):
                continue
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target != name:
                edges.append((target, node.lineno))
    return edges


def layer_of(name: str) -> int:
    best, level = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, level = len(prefix), index
    if level is None:
        raise AssertionError(f"{name} is in no layer: add it to LAYERS in {__file__}")
    return level


def upward(graph: dict) -> list[str]:
    """Imports from a lower layer to a higher one."""
    return [f"{a} (layer {LAYERS[layer_of(a)][0]}) imports {b} (layer {LAYERS[layer_of(b)][0]}) "
            f"at line {line}"
            for a, targets in sorted(graph.items()) for b, line in targets
            if layer_of(b) > layer_of(a)]


def cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, list[tuple[str, int]]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def figure_modules(root: Path = PACKAGE) -> set[str]:
    """Modules of lengthgen.experiments that assign FIGURE_ID at their top level."""
    out = set()
    folder = root / "experiments"
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "FIGURE_ID"
                                                 for t in n.targets) for n in tree.body):
            out.add(".".join(["lengthgen", "experiments",
                              *path.relative_to(folder).with_suffix("").parts]))
    return out


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_module_is_in_a_layer(graph):
    for name in graph:
        layer_of(name)


def test_no_import_goes_up_a_layer(graph):
    assert upward(graph) == []


def test_the_import_graph_has_no_cycle(graph):
    assert cycles(graph) == []


def test_no_figure_module_imports_another_and_protocol_modules_import_none(graph):
    figures = figure_modules()
    assert len(figures) >= 25
    bad = [f"{a} imports {b} (line {line})" for a, targets in sorted(graph.items())
           if a.startswith("lengthgen.experiments") for b, line in targets if b in figures]
    assert bad == []


def test_the_run_layer_names_no_figure_module():
    """The registry finds figure modules by reading their package; the run layer's source
    never names one."""
    names = {name.rpartition(".")[2] for name in figure_modules()}
    for path in (PACKAGE / "runs").glob("*.py"):
        words = set(path.read_text(encoding="utf-8").replace(".", " ").split())
        assert not names & words, (path.name, names & words)


def test_the_checks_catch_a_planted_upward_import_and_a_cycle(tmp_path):
    """The same checks on a copy of the library with `from lengthgen.experiments import ...`
    inside a function of train.py (an upward import, and a cycle through the figures that
    train), and with models importing the run layer at the top."""
    import shutil
    copy = tmp_path / "lengthgen"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    train = copy / "train.py"
    train.write_text(train.read_text(encoding="utf-8") +
                     "\n\ndef _planted():\n    from lengthgen.experiments.huang.sweep.protocol "
                     "import ladder\n    return ladder\n", encoding="utf-8")
    planted = import_graph(copy)
    assert any(line.startswith("lengthgen.train (layer train/evaluate) imports "
                               "lengthgen.experiments.huang.sweep") for line in upward(planted))
    assert any({"lengthgen.train", "lengthgen.experiments.huang.sweep.protocol"} <= set(c)
               for c in cycles(planted))
    decoder = copy / "models" / "decoder.py"
    decoder.write_text("import lengthgen.runs.runner\n" + decoder.read_text(encoding="utf-8"),
                       encoding="utf-8")
    assert ("lengthgen.models.decoder (layer models/crasp) imports lengthgen.runs.runner "
            "(layer runs) at line 1") in upward(import_graph(copy))
    # the facades sit above the book's side: viz importing a chapter's facade goes up
    frames = copy / "viz" / "frames.py"
    frames.write_text("import lengthgen.chapters.dyck\n" + frames.read_text(encoding="utf-8"),
                      encoding="utf-8")
    assert ("lengthgen.viz.frames (layer viz/book) imports lengthgen.chapters.dyck "
            "(layer chapters) at line 1") in upward(import_graph(copy))
