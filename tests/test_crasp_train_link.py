"""The playground's "Train this program" links (book/_static/crasp_playground.js with the box
written by lengthgen.viz.playground): they open the "Try your own language" notebook on Colab
and on Binder, carry the program (copied to the clipboard, and in the share link, which the
notebook's text area decodes: lengthgen.crasp.web.program_from_link), and say the expected
minutes, computed from the committed try-gallery records.

The browser tests run the playground's scripts on a small static page of their own (the box as
the C-RASP chapter writes it), so they need no site build; one more checks the box of the built
C-RASP chapter. Without Chromium they skip, as test_site_browser.py does.
"""
import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from lengthgen.crasp.web import program_from_link
from lengthgen.errors import LengthgenError
from lengthgen.viz.playground import TRY_NOTEBOOK, playground_html, train_minutes
from lengthgen.viz.rerun import launch_links
from test_site_browser import browser, site  # noqa: F401  (fixtures: Chromium, the built site)

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "book" / "_static"
SCRIPTS = ["crasp_engine.js", "crasp_library.js", "crasp_playground.js"]
TRICKY = "alphabet a b é\nX := #Q(a) + #Q(é) >= 1 // 100% & #1, a+b=c?\naccept X and #Q(b) <= 3\n"


def js_encode(text: str) -> str:
    """encodeURIComponent, as the playground writes a share link."""
    return quote(text, safe="-_.!~*'()")


# ----- the notebook side: a share link pasted into the text area ---------------------------------
@pytest.mark.parametrize("pasted", [
    "https://example.org/book/crasp.html#crasp={}&input=ab%C3%A9",
    "http://127.0.0.1:8000/crasp.html#crasp={}",
    "  crasp={}&input=  \n",
])
def test_a_share_link_gives_the_program_it_carries(pasted):
    assert program_from_link(pasted.format(js_encode(TRICKY))) == TRICKY


def test_a_program_is_left_as_it_is():
    for text in (TRICKY, "", "alphabet a\naccept #Q(a) >= 1", "crasp=1 and more"):
        assert program_from_link(text) == text
    with pytest.raises(LengthgenError, match="cut or damaged"):
        program_from_link("https://x/crasp.html#crasp=alphabet%20a%0AX%20%3A%3D%20%C3")


def test_the_widget_trains_the_program_of_a_pasted_link():
    """train_program reads the link first: a link carrying a program with a syntax error on its
    second line is refused at that line of the decoded program (before any training)."""
    from lengthgen.viz.try_widget import train_program
    link = "https://x/crasp.html#crasp=" + js_encode("alphabet a b\nP := #Q(a) <=\n")
    with pytest.raises(LengthgenError, match=r"<text area>:2:"):
        train_program(link, scale="test")


# ----- the build side: the links and the minutes ----------------------------------------------
def test_the_links_open_the_try_notebook_as_the_launch_buttons_do(tmp_path):
    links = launch_links(TRY_NOTEBOOK)
    assert (ROOT / TRY_NOTEBOOK).exists()
    assert links["colab"] == ("https://colab.research.google.com/github/lengthgen-book/"
                              "length-generalization/blob/main/book/try_your_own.ipynb")
    assert links["binder"] == ("https://mybinder.org/v2/gh/lengthgen-book/length-generalization/"
                               "main?urlpath=tree/book/try_your_own.ipynb")
    config = tmp_path / "_config.yml"
    config.write_text("repository:\n  url: https://github.com/me/fork.git\n  branch: dev\n"
                      "launch_buttons:\n  notebook_interface: jupyterlab\n"
                      "  binderhub_url: https://hub.example/\n")
    links = launch_links("book/x.ipynb", config)
    assert links["colab"] == \
        "https://colab.research.google.com/github/me/fork/blob/dev/book/x.ipynb"
    assert links["binder"] == "https://hub.example/v2/gh/me/fork/dev?urlpath=lab/tree/book/x.ipynb"
    config.write_text("repository:\n  url: https://gitlab.com/me/fork\n")
    with pytest.raises(LengthgenError, match="not a GitHub repository"):
        launch_links("book/x.ipynb", config)


def test_the_minutes_come_from_the_records_wall_times():
    runs = lambda *seconds: [{"wall_time_s": s} for s in seconds]  # noqa: E731
    assert train_minutes(runs(9, 68, 125)) == "1 to 3"
    assert train_minutes(runs(200, 230)) == "3 to 4"
    assert train_minutes(runs(100, 110)) == "2"
    assert train_minutes(runs(5)) == "1"
    from lengthgen.experiments import try_gallery
    from lengthgen.runs.records import committed_records
    _, records = committed_records(try_gallery.FIGURE_ID)
    box = playground_html("dyck1", "aabbab")
    assert f'data-train-minutes="{train_minutes(records)}"' in box, box
    assert 'data-program="dyck1"' in box and 'data-input="aabbab"' in box


