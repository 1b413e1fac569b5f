"""The built site as a reader sees it: every page loaded in headless Chromium.

The site (built once per session by the `built_site` fixture, from the committed results) is
served on loopback and each page is opened at 1400 px. On every page: no broken image, no
MathJax error and no raw `$` left in the text, no figure drawn twice, every figure and slider
inside a numbered figure with a caption; and moving each slider changes the picture shown.

Then each page is measured at 1400, 420 and 360 px (one script call per page and width, the
`measured` fixture), in the theme's light and dark modes: no table cell breaks a word or a
number, a wide table scrolls in its own box and the page never sideways; no display equation is
clipped or needs to scroll (360 px included); every text in tables, the playground,
admonitions and the book's coloured cells has contrast at least 4.5:1 (and a dark system
opens the dark mode). A long equation planted in a page fails the equation check. The search
page's summaries show no raw TeX.

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


def step_sliders(browser, block):
    """Move each slider of a frame slider one step (left at its end, else right). Yields
    (slider, its image, the image's src and alt before the step) after each move."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    image = block.find_element(By.TAG_NAME, "img")
    for slider in block.find_elements(By.CSS_SELECTOR, "input[type=range]"):
        before = image.get_attribute("src"), image.get_attribute("alt")
        at_end = slider.get_attribute("value") == slider.get_attribute("max")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
        slider.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
        yield slider, image, before


def test_every_slider_changes_the_picture(browser, site):
    from selenium.webdriver.common.by import By

    url, html = site
    moved = 0
    for page in pages(html):
        if "lengthgen-frame-slider" not in (html / page).read_text():
            continue
        browser.get(f"{url}/{page}")
        for block in browser.find_elements(By.CSS_SELECTOR, ".lengthgen-frame-slider"):
            assert block.find_elements(By.XPATH, "ancestor::figure//span[@class='caption-number']"), \
                f"{page}: a slider outside a numbered figure"
            for slider, image, (before, _) in step_sliders(browser, block):
                name = slider.get_attribute("data-name")
                assert image.get_attribute("src") != before, \
                    f"{page}: moving slider {name!r} left the picture as it was"
                moved += 1
    assert moved >= 2, "expected the Limit Transformers sliders (period and locality) at least"


# ----- the reader's layout: every page at three widths, in light and dark mode ---------------------
WIDTHS = (1400, 420, 360)    # a desktop, a phone, a small phone
MIN_CONTRAST = 4.5           # WCAG AA for text

# One call per page and width measures everything below; each part is a function of the page.
# Figures: each image's natural and shown width, and its caption's font size. Sliders: whether a
# slider and its picture stay on the screen. Search: how many search boxes are visible.
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
return {figures, sliders, search, vw, page_width: document.documentElement.scrollWidth};
"""

# Tables: a token (a run of text up to a space, or through a hyphen or slash) is broken when its
# piece of text lies on more than one line; a table wider than its box must sit in a box that
# scrolls sideways, and its caption must stay inside the box's visible width.
TABLES_JS = """
const main = document.querySelector('main') || document.body;
const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const range = document.createRange();
const onLines = rects => {           // how many lines the rectangles of one range lie on
  rects = Array.from(rects).filter(r => r.width > 0 && r.height > 0);
  if (!rects.length) return 0;
  const bottom = Math.min(...rects.map(r => r.bottom));
  return rects.some(r => r.top >= bottom - 1) ? 2 : 1;
};
function brokenTokens(cell) {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    if (node.parentElement.closest('mjx-container, script, style')) continue;
    const re = /[^\\s\\-\\/\\u2010-\\u2014]+[\\-\\/\\u2010-\\u2014]*/g;
    for (let m; (m = re.exec(node.data));) {
      if (m[0].length < 2) continue;
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      if (onLines(range.getClientRects()) > 1) broken.push(m[0]);
    }
  }
  for (const math of cell.querySelectorAll('mjx-container'))
    if (onLines(math.getClientRects()) > 1) broken.push(math.getAttribute('aria-label') || 'math');
  return broken;
}
return Array.from(main.querySelectorAll('table')).map(table => {
  const holder = table.parentElement;
  const caption = table.querySelector('caption');
  const box = holder.getBoundingClientRect();
  const cells = Array.from(table.querySelectorAll('td, th')).map(brokenTokens)
    .filter(b => b.length);
  let captionOut = false;
  if (caption) {
    const r = caption.getBoundingClientRect();
    captionOut = r.right > box.left + holder.clientWidth + 1 || r.left < box.left - 1 ||
                 caption.scrollWidth > caption.clientWidth + 1;
  }
  return {number: caption ? (caption.querySelector('.caption-number') || {}).textContent || ''
                          : (table.id || 'a table'),
          width: Math.max(table.scrollWidth, table.getBoundingClientRect().width),
          room: holder.clientWidth, scrolls: scrolls(holder) || scrolls(table),
          right: box.right, cells: cells.length, tokens: cells.flat().slice(0, 4),
          caption_out: captionOut};
});
"""

# Display equations: an equation wider than its box is clipped unless the box scrolls; no
# equation's box may reach past the main column.
EQUATIONS_JS = """
const article = document.querySelector('article.bd-article') || document.querySelector('main');
const a = article.getBoundingClientRect(), pad = getComputedStyle(article);
const column = {left: a.left + parseFloat(pad.paddingLeft) - 1,
                right: a.right - parseFloat(pad.paddingRight) + 1};
