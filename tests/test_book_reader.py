"""What a reader meets in the chapters besides the prose: the Colab cell, the code cells shown
between prose and figures, the commands exercises send the reader to.

(Kept apart from tests/test_book_hygiene.py, which checks how notebooks are stored.)"""
import json
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def _cells(path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _source(cell) -> str:
    return "".join(cell["source"])


# ------------------------------------------------------------------ the Colab cell, run twice

class _FakeColab:
    """The shell a Colab cell runs in: `!git clone` makes /content/book (and fails, as git does,
    when the folder is already there); `%cd` is recorded."""

    def __init__(self):
        self.cloned, self.commands, self.failures = False, [], []

    def system(self, command: str) -> None:
        self.commands.append(command)
        if "git clone" in command:
            if self.cloned:
                self.failures.append("fatal: destination path '/content/book' already exists")
            self.cloned = True

    def run_line_magic(self, name: str, line: str, *args) -> None:
        self.commands.append(f"%{name} {line}")


def run_colab_cell(source: str, monkeypatch, runs: int = 2) -> _FakeColab:
    """Run a notebook's first cell `runs` times as IPython would on Colab (its ! and % lines
    turned into shell calls), in one kernel."""
    import os

    from IPython.core.inputtransformer2 import TransformerManager
    code = TransformerManager().transform_cell(source)
    shell = _FakeColab()
    real_isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: (shell.cloned if str(p).startswith(
        "/content/book") else real_isdir(p)))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    for _ in range(runs):
        exec(compile(code, "<colab cell>", "exec"), {"get_ipython": lambda: shell})
    return shell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_colab_cell_can_run_twice(path, monkeypatch):
    """A reader who runs the first cell again (or runs all cells twice) gets no failing
    `git clone` into the existing folder, and the library is on sys.path once."""
    colab = _source([c for c in _cells(path) if c["cell_type"] == "code"][0])
    assert "git clone" in colab, f"{path.name}: the first code cell is not the Colab cell"
    shell = run_colab_cell(colab, monkeypatch)
    assert not shell.failures, f"{path.name}: {shell.failures}"
    assert sum("git clone" in c for c in shell.commands) == 1, shell.commands
    assert sys.path.count("/content/book/lib") == 1
    assert shell.commands[-1] == "%cd /content/book/book"


def test_the_colab_check_catches_an_unguarded_clone(monkeypatch):
    unguarded = ('import sys\nif "google.colab" in sys.modules:\n'
                 '    !git clone -q https://example.org/book /content/book\n'
                 '    sys.path.insert(0, "/content/book/lib")\n')
    shell = run_colab_cell(unguarded, monkeypatch)
    assert shell.failures and sys.path.count("/content/book/lib") == 2


# ------------------------------------------------------- exercises send readers somewhere useful

def test_the_copy_unique_exercise_points_at_the_program_not_its_trace():
    """`crasp run copy_unique --trace` prints thousands of lines: the exercise points at the
    program's source (the playground or `crasp show`), and its solution does not call
    copy_unique "an induction head", the name of another program of the library."""
    from lengthgen.crasp.library import program_names
    assert {"induction_head", "copy_unique"} <= set(program_names())
    text = "\n".join(_source(c) for c in _cells(ROOT / "book" / "ape_vs_nope.ipynb"))
    exercise = re.search(r"```\{exercise\}\n:label: ex-huang-unique\n(.*?)```", text, re.S).group(1)
    solution = re.search(r"````\{solution\} ex-huang-unique\n(.*?)````", text, re.S).group(1)
    assert "crasp-playground" in exercise and "crasp show copy_unique" in exercise
    assert "--trace" not in exercise and "crasp run" not in exercise
    assert not re.search(r"(program|copy_unique)\W+is an induction head", solution)
    assert "`induction_head`" in solution


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_exercise_sends_the_reader_to_a_long_trace(path):
    """A `crasp run NAME --trace` the book asks for prints one line per operation: only for
    programs short enough to read."""
    from lengthgen.crasp.library import get_program, program_names
    text = "\n".join(_source(c) for c in _cells(path))
    for name in re.findall(r"crasp run (\w+)[^`\n]*--trace", text):
        assert name in program_names(), f"{path.name}: no library program {name}"
        assert len(get_program(name).ops) <= 200, f"{path.name}: {name}'s trace is too long"


# ----------------------------------------------------------- search hits readable in both modes

