"""Numbered figures and tables: one call in a code cell, one directive in the prose after it.

Every figure of the book is shown in two places from the same code cell:

* in Jupyter, Binder and Colab the cell displays the figure and its provenance line;
* on the built site the cell is hidden (tags `remove-input` and `remove-output`) and
  the markdown cell after it places the same output as a numbered figure, with a caption written
  in the prose and the provenance line pasted into it. The figure gets a label that the text
  cross-references with {numref}.

A code cell (tags: ["remove-input", "remove-output"]):

    book_figure("huang-fig5-6-positional")                 # a registered figure id
    book_figure("limit-slider", FrameSlider(draw, ...))    # anything displayable, no provenance

and the markdown cell right after it:

    ```{glue:figure} huang-fig5-6-positional
    :name: fig-huang-positional

    What the figure shows, in a sentence or two. {glue:md}`huang-fig5-6-positional-provenance`
    ```

Tables work the same way with `book_table(key, markdown)` and a `{table}` directive around
`{glue:md}` (see `book_table`). The pasting is myst-nb's "glue" mechanism; it is implemented
here in a few lines (the same display message myst-nb's `glue` sends) so that the library does
not need myst-nb where the book is only run, not built (Colab).
"""
import functools
import html
import re

from lengthgen.config import draw_workers
from lengthgen.errors import LengthgenError
from lengthgen.experiments.prose import for_reader
from lengthgen.viz.fit import fit_to_column
from lengthgen.viz.layout import (DPI, MIN_FONT_PT, NARROW_DPI, NARROW_PX, NARROW_SCREEN_PX,
                                  save_png)
from lengthgen.viz.parallel import InWorker, in_parallel

PROVENANCE = "-provenance"  # the provenance line of figure KEY is glued as KEY-provenance
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Picture:
    """One figure as the site shows it: `wide` for the column and `narrow` for phones (PNG
    bytes; narrow may be None), the smallest text of each in its PNG's pixels, and an alt text
    that says what the figure shows."""

    def __init__(self, wide: bytes, alt: str, narrow: bytes | None = None,
                 wide_text_px: float = MIN_FONT_PT * DPI / 72,
                 narrow_text_px: float = MIN_FONT_PT * NARROW_DPI / 72):
        self.wide, self.narrow, self.alt = wide, narrow, alt
        self.wide_text_px, self.narrow_text_px = wide_text_px, narrow_text_px

    @property
    def wide_uri(self) -> str:
        return _data_uri(self.wide)

    @property
    def narrow_uri(self) -> str | None:
        return None if self.narrow is None else _data_uri(self.narrow)

    @property
    def narrow_layout_px(self) -> float | None:
        """The phone's rendition's width in CSS px at its own text size (NARROW_PX, or more
        for a figure whose labels need more room than a phone's column)."""
        if self.narrow is None:
            return None
        import io

        from PIL import Image
        return Image.open(io.BytesIO(self.narrow)).width * DPI / NARROW_DPI

    def html(self) -> str:
        """A <picture>: the narrow PNG on screens up to NARROW_SCREEN_PX wide, the wide one
        elsewhere (and in print). Both are inline; the site's build moves them into files
        (book/_ext/lengthgen_figures.py), so that a reader's browser fetches only one. A phone's
        rendition wider than NARROW_PX pans: it is shown at its own size in a box that
        scrolls sideways (as a wide table does), not shrunk below readable text."""
        layout = self.narrow_layout_px
        pan = layout is not None and layout > NARROW_PX * 1.05
        return picture_html(self.wide_uri, self.narrow_uri, self.alt, self.wide_text_px,
                            self.narrow_text_px, pan_px=layout if pan else None)


