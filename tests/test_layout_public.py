"""`viz` lays figures out through matplotlib's public API: nothing under lib/lengthgen/viz replaces
a matplotlib method or sets a private attribute of matplotlib's objects (issue 56; until then
`viz.layout` replaced three private methods of matplotlib, one of them at import time).

The scan reads every module under viz/ and refuses an assignment (or setattr, delattr, del) to
an attribute of anything imported from matplotlib, and to a private attribute (`_name`) of any
object but the module's own (`self`, `cls`, a class the module defines). A second test draws a
figure for the column and a phone and checks that matplotlib's classes and modules are as they
were before the library was imported."""
import ast
import json
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.results import REPO_ROOT

matplotlib.use("Agg")

VIZ = REPO_ROOT / "lib" / "lengthgen" / "viz"


def _root(node):
    """The name an attribute chain starts from (`a` of a.b.c), or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def patches(source: str) -> list[str]:
    """Lines of `source` that change matplotlib from outside: each as "line N: what"."""
    tree = ast.parse(source)
    from_matplotlib = set()   # names bound to matplotlib's modules, classes and functions
    own = {"self", "cls"} | {node.name for node in ast.walk(tree)
                             if isinstance(node, ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            from_matplotlib |= {(alias.asname or alias.name).split(".")[0]
                                for alias in node.names if alias.name.startswith("matplotlib")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("matplotlib"):
            from_matplotlib |= {alias.asname or alias.name for alias in node.names}

    found = []

    def check(target, line: int, what: str) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                check(element, line, what)
            return
        if isinstance(target, ast.Subscript) and (
                (isinstance(target.value, ast.Call) and
                 getattr(target.value.func, "id", None) == "vars") or
                getattr(target.value, "attr", None) == "__dict__"):
            found.append(f"line {line}: {what} an object's attributes by name")
        if isinstance(target, ast.Attribute):
            root = _root(target.value)
            if root in from_matplotlib:
                found.append(f"line {line}: {what} {root}...{target.attr}")
            elif target.attr.startswith("_") and not target.attr.startswith("__") and \
                    root not in own:
                found.append(f"line {line}: {what} private {target.attr}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                check(target, node.lineno, "assigns")
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            check(node.target, node.lineno, "assigns")
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                check(target, node.lineno, "deletes")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr",
                                                                                "delattr"):
            obj, name = (node.args + [None, None])[:2]
            private = isinstance(name, ast.Constant) and isinstance(name.value, str) and \
                name.value.startswith("_")
            if _root(obj) in from_matplotlib or (private and _root(obj) not in own) or \
                    not isinstance(name, ast.Constant):
                found.append(f"line {node.lineno}: {node.func.id}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("pop", "update", "setdefault", "__setitem__") and \
                isinstance(node.func.value, ast.Call) and \
                getattr(node.func.value.func, "id", None) == "vars":
            found.append(f"line {node.lineno}: vars(...).{node.func.attr}")
    return found


def test_the_scan_finds_each_way_of_patching_matplotlib():
    """Each of these lines is one that viz/layout.py had, or one like it."""
    planted = {
        "from matplotlib.mathtext import MathTextParser\nMathTextParser._parse_cached = f\n": 1,
        "from matplotlib.backends.backend_agg import RendererAgg\n"
        "RendererAgg._get_font_height_metrics = f\n": 1,
        "def g(axis):\n    axis._update_ticks = f\n": 1,
        "def g(axis):\n    vars(axis).pop('_update_ticks', None)\n": 1,
        "def g(grid, cell):\n    grid._subplot_spec = cell\n": 1,
        "import matplotlib.text\nmatplotlib.text.Text.draw = f\n": 1,
        "from matplotlib import axis as a\nsetattr(a.Axis, 'get_ticks', f)\n": 1,
        "from matplotlib.axis import Axis\ndel Axis._update_ticks\n": 1,
        "def g(fig, name):\n    setattr(fig, name, 1)\n": 1,
        "def g(ax):\n    ax.__dict__['x'] = 1\n": 1,
    }
    for source, count in planted.items():
        assert len(patches(source)) == count, source
    # what the library may do: its own objects' private state, matplotlib's public setters
    allowed = ("class A:\n    _n = 0\n    def f(self):\n        self._x = 1\n        A._n += 1\n"
               "def g(fig, ax):\n    fig.set_size_inches(3, 2)\n    ax.title.set_x(1.0)\n"
               "    x = fig._suptitle\n")
    assert patches(allowed) == []


def test_nothing_under_viz_patches_matplotlib():
    files = sorted(VIZ.rglob("*.py"))
    assert len(files) > 5
    found = {path.name: patches(path.read_text(encoding="utf-8")) for path in files}
    assert {name: lines for name, lines in found.items() if lines} == {}


# Snapshot matplotlib's classes and modules, import the library and draw a figure for the
# column and a phone (log scales, math text, a colorbar, a legend moved under its panel), then
# list what changed.
_DRAW = r"""
import inspect, json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt, matplotlib.mathtext, matplotlib.backends.backend_agg
import numpy as np

