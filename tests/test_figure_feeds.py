"""From the code to the page and back (issue 52, item 5), as d2l does: every figure module's
docstring ends with the figure or table labels of the book that it feeds,

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-capacity`

(more pages after "; ", a note in brackets allowed), and every labelled figure or table of
the book that glues a figure's output is named by that figure's module. The page glues it
under the figure id, so the book names the code too. Every analysis function whose code
spells a glue key the prose pastes (or documents its family, `# glue keys:`) names, the same
way, each page that pastes one of its keys."""
import ast
import json
import re
from pathlib import Path

import pytest

from test_glue_keys_greppable import book_keys, families, is_literal

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
LIB = ROOT / "lib" / "lengthgen"
FACADES = LIB / "chapters"
FEEDS = re.compile(r"^[ \t]*Feeds: (.+?)(?:\n[ \t]*\n|\Z)", re.MULTILINE | re.DOTALL)
PAGE_PART = re.compile(r"^(book/[\w-]+\.ipynb)((?:, \{numref\}.*| \(.*)?)$", re.DOTALL)
LABEL = re.compile(r"\{numref\}`([\w-]+)`")
# a labelled directive ({figure}, {table}, {glue:figure}, ...) up to its closing fence
BLOCK = re.compile(r"^([`~:]{3,})\{([\w:]+)\}([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^\1[ \t]*$",
                   re.MULTILINE | re.DOTALL)