def _data_uri(png: bytes) -> str:
    import base64
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def picture_html(wide_src: str, narrow_src: str | None, alt: str, wide_text_px: float,
                 narrow_text_px: float, css_class: str = "lengthgen-picture",
                 pan_px: float | None = None) -> str:
    """The <picture> element of `Picture.html` (the sliders make theirs with it too, of class
    lengthgen-frame: their frames stay in the page). Each image carries the size of its
    smallest text in its own pixels (data-text-px), which the browser test turns into CSS px
    on screen."""
    source = "" if narrow_src is None else (
        f'<source media="(max-width: {NARROW_SCREEN_PX}px)" srcset="{narrow_src}" '
        f'data-text-px="{narrow_text_px:.2f}">')
    pan = "" if pan_px is None else \
        f' lengthgen-pan" style="--lengthgen-phone-width: {pan_px:.0f}px'
    return (f'<picture class="{css_class}{pan}">{source}'
            f'<img src="{wide_src}" alt="{html.escape(alt, quote=True)}" '
            f'data-text-px="{wide_text_px:.2f}" style="max-width:100%;height:auto;display:block">'
            f'</picture>')


def describe(fig) -> str:
    """An alt text for a figure, from what it writes: its title, its panels' titles and the
    quantities on its axes ("y against x")."""
    def clean(text: str) -> str:
        return re.sub(r"\s+", " ", _plain_math(text)).strip()

    parts = []
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    if clean(title):
        parts.append(clean(title))
    titles, axes_pairs = [], []
    for ax in fig.axes:
        if hasattr(ax, "_colorbar"):
            continue
        for text in (ax.get_title("left"), ax.get_title(), ax.get_title("right")):
            if clean(text) and clean(text) not in titles:
                titles.append(clean(text))
        pair = (clean(ax.get_ylabel()), clean(ax.get_xlabel()))
        if all(pair) and pair not in axes_pairs:
            axes_pairs.append(pair)
    if titles:
        parts.append(("Panels: " if len(titles) > 1 else "") + "; ".join(titles))
    if axes_pairs:
        parts.append("; ".join(f"{y} against {x}" for y, x in axes_pairs[:3]))
    text = ". ".join(p.rstrip(".") for p in parts)
    return text[:397] + "..." if len(text) > 400 else text


_TEX = {"\\top": "ᵀ", "\\sum": "Σ", "\\leq": "≤", "\\le": "≤", "\\geq": "≥", "\\ge": "≥",
        "\\tau": "τ", "\\Delta": "Δ", "\\delta": "δ", "\\varepsilon": "ε", "\\epsilon": "ε",
        "\\gamma": "γ", "\\lambda": "λ", "\\omega": "ω", "\\phi": "φ", "\\psi": "ψ",
        "\\cdot": "·", "\\times": "×", "\\pm": "±", "\\approx": "≈", "\\infty": "∞",
        "\\ell": "ℓ", "\\,": " ", "\\;": " ", "\\!": ""}


def _plain_math(text: str) -> str:
    """Matplotlib's $...$ math as plain words for an alt text: \\frac{a}{b} as a/b, common
    symbols as Unicode, other commands without their backslash, no braces or dollars."""
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", text)
    for command in sorted(_TEX, key=len, reverse=True):
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", _TEX[command], text)
    text = re.sub(r"\\(mathrm|mathbf|mathit|text|operatorname)", "", text)
    return re.sub(r"[${}\\]", "", text)


def picture(fig, alt: str | None = None, phone=None) -> Picture:
    """The figure drawn for the column and again for a phone (`fit_to_column` at COLUMN_PX, then
    at NARROW_PX), with `alt` (by default `describe(fig)`). `phone`: the figure drawn a second
    time for a phone's column (by a figure module's `phone_figure`, or its `figure` again), or
    a function of no arguments that draws it; it is laid out at NARROW_PX on its own, while
    `fig` is laid out for the column, in a worker process where there are two and the
    function pickles (`viz.parallel`), or that rendition being drawn ahead (whose `result()` is its PNG and
    text size). Without it, `fig` is laid out for the phone after the column."""
    alt = alt or describe(fig)

    def column():
        fit_to_column(fig)
        return save_png(fig, DPI)

    if phone is None:
        (wide, wide_px), (small, small_px) = column(), _narrow_png(fig)
    elif hasattr(phone, "result"):   # the phone's rendition, drawn ahead (`draw_ahead`)
        (wide, wide_px), (small, small_px) = column(), phone.result()
    else:
        (wide, wide_px), (small, small_px) = in_parallel(
            [column, functools.partial(_phone_png, phone) if callable(phone)
             else functools.partial(_narrow_png, phone)])
    return Picture(wide, alt, small, wide_px, small_px)


