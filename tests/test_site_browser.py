"""The built site as a reader sees it: every page loaded in headless Chromium.

The site (built once per session by the `built_site` fixture, from the committed results) is
served on loopback and each page is opened at 1400 px. On every page: no broken image, no
MathJax error and no raw `$` left in the text, no figure drawn twice, every figure and slider
inside a numbered figure with a caption; and moving each slider changes the picture shown.

Needs the Debian packages chromium and chromium-driver (.ci/run installs them) and selenium;
where they are missing the test is skipped with a message saying what to install.
"""
import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
SKIPPED_PAGES = {"search.html", "genindex.html", "prf-prf.html"}  # generated indexes

# The reader-visible text of the page body, without code, rendered math and scripts.
TEXT_JS = """
const main = document.querySelector('main') || document.body;
const copy = main.cloneNode(true);
copy.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, textarea')
    .forEach(e => e.remove());
return copy.innerText;
"""

# Wait for MathJax 3 to finish typesetting (pages without math have no MathJax).
MATHJAX_JS = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done('none'); return; }
MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));
"""

# Each image in the page body: where it is, whether it loaded, whether it sits in a numbered
# figure with a caption.
IMAGES_JS = """
const main = document.querySelector('main') || document.body;
return Array.from(main.querySelectorAll('img')).map(img => {
  const figure = img.closest('figure');
  const caption = figure ? figure.querySelector('figcaption') : null;
  return {src: img.currentSrc || img.src, loaded: img.complete && img.naturalWidth > 0,
          output: !!img.closest('.cell_output, figure, .lengthgen-frame-slider'),
          number: caption ? (caption.querySelector('.caption-number') || {}).textContent || ''
                          : '',
          caption: caption ? caption.innerText : ''};
});
"""


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium")
    if not (CHROMIUM and DRIVER):
        pytest.skip("headless Chromium not available: apt-get install chromium chromium-driver "
                    "(.ci/run does this on CI)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def site(built_site):
    """The URL of the built site, served on loopback for the duration of the module."""
    result, html = built_site
    if result.returncode != 0 or not (html / "index.html").exists():
        pytest.fail("the site did not build (see test_site.py)")
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", html
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def pages(html: Path) -> list[str]:
    return sorted(str(p.relative_to(html)) for p in html.rglob("*.html")
                  if p.name not in SKIPPED_PAGES and "_sources" not in p.parts
                  and "_static" not in p.parts  # the themes' template snippets
                  and p.name != "index.html")


def test_every_page_reads_cleanly(browser, site):
    url, html = site
    problems = []
    checked = pages(html)
    assert any(p.endswith("crasp.html") for p in checked), checked
    for page in checked:
        browser.get(f"{url}/{page}")
        state = browser.execute_async_script(MATHJAX_JS)
        if state.startswith("error"):
            problems.append(f"{page}: MathJax {state}")
        errors = browser.execute_script(
            "return Array.from(document.querySelectorAll('mjx-merror'))"
            ".map(e => e.getAttribute('data-mjx-error') || e.textContent);")
        problems += [f"{page}: MathJax error {e!r}" for e in errors]
        text = browser.execute_script(TEXT_JS)
        for marker in ("$", "\\(", "\\["):
            if marker in text:
                at = text.index(marker)
                problems.append(f"{page}: raw {marker!r} in the text: "
                                f"{text[max(0, at - 60):at + 60]!r}")
        images = browser.execute_script(IMAGES_JS)
        seen = set()
        for image in images:
            name = image["src"][-60:]
            if not image["loaded"]:
                problems.append(f"{page}: broken image {name}")
            if image["src"] in seen:
                problems.append(f"{page}: the same figure is shown twice ({name})")
            seen.add(image["src"])
            if image["output"] and not image["number"].strip():
                problems.append(f"{page}: a figure without a number ({name})")
            elif image["output"] and len(image["caption"]) < 40:
                problems.append(f"{page}: figure {image['number']} has no real caption")
    assert not problems, "\n".join(problems)


def test_every_slider_changes_the_picture(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, html = site
    moved = 0
    for page in pages(html):
        if "lengthgen-frame-slider" not in (html / page).read_text():
            continue
        browser.get(f"{url}/{page}")
        for block in browser.find_elements(By.CSS_SELECTOR, ".lengthgen-frame-slider"):
            assert block.find_elements(By.XPATH, "ancestor::figure//span[@class='caption-number']"), \
                f"{page}: a slider outside a numbered figure"
            image = block.find_element(By.TAG_NAME, "img")
            for slider in block.find_elements(By.CSS_SELECTOR, "input[type=range]"):
                before = image.get_attribute("src")
                at_end = slider.get_attribute("value") == slider.get_attribute("max")
                browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
                slider.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
                after = image.get_attribute("src")
                name = slider.get_attribute("data-name")
                assert after != before, f"{page}: moving slider {name!r} left the picture as it was"
                moved += 1
    assert moved >= 2, "expected the Limit Transformers sliders (period and locality) at least"


# Each figure image in the page body: its natural width (pixels of the PNG) and the width it is
# shown at (CSS px), with the font size of its caption; every table: how wide it is against the
# box that holds it, and whether its caption is cut.
LAYOUT_JS = """
const main = document.querySelector('main') || document.body;
const vw = document.documentElement.clientWidth;
const figures = Array.from(main.querySelectorAll('figure img, .lengthgen-frame-slider img'))
  .map(img => {
    const box = img.getBoundingClientRect();
    // a figure too wide for a phone pans in its own box (lengthgen.viz.book.Picture)
    const edge = (img.closest('.lengthgen-pan') || img).getBoundingClientRect();
    const figure = img.closest('figure');
    const caption = figure ? figure.querySelector('figcaption') : null;
    return {src: (img.currentSrc || img.src).slice(-50), natural: img.naturalWidth,
            shown: box.width, left: edge.left, right: edge.right,
            caption_px: caption ? parseFloat(getComputedStyle(caption).fontSize) : null};
  });
