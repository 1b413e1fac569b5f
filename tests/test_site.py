"""The site builds with warnings as errors, and its pages have what the book promises."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_without_warnings(built_site):
    result, _ = built_site
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_math_and_citations_render(built_site):
    _, html = built_site
    intro = (html / "book" / "intro.html").read_text()
    assert "math notranslate" in intro, "math did not render in the introduction"
    assert 'href="references.html#' in intro, "citations did not resolve to the bibliography"


def test_bibliography_labels_are_author_year_with_links(built_site):
    _, html = built_site
    refs = (html / "book" / "references.html").read_text()
    labels = re.findall(r'<span class="label"><span class="fn-bracket">\[</span>(.*?)<', refs)
    assert labels, "no bibliography entries"
    assert all(re.search(r", \d{4}[a-z]?$", label) for label in labels), labels
    assert "Huang et al., 2025" in labels
    assert "https://arxiv.org/abs/2410.02140" in refs, "entries lost their URLs"


def test_tables_are_html_tables_with_numbers(built_site):
    _, html = built_site
    page = (html / "book" / "crasp.html").read_text()
    for label in ("tab-crasp-languages", "tab-crasp-algorithmic"):
        table = re.search(rf'<table[^>]*id="{label}".*?</table>', page, re.S)
        assert table, f"{label} is not an HTML table"
        assert "caption-number" in table.group(0) and "Provenance:" in table.group(0)
        assert table.group(0).count("<tr") > 8, f"{label} has too few rows"
    assert "| task |" not in page, "a Markdown table was printed as text"


def test_every_glued_figure_is_numbered(built_site):
    """Every {glue:figure} of a chapter becomes a numbered figure with its label."""
    _, html = built_site
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        text = "\n".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"])
        labels = re.findall(r"\{glue:figure\}[^\n]*\n:name: ([\w-]+)", text)
        page = (html / "book" / (notebook.stem + ".html")).read_text()
        for label in labels:
            figure = re.search(rf'<figure[^>]*id="{label}".*?</figure>', page, re.S)
            assert figure and "caption-number" in figure.group(0), \
                f"{notebook.name}: figure {label} has no number"


def test_chapters_are_numbered_and_figures_and_tables_by_chapter(built_site):
    """Fig. 3.2, not Fig. 27: every caption number of a chapter starts with its chapter's
    number, which its title carries (the order of _toc.yml)."""
    import yaml
    _, html = built_site
    chapters = [c["file"] for c in yaml.safe_load((ROOT / "_toc.yml").read_text())["chapters"]]
    for number, chapter in enumerate(chapters, start=1):
        page = (html / (chapter + ".html")).read_text()
        assert re.search(rf'<span class="section-number">{number}\. </span>', page), chapter
        captions = re.findall(r'caption-number">(?:Fig\.|Table) ([\d.]+) ', page)
        assert all(c.split(".")[0] == str(number) for c in captions), (chapter, captions[:5])


def test_every_chapter_has_the_books_shape(built_site):
    """The introduction promises it: each chapter states its definitions or theorems in boxes
    and closes with exercises whose solutions are folded. A chapter's appendix page
    (book/<chapter>_appendix) holds longer experiments, not boxes and exercises."""
    _, html = built_site
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        if notebook.stem.endswith("_appendix"):
            continue
        page = (html / "book" / (notebook.stem + ".html")).read_text()
        boxes = len(re.findall(r'class="proof [a-z]+ admonition"', page))
        exercises = len(re.findall(r'class="exercise admonition"', page))
        folded = len(re.findall(r'class="solution dropdown admonition"', page))
        assert boxes >= 1, f"{notebook.name}: no definition or theorem box"
        assert exercises >= 2, f"{notebook.name}: {exercises} exercise(s)"
        assert folded == exercises, \
            f"{notebook.name}: {exercises} exercises but {folded} folded solutions"


def test_each_chapter_is_executed_once_per_session(built_site, request):
    """Chapters nbmake ran in this session are rendered from that run, the others executed by
    the build: no chapter runs twice, none is left out."""
    result, _ = built_site
    if result.prebuilt:
        pytest.skip("LENGTHGEN_BUILT_SITE: the site was built before this session")
    log = result.stdout + result.stderr
    chapters = {f"book/{p.name}" for p in (ROOT / "book").glob("*.ipynb")}
    executed = {c for c in chapters if f"/{c}: Executing notebook" in log}
    assert executed.isdisjoint(result.reused), sorted(executed & set(result.reused))
    assert executed | set(result.reused) == chapters, sorted(chapters - executed
                                                             - set(result.reused))
    # under `make test` nbmake runs every chapter first: the build reuses them all
    ran = {f"book/{Path(item.filename).name}" for item in request.session.items
           if getattr(item, "nbmake", False) and Path(item.filename).parent.name == "book"}
    if request.session.testsfailed == 0:
        assert set(result.reused) == ran & chapters


def test_no_glued_value_prints_as_a_tuple_or_a_repr(built_site):
    """myst-nb's {glue:text} evaluates the glued text/plain as a Python literal: "6,000" once
    printed as "(6, 0)". No pasted text on any page is a tuple, a quoted string or an object's
    repr, and no step count reads like "(6, 0) steps"."""
    import html as html_module
    _, site = built_site
    tuple_like = re.compile(r"^\(\s*-?[\d.]+\s*(,\s*-?[\d.]+\s*)+\)$")
    bad = []
    for page in sorted((site / "book").glob("*.html")):
        text = page.read_text()
        for pasted in re.findall(r'<span class="pasted-text">(.*?)</span>', text, re.S):
            pasted = html_module.unescape(pasted).strip()
            if (tuple_like.match(pasted) or pasted[:1] in "'\"" or "object at 0x" in pasted
                    or re.match(r"<[\w.]+[ >]", pasted)):
                bad.append((page.name, pasted))
        bad += [(page.name, m) for m in re.findall(r"\(\d+, \d+\)[- ]step", text)]
    assert not bad, bad[:10]


def test_table_cells_do_not_break_numbers_at_a_minus_sign(built_site):
    """No table cell on any page writes a number as 1.29e-06, a range of decimals with a
    breakable hyphen (98.9-100.0) or a formula's minus as a hyphen ((i-j)%4): a browser may
    break the line there (lengthgen.experiments.prose.keep_together)."""
    import html as html_module
    _, site = built_site
    breakable = re.compile(r"\d[eE]-\d|\d\.\d+-\d|\(\w-\w\)")
    bad = []
    for page in sorted((site / "book").glob("*.html")):
        for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", page.read_text(), re.S):
            text = html_module.unescape(re.sub(r"<[^>]+>", "", cell))
            if breakable.search(text):
                bad.append((page.name, text.strip()[:80]))
    assert not bad, bad[:10]


def split_streams(page_html: str) -> int:
    """How many code cells of a page show their printed output in more than one block of a
    stream (stdout or stderr)."""
    outputs = re.split(r'<div class="cell_output docutils container">', page_html)[1:]
    return sum(max(block.count('class="output stream'), block.count('class="output stderr'))
               > 1 for block in outputs)


def test_a_cells_printed_output_is_one_block(built_site):
    """The kernel sends a cell's prints in chunks that depend on timing (a flush every 0.2 s), and
    one block per chunk made the pages, and the PDF's page count, differ between builds of
    the same commit (crasp's ReLU check: two blocks in one build, one in another). myst-nb
    merges them (nb_merge_streams in _config.yml)."""
    _, site = built_site
    assert split_streams('<div class="cell_output docutils container"><div class="output stream '
                         'x">a</div><div class="output stream x">b</div></div>') == 1
    split = {page.name: split_streams(page.read_text())
             for page in sorted((site / "book").glob("*.html"))}
    assert not any(split.values()), split
