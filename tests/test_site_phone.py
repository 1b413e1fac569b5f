"""The built site on a phone, in headless Chromium: wide tables as cards, display equations at a
readable size, and only the phone's renditions of the figures downloaded.

* A table of many columns (book/_ext/lengthgen_cards.py: the APE vs NoPE chapter's cell tables
  have 13) is one card per row up to 620 px: at 360 px it needs no sideways box, and each of its
  cells is a line or two after its column's name (in a sideways box its rows were about 120 px
  tall, a stack of one-word lines per cell). On paper it is a card per row too
  (test_site_browser's printed-page test: 13 columns did not fit an A4 page).
* No symbol of a display equation is under MIN_MATH_PX at 360 px (they were set at 90%, and a
  script on a script at half that: 7.2 px).
* A page opened at 360 px downloads the phone's rendition of each figure that has one and never
  the column's; at 1400 px the reverse.

Uses the built site and the browser of test_site_browser.py (skipped where Chromium is not
installed); the first test needs neither.
"""
import importlib.util
from pathlib import Path

import pytest
from test_site_browser import MATHJAX_JS, browser, pages, site  # noqa: F401 (fixtures)

# the book's Sphinx extension (book/_ext, not on the path), loaded from its file
_spec = importlib.util.spec_from_file_location(
    "lengthgen_cards", Path(__file__).resolve().parents[1] / "book" / "_ext" / "lengthgen_cards.py")
lengthgen_cards = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lengthgen_cards)

PHONE = 360
MIN_MATH_PX = 11.0
CELL_TABLES = ("tab-huang-algorithmic", "tab-huang-languages")
MAX_CELL_LINES = 3      # a card's field: its column's name and value, on at most this many lines


def _table(columns: int, header_rows: int = 1) -> str:
    head = "".join(f'<tr class="row-odd">' + "".join(
        f'<th class="head"><p>col "{k}" &lt;{r}&gt;</p></th>' for k in range(columns)) + "</tr>"
        for r in range(header_rows))
    body = "<tr>" + "".join(f"<td><p>v{k}</p></td>" for k in range(columns)) + "</tr>"
    return (f'<table class="table" id="t"><caption>c</caption><thead>{head}</thead>'
            f"<tbody>{body}{body}</tbody></table>")


def test_only_tables_of_many_columns_become_cards():
    wide = lengthgen_cards.as_cards(_table(lengthgen_cards.CARD_COLUMNS))
    assert wide.startswith('<table class="lengthgen-cards table" id="t">')
    assert wide.count('<td data-label="') == 2 * lengthgen_cards.CARD_COLUMNS
    assert '<td data-label="col &quot;3&quot; &lt;0&gt;"><p>v3</p></td>' in wide   # escaped
    assert "data-label" not in wide.split("<tbody>")[0]      # the header is left as it is
    narrow = _table(lengthgen_cards.CARD_COLUMNS - 1)
    assert lengthgen_cards.as_cards(narrow) == narrow
    two_rows = _table(lengthgen_cards.CARD_COLUMNS, header_rows=2)   # no one name per column
    assert lengthgen_cards.as_cards(two_rows) == two_rows
    bare = _table(lengthgen_cards.CARD_COLUMNS).replace(' class="table"', "")
    assert lengthgen_cards.as_cards(bare).startswith('<table class="lengthgen-cards" id="t">')


# The cell tables: whether each fits its box, and per body cell its height in lines of its text
# and the name shown before it (the ::before content); the rows' heights.
CELL_TABLES_JS = """
return arguments[0].map(id => {
  const table = document.getElementById(id);
  if (!table) return {id, missing: true};
  const box = table.parentElement;
  const names = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
  const cells = Array.from(table.querySelectorAll('tbody tr')).flatMap(tr =>
    Array.from(tr.children).map((td, k) => {
      const style = getComputedStyle(td);
      const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
      const before = getComputedStyle(td, '::before').content;
      return {k, name: names[k], lines: td.getBoundingClientRect().height / line,
              shown: style.display !== 'none', before};
    }));
  const rows = Array.from(table.querySelectorAll('tbody tr'))
    .map(tr => tr.getBoundingClientRect().height);
  return {id, width: table.scrollWidth, room: box.clientWidth, header: getComputedStyle(
            table.querySelector('thead')).display, display: getComputedStyle(table).display,
          cells, rows};
});
"""


def _open(browser, url, page, width):  # noqa: F811 (the fixture, passed in)
    browser.set_window_size(width, 1000)
    browser.get(f"{url}/{page}")
    browser.execute_async_script(MATHJAX_JS)


