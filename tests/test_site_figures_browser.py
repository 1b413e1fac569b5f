"""The book's figures as a reader sees them in headless Chromium: text in them readable on a
phone, and alt texts that say what they show.

Every figure and slider frame is drawn twice (lengthgen.viz.book.picture): for the column, and
for a phone's narrower column, which a <picture> serves on small screens. Each image carries
the height of its smallest text in its own pixels (data-text-px); shown at `shown` of its
`natural` pixels, that text is data-text-px * shown / natural CSS px on screen. At 420 px (and
at 360 px) it must be at least MIN_TEXT_PX.

Uses the built site and the browser of test_site_browser.py (skipped where Chromium is not
installed).
"""
import re

import pytest
from test_site_browser import (MATHJAX_JS, browser, pages, site,  # noqa: F401 (fixtures)
                               step_sliders)

MIN_TEXT_PX = 11.0
GENERIC = {"", "figure", "figure frame", "frame", "image", "img", "picture", "plot", "png",
           "graph", "chart"}

# Each figure image in the page body: the rendition shown (phone's or column's), the size of its
# smallest text on screen, and its alt text.
FIGURES_JS = """
const main = document.querySelector('main') || document.body;
return Array.from(main.querySelectorAll('figure img, .lengthgen-frame-slider img')).map(img => {
  const box = img.getBoundingClientRect();
  const src = img.currentSrc || img.src;
  const source = img.parentElement.tagName === 'PICTURE' ?
      img.parentElement.querySelector('source') : null;
  const narrow = !!(source && source.srcset &&
                    new URL(source.srcset, location.href).href === src);
  const own = parseFloat((narrow ? source : img).dataset.textPx);
  const figure = img.closest('figure');
  const number = figure ? (figure.querySelector('.caption-number') || {}).textContent || '' : '';
  return {number: number.trim(), src: src.slice(-40), natural: img.naturalWidth,
          shown: box.width, narrow: narrow, has_narrow: !!source,
          text: isNaN(own) ? null : own * box.width / img.naturalWidth, alt: img.alt};
});
"""


def _figures(browser, url, page):  # noqa: F811 (the fixture, passed in)
    browser.get(f"{url}/{page}")
    browser.execute_async_script(MATHJAX_JS)
    browser.execute_script("return Promise.all(Array.from(document.images).map(i => i.decode()"
                           ".catch(() => null)))")
    return browser.execute_script(FIGURES_JS)


@pytest.mark.parametrize("width", [420, 360])
def test_figure_text_is_readable_on_a_phone(browser, site, width):  # noqa: F811
    """At 420 px (and 360 px) every figure and slider shows the phone's rendition, and its
    smallest text is at least MIN_TEXT_PX on screen (the column's rendition, scaled down to
    the phone's column, showed it at about 7 px)."""
    url, html = site
    problems, sizes = [], []
    browser.set_window_size(width, 900)
    try:
        for page in pages(html):
            for fig in _figures(browser, url, page):
                name = f"{page}: {fig['number'] or fig['src']}"
                if fig["text"] is None:
                    problems.append(f"{name}: the image does not say how large its text is "
                                    f"(not drawn by lengthgen.viz.book.picture)")
                    continue
                sizes.append((fig["text"], name))
                if not fig["narrow"]:
                    problems.append(f"{name}: the column's rendition at {width} px")
                if fig["text"] < MIN_TEXT_PX:
                    problems.append(f"{name}: smallest text {fig['text']:.1f} px on screen "
                                    f"({fig['natural']} px shown at {fig['shown']:.0f} px)")
    finally:
        browser.set_window_size(1400, 1000)
    assert sizes, "no figures measured"
    print(f"smallest figure text at {width} px: {min(sizes)[0]:.1f} px ({min(sizes)[1]})")
    assert not problems, "\n".join(problems)


def alt_problem(alt: str) -> str | None:
    """Why an alt text does not say what a figure shows: empty, a generic word, a file path or
    data, or too short to describe anything."""
    text = alt.strip()
    if text.lower().rstrip(".") in GENERIC:
        return "a generic word"
    if text.startswith(("data:", "http:", "https:", "../", "./", "/", "_images")) or \
            re.search(r"[\w-]+\.(png|svg|jpe?g|gif)\b", text) or re.fullmatch(r"[\w./-]+", text):
        return "a file path"
    if len(text.split()) < 4:
        return "too short to say what the figure shows"
    return None


def test_the_alt_check_knows_a_path_from_a_description():
    for bad in ("", "figure frame", "Figure", "../_images/07edc44.png",
                "_images/lengthgen-2d6f.png", "data:image/png;base64,iVBOR", "plot of x"):
        assert alt_problem(bad), bad
    assert alt_problem("Accuracy on Len 101-150 against dot-depth, APE and NoPE") is None


def test_every_figure_and_frame_has_an_alt_that_says_what_it_shows(browser, site):  # noqa: F811
    """No alt is a file path or a generic word; a slider's frame names the setting it shows, and
    its alt follows the slider."""
    from selenium.webdriver.common.by import By

    url, html = site
    problems, seen = [], 0
    for page in pages(html):
        for fig in _figures(browser, url, page):
            seen += 1
            why = alt_problem(fig["alt"])
            if why:
                problems.append(f"{page}: {fig['number'] or fig['src']}: alt {fig['alt']!r} is "
                                f"{why}")
        for block in browser.find_elements(By.CSS_SELECTOR, ".lengthgen-frame-slider"):
            for slider, image, (_, before) in step_sliders(browser, block):
                alt = image.get_attribute("alt")
                label = slider.get_attribute("aria-label")
                value = browser.execute_script(
                    "return arguments[0].nextElementSibling.textContent", slider)
                if f"{label} = {value}" not in alt:
                    problems.append(f"{page}: slider {label!r} at {value}: the frame's alt "
                                    f"{alt!r} does not name it")
                if alt == before:
                    problems.append(f"{page}: slider {label!r}: the alt stayed {alt!r}")
                why = alt_problem(alt)
                if why:
                    problems.append(f"{page}: slider frame alt {alt!r} is {why}")
    assert seen >= 30, f"only {seen} figures found"
    assert not problems, "\n".join(problems)