const clipsX = e => !['visible', 'auto', 'scroll'].includes(getComputedStyle(e).overflowX);
return Array.from(article.querySelectorAll('mjx-container[display="true"]')).map(eq => {
  const box = eq.getBoundingClientRect();
  const math = eq.firstElementChild ? eq.firstElementChild.getBoundingClientRect() : box;
  let clipped = eq.scrollWidth > eq.clientWidth + 1 && clipsX(eq);
  for (let e = eq.parentElement; e && e !== article && !clipped; e = e.parentElement)
    clipped = e.scrollWidth > e.clientWidth + 1 && clipsX(e) && math.right > e.getBoundingClientRect().right + 1;
  return {tex: (eq.closest('.math') || eq).getAttribute('id') ||
               ((eq.previousElementSibling || {}).textContent || '').slice(0, 40),
          width: Math.round(math.width), room: Math.round(column.right - column.left),
          clipped, scrolls: eq.scrollWidth > eq.clientWidth + 1 && !clipsX(eq),
          outside: box.right > column.right || box.left < column.left};
});
"""

# Text contrast (WCAG 2): every visible piece of text in a table, in the playground, in an
# admonition and in the book's coloured elements, against the colour behind it (the element's
# background and its ancestors', composed), in each mode of the theme; the lowest ratios.
CONTRAST_JS = """
const SELECTORS = arguments_scope ||
  'main table, main table *, .crasp-playground, .crasp-playground *, ' +
  'main .admonition, main .admonition *, main [class*="lengthgen-"], main [class*="lengthgen-"] *';