def contrast(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""
    def luminance(colour):
        channels = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    low, high = sorted([luminance(foreground), luminance(background)])
    return (high + 0.05) / (low + 0.05)


def test_contrast_formula():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0
    assert 3.2 < contrast("#0a7d91", "#f3cf95") < 3.3   # the theme's link on its hit tint


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_search_hits_have_contrast_in_light_and_dark_mode(mode):
    """The highlighted words of a search hit set both their colour and their background in
    book/_static/lengthgen.css (the theme sets only the background, under link colours of
    3.2:1 and 2.1:1), at 4.5:1 or more, with a selector that outranks the theme's
    `span.highlighted`."""
    css = (ROOT / "book" / "_static" / "lengthgen.css").read_text()
    rule = re.search(rf'html\[data-theme="{mode}"\] span\.highlighted \{{([^}}]*)\}}', css)
    assert rule, f"no {mode}-mode rule for span.highlighted"
    declared = dict(re.findall(r"([\w-]+):\s*(#[0-9a-fA-F]{6})", rule.group(1)))
    assert {"color", "background-color"} <= set(declared), declared
    assert contrast(declared["color"], declared["background-color"]) >= 4.5, declared


# ------------------------------------------------------- the library stays out of the narrative
#
# A code cell that only glues numbers, tables or figures for the prose (book_figure, book_table,
# book_text, glue_numbers, the facades' glue_* and *_table helpers) shows nothing a reader reads
# on the site: its output is placed by the prose, and its input would stand between prose and
# figures (with a "Show code cell" toggle in the PDF). It is removed from the site (tags
# remove-input and remove-output; Jupyter and Colab still show it). It stays visible only where
# a later visible cell reads a name it defines, so that the code the reader sees is complete.

GLUE_CALL = re.compile(r"\b(book_figure|book_table|book_text|glue_\w+|cell_table|hparams_table|"
                       r"paper_vs_book_table)\(")


def input_shown(cell) -> bool:
    tags = cell["metadata"].get("tags", [])
    return "remove-cell" not in tags and "remove-input" not in tags


def _python(source: str):
    import ast
    return ast.parse("\n".join(re.sub(r"^(\s*)[!%].*", r"\1pass", line)
                               for line in source.splitlines()))


def _bound(tree) -> set[str]:
    import ast
    names = {n.id for n in ast.walk(tree)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _read(tree) -> set[str]:
    import ast
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def narrative_problems(cells: list[dict]) -> list[str]:
    """Glue cells shown on the site that no shown cell needs, and shown cells that read a name
    only a removed cell defines."""
    code = [c for c in cells if c["cell_type"] == "code"]
    trees = [_python(_source(c)) for c in code]
    problems = []
    for i, cell in enumerate(code):
        later = [(j, trees[j]) for j in range(i + 1, len(code)) if input_shown(code[j])
                 and not GLUE_CALL.search(_source(code[j]))]
        read_later = {name for _, tree in later for name in _read(tree) - _bound(tree)}
        needed = read_later & _bound(trees[i])
        first = _source(cell).strip().splitlines()[0] if _source(cell).strip() else ""
        if GLUE_CALL.search(_source(cell)) and input_shown(cell) and not needed:
            problems.append(f"code cell {i} ({first[:50]}) only glues for the prose: "
                            "tag it remove-input (and remove-output)")
        if not input_shown(cell) and needed:
            problems.append(f"code cell {i} ({first[:50]}) is removed from the site, but a later "
                            f"cell reads its {sorted(needed)}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_cells_that_only_glue_are_not_shown(path):
    assert narrative_problems(_cells(path)) == []


def test_the_narrative_check_catches_a_shown_glue_cell_and_a_hidden_definition():
    def cell(source, *tags):
        return {"cell_type": "code", "source": [source], "metadata": {"tags": list(tags)}}
    assert narrative_problems([cell('glue_protocol()', "remove-output")])
    assert narrative_problems([cell('print(glue_headline())', "remove-output")])
    assert narrative_problems([cell('book_figure("x")', "remove-output")])
    assert not narrative_problems([cell('book_figure("x")', "remove-input", "remove-output")])
    hidden = cell('model = make()\nbook_text("k", model.n)', "remove-input", "remove-output")
    assert narrative_problems([hidden, cell("print(model)")])
    shown = cell('model = make()\nbook_text("k", model.n)', "remove-output")
    assert not narrative_problems([shown, cell("print(model)")])


# ------------------------------------------------------------------------------------ notation

def prose_outside_math_and_code(markdown: str) -> str:
    """A Markdown cell without its math ($...$, $$...$$), code (fenced and inline) and labels."""
    text = re.sub(r"```[^\n]*\n.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    text = re.sub(r"`[^`\n]*`", " ", text)
    return re.sub(r"^(:\w+:.*|\(.*\)=)$", " ", text, flags=re.M)


def test_the_notation_check_sees_plain_and_typeset_names():
    assert re.search(r"\bD_\d", prose_outside_math_and_code("the languages D_2 and D_12"))
    assert not re.search(r"\bD_\d", prose_outside_math_and_code(
        "the languages $D_2$ and $D_{12}$, `crasp show d12`, ```\nD_12\n```"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_indexed_names_are_typeset_in_the_prose(path):
    """D_12 is written $D_{12}$ in a chapter's prose, as everywhere else in the book."""
    plain = [m for c in _cells(path) if c["cell_type"] == "markdown"
             for m in re.findall(r".{0,30}\bD_\d+.{0,10}", prose_outside_math_and_code(_source(c)))]
    assert not plain, plain[:5]


def copy_called_induction_head(markdown: str) -> list[str]:
    """Paragraphs that speak of copying unique (distinct) tokens and of an induction head without
    naming the library's `induction_head` program, which is another task (the most frequent
    successor so far): such prose reads as if copy_unique were that program."""
    return [paragraph for paragraph in re.split(r"\n\s*\n", markdown)
            if re.search(r"induction head", paragraph, re.I)
            and re.search(r"copy_unique|\bunique\b|\bdistinct\b", paragraph)
            and "`induction_head`" not in paragraph]


def test_no_chapter_calls_copy_unique_an_induction_head():
    assert copy_called_induction_head(          # the wordings this check was written against
        "Copying *unique* tokens has a program (`copy_unique`, an induction head: predict ...)")
    assert copy_called_induction_head("Copying distinct tokens is an induction head: find ...")
    assert not copy_called_induction_head("copy_unique finds the token (the library's "
                                          "`induction_head` program is another task)")
    found = [f"{path.name}: {paragraph[:120]!r}" for path in NOTEBOOKS for cell in _cells(path)
             if cell["cell_type"] == "markdown"
             for paragraph in copy_called_induction_head(_source(cell))]
    assert not found, "\n".join(found)


HIDDEN_INPUT = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
POINTS_AT_NEXT_CELL = re.compile(r"\b(next|following) (code )?cell\b|\bcell (below|that follows)\b",
                                 re.I)


def pointers_to_hidden_cells(cells: list[dict]) -> list[str]:
    """Prose that sends the reader to "the next cell" or "the cell below" where the next code
    cell's input is hidden on the site (a figure's or glue's cell): refer to the figure or table
    by its number instead."""
    found = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown" or not POINTS_AT_NEXT_CELL.search(_source(cell)):
            continue
        following = next((c for c in cells[i + 1:] if c["cell_type"] == "code"), None)
        tags = set(following.get("metadata", {}).get("tags", [])) if following else set()
        if following is None or tags & HIDDEN_INPUT:
            found.append(f"cell {i}: {POINTS_AT_NEXT_CELL.search(_source(cell)).group(0)!r}")
    return found


def test_prose_points_only_at_code_cells_a_reader_sees():
    md = lambda text: {"cell_type": "markdown", "source": [text]}
    code = lambda *tags: {"cell_type": "code", "source": ["x"], "metadata": {"tags": list(tags)}}
    assert pointers_to_hidden_cells([md("(the table under the next cell)"),
                                     code("remove-input", "remove-output")]) == [
        "cell 0: 'next cell'"]
    assert pointers_to_hidden_cells([md("Run the cell below."), md("more"), code()]) == []
    found = [f"{path.name} {line}" for path in NOTEBOOKS
             for line in pointers_to_hidden_cells(_cells(path))]
    assert not found, "\n".join(found)


# Words the book uses in a sense of its own. Where a chapter first uses one, the same paragraph
# says what it means: the word in *emphasis* next to its definition, or a gloss "(a cell: ...)".
# "cell" also names a notebook's code cell and a table's cell: only paragraphs that speak of
# trainings (APE, NoPE, encodings, a sweep, fitting, a ladder, Fig. 1) use it in the sweep's
# sense, one task trained with one positional encoding.
TERMS = {"cell": r"\bcells?\b", "ladder": r"\bladders?\b", "rung": r"\brungs?\b",
         "dot-depth": r"\bdot-depth\b"}
TRAINING_CONTEXT = re.compile(r"\b(APE|NoPE|encodings?|sweep|fit|ladder|Fig\. 1)\b")


def undefined_terms(markdown_cells: list[str]) -> list[str]:
    """The terms whose first paragraph in these cells does not define them."""
    paragraphs = [p for text in markdown_cells for p in re.split(r"\n\s*\n", text)]
    missing = []
    for term, pattern in TERMS.items():
        first = next((p for p in paragraphs if re.search(pattern, p, re.I)
                      and (term != "cell" or TRAINING_CONTEXT.search(p))), None)
        defined = rf"\*{re.escape(term)}\*|\(an? {re.escape(term)}: "
        if first is not None and not re.search(defined, first, re.I):
            missing.append(f"{term!r} first used without a definition: {first[:100]!r}")
    return missing


def test_the_book_defines_its_own_words_where_a_chapter_first_uses_them():
    assert undefined_terms(["Run the next cell.", "Each cell (a cell: one task with one "
                            "encoding) fits; a short ladder of settings"]) == [
        "'ladder' first used without a definition: 'Each cell (a cell: one task with one "
        "encoding) fits; a short ladder of settings'"]
    assert undefined_terms(["The *dot-depth* of a language counts ...", "dot-depth 2"]) == []
    found = [f"{path.name}: {problem}" for path in NOTEBOOKS for problem in undefined_terms(
        [_source(c) for c in _cells(path) if c["cell_type"] == "markdown"])]
    assert not found, "\n".join(found)
