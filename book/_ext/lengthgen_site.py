"""What the built site does not ship: the themes' source maps.

pydata-sphinx-theme and sphinx-book-theme copy a `.map` file next to each of their scripts and
stylesheets (3.4 MB of the site); a browser fetches one only when its developer tools ask for
it, so no reader needs them. They are deleted from `_static` when an HTML build finishes.
"""
from pathlib import Path


def _drop_source_maps(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for path in static.rglob("*.map"):
        path.unlink()


def setup(app):
    app.connect("build-finished", _drop_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