# ----- the page: a small static page with the box -----------------------------------------------
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="crasp_playground.css">{scripts}</head>
<body><h1>playground</h1>{box}</body></html>
"""

# Click a link; the test's own listener (after the page's) keeps the new tab from opening.
CLICK_JS = """
const a = document.querySelector(arguments[0]), done = arguments[arguments.length - 1];
window.__copied = null;
navigator.clipboard.writeText = (t) => { window.__copied = t;
  return arguments[1] ? Promise.resolve() : Promise.reject(new Error('denied')); };
document.addEventListener('click', (ev) => ev.preventDefault(), { once: true });
a.click();
setTimeout(() => done({copied: window.__copied, hash: location.hash,
  status: document.querySelector('.crasp-pg-train-status').textContent}), 100);
"""


@pytest.fixture
def page(tmp_path):
    for name in SCRIPTS + ["crasp_playground.css"]:
        shutil.copy(STATIC / name, tmp_path / name)
    scripts = "".join(f'<script src="{name}"></script>' for name in SCRIPTS)

    def write(box: str) -> str:
        path = tmp_path / "index.html"
        path.write_text(PAGE.format(scripts=scripts, box=box), encoding="utf-8")
        return path.as_uri()
    return write


def test_train_this_program_opens_the_notebook_and_carries_the_program(browser, page):  # noqa: F811
    from selenium.webdriver.common.by import By
    browser.get(page(playground_html("dyck1", "aabbab")))
    links = launch_links(TRY_NOTEBOOK)
    colab = browser.find_element(By.CSS_SELECTOR, ".crasp-pg-train-colab")
    binder = browser.find_element(By.CSS_SELECTOR, ".crasp-pg-train-binder")
    assert colab.text == "Train this program on Colab" and binder.text == "or on Binder"
    assert colab.get_attribute("href") == links["colab"]
    assert binder.get_attribute("href") == links["binder"]
    assert colab.get_attribute("target") == binder.get_attribute("target") == "_blank"
    help_text = browser.find_element(By.CSS_SELECTOR, ".crasp-pg-train-help").text
    from lengthgen.experiments import try_gallery
    from lengthgen.runs.records import committed_records
    minutes = train_minutes(committed_records(try_gallery.FIGURE_ID)[1])
    assert f"about {minutes} minutes on a CPU" in help_text
    assert "text area" in help_text

    # the reader's own program: the click copies it and puts it into the share link
    editor = browser.find_element(By.ID, "crasp-pg-program")
    browser.execute_script("arguments[0].value = arguments[1]", editor, TRICKY)
    for selector in (".crasp-pg-train-colab", ".crasp-pg-train-binder"):
        got = browser.execute_async_script(CLICK_JS, selector, True)
        assert got["copied"] == TRICKY, got
        assert got["status"].startswith("Program copied"), got
        assert program_from_link(browser.current_url) == TRICKY, browser.current_url
    # a clipboard that refuses: the reader is told to copy it, and the share link is shown
    got = browser.execute_async_script(CLICK_JS, ".crasp-pg-train-colab", False)
    assert got["status"].startswith("Not copied: copy the program from the editor"), got
    shown = browser.find_element(By.CSS_SELECTOR, ".crasp-pg-link")
    assert shown.is_displayed() and program_from_link(shown.get_property("value")) == TRICKY
    # the link the reader may paste instead restores the playground too
    browser.get("about:blank")
    browser.get(page(playground_html("dyck1", "aabbab")) + "#crasp=" + js_encode(TRICKY))
    assert browser.find_element(By.ID, "crasp-pg-program").get_property("value") == TRICKY


def test_without_the_data_the_playground_has_no_train_links(browser, page):  # noqa: F811
    from selenium.webdriver.common.by import By
    browser.get(page('<div class="crasp-playground" data-program="dyck1" data-input="ab"></div>'))
    assert browser.find_elements(By.CSS_SELECTOR, ".crasp-pg-train") == []
    result = browser.execute_script("return document.querySelector('.crasp-pg-result').innerText")
    assert result.startswith("Accepted"), result
    assert json.loads(browser.execute_script("return JSON.stringify(typeof CRASP)")) == "object"


def test_the_c_rasp_chapter_has_the_train_links(browser, site):  # noqa: F811
    """On the built site the chapter's box (a cell's output, written at build time) has the
    links and the minutes, and the playground still runs."""
    from selenium.webdriver.common.by import By
    url, html = site
    browser.get(f"{url}/{next(html.rglob('crasp.html')).relative_to(html)}")
    links = launch_links(TRY_NOTEBOOK)
    boxes = browser.find_elements(By.CSS_SELECTOR, ".crasp-playground")
    assert len(boxes) == 1
    colab = boxes[0].find_element(By.CSS_SELECTOR, ".crasp-pg-train-colab")
    assert colab.get_attribute("href") == links["colab"]
    assert boxes[0].find_element(By.CSS_SELECTOR, ".crasp-pg-train-binder").get_attribute(
        "href") == links["binder"]
    assert "minutes on a CPU" in boxes[0].find_element(By.CSS_SELECTOR, ".crasp-pg-train-help").text
    from lengthgen.crasp.library import program_text
    assert browser.find_element(By.ID, "crasp-pg-program").get_property("value") == \
        program_text("dyck1")
    assert browser.execute_script(
        "return document.querySelector('.crasp-pg-result').innerText").startswith("Accepted")
