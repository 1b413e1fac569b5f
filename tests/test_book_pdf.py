"""The book's PDF (tools/book_pdf.py): printed page by page in the order of _toc.yml by the
system's Chromium and joined; without Chromium, one line and success; linked from every page."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "book_pdf.py"

spec = importlib.util.spec_from_file_location("book_pdf", TOOL)
book_pdf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(book_pdf)

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title} — A tiny book</title>
</head><body><h1>{title}</h1>{body}</body></html>"""


def tiny_site(folder: Path) -> tuple[Path, Path]:
    """A site of three pages (a root and two chapters, the second of three printed pages) and
    its _toc.yml."""
    (folder / "html" / "book").mkdir(parents=True)
    chapters = {"book/intro": ("Welcome to the tiny book", "<p>Start here.</p>"),
                "book/first": ("Periodic positions", "<p>One page.</p>"),
                "book/second": ("A long chapter", "<p style='page-break-after: always'>a</p>" * 3)}
    for name, (title, body) in chapters.items():
        (folder / "html" / f"{name}.html").write_text(PAGE.format(title=title, body=body))
    toc = folder / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/first\n"
                   "    sections:\n      - file: book/second\n")
    return folder / "html", toc


def test_toc_order_of_the_book():
    pages = book_pdf.toc_pages(ROOT / "_toc.yml")
    assert pages[0] == "book/intro.html" and pages[-1] == "book/references.html"
    assert pages.index("book/ape_vs_nope.html") + 1 == pages.index("book/ape_vs_nope_appendix.html")


def test_pdf_has_every_page_in_order_with_its_titles(tmp_path):
    if book_pdf.find_chromium() is None:
        pytest.skip("no Chromium: apt-get install chromium")
    pypdf = pytest.importorskip("pypdf")
    site, toc = tiny_site(tmp_path)
    out = site / book_pdf.PDF_NAME
    done = subprocess.run([sys.executable, str(TOOL), str(site), "--toc", str(toc)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.exists() and "3 pages of the site" in done.stdout, done.stdout
    reader = pypdf.PdfReader(str(out))
    assert len(reader.pages) >= 3 + 2   # the long chapter prints on three pages
    text = "\n".join(page.extract_text() for page in reader.pages)
    order = [text.index(title) for title in ("Welcome to the tiny book", "Periodic positions",
                                              "A long chapter")]
    assert order == sorted(order), "pages out of the order of _toc.yml"
    assert [item.title for item in reader.outline] == ["Welcome to the tiny book",
                                                        "Periodic positions", "A long chapter"]


def test_without_chromium_one_line_and_success(tmp_path):
    """`make book` on a machine without Chromium: the PDF step says so in one line, exit 0."""
    site, toc = tiny_site(tmp_path)
    bare = tmp_path / "bin"   # a PATH with no browser on it
    bare.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "LENGTHGEN_CHROMIUM"}
    env["PATH"] = str(bare)
    done = subprocess.run([sys.executable, str(TOOL), str(site), "--toc", str(toc)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and "Chromium" in lines[0], lines
    assert not (site / book_pdf.PDF_NAME).exists()


def test_make_book_prints_the_pdf_after_the_site():
    recipe = re.search(r"^book:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.S | re.M)
    lines = recipe.group(0).splitlines()
    build = next(i for i, line in enumerate(lines) if "jupyter-book build" in line)
    pdf = next(i for i, line in enumerate(lines) if "tools/book_pdf.py" in line)
    assert build < pdf


def test_every_page_links_to_the_pdf(built_site):
    _, html = built_site
    checked = 0
    for page in html.rglob("*.html"):
        if "_static" in page.parts or "_sources" in page.parts or page.name == "index.html":
            continue
        links = re.findall(r'href="([^"]*lengthgen-book\.pdf)"', page.read_text())
        assert links, f"{page.relative_to(html)}: no link to the book's PDF"
        target = (page.parent / links[0]).resolve()
        assert target == (html / book_pdf.PDF_NAME).resolve(), (page, links[0])
        checked += 1
    assert checked >= 10   # (the PDF itself is made by `make book`, not by the test build)


def test_printed_output_is_one_block_however_the_kernel_chunked_it(tmp_path):
    """The cause of a PDF whose page count changed between two builds of one commit: a cell's
    prints reach the notebook in chunks that depend on timing, and myst-nb drew one block per
    chunk unless told to merge them. Rendered with the book's own setting (nb_merge_streams in
    _config.yml), a cell whose output came in two chunks shows one block."""
    import shutil

    import nbformat
    import yaml
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    merge = config.get("nb_merge_streams", False)
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    cell = nbformat.v4.new_code_cell("print('a'); slow(); print('b')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)
                    for text in ("a\n", "b\n")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# A page"), cell]
    nbformat.write(notebook, tmp_path / "page.ipynb")
    render = shutil.which("mystnb-docutils-html5", path=str(Path(sys.executable).parent))
    if render is None:
        pytest.skip("myst-nb's docutils renderer is not installed here")
    done = subprocess.run([render, str(tmp_path / "page.ipynb"), "--nb-execution-mode=off",
                           f"--nb-merge-streams={str(merge).lower()}"],
                          capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)   # (the renderer writes a build/ folder where it runs)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("output stream") == 1, "two blocks for one cell's prints"
