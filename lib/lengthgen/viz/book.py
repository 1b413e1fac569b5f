"""Numbered figures and tables: one call in a code cell, one directive in the prose after it.

Every figure of the book is shown in two places from the same code cell:

* in Jupyter, Binder and Colab the cell displays the figure and its provenance line;
* on the built site the cell's output is hidden (the cell carries the tag `remove-output`) and
  the markdown cell after it places the same output as a numbered figure, with a caption written
  in the prose and the provenance line pasted into it. The figure gets a label that the text
  cross-references with {numref}.

A code cell (tags: ["remove-output"]):

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
import html
import re

from lengthgen.errors import LengthgenError

PROVENANCE = "-provenance"  # the provenance line of figure KEY is glued as KEY-provenance
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")


# How the site shows a figure. The book's column shows images up to about 755 CSS px wide at
# a 1400 px window (tests/test_site_browser.py measures it), and figure captions are 0.9rem
# (14.4 px; book/_static/lengthgen.css). A figure is therefore saved at most COLUMN_PX wide at
# DPI dots per inch, so that it is shown at its natural size, and no text in it is smaller than
# MIN_FONT_PT: 10.5 pt at 100 dpi is 14.6 px on screen, the caption's size or more.
COLUMN_PX = 740
DPI = 100
MIN_FONT_PT = 10.5

# How a phone shows it. At a 420 px window the column is about 357 CSS px wide (297 px at
# 360 px), so the column's figure, scaled down, shows its 14.6 px text at about 7 px. Each
# figure is therefore drawn a second time for a column of NARROW_PX (panels one per row, the
# same MIN_FONT_PT), which the page shows on screens up to NARROW_SCREEN_PX wide: its smallest
# text is then 14.6 * 357 / 380 = 13.7 px at 420 px, 11.4 px at 360 px (the browser test
# measures it). It is saved at NARROW_DPI, 2x, as phones' screens have two or three device
# pixels to the CSS pixel. Wider screens get the column's figure: at NARROW_SCREEN_PX its text
# is 11 px on screen, and more from there.
NARROW_PX = 380
NARROW_SCREEN_PX = 620
NARROW_DPI = 2 * DPI


def _figure_level_bottom(fig) -> float:
    """The top (in figure fraction) of legends and texts placed at the bottom of the figure
    itself (not in an axes): the layout keeps the axes above them."""
    renderer = fig._get_renderer()
    height = fig.bbox.height
    tops = []
    for artist in list(fig.legends) + [t for t in fig.texts if t is not fig._suptitle]:
        box = artist.get_window_extent(renderer)
        if box.y1 < 0.5 * height:
            tops.append(box.y1 / height + 0.01)
    return min(max(tops, default=0.0), 0.5)


def fit_to_column(fig, width_px: int = COLUMN_PX, min_font_pt: float = MIN_FONT_PT):
    """Draw `fig` for the book's column, in place: no text smaller than `min_font_pt`, and a
    width of at most `width_px` pixels at DPI (a wider figure is narrowed, its height by the
    square root of that factor, and laid out again). Returns the figure.

    The figure modules choose sizes for a notebook; this is the one place where the site's
    sizes are decided, for figures (`book_figure`) and slider frames (`viz.frames`) alike."""
    import warnings

    from matplotlib.legend import Legend
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < min_font_pt:
            text.set_fontsize(min_font_pt)
    for ax in fig.axes:  # ticks made later (a resized axis gets new ones) take this size too
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = axis.get_ticklabels(which="both")
            size = max([min_font_pt] + [label.get_fontsize() for label in labels])
            ax.tick_params(axis=name, which="both", labelsize=size)
    width, height = fig.get_size_inches()
    target = width_px / DPI
    moved = []
    if target < 2 * MIN_PANEL_IN:   # a phone's column: no legend inside a panel, too narrow
        moved = [_legend_below(ax) for ax in fig.axes
                 if ax.get_legend() is not None and not _below_axes(ax.get_legend())]
    if not _reflow(fig, target) and width > target:
        fig.set_size_inches(target, height * (target / width) ** 0.5)
    if moved:   # the panels keep their height, the legends under them get theirs
        fig.draw_without_rendering()
        renderer = fig._get_renderer()
        extra = sum(legend.get_window_extent(renderer).height for legend in moved) / fig.dpi
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + extra)
    if fig.get_layout_engine() is None or type(fig.get_layout_engine()).__name__ == \
            "PlaceHolderLayoutEngine":
        _layout(fig)
    # Legends and labels outside the axes widen the saved image (bbox_inches="tight"): wrap
    # titles to the column, take columns off legends, and only then narrow the figure (by at
    # most a fifth: narrower, the panels would be crushed).
    if _wrap_titles(fig, target):  # lines added to a title: the layout makes room for them
        _layout(fig)
    if target < 2 * MIN_PANEL_IN and _wrap_for_phone(fig, target):
        _layout(fig)
    for _ in range(8):
        saved = _saved_width_px(fig)
        if saved <= width_px + 1:
            break
        legends = [legend for legend in fig.findobj(Legend) if legend._ncols > 1]
        width, height = fig.get_size_inches()
        if legends:  # a legend in several columns is narrowed first, by one column
            widest = max(legends, key=lambda lg: lg.get_window_extent().width)
            _relegend(widest, widest._ncols - 1)
        elif width * width_px / saved >= 0.8 * target:
            fig.set_size_inches(width * width_px / saved, height)
            # the figure's title and notes were wrapped to the old width
            _wrap_titles(fig, width * width_px / saved, axes_titles=False)
        else:
            break
        _layout(fig)
    if target < 2 * MIN_PANEL_IN:
        _widen_crushed_panels(fig)
    return fig


MIN_PHONE_PANEL_IN = 1.6  # on a phone, a panel gets this much room even if its labels need more


def _widen_crushed_panels(fig) -> None:
    """On a phone's column, a panel that long labels beside it squeeze below MIN_PHONE_PANEL_IN
    gets the width it lacks: the figure is then wider than the column, and pans on a phone
    (Picture.html) rather than show a plot too narrow to read."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    widths = [ax.get_window_extent(renderer).width / fig.dpi for ax in fig.axes
              if ax.axison and not hasattr(ax, "_colorbar") and ax.get_aspect() == "auto"]
    lacking = MIN_PHONE_PANEL_IN - min(widths, default=MIN_PHONE_PANEL_IN)
    if lacking > 0.05:
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + lacking, height)
        _layout(fig)


