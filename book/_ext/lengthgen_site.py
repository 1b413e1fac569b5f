"""Two touches to the built site: no source maps, and search summaries without raw TeX.

pydata-sphinx-theme and sphinx-book-theme copy a `.map` file next to each of their scripts and
stylesheets (3.4 MB of the site); a browser fetches one only when its developer tools ask for
it, so no reader needs them. They are deleted from `_static` when an HTML build finishes.

The search page shows a summary of each page it finds, cut from that page's HTML, where math is
still TeX (`\\(N\\)`) until MathJax typesets it; book/_static/lengthgen_search.js, loaded on the
search page only, turns the math into plain text before the summary is cut.
"""
from pathlib import Path


def _drop_source_maps(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for path in static.rglob("*.map"):
        path.unlink()


def _search_page_script(app, pagename, templatename, context, doctree):
    if pagename == "search":
        app.add_js_file("lengthgen_search.js")   # for this page only (Sphinx >= 4.4)


def setup(app):
    app.connect("build-finished", _drop_source_maps)
    app.connect("html-page-context", _search_page_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