def _narrow_png(figure) -> tuple[bytes, float]:
    """A figure laid out for a phone's column, as a PNG, and its smallest text's size."""
    fit_to_column(figure, width_px=NARROW_PX)
    return save_png(figure, NARROW_DPI)


def _phone_png(draw) -> tuple[bytes, float]:
    """`_narrow_png` of the figure `draw()` draws, closed afterwards (pyplot keeps it else)."""
    import matplotlib.pyplot as plt
    figure = draw()
    try:
        return _narrow_png(figure)
    finally:
        plt.close(figure)


def _glue(key: str, obj) -> None:
    """Display `obj` and mark the output so that myst-nb can paste it elsewhere as `key`."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if hasattr(obj, "savefig"):  # a matplotlib Figure: drawn for the column and for phones
        obj = picture(obj)
    if isinstance(obj, Picture):
        # The page (and Jupyter) shows the <picture>; a front end without HTML the column's PNG.
        import base64
        bundle = {"text/html": obj.html(), "image/png": base64.b64encode(obj.wide).decode("ascii"),
                  "text/plain": f"<figure: {obj.alt}>"}
        metadata = {}
    else:
        bundle, metadata = format_display_data(obj)
        if isinstance(obj, _Markdown):
            bundle["text/plain"] = obj.plain_literal()
    metadata["scrapbook"] = {"name": key, "mime_prefix": ""}
    display(bundle, raw=True, metadata=metadata)


class _Markdown:
    """Markdown for the page, plain text for a terminal."""

    def __init__(self, text: str):
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def plain(self) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", self.text))

    def __repr__(self) -> str:
        return self.plain()

    def plain_literal(self) -> str:
        """The plain text as a Python string literal. myst-nb's {glue:text} role (and {glue:}
        on a page without Markdown) reads text/plain with `ast.literal_eval` before printing
        it: the text "6,000" would become the tuple (6, 0), "0.50" the float 0.5, "1e-06" a
        float. A string literal evaluates to exactly the text the reader should read."""
        return repr(self.plain())


def provenance_markdown(line: str) -> str:
    """The provenance line as it appears at the end of a caption (small, wraps anywhere)."""
    return f'<span class="lengthgen-provenance">Provenance: {html.escape(line)}</span>'


def _check_key(key: str) -> None:
    if not _KEY.match(key):
        raise LengthgenError(f"figure key {key!r}: use lowercase letters, digits and dashes")


def show(figure_id: str, scale: str | None = None, rerun: bool = False, root=None):
    """The figure for a notebook cell, and its provenance caption.

    Uses the largest committed results; with rerun=True, runs the experiment at the chosen scale
    (LENGTHGEN_SCALE) first. Returns (figure, caption). A figure drawn from an incomplete set
    of records says so in its caption; records that lack what the figure reads are an error
    naming the figure and the cause (re-run it).
    """
    fig, text, _ = _shown(figure_id, scale, rerun, root)
    return fig, text


def _shown(figure_id: str, scale: str | None = None, rerun: bool = False, root=None):
    """`show`'s figure and caption, and the records they come from."""
    from lengthgen.runs.records import caption, missing_runs, reading, records_for
    from lengthgen.runs.registry import experiment
    module = experiment(figure_id)
    scale_found, records = records_for(figure_id, scale, rerun, root)
    fig = reading(figure_id, module.figure, records)
    text = caption(records)
    missing = missing_runs(figure_id, scale_found, records)
    if missing:
        text += f" | INCOMPLETE: {len(missing)} registered run(s) have no record"
    return fig, text, records


