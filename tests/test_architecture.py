"""The library's layers depend one way, with no import cycle, imports inside functions included.

    base (config, errors, results, data) -> tasks -> models, crasp, theory -> train, engine,
    evaluate -> runs -> experiments -> viz -> chapters (one facade per notebook); viz -> cli

A module may import its own layer or a lower one, never a higher one; and the import graph of
lengthgen (every `import` and `from ... import` anywhere in a module, read with `ast`) has no
cycle. A registry look-up of a figure by id (`experiment("izzo-kgram")`, `chapter_records(
"huang-fig5-6-positional")`, any function whose first parameter is `figure_id`) imports that
figure's module as surely as `import` does, so it is an edge of the graph too. Inside
experiments (one package per paper: huang/ with a subpackage per chapter, izzo/, richard/), a
figure module (one that assigns FIGURE_ID, at any depth) imports or looks up no other figure
module, and the modules beside the figures (protocol, analysis, drawing, rows, tables) import
none and look none up for its code: what an analysis needs from a figure lives below both. They
may read a figure's records (a chapter's numbers do), an edge that must close no cycle. The run
layer names no figure module.
"""
import ast
from functools import lru_cache
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
    ("train/evaluate", ["lengthgen.objectives", "lengthgen.train", "lengthgen.engine",
                        "lengthgen.evaluate"]),
    ("runs", ["lengthgen.runs"]),
    ("experiments", ["lengthgen.experiments"]),
    ("viz/book", ["lengthgen.viz"]),
    ("chapters", ["lengthgen.chapters"]),
    ("cli", ["lengthgen.cli", "lengthgen.__main__"]),
]


@lru_cache(maxsize=None)
def _parsed(text: str) -> ast.Module:
    """A module's source parsed once (the graph reads each module three ways)."""
    return ast.parse(text)


def parse(path: Path) -> ast.Module:
    return _parsed(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _walked(text: str) -> tuple:
    """Every node of a module's tree, in ast.walk's order, listed once: the graph walks each
    module five times, and a planted copy's graph reads again every file but the planted one."""
    return tuple(ast.walk(_parsed(text)))


def walk(path: Path) -> tuple:
    return _walked(path.read_text(encoding="utf-8"))


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
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = []
    for node in walk(path):
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
            for a, targets in sorted(graph.items()) for b, line, *_ in targets
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
        for w, *_ in graph.get(v, []):
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
    """Every module's imports, and its registry look-ups of figures counted as imports."""
    known = modules(root)
    ids, resolvers = figure_ids(root), resolver_names(known)
    return {name: imports(name, path, known) + lookups(path, ids, resolvers)
            for name, path in known.items()}


# look-ups that only read a figure's records (its module is imported to check them): a
# chapter's numbers read several figures' records, from a module beside them
RECORD_READERS = {"committed_records", "chapter_records", "records_for", "load_records",
                  "figure_records"}


def figure_ids(root: Path = PACKAGE) -> dict[str, str]:
    """figure id -> its module, as the registry (`lengthgen.runs.registry`) derives it: the
    FIGURE_ID = "..." a module of lengthgen.experiments assigns at its top level (files
    starting with _ skipped), read from the source without importing."""
    out = {}
    folder = root / "experiments"
    for path in sorted(folder.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        for node in parse(path).body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and any(getattr(t, "id", None) == "FIGURE_ID" for t in node.targets)):
                out[node.value.value] = ".".join(["lengthgen", "experiments",
                                                  *path.relative_to(folder).with_suffix("").parts])
    return out


def figure_modules(root: Path = PACKAGE) -> set[str]:
    """Modules of lengthgen.experiments that assign FIGURE_ID at their top level."""
    return set(figure_ids(root).values())


def resolver_names(known: dict) -> set[str]:
    """Names of the functions that resolve a figure id to its module through the registry:
    every function of the package whose first parameter is `figure_id` (`experiment`,
    `records_for`, `committed_records`, `load_records`, `chapter_records`, `show`, ...)."""
    names = set()
    for path in known.values():
        for node in walk(path):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.args
                    and node.args.args[0].arg == "figure_id"):
                names.add(node.name)
    return names


def _called(node: ast.Call) -> str | None:
    return getattr(node.func, "id", None) or getattr(node.func, "attr", None)


def _id_argument(node: ast.Call):
    """The figure id a call passes: its first argument, or its `figure_id=` keyword."""
    if node.args:
        return node.args[0]
    return next((k.value for k in node.keywords if k.arg == "figure_id"), None)


