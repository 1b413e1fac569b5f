"""Notebooks are stored clean and alike; the table of contents and the files agree."""
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LIB_CHAPTERS = ROOT / "lib" / "lengthgen" / "chapters"   # the chapters' facades
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def toc_files() -> list[str]:
    """The root, then every chapter followed by the pages listed under it (its appendix)."""
    def walk(entries):
        for entry in entries or []:
            yield entry["file"]
            yield from walk(entry.get("sections"))
    return [TOC["root"]] + list(walk(TOC.get("chapters")))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} has a count"


def notebook_code(path) -> str:
    """A notebook's code cells as one Python source (IPython's ! and % lines as `pass`)."""
    cells = json.loads(path.read_text())["cells"]
    lines = [re.sub(r"^(\s*)[!%].*", r"\1pass", line) for c in cells if c["cell_type"] == "code"
             for line in "".join(c["source"]).splitlines()]
    return "\n".join(lines) + "\n"


def chapter_problems(path, code: str) -> list[str]:
    """What a notebook's code does that a chapter must not: define a function or a class (the
    library holds them; a lambda handed to a slider is an argument, not a definition), import a
    private module, or import lengthgen other than through its chapter's facade,
    lengthgen.chapters.<chapter> (an appendix shares its chapter's), or hand `book_figure` a
    lambda to draw a figure with: a lambda does not pickle, so the phone's rendition was drawn
    in the kernel after the column's, not beside it in a worker (`viz.parallel`); a
    functools.partial of the library's function pickles."""
    import ast
    facade = "lengthgen.chapters." + path.stem.removesuffix("_appendix")
    problems = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            problems.append(f"defines {node.name} (line {node.lineno})")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "book_figure" and \
                any(isinstance(arg, ast.Lambda) for arg in node.args + [k.value for k in node.keywords]):
            problems.append(f"hands book_figure a lambda (line {node.lineno})")
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
        for module in modules:
            if any(part.startswith("_") for part in module.split(".")):
                problems.append(f"imports the private {module} (line {node.lineno})")
        if isinstance(node, (ast.Import, ast.ImportFrom)) and modules and \
                modules[0].split(".")[0] == "lengthgen" and modules[0] != facade:
            problems.append(f"imports {modules[0]}, not {facade} (line {node.lineno})")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_chapter_calls_its_facade_and_defines_nothing(path):
    assert chapter_problems(path, notebook_code(path)) == []


def test_the_chapter_check_catches_a_planted_function_and_imports(tmp_path):
    planted = ("from lengthgen.chapters.dyck import glue_numbers\n"
               "from lengthgen.viz.book import _glue\n"
               "def glue_all(prefix, numbers):\n    pass\n"
               "book_figure('dyck-x', lambda: draw(3))\n")
    assert chapter_problems(ROOT / "book" / "dyck_appendix.ipynb", planted) == [
        "imports the private lengthgen.viz.book._glue (line 2)",
        "imports lengthgen.viz.book, not lengthgen.chapters.dyck (line 2)",
        "defines glue_all (line 3)",
        "hands book_figure a lambda (line 5)"]


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
    # the Colab cell is for Colab (which opens the notebook, not the site): off the site, its
    # PDF and its search snippets
    assert "remove-cell" in code[0]["metadata"].get("tags", []), \
        f"{path.name}: tag the Colab cell remove-cell"
    colab, setup = "".join(code[0]["source"]), "".join(code[1]["source"])
    assert '"google.colab" in sys.modules' in colab, f"{path.name}: first cell is not the Colab guard"
    assert CONFIG["repository"]["url"] in colab, f"{path.name}: Colab cell clones another URL"
    # pip install -e inside a running kernel is not importable until a restart: the cell must
    # also put the clone's library on sys.path (checked from a clean Python, see the README).
    assert 'sys.path.insert(0, "/content/book/lib")' in colab, \
        f"{path.name}: the Colab cell must put /content/book/lib on sys.path"
    assert "get_scale()" in setup and "get_device()" in setup, f"{path.name}: second cell is not setup"
    # the site opens with the chapter, not with its imports (they stay in the notebook)
    assert "hide-input" in code[1]["metadata"].get("tags", []), \
        f"{path.name}: fold the setup cell's input on the site (tag hide-input)"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if "appendix" not in p.stem],
                         ids=lambda p: p.name)