def _cells(page: Path, kind: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(page.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == kind]


def labelled_glues(text: str) -> dict[str, set[str]]:
    """{label: the keys glued inside the labelled directive} of a page's Markdown."""
    out: dict[str, set[str]] = {}
    for m in BLOCK.finditer(text):
        for label, keys in labelled_glues(m.group(5)).items():   # nested (in an admonition)
            out.setdefault(label, set()).update(keys)
        name = re.search(r":name:\s*([\w-]+)", m.group(4))
        if not name:
            continue
        # the directive itself ({glue:figure} ID) or one inside it (a {table} around {glue:md})
        text = f"{{{m.group(2)}}}{m.group(3)}\n{m.group(5)}"
        keys = set(re.findall(r"\{glue(?::\w+)?\}\s+([\w-]+)[ \t]*(?:\n|$)", text))
        out.setdefault(name.group(1), set()).update(keys)
    return out


def feeds(doc: str) -> dict[str, list[str]]:
    """{page: labels} of a docstring's Feeds paragraph ({} without one)."""
    m = FEEDS.search(doc or "")
    if not m:
        return {}
    out = {}
    for part in re.split(r";\s*(?=book/)", " ".join(m.group(1).split())):
        page = PAGE_PART.match(part.strip())
        assert page, f"a Feeds part is not 'book/PAGE.ipynb, {{numref}}`label`': {part!r}"
        out[page.group(1)] = LABEL.findall(page.group(2))
    return out


def _figures():
    from lengthgen.runs.registry import _registry, experiment
    return [(figure_id, experiment(figure_id)) for figure_id in sorted(_registry())]


@pytest.fixture(scope="module")
def pages() -> dict[str, dict]:
    """{book/PAGE.ipynb: {"labels": {label: glued keys}, "code": the page's code and its
    chapter's facade}}."""
    out = {}
    for page in sorted(BOOK.glob("*.ipynb")):
        facade = FACADES / (page.stem.removesuffix("_appendix") + ".py")
        out[f"book/{page.name}"] = {
            "labels": labelled_glues("\n".join(_cells(page, "markdown"))),
            "code": "\n".join(_cells(page, "code"))
            + (facade.read_text(encoding="utf-8") if facade.exists() else "")}
    return out


def test_every_figure_module_names_the_labels_it_feeds_and_the_page_draws_it(pages):
    problems = []
    for figure_id, module in _figures():
        named = feeds(module.__doc__)
        if not named:
            problems.append(f"{figure_id}: its docstring has no 'Feeds:' line")
        for page, labels in named.items():
            if page not in pages:
                problems.append(f"{figure_id}: Feeds names {page}, which does not exist")
                continue
            missing = [label for label in labels if label not in pages[page]["labels"]]
            if not labels or missing:
                problems.append(f"{figure_id}: {page} has no labelled figure or table {missing}")
        # the book cell that draws (or glues, or re-runs) it: its id in a named page's code
        if named and not any(re.search(rf"[\"']{re.escape(figure_id)}[\"']", pages[p]["code"])
                             for p in named if p in pages):
            problems.append(f"{figure_id}: no code cell of {sorted(named)} (or its facade) "
                            "names it")
    assert not problems, "\n".join(problems)


def test_every_labelled_block_that_glues_a_figure_is_named_by_its_module(pages):
    """The link back: a figure or table of the book that glues a figure's output under its id
    is listed in that figure module's Feeds line."""
    figures = dict(_figures())
    unnamed = [f"{page} {{numref}}`{label}` glues {key}"
               for page, found in pages.items() for label, keys in found["labels"].items()
               for key in keys if key in figures
               and label not in feeds(figures[key].__doc__).get(page, [])]
    assert not unnamed, "labels that no figure module's Feeds line names:\n" + "\n".join(unnamed)


def test_the_feeds_check_reads_blocks_and_lines_exactly():
    text = ("~~~~{table} A caption {glue:md}`x-provenance`\n:name: tab-x\n\n"
            "```{glue:md} x\n:format: myst\n```\n~~~~\n\n"
            "```{glue:figure} fig-id\n:name: fig-y\n\nCaption.\n```\n"
            "```{figure} picture.png\n:name: fig-z\n```\n"
            "`````{admonition} Inside\n~~~~{table} T\n:name: tab-w\n\n```{glue:md} w\n```\n~~~~\n`````\n")
    assert labelled_glues(text) == {"tab-x": {"x"}, "fig-y": {"fig-id"}, "fig-z": set(),
                                    "tab-w": {"w"}}
    doc = "Title.\n\n    Feeds: book/a.ipynb, {numref}`fig-a`, {numref}`tab-b`; book/c.ipynb, " \
          "\n    {numref}`fig-c` (its row; a note); book/d.ipynb (the prose)\n\n    More.\n"
    assert feeds(doc) == {"book/a.ipynb": ["fig-a", "tab-b"], "book/c.ipynb": ["fig-c"],
                          "book/d.ipynb": []}
    assert feeds("Title only.") == {}
    with pytest.raises(AssertionError, match="is not"):
        feeds("Feeds: dyck.ipynb, fig-a")


def feeding_functions() -> list[tuple[str, str, str | None, set[str]]]:
    """(module path, function, docstring, pages that paste its keys) of every function under
    lib/lengthgen/experiments and lib/lengthgen/viz whose source spells a glue key the prose
    pastes (a figure's id aside: that is the figure module's) or documents a family of them."""
    from lengthgen.runs.registry import _registry
    figure_ids = set(_registry())
    pasted: dict[str, set[str]] = {}
    for key, found in book_keys().items():
        pasted.setdefault(key.removesuffix("-provenance"), set()).update(found)
    out = []
    for path in sorted([*(LIB / "experiments").rglob("*.py"), *(LIB / "viz").rglob("*.py")]):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.FunctionDef):
                continue
            body = "\n".join(lines[node.lineno - 1:node.end_lineno])
            patterns = [regex for _, regex in families(body)]
            keys = [k for k in pasted if (k not in figure_ids and is_literal(k, body))
                    or any(r.fullmatch(k) for r in patterns)]
            if keys:
                out.append((str(path.relative_to(LIB)), node.name, ast.get_docstring(node),
                            {f"book/{p}" for k in keys for p in pasted[k]}))
    return out


def test_every_analysis_function_that_feeds_the_prose_names_its_pages_and_labels(pages):
    found = feeding_functions()
    assert len(found) > 20, "the functions that make the prose's numbers were not found"
    problems = []
    for path, name, doc, used in found:
        named = feeds(doc)
        if not named:
            problems.append(f"{path} {name}: no 'Feeds:' paragraph (pasted in {sorted(used)})")
            continue
        if used - set(named):
            problems.append(f"{path} {name}: its keys are pasted in {sorted(used - set(named))} "
                            "too")
        for page, labels in named.items():
            missing = [label for label in labels if label not in pages.get(page, {}).get(
                "labels", {})]
            if page not in pages or missing:
                problems.append(f"{path} {name}: {page} has no {missing or 'such page'}")
    assert not problems, "\n".join(problems)