def lookups(path: Path, ids: dict, resolvers: set) -> list[tuple[str, int, str]]:
    """(figure module, line, the resolver called) for every registry look-up of a figure in a
    module, counted as an import: `experiment("izzo-kgram")` needs
    lengthgen.experiments.izzo.izzo_kgram as surely as `import` does. A call of a resolver (or
    of a local `lambda fid: resolver(fid, ...)`) with a literal id is an edge to that figure;
    where a module passes a resolver an id it does not spell at the call (a loop over a tuple
    of ids), every figure id the module spells outside its docstrings is an edge. (A figure's
    SOURCE is not counted: the run layer reads it, the figure module never looks it up.)"""
    nodes = walk(path)
    local = {name: name for name in resolvers}   # a name called -> the resolver it calls
    for node in nodes:   # rec = lambda fid: chapter_records(fid, root)
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
                and isinstance(node.value.body, ast.Call) and _called(node.value.body) in local):
            local |= {t.id: local[_called(node.value.body)] for t in node.targets
                      if isinstance(t, ast.Name)}
    docstrings = {id(n.value) for n in nodes if isinstance(n, ast.Expr)
                  and isinstance(n.value, ast.Constant)}
    edges, indirect = [], set()
    for node in nodes:
        if isinstance(node, ast.Call) and _called(node) in local:
            arg = _id_argument(node)
            if isinstance(arg, ast.Constant) and arg.value in ids:
                edges.append((ids[arg.value], node.lineno, local[_called(node)]))
            elif arg is not None and not isinstance(arg, ast.Constant):
                indirect.add(local[_called(node)])
    if indirect:   # named as the strongest resolver the module passes ids to
        how = min(indirect, key=lambda name: (name in RECORD_READERS, name))
        edges += [(ids[n.value], n.lineno, how) for n in nodes
                  if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and n.value in ids and id(n) not in docstrings]
    return edges


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


def figure_reaches(graph: dict, figures: set) -> list[str]:
    """What a module of lengthgen.experiments may not do: a figure module imports or looks up
    another figure; a module beside the figures (protocol, analysis, drawing, rows, tables)
    imports a figure module or looks one up for its code (`experiment(id).data`): what it
    needs from a figure lives below both. Reading a figure's records is a look-up too (an
    edge of the graph that must close no cycle), and the one a module beside may make."""
    bad = []
    for a, targets in sorted(graph.items()):
        if not a.startswith("lengthgen.experiments"):
            continue
        for b, line, *how in targets:
            if b not in figures or b == a:
                continue
            if how and how[0] in RECORD_READERS and a not in figures:
                continue
            bad.append(f"{a} {'looks up' if how else 'imports'} {b} (line {line}"
                       f"{', ' + how[0] if how else ''})")
    return bad


def test_no_figure_module_imports_another_and_protocol_modules_import_none(graph):
    figures = figure_modules()
    assert len(figures) >= 25
    assert figure_reaches(graph, figures) == []


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


def test_registry_lookups_are_edges(graph):
    """The chapters' analyses read their figures' records by id: literally, through a local
    lambda (richard's `rec`), or over a tuple of ids; each is an edge of the graph."""
    edges = {(a, edge[0], edge[2]) for a, targets in graph.items() for edge in targets
             if len(edge) == 3}   # (module, figure module, the resolver called)
    assert ("lengthgen.experiments.huang.limit.analysis",
            "lengthgen.experiments.huang.limit.huang_prop54_regularizer",
            "chapter_records") in edges
    assert ("lengthgen.experiments.richard.analysis",
            "lengthgen.experiments.richard.richard_fig7_learned_pe", "chapter_records") in edges
    assert ("lengthgen.experiments.huang.crasp.analysis",
            "lengthgen.experiments.huang.crasp.huang_table3_algorithmic",
            "chapter_records") in edges
    # ids named only in a docstring are no look-up
    assert not any(b.endswith("huang_fig5_6_positional") for b, *_ in graph["lengthgen.viz.book"])


def test_the_checks_catch_a_planted_lookup_that_closes_a_cycle(tmp_path):
    """A copy of the library where izzo/rows.py (imported by the izzo figures) looks the k-gram
    figure up by id: a cycle, and a module beside the figures using a figure's code. Reading
    the figure's records there instead is allowed beside the figures, but still a cycle; a
    figure reading another figure's records is caught."""
    import shutil
    copy = tmp_path / "lengthgen"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    rows = copy / "experiments" / "izzo" / "rows.py"
    clean = rows.read_text(encoding="utf-8")
    rows.write_text(clean + "\n\ndef _planted(records):\n    from lengthgen.runs.registry "
                    "import experiment\n    return experiment('izzo-kgram').data(records)\n",
                    encoding="utf-8")
    planted = import_graph(copy)
    assert any({"lengthgen.experiments.izzo.rows", "lengthgen.experiments.izzo.izzo_kgram"}
               <= set(c) for c in cycles(planted))
    bad = figure_reaches(planted, figure_modules(copy))
    assert any(line.startswith("lengthgen.experiments.izzo.rows looks up "
                               "lengthgen.experiments.izzo.izzo_kgram") for line in bad), bad
    rows.write_text(clean + "\n\ndef _planted(root=None):\n    from lengthgen.experiments."
                    "prose import chapter_records\n    rec = lambda fid: chapter_records(fid, "
                    "root)  # noqa: E731\n    return rec('izzo-kgram')\n", encoding="utf-8")
    planted = import_graph(copy)
    assert any("lengthgen.experiments.izzo.izzo_kgram" in c for c in cycles(planted))
    assert figure_reaches(planted, figure_modules(copy)) == []
    rows.write_text(clean, encoding="utf-8")
    fig3 = copy / "experiments" / "izzo" / "izzo_fig3_hardmax.py"
    fig3.write_text(fig3.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from "
                    "lengthgen.runs.records import committed_records\n    for figure_id in "
                    "('izzo-fig2-modp',):\n        committed_records(figure_id)\n",
                    encoding="utf-8")
    assert any(line.startswith("lengthgen.experiments.izzo.izzo_fig3_hardmax looks up "
                               "lengthgen.experiments.izzo.izzo_fig2_modp")
               for line in figure_reaches(import_graph(copy), figure_modules(copy)))