const parse = c => { const m = c.match(/[\\d.]+/g) || [0, 0, 0, 0];
  return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
const over = (top, under) => [0, 1, 2].map(k => top[k] * top[3] + under[k] * (1 - top[3]))
  .concat([1]);
const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
  return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
function behind(e) {
  const layers = [];
  for (let x = e; x; x = x.parentElement) {
    const c = parse(getComputedStyle(x).backgroundColor);
    if (c[3] > 0) layers.push(c);
    if (c[3] >= 1) break;
  }
  let colour = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
  while (layers.length) colour = over(layers.pop(), colour);
  return colour;
}
function hasText(e) {
  if (e.tagName === 'INPUT') return ['text', 'search', 'number', 'url', ''].includes(e.type);
  if (['TEXTAREA', 'SELECT', 'BUTTON'].includes(e.tagName)) return true;
  if (e.tagName === 'MJX-CONTAINER') return true;
  return Array.from(e.childNodes).some(n => n.nodeType === 3 && n.data.trim());
}
function measure(mode) {
  document.documentElement.dataset.theme = mode;
  const seen = [];
  for (const e of document.querySelectorAll(SELECTORS)) {
    if (e.closest('mjx-container') && e.tagName !== 'MJX-CONTAINER') continue;
    if (!hasText(e)) continue;
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    if (r.width <= 1 || r.height <= 1 || s.visibility !== 'visible' ||
        !e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const bg = behind(e), fg = over(parse(s.color), bg);
    const L1 = lum(fg), L2 = lum(bg);
    const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
    seen.push({ratio, what: e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ?
               '.' + String(e.className).trim().split(/\\s+/).join('.') : ''),
               text: (e.value || e.textContent || '').trim().slice(0, 30), fg: s.color,
               bg: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')'});
  }
  seen.sort((x, y) => x.ratio - y.ratio);
  const low = seen.filter(x => x.ratio < arguments_min);
  return {count: seen.length, min: seen.length ? seen[0].ratio : null, failing: low.length,
          low: low.slice(0, 6)};
}
const still = document.createElement('style');       // no colour transitions while measuring
still.textContent = '*, *::before, *::after { transition: none !important; }';
document.head.append(still);
const was = document.documentElement.dataset.theme;
const modes = {light: measure('light'), dark: measure('dark')};
document.documentElement.dataset.theme = was;
still.remove();
return modes;
"""

MEASURE_JS = ("const arguments_min = arguments[0], arguments_scope = null;\n"
              + "\n".join(f"const {name} = (() => {{ {js} }})();"
                          for name, js in (("layout", LAYOUT_JS), ("tables", TABLES_JS),
                                           ("equations", EQUATIONS_JS),
                                           ("contrast", CONTRAST_JS)))
              + "\nreturn Object.assign(layout, {tables, equations, contrast});")


# Folded content is measured too: every <details> opened, every toggled block (solutions) shown.
UNFOLD_JS = """
document.querySelectorAll('main details').forEach(d => { d.open = true; });
document.querySelectorAll('main .toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
"""


def _measure(browser, width: int) -> dict:
    browser.set_window_size(width, 1000)
    return browser.execute_script(MEASURE_JS, MIN_CONTRAST)


@pytest.fixture(scope="module")
def measured(browser, site):
    """{width: {page: what MEASURE_JS measured}}: each page is loaded once, at 1400 px, its
    folded parts opened, and measured at each width of WIDTHS in turn (the window narrowed, the
    page not reloaded)."""
    url, html = site
    out = {width: {} for width in WIDTHS}
    try:
        for page in pages(html):
            browser.set_window_size(WIDTHS[0], 1000)
            browser.get(f"{url}/{page}")
            browser.execute_async_script(MATHJAX_JS)
            browser.execute_script("return Promise.all(Array.from(document.images)"
                                   ".map(i => i.decode().catch(() => null)))")
            browser.execute_script(UNFOLD_JS)
            for width in WIDTHS:
                out[width][page] = _measure(browser, width)
    finally:
        browser.set_window_size(1400, 1000)
    return out


def table_problems(page: str, tables: list, width: int) -> list[str]:
    problems = []
    for table in tables:
        name = table["number"].strip()
        if table["cells"]:
            problems.append(f"{page} at {width} px: {name}: {table['cells']} cell(s) break a "
                            f"token across lines, e.g. {table['tokens']}")
        if table["width"] > table["room"] + 1 and not table["scrolls"]:
            problems.append(f"{page} at {width} px: {name} is {table['width']:.0f} px wide in "
                            f"{table['room']} px and its box does not scroll")
        if table["caption_out"]:
            problems.append(f"{page} at {width} px: {name}: the caption reaches past its box")
    return problems


# Widths at which every display equation must fit without scrolling (all of WIDTHS, at full
# size: tests/test_site_phone.py checks that none is shrunk on a phone); below them an equation
# may scroll sideways in its own box, but never be cut off.
EQUATIONS_FIT_FROM = 360


def equation_problems(page: str, equations: list, width: int) -> list[str]:
    problems = []
    for eq in equations:
        where = f"{page} at {width} px: a display equation {eq['width']} px wide (near " \
                f"{eq['tex']!r})"
        if eq["clipped"] or eq["outside"]:
            problems.append(f"{where} is {'clipped' if eq['clipped'] else 'wider than the column'}")
        elif eq["scrolls"] and width >= EQUATIONS_FIT_FROM:
            problems.append(f"{where} scrolls in {eq['room']} px: break it into aligned lines")
    return problems


def contrast_problems(page: str, contrast: dict, width: int) -> list[str]:
    return [f"{page} at {width} px, {mode} mode ({found['failing']} texts below): "
            f"{low['what']} {low['text']!r}: {low['fg']} on {low['bg']} is {low['ratio']:.2f}:1"
            for mode, found in contrast.items() for low in found["low"]]


@pytest.mark.parametrize("width", WIDTHS)
def test_tables_keep_their_tokens_and_scroll_in_their_own_box(measured, width):
    """No table cell breaks a word or a number across lines ("ve/rd/ic/t"); a table wider than
    the column scrolls sideways inside its own box, with its caption in view; the page itself
    never scrolls sideways."""
    problems = []
    for page, found in measured[width].items():
        problems += table_problems(page, found["tables"], width)
        if found["page_width"] > found["vw"] + 1:
            problems.append(f"{page}: the page is {found['page_width']} px wide at {found['vw']} px")
    assert sum(len(found["tables"]) for found in measured[width].values()) > 20
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_display_equation_is_clipped(measured, width):
    """No display equation is cut off or reaches past the main column, and at every width of
    WIDTHS each one fits its box (long ones are broken into aligned lines)."""
    problems = []
    for page, found in measured[width].items():
        problems += equation_problems(page, found["equations"], width)
    assert sum(len(found["equations"]) for found in measured[width].values()) >= 10
    assert not problems, "\n".join(problems)


# A display equation planted in a page, typeset by the page's MathJax; arguments: its TeX and a
# style for its box ('' for the site's own).
PLANT_JS = """
const [tex, style, done] = arguments;
const div = document.createElement('div');
div.className = 'math notranslate nohighlight';
div.textContent = '\\\\[' + tex + '\\\\]';
(document.querySelector('article.bd-article section p') || document.body).after(div);
MathJax.typesetPromise([div]).then(() => {
  const eq = div.querySelector('mjx-container');
  if (style) eq.setAttribute('style', style);
  done(!!eq);
}).catch(e => done('error: ' + e));
"""


def test_the_equation_check_catches_a_long_equation(browser, site):
    """A long equation planted in the introduction fails the check at 420 px: with the site's
    CSS it scrolls (and must be broken into lines), and in a box that hides overflow (as the
    theme's boxes may) it is clipped."""
    url, _ = site
    tex = " + ".join(f"\\alpha_{{{k}}} x_{{{k}}}^{{(l-1)}}" for k in range(12))
    found = {}
    try:
        browser.set_window_size(420, 1000)
        for name, style in (("site", ""), ("hidden", "overflow: hidden")):
            browser.get(f"{url}/book/intro.html")
            browser.execute_async_script(MATHJAX_JS)
            assert browser.execute_async_script(PLANT_JS, tex, style) is True
            found[name] = browser.execute_script(EQUATIONS_JS)
    finally:
        browser.set_window_size(1400, 1000)
    planted = [eq for eq in found["site"] if eq["width"] > 600]
    assert len(planted) == 1 and planted[0]["scrolls"], found["site"]
    assert any("break it into aligned lines" in p
               for p in equation_problems("intro", found["site"], 420))
    assert any("is clipped" in p for p in equation_problems("intro", found["hidden"], 420))
    assert len(equation_problems("intro", found["site"], 420)) == 1   # the rest of the page fits


@pytest.mark.parametrize("width", WIDTHS)
def test_text_contrast_in_light_and_dark_mode(measured, width):
    """Text in tables, the playground, admonitions and the book's coloured cells has contrast at
    least MIN_CONTRAST against what is behind it, in the theme's light and dark modes."""
    problems, lowest = [], {}
    for page, found in measured[width].items():
        problems += contrast_problems(page, found["contrast"], width)
        for mode, seen in found["contrast"].items():
            if seen["min"] is not None:
                lowest[mode] = min(lowest.get(mode, 99), seen["min"])
    print(f"lowest contrast at {width} px: " +
          ", ".join(f"{mode} {ratio:.2f}:1" for mode, ratio in lowest.items()))
    assert set(lowest) == {"light", "dark"}
    assert not problems, "\n".join(problems)


def test_figure_text_is_at_least_caption_size_at_1400px(measured):
    """Every figure is drawn with no text under MIN_FONT_PT at DPI (lengthgen.viz.book); shown at
    `shown` of its `natural` pixels, its smallest text is MIN_FONT_PT * DPI / 72 * shown /
    natural CSS px, which must be at least its caption's font size."""
    from lengthgen.viz.layout import DPI, MIN_FONT_PT

    problems, sizes = [], []
    for page, layout in measured[1400].items():
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


@pytest.mark.parametrize("width", WIDTHS)
def test_one_search_box_and_everything_on_the_screen(measured, width):
    """One search box is visible; figures and sliders stay on the screen (on a phone they scale
    down to it)."""
    problems = []
    for page, layout in measured[width].items():
        vw = layout["vw"]
        if layout["search"] != 1:
            problems.append(f"{page}: {layout['search']} search boxes visible at {vw} px")
        for fig in layout["figures"]:
            if fig["right"] > vw + 1 or fig["left"] < -1:
                problems.append(f"{page}: {fig['src']} reaches {fig['right']:.0f} px of {vw}")
        for slider in layout["sliders"]:
            if slider["img_right"] > vw + 1 or slider["input_right"] > vw + 1:
                problems.append(f"{page}: a slider or its picture is off the screen at {vw} px")
    assert not problems, "\n".join(problems)


# CONTRAST_JS alone; arguments: the lowest contrast allowed, and a CSS selector of the elements to
# measure (null: those of every page)
CONTRAST_ONLY_JS = "const arguments_min = arguments[0], arguments_scope = arguments[1];\n" + \
    CONTRAST_JS


def test_a_dark_system_gets_the_dark_mode(browser, site):
    """With the reader's system set to dark (prefers-color-scheme, emulated) and no choice
    stored, the theme opens in dark mode; the C-RASP page, the one with the most colours, keeps
    every text above MIN_CONTRAST in it."""
    url, _ = site
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        browser.get(f"{url}/book/crasp.html")
        browser.execute_script("localStorage.clear()")
        browser.get(f"{url}/book/crasp.html")
        browser.execute_async_script(MATHJAX_JS)
        assert browser.execute_script("return document.documentElement.dataset.theme") == "dark"
        found = browser.execute_script(CONTRAST_ONLY_JS, MIN_CONTRAST)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert found["dark"]["count"] > 100
    assert not found["dark"]["low"], found["dark"]["low"]


# The search page: the summaries shown under the results, once the search has finished (Sphinx
# shows the results one by one, then says so) and every summary has arrived.
SEARCH_JS = """
const done = arguments[arguments.length - 1];
const started = Date.now();
(function wait() {
  const results = document.querySelectorAll('#search-results ul.search li');
  const summaries = document.querySelectorAll('#search-results ul.search li p.context');
  const status = document.querySelector('#search-results p.search-summary');
  const finished = status && /finished|did not match/.test(status.textContent);
  if ((finished && summaries.length >= results.length) || Date.now() - started > 20000)
    done({results: results.length, summaries: Array.from(summaries).map(p => p.textContent),
          plain: typeof lengthgenTexToText === 'function' ?
                 lengthgenTexToText('\\\\(\\\\mathrm{Dyck}_{1} \\\\le \\\\{a^n b^n\\\\}\\\\)') : null});
  else setTimeout(wait, 100);
})();
"""


def test_search_summaries_show_no_raw_math(browser, site):
    """The search page's summaries are cut from the pages' HTML, where math is still TeX;
    book/_static/lengthgen_search.js writes it as text, so no summary shows `\\(N\\)`."""
    url, html = site
    assert "lengthgen_search.js" in (html / "search.html").read_text()
    assert "lengthgen_search.js" not in (html / "book" / "intro.html").read_text()
    browser.get(f"{url}/search.html?q=length+generalization")
    found = browser.execute_async_script(SEARCH_JS)
    assert found["plain"] == "Dyck_1 ≤ {a^n b^n}"
    assert found["results"] >= 5 and len(found["summaries"]) >= 5, found
    raw = [s for s in found["summaries"] if any(m in s for m in ("\\(", "\\)", "\\[", "$$"))]
    assert not raw, raw[:3]


# On paper (the book's PDF, tools/book_pdf.py) nothing scrolls: the print rule of
# book/_static/lengthgen.css sets tables smaller. A4 less Chromium's default margins is 718 CSS
# px wide; each page is laid out in print media at that width, its folded parts opened (as the
# PDF prints them), and measured: no table wider than the page's column or breaking a token,
# and every figure shown in its column rendition, not the phone's.
PRINT_PX = 718
PRINTED_FIGURES_JS = """
const main = document.querySelector('main') || document.body;
return Array.from(main.querySelectorAll('picture img')).filter(img => {
  const narrow = img.parentElement.querySelector('source');
  return narrow && img.currentSrc && img.currentSrc !== img.src;
}).map(img => img.alt.slice(0, 60));
"""


def test_printed_pages_show_whole_tables_and_the_column_figures(browser, site):
    url, html = site
    problems, tables = [], 0
    browser.set_window_size(PRINT_PX, 1000)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        for page in pages(html):
            browser.get(f"{url}/{page}")
            browser.execute_async_script(MATHJAX_JS)
            browser.execute_script("return Promise.all(Array.from(document.images)"
                                   ".map(i => i.decode().catch(() => null)))")
            browser.execute_script(UNFOLD_JS)
            found = browser.execute_script(TABLES_JS)
            tables += len(found)
            # on paper a table is shown whole: 2 px of slack for rounding, no scrolling box
            for table in found:
                table["scrolls"] = False
                table["room"] += 2
            problems += table_problems(page, found, PRINT_PX)
            problems += [f"{page}: printed with the phone's rendition: {alt!r}"
                         for alt in browser.execute_script(PRINTED_FIGURES_JS)]
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        browser.set_window_size(1400, 1000)
    assert tables > 20
    assert not problems, "\n".join(problems)


# The captions of the tables folded away in a page (dropdown admonitions).
FOLDED_CAPTIONS_JS = """
return Array.from(document.querySelectorAll('main .admonition.dropdown table caption'))
  .map(c => c.innerText.replace(/\\s+/g, ' ').trim());
"""


def test_a_printed_page_shows_its_folded_tables(browser, site):
    """The chapters fold their tables of numbers into dropdowns; printed (as the book's PDF is,
    by Chromium), a page opens them: each folded table's caption is in the printed text."""
    pypdf = pytest.importorskip("pypdf")
    import base64
    import io
    import re

    url, _ = site
    browser.set_window_size(1400, 1000)
    folded = 0
    for page in ("book/communication.html", "book/quantitative_bounds.html"):
        browser.get(f"{url}/{page}")
        browser.execute_async_script(MATHJAX_JS)
        captions = browser.execute_script(FOLDED_CAPTIONS_JS)
        printed = pypdf.PdfReader(io.BytesIO(base64.b64decode(browser.print_page())))
        text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in printed.pages))
        for caption in captions:
            words = re.sub(r"\s+", " ", caption.split(":", 1)[-1]).strip()[:40]
            assert words in text, f"{page}: the folded table {caption[:60]!r} is not printed"
        folded += len(captions)
    assert folded >= 2