def test_cell_tables_are_cards_on_a_phone(browser, site):  # noqa: F811
    """At 360 px the APE vs NoPE cell tables fit the column without a sideways box; each cell
    (but a card's title) says its column's name, and none is more than MAX_CELL_LINES lines
    tall. At 1400 px they are tables with their header row."""
    url, _ = site
    try:
        _open(browser, url, "book/ape_vs_nope.html", PHONE)
        phone = browser.execute_script(CELL_TABLES_JS, list(CELL_TABLES))
        _open(browser, url, "book/ape_vs_nope.html", 1400)
        desktop = browser.execute_script(CELL_TABLES_JS, list(CELL_TABLES))
    finally:
        browser.set_window_size(1400, 1000)
    problems = []
    for table in phone:
        assert not table.get("missing"), f"no table {table['id']} on the page"
        assert len(table["rows"]) >= 4
        print(f"{table['id']} at {PHONE} px: {table['width']} px in {table['room']}; rows "
              f"{min(table['rows']):.0f}-{max(table['rows']):.0f} px; tallest cell "
              f"{max(c['lines'] for c in table['cells']):.1f} lines")
        if table["width"] > table["room"] + 1:
            problems.append(f"{table['id']}: {table['width']} px wide in {table['room']} px")
        tall = [c for c in table["cells"] if c["shown"] and c["lines"] > MAX_CELL_LINES + 0.2]
        if tall:
            problems.append(f"{table['id']}: {len(tall)} cells over {MAX_CELL_LINES} lines, "
                            f"e.g. {tall[0]['name']!r} at {tall[0]['lines']:.1f}")
        unnamed = [c["name"] for c in table["cells"] if c["k"] > 0 and c["shown"]
                   and c["name"] not in c["before"]]
        if unnamed:
            problems.append(f"{table['id']}: {len(unnamed)} cells do not say their column, "
                            f"e.g. {unnamed[0]!r}")
    for table in desktop:
        if table["display"] != "table" or table["header"] == "none":
            problems.append(f"{table['id']} at 1400 px is not a table with its header")
        if any(c["before"] not in ("none", "normal") for c in table["cells"]):
            problems.append(f"{table['id']} at 1400 px shows column names in its cells")
    assert not problems, "\n".join(problems)


# The smallest font size of a visible character in each display equation.
MATH_SIZES_JS = """
return Array.from(document.querySelectorAll('article mjx-container[display="true"]')).map(eq => {
  let least = Infinity;
  for (const c of eq.querySelectorAll('mjx-c')) {
    const r = c.getBoundingClientRect();
    if (r.width > 0 && r.height > 0)
      least = Math.min(least, parseFloat(getComputedStyle(c).fontSize));
  }
  const item = window.MathJax && MathJax.startup.document.getMathItemsWithin(eq)[0];
  return {px: least, tex: item ? item.math.trim().slice(0, 70) : ''};
});
"""


def test_display_equations_stay_readable_on_a_phone(browser, site):  # noqa: F811
    """At 360 px no character of a display equation, scripts included, is under MIN_MATH_PX:
    equations are not shrunk to fit, and none has a script on a script (MathJax sets those at
    half size)."""
    url, html = site
    problems, sizes = [], []
    try:
        for page in pages(html):
            _open(browser, url, page, PHONE)
            for eq in browser.execute_script(MATH_SIZES_JS):
                if eq["px"] is None or eq["px"] == float("inf"):
                    continue
                sizes.append(eq["px"])
                if eq["px"] < MIN_MATH_PX:
                    problems.append(f"{page}: {eq['px']:.1f} px in {eq['tex']!r}")
    finally:
        browser.set_window_size(1400, 1000)
    assert len(sizes) >= 10
    print(f"smallest symbol of a display equation at {PHONE} px: {min(sizes):.1f} px")
    assert not problems, "\n".join(problems)


# The figure files a page has fetched, and those its <picture>s offer: the phone's (a <source>)
# and the column's (the <img>), as absolute URLs.
FETCHED_JS = """
const abs = u => new URL(u, location.href).href;
const narrow = [], wide = [];
for (const picture of document.querySelectorAll('main picture')) {
  const source = picture.querySelector('source'), img = picture.querySelector('img');
  if (!source || !img) continue;
  narrow.push(abs(source.getAttribute('srcset')));
  wide.push(abs(img.getAttribute('src')));
}
const images = performance.getEntriesByType('resource')
  .filter(e => e.name.includes('/_images/'));
return {narrow, wide, fetched: images.map(e => e.name),
        bytes: images.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0)};
"""


@pytest.mark.parametrize("width", [PHONE, 1400])
def test_a_screen_fetches_only_its_own_renditions(browser, site, width):  # noqa: F811
    """With the browser's cache off, a page opened at 360 px fetches the phone's rendition of
    each figure that has one and never the column's; at 1400 px only the column's."""
    url, html = site
    problems, counted = [], {"own": 0, "other": 0, "bytes": 0}
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        for page in pages(html):
            if "<picture" not in (html / page).read_text(encoding="utf-8"):
                continue
            _open(browser, url, page, width)
            browser.execute_script("return Promise.all(Array.from(document.images)"
                                   ".map(i => i.decode().catch(() => null)))")
            found = browser.execute_script(FETCHED_JS)
            own, other = (found["narrow"], found["wide"]) if width == PHONE else \
                (found["wide"], found["narrow"])
            fetched = set(found["fetched"])
            wrong = fetched & (set(other) - set(own))
            counted["own"] += len(fetched & set(own))
            counted["other"] += len(wrong)
            counted["bytes"] += found["bytes"]
            if wrong:
                problems.append(f"{page} at {width} px fetched {len(wrong)} rendition(s) meant "
                                f"for the other screen, e.g. {sorted(wrong)[0][-40:]}")
    finally:
        browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
        browser.set_window_size(1400, 1000)
    print(f"at {width} px: {counted['own']} renditions for this screen fetched, "
          f"{counted['other']} for the other; {counted['bytes'] / 1e6:.2f} MB of images in all")
    assert counted["own"] >= 10
    assert not problems, "\n".join(problems)