def book_figure(key: str, content=None, provenance: str | None = None, alt: str | None = None,
                phone=None):
    """Show one figure and glue it (and its provenance line) for a numbered figure on the site.

    With only `key`, `key` is a figure id: the figure is drawn from its committed results by
    `show`, and the provenance is the scale, device, commit and date of
    those results. Otherwise `content` is what to show (a matplotlib Figure, a FrameSlider, any
    object Jupyter can display, or a function of no arguments that draws a figure: it is
    called twice, for the column and for a phone, side by side) and `provenance`, if given, a
    line saying where it comes from.
    A matplotlib figure gets `alt` as its alt text; by default what it writes (`describe`),
    after the first sentence of its module's docstring for a figure id. `phone`: the same
    figure drawn for a phone's column, or a function that draws it, shown on narrow screens
    (for a figure id, its module's `phone_figure` where it has one, else its `figure` again).
    Returns the content. A matplotlib figure is closed after it is shown, so it appears once.
    """
    _check_key(key)
    if callable(content) and not hasattr(content, "savefig"):
        # a function that draws the figure: drawn here for the column, and again for a phone
        # in another process (`picture`)
        phone = content if phone is None else phone
        content = content()
    if content is None:
        # the phone's rendition of this figure, drawn ahead, or drawn now beside the column's
        ahead = _drawing.pop(key, None)
        _draw_next(key)
        content, provenance, records = _shown(key)
        phone = functools.partial(_phone_figure, key, records) if ahead is None else \
            _Ahead(key, records, ahead)
        if alt is None:
            alt = ". ".join(p for p in (_summary(key), describe(content)) if p)
    _glue(key, picture(content, alt, phone) if hasattr(content, "savefig") else content)
    if hasattr(content, "savefig"):
        import matplotlib.pyplot as plt
        plt.close(content)
        if hasattr(phone, "savefig"):   # (a figure given, not a function or a rendition)
            plt.close(phone)
    if provenance is not None:
        _glue(key + PROVENANCE, _Markdown(provenance_markdown(provenance)))
    return content


# The registered figures the running notebook shows, in order (`draw_ahead`), and the phone's
# renditions of the next ones, being drawn in workers (`viz.parallel`).
AHEAD = 1
_upcoming: list[str] = []
_drawing: dict = {}


def draw_ahead(notebook: str) -> None:
    """Draw the phone's renditions of a notebook's figures ahead of their cells. `notebook`:
    its file in the book's folder ("dyck.ipynb") or a path, whose cells show registered
    figures by id (`book_figure("richard-fig4-completions")`), in order. The first one's is
    started now, and each such `book_figure` starts the next one's, in a worker process
    (`viz.parallel`, where there are two processes or more), so that it is done, or
    nearly, when its cell comes: a phone's layout takes about twice the time of the column's,
    and would otherwise leave a core waiting at every figure. Where the file is not there (the
    library installed alone) or a figure is shown out of order, figures are drawn as before."""
    from lengthgen.results import REPO_ROOT
    for drawing in _drawing.values():
        drawing.cancel()
    _drawing.clear()
    _upcoming[:] = figures_shown(REPO_ROOT / "book" / notebook)   # (a path stays itself)
    if _upcoming:   # the first ones now, drawn while the cells before them run
        _draw_next(None)


def figures_shown(path) -> list[str]:
    """The registered figures a notebook shows by id (`book_figure("id")`), in order; none
    where the notebook cannot be read."""
    import json
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [figure_id for cell in cells if cell.get("cell_type") == "code"
            for figure_id in re.findall(r'book_figure\(\s*"([a-z0-9-]+)"\s*\)',
                                        "".join(cell.get("source", "")))]


def _draw_next(figure_id: str | None) -> None:
    """Start the phone's renditions of the AHEAD figures after `figure_id` (None: the first
    ones); stop those of figures before it, which were not shown in order."""
    if figure_id not in _upcoming + [None] or draw_workers() < 2:
        return
    at = -1 if figure_id is None else _upcoming.index(figure_id)
    for skipped in _upcoming[:max(at, 0)]:
        if skipped in _drawing:
            _drawing.pop(skipped).cancel()
    for upcoming in _upcoming[at + 1:at + 1 + AHEAD]:
        if upcoming not in _drawing:
            _drawing[upcoming] = InWorker(functools.partial(_drawn_ahead, upcoming))


def _drawn_ahead(figure_id: str):
    """The phone's rendition of a registered figure, and a digest of the records it was drawn
    from."""
    from lengthgen.runs.records import records_for
    records = records_for(figure_id, None, False, None)[1]
    return _phone_rendition(figure_id, records), _records_digest(records)


