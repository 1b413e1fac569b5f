"""Figures as files, and the book's PDF linked from every page.

A figure of the book is glued as a <picture> (lengthgen.viz.book.Picture): the column's PNG and
a phone's PNG, both inline as data URIs so that the notebook shows them anywhere; a slider
(lengthgen.viz.frames) holds both renditions of every frame inline too. When an HTML build
finishes, each such image is written to `_images/` and the page points at the file, so a
reader's browser fetches only the rendition its screen uses, and only the frames a slider shows
(a page with sliders weighed up to 2.2 MB with both renditions inline).

Every page's download menu (sphinx-book-theme's) gets a link to the whole book as one PDF,
BOOK_PDF at the site's root, which `make book` prints from the built site
(tools/book_pdf.py); pages without that menu (search, index) get it as a header button.
"""
import base64
import hashlib
import os
import re
from pathlib import Path

BOOK_PDF = "lengthgen-book.pdf"

_DATA = re.compile(r'(src="|srcset="|&quot;)data:image/png;base64,([A-Za-z0-9+/=]+)')


def externalize(page: Path, images: Path) -> int:
    """Write the inline PNGs of the page's figures and slider frames (in src and srcset
    attributes, and in a slider's lists of frames) to `images`, named by their content, and
    point the page at them. Returns how many were moved."""
    text = page.read_text(encoding="utf-8")
    prefix = os.path.relpath(images, page.parent).replace(os.sep, "/")
    moved = 0

    def to_file(match):
        nonlocal moved
        png = base64.b64decode(match.group(2))
        name = "lengthgen-" + hashlib.sha256(png).hexdigest()[:20] + ".png"
        target = images / name
        images.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_bytes(png)
        moved += 1
        return f"{match.group(1)}{prefix}/{name}"

    new = _DATA.sub(to_file, text)
    if moved:
        page.write_text(new, encoding="utf-8")
    return moved


def _externalize_figures(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    images = out / "_images"
    images.mkdir(exist_ok=True)
    for page in out.rglob("*.html"):
        if "_static" not in page.parts and "_sources" not in page.parts:
            externalize(page, images)


def _pdf_link(app, pagename, templatename, context, doctree):
    """The whole book as one PDF, in the download menu (or, where a page has none, beside
    it in the header)."""
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    link = {"type": "link", "url": context["pathto"](BOOK_PDF, 1), "text": "book (.pdf)",
            "tooltip": "The whole book as one PDF", "icon": "fas fa-book",
            "label": "download-book-pdf-button"}
    for button in buttons:
        if button.get("label") == "download-buttons":
            button["buttons"].insert(0, link)
            return
    buttons.insert(0, {**link, "text": "", "icon": "fas fa-file-pdf",
                       "classes": "pst-navbar-icon"})


def setup(app):
    app.connect("build-finished", _externalize_figures)
    # after sphinx-book-theme fills the header's buttons (its handlers run at priority 501)
    app.connect("html-page-context", _pdf_link, priority=510)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