MIN_PANEL_IN = 3.5  # a panel narrower than this at MIN_FONT_PT has no room for its labels


def _reflow(fig, target_in: float) -> bool:
    """Re-arrange the panels of a grid too wide for the column into fewer columns (two, or one
    for three panels in a row), keeping their order; a panel's colorbar moves with it. Returns
    whether the figure was re-arranged (it then has width target_in)."""
    from matplotlib.gridspec import GridSpec, GridSpecFromSubplotSpec

    cells = {}  # top-level cell -> what to move: an axes, or the sub-grid holding it
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is None:
            continue
        grid = spec.get_gridspec()
        if isinstance(grid, GridSpecFromSubplotSpec):
            holder = grid
            while isinstance(holder._subplot_spec.get_gridspec(), GridSpecFromSubplotSpec):
                holder = holder._subplot_spec.get_gridspec()
            top = holder._subplot_spec
            cells.setdefault((top.get_gridspec(), top.rowspan.start, top.colspan.start), holder)
        elif not hasattr(ax, "_colorbar"):
            cells.setdefault((grid, spec.rowspan.start, spec.colspan.start), ax)
    grids = {key[0] for key in cells}
    if len(grids) != 1:
        return False
    grid = grids.pop()
    rows, cols = grid.get_geometry()
    width, height = fig.get_size_inches()
    if cols < 2 or len(cells) != rows * cols or \
            (target_in / cols >= MIN_PANEL_IN and width <= 1.5 * target_in):
        return False
    if any(isinstance(moved, GridSpecFromSubplotSpec) for moved in cells.values()):
        return False  # panels with colorbars: left to their module's own layout
    new_cols = 1 if cols <= 3 or target_in < 2 * MIN_PANEL_IN else 2
    count = rows * cols
    new_rows = -(-count // new_cols)
    panel_height = min(max(height / rows * (target_in / new_cols) / (width / cols), 2.4), 3.0)
    # a panel with many labelled rows (one per program, say) keeps a line for each
    labelled = max(len([t for t in ax.get_yticklabels() if t.get_text()]) for ax in fig.axes)
    panel_height = max(panel_height, labelled * MIN_FONT_PT * 1.5 / 72 + 1.2)
    new_grid = GridSpec(new_rows, new_cols, figure=fig)
    for index, key in enumerate(sorted(cells, key=lambda k: (k[1], k[2]))):
        cell = new_grid[index // new_cols, index % new_cols]
        moved = cells[key]
        if isinstance(moved, GridSpecFromSubplotSpec):
            moved._subplot_spec = cell
        else:
            moved.set_subplotspec(cell)
            # panels that shared an axis with a neighbour hid its tick labels: show them again
            # where the new arrangement has no neighbour to read them from
            if index % new_cols == 0:
                moved.tick_params(axis="y", labelleft=True)
            moved.tick_params(axis="x", labelbottom=True)
    fig.set_size_inches(target_in, panel_height * new_rows + 0.4)
    return True


def _below_axes(legend) -> bool:
    """Whether a legend hangs under its axes at a fixed fraction of the axes' height (which
    larger text and a shorter axes turn into an overlap with the x label)."""
    anchor, ax = legend._bbox_to_anchor, legend.axes
    return (ax is not None and anchor is not None and anchor is not legend.parent.bbox
            and getattr(anchor, "_transform", None) == ax.transAxes
            and anchor._bbox.y1 < 0 and legend._loc in (1, 2, 9))


def _hang_legends(fig) -> bool:
    """Hang each legend placed under its axes just below that axes' x label (the fraction of
    the axes' height it was placed at does not clear larger text on a shorter axes). Returns
    whether the figure has such a legend."""
    from matplotlib.legend import Legend
    hung = [legend for legend in fig.findobj(Legend) if _below_axes(legend)]
    if not hung:
        return False
    renderer = fig._get_renderer()
    for legend in hung:
        # no draw of the whole figure: the x axis lays out its own ticks and label, and the
        # axes takes the place its aspect gives it (what a draw would do first)
        ax = legend.axes
        ax.apply_aspect()
        bottom = ax.xaxis.get_tightbbox(renderer)
        if bottom is None:
            continue
        y = ax.transAxes.inverted().transform((0, bottom.y0))[1]
        x0, _, width, _ = legend._bbox_to_anchor._bbox.bounds
        legend.set_bbox_to_anchor((x0, y - 0.02, width, 0), transform=ax.transAxes)
    return True


def _layout(fig) -> None:
    """tight_layout that keeps figure-level legends and notes below the axes, and legends hung
    under an axes below its x label."""
    import warnings
    title = fig._suptitle
    if title is not None and title.get_va() == "top" and title.get_position()[1] > 0.9:
        # tight_layout keeps the height of the figure's title free at the top, but the title
        # hangs from y = 0.98 by default: 2% of a tall figure lower, over the panels' titles
        title.set_y(1 - 0.05 / fig.get_size_inches()[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            _hang_legends(fig)
            fig.tight_layout(rect=(0, _figure_level_bottom(fig), 1, 1))
        _hang_legends(fig)


def _legend_below(ax):
    """Move an axes' legend under it, in one column (`_layout` hangs it below the x label).
    Returns the new legend."""
    legend = ax.get_legend()
    title = legend.get_title()
    kwargs = {"loc": "upper center", "bbox_to_anchor": (0, -0.15, 1, 0),
              "bbox_transform": ax.transAxes, "ncols": 1,
              "fontsize": legend.texts[0].get_fontsize() if legend.texts else None,
              "frameon": False}
    if title.get_text():
        kwargs.update(title=title.get_text(), title_fontsize=title.get_fontsize())
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.texts]
    legend.remove()
    return ax.legend(handles, labels, **kwargs)


def _relegend(legend, ncols: int) -> None:
    """Draw a legend again in `ncols` columns, where it was (a legend lays out its columns
    only when it is made)."""
    parent = legend.parent
    title = legend.get_title()
    anchor = legend._bbox_to_anchor
    placed = {} if anchor is None or anchor is parent.bbox else \
        {"bbox_to_anchor": anchor._bbox.bounds, "bbox_transform": anchor._transform}
    kwargs = {"loc": legend._loc, **placed, "ncols": ncols,
              "fontsize": legend.texts[0].get_fontsize() if legend.texts else None,
              "frameon": legend.get_frame_on()}
    if title.get_text():
        kwargs.update(title=title.get_text(), title_fontsize=title.get_fontsize())
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.texts]
    legend.remove()
    parent.legend(handles, labels, **kwargs)


def _wrap_titles(fig, width_in: float, axes_titles: bool = True) -> bool:
    """Break the figure's titles and notes, and (with axes_titles) the axes' titles, that are
    wider than their room into lines. Returns whether any was broken."""
    import textwrap
    renderer = fig._get_renderer()
    titles = [(fig._suptitle, width_in * DPI * 0.95)] if fig._suptitle is not None else []
    titles += [(t, width_in * DPI * 0.95) for t in fig.texts if t is not fig._suptitle]
    for ax in fig.axes if axes_titles else []:
        room = max(ax.get_window_extent(renderer).width * 1.15, 150)
        titles += [(t, room) for t in (ax.title, ax._left_title, ax._right_title)]
    wrapped = False
    for text, room in titles:
        content = text.get_text()
        width = text.get_window_extent(renderer).width
        if content and width > room:
            longest = max(len(line) for line in content.split("\n"))
            chars = max(12, int(longest * room / width))
            text.set_text("\n".join(textwrap.wrap(content.replace("\n", " "), chars)))
            wrapped = True
    return wrapped


def _wrap(text, room: float, renderer, vertical: bool = False) -> bool:
    """Break a text longer than `room` pixels (its height if `vertical`) into lines."""
    import textwrap
    content = text.get_text()
    box = text.get_window_extent(renderer)
    size = box.height if vertical else box.width
    if not content.strip() or size <= room:
        return False
    longest = max(len(line) for line in content.split("\n"))
    chars = max(10, int(longest * room / size))
    text.set_text("\n".join(textwrap.wrap(content.replace("\n", " "), chars)))
    return True


def _wrap_for_phone(fig, width_in: float) -> bool:
    """On a phone's column: break legend entries wider than the column, and axis labels longer
    than their axes, into lines. Returns whether any was broken."""
    from matplotlib.legend import Legend
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    wrapped = False
    for legend in fig.findobj(Legend):
        box = legend.get_window_extent(renderer)
        room = width_in * DPI * 0.9
        if box.width > room:
            widest = max(t.get_window_extent(renderer).width for t in legend.texts)
            for text in legend.texts:
                wrapped |= _wrap(text, widest - (box.width - room), renderer)
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        if ax.title.get_text() and ax.title.get_window_extent(renderer).width > box.width:
            # a title wider than its panel ends at the panel's right edge and reaches left
            # over the labels, instead of past both edges of the figure
            ax.title.set_horizontalalignment("right")
            ax.title.set_x(1.0)
            wrapped |= _wrap(ax.title, box.x1 - fig.bbox.x0 - 10, renderer) or True
        wrapped |= _wrap(ax.yaxis.label, box.height * 1.05, renderer, vertical=True)
        wrapped |= _wrap(ax.xaxis.label, max(box.width * 1.1, 150), renderer)
    return wrapped


def _saved_width_px(fig) -> float:
    fig.draw_without_rendering()  # legends and texts lay themselves out when drawn
    renderer = fig._get_renderer()
    box = fig.get_tightbbox(renderer)
    return box.width * DPI + 2 * DPI * 0.1  # savefig's pad_inches = 0.1


def column_png(fig) -> bytes:
    """PNG bytes of a figure drawn for the book's column (fit_to_column, then saved at DPI and
    made compact by `compact_png`)."""
    import io
    fit_to_column(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return compact_png(buffer.getvalue())


def save_png(fig, dpi: int, tight: bool = True) -> tuple[bytes, float]:
    """PNG bytes of a figure laid out already (cut to what it draws, unless not `tight`: the
    frames of a slider keep one size), and the height in pixels of the PNG of its smallest
    text (its font size in points at `dpi`)."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    return compact_png(buffer.getvalue()), smallest_text_pt(fig) * dpi / 72


def smallest_text_pt(fig) -> float:
    """The font size in points of the smallest text the figure draws (texts, labels, legends,
    tick labels inside the axes' limits)."""
    from matplotlib.text import Text
    fig.draw_without_rendering()
    renderer = fig._get_renderer()   # (a closed figure's canvas may have no get_renderer)
    sizes = [text.get_fontsize() for text in fig.findobj(Text)
             if text.get_visible() and text.get_text().strip()
             and _drawn_inside(text.get_window_extent(renderer), fig.bbox)]
    return min(sizes, default=MIN_FONT_PT)


def _drawn_inside(box, figure_box) -> bool:
    """Whether a text's box has a size and lies at least partly in the figure (tick labels of
    ticks outside an axes' limits are laid out but not drawn)."""
    return (box.width > 0 and box.x1 >= figure_box.x0 and box.x0 <= figure_box.x1
            and box.y1 >= figure_box.y0 and box.y0 <= figure_box.y1)


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


def picture(fig, alt: str | None = None) -> Picture:
    """The figure drawn for the column and again for a phone (`fit_to_column` at COLUMN_PX, then
    at NARROW_PX), with `alt` (by default `describe(fig)`)."""
    alt = alt or describe(fig)
    fit_to_column(fig)
    wide, wide_px = save_png(fig, DPI)
    fit_to_column(fig, width_px=NARROW_PX)
    narrow, narrow_px = save_png(fig, NARROW_DPI)
    return Picture(wide, alt, narrow, wide_px, narrow_px)


def compact_png(png: bytes) -> bytes:
    """The same picture in at most 256 colours (a palette PNG, no dithering): plots have few
    colours, and the page weighs about a quarter (slider frames are inlined in the pages)."""
    import io

    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                             dither=Image.Dither.NONE)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


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
    metadata["scrapbook"] = {"name": key, "mime_prefix": ""}
    display(bundle, raw=True, metadata=metadata)


class _Markdown:
    """Markdown for the page, plain text for a terminal."""

    def __init__(self, text: str):
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return re.sub(r"<[^>]+>", "", self.text)


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
    from lengthgen.runs.records import caption, missing_runs, reading, records_for
    from lengthgen.runs.registry import experiment
    module = experiment(figure_id)
    scale_found, records = records_for(figure_id, scale, rerun, root)
    fig = reading(figure_id, module.figure, records)
    text = caption(records)
    missing = missing_runs(figure_id, scale_found, records)
    if missing:
        text += f" | INCOMPLETE: {len(missing)} registered run(s) have no record"
    return fig, text


def book_figure(key: str, content=None, provenance: str | None = None, alt: str | None = None):
    """Show one figure and glue it (and its provenance line) for a numbered figure on the site.

    With only `key`, `key` is a figure id: the figure is drawn from its committed results by
    `show`, and the provenance is the scale, device, commit and date of
    those results. Otherwise `content` is what to show (a matplotlib Figure, a FrameSlider, any
    object Jupyter can display) and `provenance`, if given, a line saying where it comes from.
    A matplotlib figure gets `alt` as its alt text; by default what it writes (`describe`),
    after the first sentence of its module's docstring for a figure id.
    Returns the content. A matplotlib figure is closed after it is shown, so it appears once.
    """
    _check_key(key)
    if content is None:
        content, provenance = show(key)
        if alt is None:
            alt = ". ".join(p for p in (_summary(key), describe(content)) if p)
    _glue(key, picture(content, alt) if hasattr(content, "savefig") else content)
    if hasattr(content, "savefig"):
        import matplotlib.pyplot as plt
        plt.close(content)
    if provenance is not None:
        _glue(key + PROVENANCE, _Markdown(provenance_markdown(provenance)))
    return content


def _summary(figure_id: str) -> str:
    """The first paragraph of a figure module's docstring ("Huang et al. (2025), Fig. 2: accuracy
    on the longest bin against dot-depth"), without its final period."""
    from lengthgen.runs.registry import experiment
    doc = (experiment(figure_id).__doc__ or "").strip()
    return re.sub(r"\s+", " ", doc.split("\n\n")[0]).strip().rstrip(".")


def book_text(key: str, text) -> str:
    """Glue a short piece of text (a number computed from records) for the prose: the markdown
    cell pastes it inline with {glue:md}`KEY`, so no number from a record is typed by hand.
    Returns the text."""
    _check_key(key)
    text = str(text)
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
    cell that calls this is tagged `remove-output` (in Jupyter it shows every key with its
    text)."""
    for key, text in numbers.items():
        key = f"{prefix}-{key}" if prefix else key
        _check_key(key)
        _glue(key, _Markdown(html.escape(str(text), quote=False)))