def _phone_rendition(figure_id: str, records: list[dict]) -> tuple[bytes, float]:
    """The phone's rendition of a registered figure drawn from `records`: its PNG and its
    smallest text's size."""
    return _phone_png(functools.partial(_phone_figure, figure_id, records))


def _records_digest(records: list[dict]) -> str:
    import hashlib
    import json
    return hashlib.sha256(json.dumps(records, sort_keys=True, default=str).encode()).hexdigest()


class _Ahead:
    """A phone's rendition drawn ahead, taken where the records the column's figure was drawn
    from are those it was drawn from, else drawn again here from them (a reader re-ran the
    figure's experiment in between: `rerun_figure`)."""

    def __init__(self, figure_id: str, records: list[dict], drawing: InWorker):
        self.figure_id, self.records, self.drawing = figure_id, records, drawing

    def result(self) -> tuple[bytes, float]:
        rendition, digest = self.drawing.result()
        if digest == _records_digest(self.records):
            return rendition
        return _phone_rendition(self.figure_id, self.records)


def _phone_figure(figure_id: str, records: list[dict] | None = None):
    """The figure drawn again, for a phone's column, from the same records as `show`: by its
    module's `phone_figure` where it has one (a layout of its own), else by its `figure`. (Laid
    out for a phone from scratch, not from the column's layout: panels the column put in rows
    may stack, each as tall as it reads best.) `records`: those records, read already."""
    from lengthgen.runs.records import reading, records_for
    from lengthgen.runs.registry import experiment
    module = experiment(figure_id)
    draw = getattr(module, "phone_figure", module.figure)
    if records is None:
        records = records_for(figure_id, None, False, None)[1]
    return reading(figure_id, draw, records)


def _summary(figure_id: str) -> str:
    """The first paragraph of a figure module's docstring ("Huang et al. (2025), Fig. 2: accuracy
    on the longest bin against dot-depth"), without its final period."""
    from lengthgen.runs.registry import experiment
    doc = (experiment(figure_id).__doc__ or "").strip()
    return re.sub(r"\s+", " ", doc.split("\n\n")[0]).strip().rstrip(".")


def book_text(key: str, text) -> str:
    """Glue a short piece of text (a number computed from records) for the prose: the markdown
    cell pastes it inline with {glue:md}`KEY`, so no number from a record is typed by hand.
    Numbers, ranges and short formulas in it are kept on one line, D_12 reads D₁₂
    (`lengthgen.experiments.prose.for_reader`). Returns
    the text."""
    _check_key(key)
    text = for_reader(str(text))
    _glue(key, _Markdown(text))
    return text


def book_table(key: str, markdown: str, provenance: str | None = None) -> None:
    """Show a Markdown table and glue it for a numbered table on the site.

    The markdown cell after the code cell wraps the pasted table in a `{table}` directive
    (whose caption may paste the provenance line):

        ````{table} What the table shows. {glue:md}`KEY-provenance`
        :name: tab-something

        ```{glue:md} KEY
        :format: myst
        ```
        ````
    """
    _check_key(key)
    if not markdown.lstrip().startswith("|"):
        raise LengthgenError(f"table {key!r}: expected a Markdown table (rows starting with |)")
    _glue(key, _Markdown(markdown))
    if provenance is not None:
        _glue(key + PROVENANCE, _Markdown(provenance_markdown(provenance)))



def glue_numbers(numbers: dict[str, str], prefix: str = "") -> None:
    """Glue each {key: text} (e.g. `lengthgen.experiments.huang.limit.analysis.limit_numbers()`)
    for the prose, which pastes it inline with {glue:md}`key` (`PREFIX-key` with a prefix). The
    cell that calls this is tagged `remove-input` and `remove-output` (in Jupyter it shows every
    key with its text). Numbers, ranges and short formulas are kept on one line, D_12 reads
    D₁₂ (`for_reader`)."""
    for key, text in numbers.items():
        key = f"{prefix}-{key}" if prefix else key
        _check_key(key)
        _glue(key, _Markdown(html.escape(for_reader(str(text)), quote=False)))
