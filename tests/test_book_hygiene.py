"""Notebooks are stored clean and alike; the table of contents and the files agree."""
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def toc_files() -> list[str]:
    return [TOC["root"]] + [entry["file"] for entry in TOC.get("chapters") or []]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} has a count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_uses_the_book_kernel(path):
    spec = json.loads(path.read_text())["metadata"].get("kernelspec", {})
    assert spec.get("name") == "python3", f"{path.name}: kernel {spec.get('name')!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_starts_with_its_title_then_the_setup_pattern(path):
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# "), \
        f"{path.name}: the first cell must be the chapter title"
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "hide-cell" in code[0]["metadata"].get("tags", []), f"{path.name}: show the Colab cell folded"
    colab, setup = "".join(code[0]["source"]), "".join(code[1]["source"])
    assert '"google.colab" in sys.modules' in colab, f"{path.name}: first cell is not the Colab guard"
    assert CONFIG["repository"]["url"] in colab, f"{path.name}: Colab cell clones another URL"
    # pip install -e inside a running kernel is not importable until a restart: the cell must
    # also put the clone's library on sys.path (checked from a clean Python, see the README).
    assert 'sys.path.insert(0, "/content/book/lib")' in colab, \
        f"{path.name}: the Colab cell must put /content/book/lib on sys.path"
    assert "get_scale()" in setup and "get_device()" in setup, f"{path.name}: second cell is not setup"


def test_every_toc_entry_exists_and_every_chapter_is_listed():
    listed = set(toc_files())
    for entry in listed:
        assert list(ROOT.glob(entry + ".*")), f"_toc.yml lists {entry}, which does not exist"
    for path in NOTEBOOKS:
        assert f"book/{path.stem}" in listed, f"{path.name} is not in _toc.yml"


def test_references_page_is_last():
    assert toc_files()[-1] == "book/references"


def _cells(path):
    return json.loads(path.read_text())["cells"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_figures_and_tables_are_glued_for_numbered_captions(path):
    """A book_figure/book_table cell hides its output on the site (remove-output) and the
    markdown cell after it places the glued key as a numbered figure or table."""
    cells = _cells(path)
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code":
            continue
        assert "display(fig" not in source and "display(Markdown" not in source, \
            f"{path.name} cell {i}: show figures with book_figure and tables with book_table"
        calls = re.findall(r"book_(figure|table)\(\s*\"([\w-]+)\"", source)
        if not calls:
            continue
        assert "remove-output" in cell["metadata"].get("tags", []), \
            f"{path.name} cell {i}: a book_figure/book_table cell needs the tag remove-output"
        following = "".join(cells[i + 1]["source"]) if i + 1 < len(cells) else ""
        for kind, key in calls:
            directive = "{glue:figure} " + key if kind == "figure" else "{glue:md} " + key
            assert directive in following, \
                f"{path.name} cell {i + 1}: expected the {directive!r} directive for {key}"
            assert ":name: " in following, f"{path.name} cell {i + 1}: give {key} a label"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_live_widgets_are_not_run_by_builds(path):
    """Executing an ipywidgets cell under nbclient can stall for the whole cell timeout, so
    cells that show a live widget are tagged skip-execution (the reader runs them)."""
    for i, cell in enumerate(_cells(path)):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and re.search(r"\w+_widget\(|ipywidgets", source):
            assert "skip-execution" in cell["metadata"].get("tags", []), \
                f"{path.name} cell {i} shows a live widget: tag it skip-execution"