const tables = Array.from(main.querySelectorAll('table')).map(table => {
  const holder = table.parentElement;
  const caption = table.querySelector('caption');
  return {number: caption ? (caption.querySelector('.caption-number') || {}).textContent || ''
                          : '',
          width: table.scrollWidth, room: holder.clientWidth,
          caption_cut: caption ? caption.scrollWidth > caption.clientWidth + 1 ||
                                 caption.getBoundingClientRect().right >
                                 holder.getBoundingClientRect().right + 1 : false};
});
const sliders = Array.from(main.querySelectorAll('.lengthgen-frame-slider')).map(block => {
  const img = block.querySelector('img').getBoundingClientRect();
  const inputs = Array.from(block.querySelectorAll('input')).map(i => i.getBoundingClientRect());
  return {img_right: img.right, img_left: img.left,
          input_right: Math.max(...inputs.map(r => r.right))};
});
const search = Array.from(document.querySelectorAll('.search-button, .search-button-field'))
  .filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
                 return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' &&
                        r.right > 0 && r.left < vw; }).length;
return {figures, tables, sliders, search, vw, page_width: document.documentElement.scrollWidth};
"""


def _layout(browser, url, page):
    browser.get(f"{url}/{page}")
    browser.execute_async_script(MATHJAX_JS)
    browser.execute_script("return Promise.all(Array.from(document.images).map(i => i.decode()"
                           ".catch(() => null)))")
    return browser.execute_script(LAYOUT_JS)


def test_figure_text_is_at_least_caption_size_at_1400px(browser, site):
    """Every figure is drawn with no text under MIN_FONT_PT at DPI (lengthgen.viz.book); shown at
    `shown` of its `natural` pixels, its smallest text is MIN_FONT_PT * DPI / 72 * shown /
    natural CSS px, which must be at least its caption's font size."""
    from lengthgen.viz.book import DPI, MIN_FONT_PT

    url, html = site
    problems, sizes = [], []
    for page in pages(html):
        layout = _layout(browser, url, page)
        for fig in layout["figures"]:
            if not fig["natural"]:
                continue
            on_screen = MIN_FONT_PT * DPI / 72 * min(fig["shown"] / fig["natural"], 1.0)
            sizes.append(on_screen)
            caption = fig["caption_px"] or 14.4
            if on_screen < caption - 0.05:
                problems.append(f"{page}: {fig['src']}: {fig['natural']} px shown at "
                                f"{fig['shown']:.0f} px: text {on_screen:.1f} px < caption "
                                f"{caption:.1f} px")
    assert sizes, "no figures measured"
    assert not problems, "\n".join(problems)


def test_tables_fit_and_one_search_box_at_1400px(browser, site):
    url, html = site
    problems = []
    for page in pages(html):
        layout = _layout(browser, url, page)
        if layout["search"] != 1:
            problems.append(f"{page}: {layout['search']} search boxes visible")
        for table in layout["tables"]:
            name = table["number"].strip() or "a table"
            if table["width"] > table["room"] + 1:
                problems.append(f"{page}: {name} is {table['width']} px wide in "
                                f"{table['room']} px: columns hidden")
            if table["caption_cut"]:
                problems.append(f"{page}: {name}: caption cut")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [420, 360])
def test_nothing_scrolls_sideways_on_a_phone(browser, site, width):
    """On a phone (420 px, and a small one of 360 px) the figures scale to the screen, each
    slider stays beside its picture, every table fits its column (no column behind a scroll
    bar, no caption cut) and the page itself is no wider than the screen."""
    url, html = site
    problems = []
    browser.set_window_size(width, 900)
    try:
        for page in pages(html):
            layout = _layout(browser, url, page)
            vw = layout["vw"]
            for fig in layout["figures"]:
                if fig["right"] > vw + 1 or fig["left"] < -1:
                    problems.append(f"{page}: {fig['src']} reaches {fig['right']:.0f} px of {vw}")
            for slider in layout["sliders"]:
                if slider["img_right"] > vw + 1 or slider["input_right"] > vw + 1:
                    problems.append(f"{page}: a slider or its picture is off the screen")
            for table in layout["tables"]:
                name = table["number"].strip() or "a table"
                if table["width"] > table["room"] + 1:
                    problems.append(f"{page}: {name} is {table['width']} px wide in "
                                    f"{table['room']} px at {vw} px: it scrolls sideways")
                if table["caption_cut"]:
                    problems.append(f"{page}: {name}: caption cut at {vw} px")
            if layout["page_width"] > vw + 1:
                problems.append(f"{page}: the page is {layout['page_width']} px wide at {vw} px")
    finally:
        browser.set_window_size(1400, 1000)
    assert not problems, "\n".join(problems)