def test_every_chapter_opens_with_its_goals_and_ends_with_a_summary(path):
    """A reader sees what the chapter teaches before it starts, and what it showed before the
    exercises (an appendix page has neither)."""
    cells = json.loads(path.read_text())["cells"]
    title = "".join(cells[0]["source"])
    assert "```{admonition} What you will learn" in title, f"{path.name}: no learning goals"
    text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    summary = [i for i, t in enumerate(text) if "\n## Summary" in "\n" + t]
    exercises = [i for i, t in enumerate(text) if "\n## Exercises" in "\n" + t]
    assert summary, f"{path.name}: no '## Summary' section"
    assert not exercises or summary[0] <= exercises[0], f"{path.name}: summary after exercises"


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


# ------------------------------------------------------------ numbers in prose come from records
#
# A chapter's prose pastes every number it derives from a record ({glue:md}`key`, computed by
# the paper's chapter module, e.g. lengthgen.experiments.huang.limit.analysis, with the formatting of
# lengthgen.experiments.prose). What a Markdown cell may still type as a percentage or a
# decimal is marked, by one of:
#   * the sentence (or table row) quotes a paper: it contains "paper", "et al." or a {cite:...}
#     role, as in "the paper's 68% and 9%";
#   * a comment line `% typed-numbers: <why>` right before the lines it covers (up to the next
#     blank line), for numbers worked out by hand or printed by a code cell of the page, e.g.
#     "% typed-numbers: worked by hand from the head's formula, not from a record".
# References like "Theorem 4.1", "Sec. 4.2" or "Appendix 5.1.2" are not numbers.
#
# The chapters checked (the others are being rewritten; add each one once it glues its numbers):
NUMBER_CHECKED_CHAPTERS = {"limit_transformers", "dyck", "dyck_appendix", "ape_vs_nope",
                           "communication", "quantitative_bounds", "crasp", "try_your_own"}

TYPED_NUMBER = re.compile(r"(?<![\w.\\^])\d+(?:\.\d+)?\s?\\?%|(?<![\w.\\^])\d+\.\d+(?![\w.])")
REFERENCE = re.compile(
    r"\b(?:Theorems?|Lemmas?|Claims?|Sections?|Sec\.|Appendix|Appendices|App\.|Tables?|Figs?\.|"
    r"Figures?|Propositions?|Definitions?|Corollar(?:y|ies)|Eqs?\.|Algorithms?|Remarks?)\s*"
    r"\(?[A-Z]?\d+(?:\.\d+)*\)?(?:(?:,\s*|\s+and\s+|\s+to\s+)[A-Z]?\d+(?:\.\d+)*)*")
