"""The whole book as one PDF, printed from the built site by the system's Chromium.

`make book` runs this after the HTML build. The site is served on loopback, each page of
_toc.yml is printed in the table of contents' order by headless Chromium (--print-to-pdf, after
MathJax has typeset the page), and the pages are joined into <site>/lengthgen-book.pdf with one
bookmark per page; every page of the site links to it (book/_ext/lengthgen_figures.py). Nothing
is downloaded: where no Chromium is installed (or pypdf is missing) this says so in one line
and exits 0, and the site is there without its PDF.

    python tools/book_pdf.py [SITE] [--toc _toc.yml] [--out FILE]

SITE defaults to _build/html. LENGTHGEN_CHROMIUM names the browser where it is not on PATH as
chromium, chromium-browser or google-chrome.
"""
import argparse
import functools
import html
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PDF_NAME = "lengthgen-book.pdf"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    named = os.environ.get("LENGTHGEN_CHROMIUM")
    if named:
        return shutil.which(named) or (named if Path(named).is_file() else None)
    return next((found for found in map(shutil.which, BROWSERS) if found), None)


def toc_pages(toc: Path) -> list[str]:
    """The site's pages (paths of .html files) in the order of _toc.yml: the root, then each
    chapter followed by its sections."""
    import yaml
    data = yaml.safe_load(toc.read_text())
    pages = [data["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts") or []:
                walk(part.get("chapters"))

    walk(data.get("chapters"))
    for part in data.get("parts") or []:
        walk(part.get("chapters"))
    return [re.sub(r"\.(md|ipynb)$", "", page) + ".html" for page in pages]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def print_page(chromium: str, url: str, out: Path, budget_ms: int = 30000) -> None:
    """One page to PDF. The virtual time budget lets the page's scripts (MathJax) finish
    before Chromium prints."""
    with tempfile.TemporaryDirectory() as profile:
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                   "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                   "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw",
                   f"--virtual-time-budget={budget_ms}", f"--print-to-pdf={out}", url]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not out.exists() or out.stat().st_size == 0:
        raise RuntimeError(f"Chromium could not print {url}: {done.stderr.strip()[-500:]}")


def page_title(page: Path) -> str:
    match = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.S)
    title = html.unescape(match.group(1)) if match else page.stem
    return re.split(r"\s+[—|-]\s+", title.strip())[0]


def build_pdf(site: Path, toc: Path, out: Path, chromium: str) -> tuple[int, int]:
    """Print every page of the table of contents and join them into `out`. Returns (pages of
    the site printed, pages of the PDF)."""
    from pypdf import PdfWriter
    pages = [page for page in toc_pages(toc) if (site / page).exists()]
    missing = [page for page in toc_pages(toc) if not (site / page).exists()]
    if missing:
        raise RuntimeError(f"the site has no {', '.join(missing)}: build it first")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    writer = PdfWriter()
    try:
        with tempfile.TemporaryDirectory() as folder:
            for number, page in enumerate(pages):
                printed = Path(folder) / f"{number:03d}.pdf"
                print_page(chromium, f"http://127.0.0.1:{server.server_address[1]}/{page}",
                           printed)
                writer.append(str(printed), outline_item=page_title(site / page))
            writer.add_metadata({"/Title": page_title(site / pages[0])})
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out, "wb") as handle:
                writer.write(handle)
    finally:
        server.shutdown()
    return len(pages), len(writer.pages)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", default=str(ROOT / "_build" / "html"))
    parser.add_argument("--toc", default=str(ROOT / "_toc.yml"))
    parser.add_argument("--out", default=None, help=f"default: SITE/{PDF_NAME}")
    args = parser.parse_args(argv)
    site = Path(args.site)
    out = Path(args.out) if args.out else site / PDF_NAME
    chromium = find_chromium()
    if chromium is None:
        print(f"No PDF of the book: no Chromium found ({', '.join(BROWSERS)}; "
              f"apt-get install chromium); the site is built without it.")
        return 0
    try:
        import pypdf  # noqa: F401
    except ImportError:
        print("No PDF of the book: pypdf is not installed (pip install -r requirements.txt); "
              "the site is built without it.")
        return 0
    start = time.time()
    printed, pdf_pages = build_pdf(site, Path(args.toc), out, chromium)
    print(f"PDF: {out} ({printed} pages of the site, {pdf_pages} PDF pages, "
          f"{out.stat().st_size / 1e6:.1f} MB, {time.time() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