def state():
    seen = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("matplotlib") or module is None:
            continue
        for key, value in list(vars(module).items()):
            seen[f"{name}.{key}"] = id(value)
            if inspect.isclass(value) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    seen[f"{name}.{key}.{attr}"] = id(member)
    return seen

def draw():
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
    n = np.arange(1, 200)
    axes[0].loglog(n, 1 / n, label=r"$N^{-1}$")
    axes[0].legend()
    axes[0].set_xlabel(r"length $\ell$")
    fig.colorbar(axes[1].imshow(np.arange(12.0).reshape(3, 4)), ax=axes[1])
    fig.suptitle("a figure")
    return fig

import io
for _ in range(2):   # matplotlib's own state from drawing settles first (its backend, caches)
    figure = draw()
    figure.tight_layout()
    figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    plt.close(figure)
before = state()
from lengthgen.viz.book import picture
import lengthgen.viz.fit, lengthgen.viz.frames, lengthgen.viz.layout, lengthgen.viz.phone
shown = picture(draw(), phone=draw)
after = state()
owners = {key.rsplit(".", 1)[0] for key in before}
print(json.dumps({"changed": sorted(key for key in before
                                    if key in after and before[key] != after[key]),
                  "added": sorted(key for key in after
                                  if key not in before and key.rsplit(".", 1)[0] in owners),
                  "png": len(shown.narrow or b"")}))
"""


def test_drawing_for_the_column_and_a_phone_leaves_matplotlib_as_it_was():
    import os
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "lib"), "LENGTHGEN_DRAW_WORKERS": "1"}
    done = subprocess.run([sys.executable, "-c", _DRAW], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["png"] > 0
    assert report["changed"] == [] and report["added"] == [], report


def test_a_panel_and_its_colorbar_stay_together_when_a_phone_stacks_the_panels():
    """`reflow` moves a panel's sub-grid (the panel and the colorbar matplotlib made beside it)
    into its new cell through public API (a new sub-grid of the same shape): on a phone the
    three panels stack in order, each colorbar to the right of its own panel, level with it."""
    from lengthgen.viz.layout import DPI, NARROW_PX, is_colorbar, reflow
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
    for k, ax in enumerate(axes):
        fig.colorbar(ax.imshow(np.arange(12.0).reshape(3, 4) * (k + 1)), ax=ax)
    assert reflow(fig, NARROW_PX / DPI)
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if not is_colorbar(ax)]
    bars = [ax for ax in fig.axes if is_colorbar(ax)]
    boxes = [ax.get_position() for ax in panels]
    bar_boxes = [ax.get_position() for ax in bars]
    plt.close(fig)
    assert panels == list(axes) and len(bars) == 3
    assert all(upper.y0 > lower.y1 for upper, lower in zip(boxes, boxes[1:]))  # stacked, in order
    for panel, bar in zip(boxes, bar_boxes):
        assert bar.x0 > panel.x1 - 0.01
        assert bar.y0 < (panel.y0 + panel.y1) / 2 < bar.y1