PAPER_MARK = re.compile(r"paper|et al\.|\{cite", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z*(`${\[])")


def typed_numbers(markdown: str) -> list[str]:
    """The unmarked typed percentages and decimals of one Markdown cell, each with the
    sentence it is in."""
    found, exempt, in_code = [], False, False
    blocks, block = [], []
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            # a code fence (not a directive) hides everything up to its end
            if not in_code and not re.match(r"^[`~]{3,}\s*\{", stripped) \
                    and stripped.strip("`~").strip():
                in_code = True
            elif in_code:
                in_code = False
            continue
        if in_code or re.match(r"^:\w[\w-]*:", stripped):   # directive options (:name: ...)
            continue
        if stripped.startswith("% typed-numbers:"):
            exempt = True
            continue
        if not stripped:
            exempt = False
            blocks.append(block)
            block = []
            continue
        if not exempt:
            # link targets are addresses, not numbers: "%20" in a URL is no percentage
            block.append(re.sub(r'href="[^"]*"|\]\([^)\s]*\)', "", line))
    blocks.append(block)
    for block in blocks:
        rows = [line for line in block if line.lstrip().startswith("|")]
        prose = " ".join(line.strip() for line in block if not line.lstrip().startswith("|"))
        for sentence in rows + SENTENCE_END.split(prose):
            if PAPER_MARK.search(sentence):
                continue
            text = re.sub(r"`[^`]*`", " ", sentence)   # code, and the roles' targets (glue keys)
            text = REFERENCE.sub(" ", text)
            found += [f"{m.group(0)!r} in: {sentence.strip()[:160]}"
                      for m in TYPED_NUMBER.finditer(text)]
    return found


def chapter_typed_numbers(path) -> list[str]:
    return [f"{path.name} cell {i}: {hit}" for i, cell in enumerate(_cells(path))
            if cell["cell_type"] == "markdown"
            for hit in typed_numbers("".join(cell["source"]))]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem in NUMBER_CHECKED_CHAPTERS],
                         ids=lambda p: p.name)
def test_prose_types_no_record_number(path):
    hits = chapter_typed_numbers(path)
    assert not hits, ("typed numbers not marked as the paper's (glue record numbers, see "
                      "lengthgen.experiments.*_chapter):\n" + "\n".join(hits))


def test_number_check_covers_existing_chapters_only():
    assert NUMBER_CHECKED_CHAPTERS <= {p.stem for p in NOTEBOOKS}


def test_number_check_fails_on_a_planted_typed_number(tmp_path):
    """Plant a record-like number into a temporary copy of a checked chapter: the check finds
    it; marked as the paper's, or covered by a typed-numbers comment, it passes."""
    source = next(p for p in NOTEBOOKS if p.stem in NUMBER_CHECKED_CHAPTERS)
    nb = json.loads(source.read_text())
    index = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown")
    original = nb["cells"][index]["source"]

    def check(text):
        nb["cells"][index]["source"] = original + ["\n", "\n", text + "\n"]
        copy = tmp_path / source.name
        copy.write_text(json.dumps(nb))
        return chapter_typed_numbers(copy)

    assert check("The trained model completes 87% of the deep prefixes.")
    assert check("Its error at the unseen distances is 0.42, below the constant's.")
    assert check("| d = 32 | 95 to 98% |")
    assert not check("The model completes {glue:md}`dyck-capacity-d32` of the deep prefixes.")
    assert not check("The paper reports 68% in-sample against 9% out-of-sample.")
    assert not check("{cite:t}`richard2024depth` reports 52 of 100 (0.52).")
    assert not check("% typed-numbers: worked by hand\nThe gap is 0.5, so the weight is 1.5.")
    assert not check("Theorem 4.1 and Sec. 4.2 of Appendix 5.1.2 are references.")
    assert check("% typed-numbers: only the next lines\nA gap of 0.5.\n\nBut 0.25 here is typed.")


def test_glued_keys_of_checked_chapters_exist():
    """Every {glue:md} key the prose of a checked chapter pastes is computed by the library
    (or glued by book_figure/book_table in the chapter itself)."""
    from lengthgen.experiments.richard.analysis import dyck_numbers, dyck_verdicts
    from lengthgen.experiments.huang.limit.analysis import limit_numbers
    computed = {**limit_numbers(), **dyck_numbers(), **dyck_verdicts()}
    for path in NOTEBOOKS:
        if path.stem not in NUMBER_CHECKED_CHAPTERS:
            continue
        text = "".join("".join(c["source"]) for c in _cells(path))
        # glued by the notebook, or by its chapter's facade for it; there a table's f-string
        # key stands for its literal parts with any {placeholder} between them (text keys must
        # be literal: a pattern such as "huang-{a}-{b}" would vouch for any typo)
        facade = LIB_CHAPTERS / (path.stem.removesuffix("_appendix") + ".py")
        source = text + (facade.read_text(encoding="utf-8") if facade.exists() else "")
        keys = re.findall(r"book_(?:figure|table|text)\(\s*\"([\w-]+)\"", source)
        tables = re.findall(r"book_(?:figure|table)\(\s*f\"([^\"]+)\"", source)
        glued_here = [re.compile(re.escape(k)) for k in keys] + [
            re.compile(re.sub(r"\\\{[^}]*\\\}", r"[\\w-]+", re.escape(k))) for k in tables]
        # glue_numbers(numbers, prefix="PREFIX") glues every PREFIX-KEY of a library dict
        prefixes = tuple(p + "-" for p in re.findall(r"prefix=\"([\w-]+)\"", text))
        for cell in _cells(path):
            assert not re.search(r"(?<!`)`\{glue:", "".join(cell["source"])), \
                f"{path.name}: a glue role inside inline code is not pasted"
        for key in re.findall(r"\{glue:md\}`([\w-]+)`", text):
            assert key in computed or any(p.fullmatch(key.removesuffix("-provenance"))
                                          for p in glued_here) \
                or (prefixes and key.startswith(prefixes)), \
                f"{path.name}: {{glue:md}}`{key}` is pasted but nothing glues it"


PAPER_NUMBER_IN_HEADING = re.compile(r"\b(Tables?|Figures?|Figs?\.)\s*\d")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_headings_say_whose_table_or_figure(path):
    """A heading that names a table or figure by number names a paper's ("the paper's Table 2"),
    never a bare number that a reader would take for one of the book's own."""
    bare = []
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("#") and PAPER_NUMBER_IN_HEADING.search(line) \
                    and not PAPER_MARK.search(line):
                bare.append(line)
    assert not bare, f"{path.name}: headings with a bare table or figure number: {bare}"


# ------------------------------------------------------------ every stated result has a source
#
# Each theorem, definition, lemma, corollary or proposition box ({prf:...}, proofs aside) carries
# a label, and lengthgen/data/statement_sources.csv (read by lengthgen.viz.statements) keeps
# its source: a key of book/references.bib or "this book", the numbered statement, and the
# section or appendix where it stands.
STATED = re.compile(r"^(`{3,}|~{3,})\{prf:(\w+)\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)", re.MULTILINE)
BIB_KEYS = set(re.findall(r"^@\w+\{([\w-]+),", (ROOT / "book" / "references.bib").read_text(),
                          re.MULTILINE))


def stated_boxes() -> list[tuple[str, str, str | None]]:
    """(chapter, kind, label or None) of every box that states a result."""
    boxes = []
    for path in NOTEBOOKS:
        for cell in _cells(path):
            if cell["cell_type"] != "markdown":
                continue
            for match in STATED.finditer("".join(cell["source"])):
                if match.group(2) in ("proof", "algorithm", "example", "remark"):
                    continue
                label = re.search(r":label:\s*([\w-]+)", match.group(3))
                boxes.append((path.stem, match.group(2), label.group(1) if label else None))
    return boxes


def test_every_stated_result_has_its_source():
    from lengthgen.viz.statements import FIELDS, statement_sources
    sources = statement_sources()
    boxes = stated_boxes()
    assert boxes, "no theorem or definition boxes found: the pattern is out of date"
    for chapter, kind, label in boxes:
        assert label, f"{chapter}: a {kind} box without a :label:"
        assert label in sources, (f"{chapter}: {kind} {label} has no row in "
                                  "lengthgen/data/statement_sources.csv")
        row = sources[label]
        assert (row["chapter"], row["kind"]) == (chapter, kind), f"{label}: {row}"
        assert all(row[f].strip() for f in FIELDS if f != "note"), f"{label}: empty field"
        assert row["source"] in BIB_KEYS or row["source"] == "this book", \
            f"{label}: source {row['source']!r} is neither a bibliography key nor 'this book'"
    stale = set(sources) - {label for _, _, label in boxes}
    assert not stale, f"statement_sources.csv has rows for boxes that are gone: {sorted(stale)}"


def box_texts() -> dict[str, str]:
    """{label: the text of its box, whitespace collapsed}, for every box that states a result."""
    out = {}
    for path in NOTEBOOKS:
        for cell in _cells(path):
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for match in STATED.finditer(text):
                label = re.search(r":label:\s*([\w-]+)", match.group(3))
                if match.group(2) in ("proof", "algorithm", "example", "remark") or not label:
                    continue
                end = text.find("\n" + match.group(1) + "\n", match.end())
                body = text[match.end(): end if end >= 0 else len(text)]
                out[label.group(1)] = " ".join(body.split())
    return out


def test_each_box_states_its_sources_hypotheses():
    """Each statement box states the hypotheses (and the conclusion) of the statement it
    restates, as far as text can tell: the phrases written from the source into
    statement_sources.csv (`hypotheses`). Theorem 7's box must name the bounded regularizer,
    and the Limit Transformer's definition must not build periodicity into its encodings."""
    from lengthgen.viz.statements import hypotheses, statement_sources
    texts = box_texts()
    assert set(texts) == set(statement_sources()), "a box and its row do not match"
    for label, text in texts.items():
        required, forbidden = hypotheses(label)
        assert required, f"{label}: no phrases of its source's hypotheses to check"
        missing = [p for p in required if " ".join(p.split()) not in text]
        assert not missing, f"{label}: the box does not state {missing}"
        present = [p for p in forbidden if " ".join(p.split()) in text]
        assert not present, f"{label}: the box states what its source does not: {present}"
    required, _ = hypotheses("thm-huang-7")
    assert any("\\sup_n" in p and "< \\infty" in p for p in required)
    assert "p_{i \\bmod \\Delta}" in hypotheses("def-limit-transformer")[1]


def test_the_hypotheses_check_fails_on_a_box_without_the_condition():
    """Theorem 7's box with the bounded-regularizer condition dropped, as it once was, fails."""
    from lengthgen.viz.statements import hypotheses
    text = box_texts()["thm-huang-7"]
    dropped = re.sub(r"with a \*\*bounded regularizer\*\*,.*?\), for which", "for which", text)
    assert dropped != text
    assert [p for p in hypotheses("thm-huang-7")[0] if p not in dropped]


def test_the_box_pattern_finds_a_planted_box():
    text = ("Text.\n\n````{prf:lemma} Lemma 1 of Someone\n:label: lem-x\n:nonumber:\n\nBody.\n"
            "````\n\n```{prf:proof}\nNo.\n```\n")
    found = [(m.group(2), re.search(r":label:\s*([\w-]+)", m.group(3)).group(1))
             for m in STATED.finditer(text) if m.group(2) != "proof"]
    assert found == [("lemma", "lem-x")]


def test_the_code_page_includes_objects_that_exist():
    """book/code.md shows the decoder and the loop with literalinclude :pyobject:; each named
    file and object exists (a rename in lib/ fails here, not only in the -W site build)."""
    import ast
    import re
    text = (ROOT / "book" / "code.md").read_text()
    includes = re.findall(r"```\{literalinclude\} (\S+)\n:pyobject: (\S+)", text)
    assert len(includes) >= 5
    for path, obj in includes:
        source = (ROOT / "book" / path).resolve()
        assert source.is_file(), path
        tree = ast.parse(source.read_text())
        scope = tree.body
        for part in obj.split("."):
            found = [n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef))
                     and n.name == part]
            assert found, f"{path} has no {obj}"
            scope = found[0].body
