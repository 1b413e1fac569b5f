"""The steps of laying a figure out for the site, and saving it.

The book's column and a phone's have their sizes here (COLUMN_PX, NARROW_PX and their dpi).
`viz.fit.fit_to_column` runs the steps in order: re-arranging a grid of panels into fewer
columns (`reflow`), a tight layout that keeps legends hung below their panels
(`tight_layout`), wrapping titles (`wrap_titles`), narrowing a legend (`relegend`) and
measuring the saved width (`saved_width_px`); the steps only a phone's column takes are in
`viz.phone`. `save_png` saves a laid-out figure as a palette PNG and measures its smallest
text, which the browser test turns into pixels on screen.

Everything here goes through matplotlib's public API, and nothing under `viz/` replaces a
matplotlib method (tests/test_layout_public.py scans for it). Until issue 56 this module
replaced three of matplotlib's private methods to spare work a layout repeats (the parses of
math text, the heights of fonts, the axes' ticks), and followed matplotlib's releases to keep
doing so; benchmarks/bench_figures.py measures what dropping them cost (README, "The built
site"). A few texts and placements have no public accessor (a figure's title and an axes'
side titles as Text objects, a legend's anchor and place): `suptitle`, `titles` and
`anchor` read them, each in one place.
"""
from lengthgen.errors import LengthgenError


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


def laid_out_by_hand(fig) -> bool:
    """Whether no layout engine moves the figure's axes when it is drawn: none was set, or
    only tight_layout's inert placeholder, which a tight_layout call leaves behind (a figure
    made with constrained layout lays itself out at every draw)."""
    engine = fig.get_layout_engine()
    return engine is None or type(engine).__name__ == "PlaceHolderLayoutEngine"


def drawn(fig):
    """Lay the figure out as a draw would (ticks, legends, titles placed; nothing rendered) and
    return its renderer, to measure what it draws (`renderer`)."""
    fig.draw_without_rendering()
    return renderer(fig)


def measured(fig):
    """The renderer to measure `fig` with, its axes placed as a draw would place them: by a
    draw where a layout engine places them (`laid_out_by_hand`), else as a draw does first,
    each axes' aspect and axes locator applied (a colorbar's, an image's). The rest a draw would
    lay out, measuring lays out too (an axis's ticks, a legend's box, a text's lines), so a
    figure laid out by hand is measured without a draw, at a fraction of its cost (`drawn`
    draws)."""
    if not laid_out_by_hand(fig):
        return drawn(fig)
    measure = renderer(fig)
    for ax in fig.axes:
        locator = ax.get_axes_locator()
        ax.apply_aspect(locator(ax, measure) if locator else None)
    return measure


def renderer(fig):
    """The renderer that measures what `fig` draws: its canvas's (agg's, for the figures here),
    or None where its canvas has none, which every measure (get_window_extent, get_tightbbox)
    takes as "the figure's own"."""
    get = getattr(fig.canvas, "get_renderer", None)
    return get() if get is not None else None


def suptitle(fig):
    """The figure's title as a Text, or None (matplotlib's `get_suptitle` gives its words only)."""
    return fig._suptitle


def titles(ax) -> list:
    """An axes' three titles (centre, left, right) as Texts (`get_title` gives their words)."""
    return [ax.title, ax._left_title, ax._right_title]


def is_colorbar(ax) -> bool:
    """Whether an axes is a colorbar's (matplotlib labels the axes it makes for one so)."""
    return ax.get_label() == "<colorbar>"


def anchor(legend):
    """(the bounds, the transform) of the box a legend was placed against with
    `bbox_to_anchor`, or None where it was placed against its parent's box. (Legend's
    `get_bbox_to_anchor` gives that box in pixels, which move with every layout, not the
    bounds it was given in.)"""
    box = legend.get_bbox_to_anchor()
    if box is legend.parent.bbox or not hasattr(box, "_bbox"):
        return None
    return box._bbox.bounds, box._transform


def location(legend):
    """The `loc` a legend was made with, as matplotlib's code (2 for "upper left"), which
    `legend(loc=...)` takes again (Legend has no public getter)."""
    return legend._loc


def _figure_level_bottom(fig) -> float:
    """The top (in figure fraction) of legends and texts placed at the bottom of the figure
    itself (not in an axes): the layout keeps the axes above them."""
    measure = renderer(fig)
    height = fig.bbox.height
    tops = []
    for artist in list(fig.legends) + [t for t in fig.texts if t is not suptitle(fig)]:
        box = artist.get_window_extent(measure)
        if box.y1 < 0.5 * height:
            tops.append(box.y1 / height + 0.01)
    return min(max(tops, default=0.0), 0.5)


MIN_PANEL_IN = 3.5  # a panel narrower than this at MIN_FONT_PT has no room for its labels


def reflow(fig, target_in: float) -> bool:
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
            top = grid.get_topmost_subplotspec()
            # (the cell the sub-grid fills has no public getter, only the top-level cell)
            if top is not grid._subplot_spec:
                return False   # a grid in a grid in a grid: left to its module
            cells.setdefault((top.get_gridspec(), top.rowspan.start, top.colspan.start), grid)
        elif not is_colorbar(ax):
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
    if any(isinstance(moved, GridSpecFromSubplotSpec) for moved in cells.values()) and \
            target_in >= 2 * MIN_PANEL_IN:
        # panels with colorbars: left to their module's own layout in the column (on a phone
        # they go one per row like the others, their colorbars with them)
        return False
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
            _move_subgrid(fig, moved, cell)
        else:
            moved.set_subplotspec(cell)
            # panels that shared an axis with a neighbour hid its tick labels: show them again
            # where the new arrangement has no neighbour to read them from
            if index % new_cols == 0:
                moved.tick_params(axis="y", labelleft=True)
            moved.tick_params(axis="x", labelbottom=True)
    fig.set_size_inches(target_in, panel_height * new_rows + 0.4)
    return True


def _move_subgrid(fig, grid, cell) -> None:
    """Place the axes of a sub-grid (a panel and its colorbar) in `cell` of another grid: a
    sub-grid of the same shape, ratios and spacing is made there, and each axes takes the same
    cells of it."""
    from matplotlib.gridspec import GridSpecFromSubplotSpec
    # (its spacing has no public getter: get_subplot_params resolves a spacing left unset to
    # the figure's, which tight_layout changes)
    new = GridSpecFromSubplotSpec(*grid.get_geometry(), subplot_spec=cell,
                                  wspace=grid._wspace, hspace=grid._hspace,
                                  width_ratios=grid.get_width_ratios(),
                                  height_ratios=grid.get_height_ratios())
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is not None and spec.get_gridspec() is grid:
            ax.set_subplotspec(new[spec.rowspan.start:spec.rowspan.stop,
                                   spec.colspan.start:spec.colspan.stop])


def below_axes(legend) -> bool:
    """Whether a legend hangs under its axes at a fixed fraction of the axes' height (which
    larger text and a shorter axes turn into an overlap with the x label)."""
    placed, ax = anchor(legend), legend.axes
    return (ax is not None and placed is not None and placed[1] == ax.transAxes
            and placed[0][1] + placed[0][3] < 0 and location(legend) in (1, 2, 9))


def hang_legends(fig) -> bool:
    """Hang each legend placed under its axes just below that axes' x label (the fraction of
    the axes' height it was placed at does not clear larger text on a shorter axes). Returns
    whether the figure has such a legend."""
    from matplotlib.legend import Legend
    hung = [legend for legend in fig.findobj(Legend) if below_axes(legend)]
    if not hung:
        return False
    measure = renderer(fig)
    for legend in hung:
        # no draw of the whole figure: the x axis lays out its own ticks and label, and the
        # axes takes the place its aspect gives it (what a draw would do first)
        ax = legend.axes
        ax.apply_aspect()
        bottom = ax.xaxis.get_tightbbox(measure)
        if bottom is None:
            continue
        y = ax.transAxes.inverted().transform((0, bottom.y0))[1]
        x0, _, width, _ = anchor(legend)[0]
        legend.set_bbox_to_anchor((x0, y - 0.02, width, 0), transform=ax.transAxes)
    return True


def tight_layout(fig, taller: bool = False) -> None:
    """tight_layout that keeps figure-level legends and notes below the axes, and legends hung
    under an axes below its x label. With `taller` (a phone's column), a figure too short for
    its panels' titles, labels and legends, which tight_layout leaves where they were, over each
    other, grows by half until they fit (a few times at most)."""
    import warnings
    for _ in range(6 if taller else 1):
        title = suptitle(fig)
        if title is not None and title.get_va() == "top" and title.get_position()[1] > 0.9:
            # tight_layout keeps the height of the figure's title free at the top, but the
            # title hangs from y = 0.98 by default: 2% of a tall figure lower, over the panels'
            # titles
            title.set_y(1 - 0.05 / fig.get_size_inches()[1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                hang_legends(fig)
                caught.clear()
                # (with a `rect`, matplotlib measures every axes twice, the second time to fit
                # the first's margins into it: a rect of the whole figure would find the same
                # margins again, so none is passed where nothing sits at the figure's bottom)
                bottom = _figure_level_bottom(fig)
                fig.tight_layout(rect=(0, bottom, 1, 1) if bottom else None)
            hang_legends(fig)
        if not any("not applied" in str(warning.message) and
                   ("height" in str(warning.message) or "top" in str(warning.message))
                   for warning in caught):
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, 1.5 * height)


def relegend(legend, ncols: int):
    """Draw a legend again in `ncols` columns, where it was (a legend lays out its columns
    only when it is made). Returns the new legend."""
    parent = legend.parent
    title = legend.get_title()
    placed = anchor(legend)
    placed = {} if placed is None else {"bbox_to_anchor": placed[0], "bbox_transform": placed[1]}
    kwargs = {"loc": location(legend), **placed, "ncols": ncols,
              "fontsize": legend.texts[0].get_fontsize() if legend.texts else None,
              "frameon": legend.get_frame_on()}
    if title.get_text():
        kwargs.update(title=title.get_text(), title_fontsize=title.get_fontsize())
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.texts]
    legend.remove()
    return parent.legend(handles, labels, **kwargs)


def wrap_titles(fig, width_in: float, axes_titles: bool = True) -> bool:
    """Break the figure's titles and notes, and (with axes_titles) the axes' titles, that are
    wider than their room into lines. Returns whether any was broken."""
    import textwrap
    measure, title = renderer(fig), suptitle(fig)
    texts = [(title, width_in * DPI * 0.95)] if title is not None else []
    texts += [(t, width_in * DPI * 0.95) for t in fig.texts if t is not title]
    for ax in fig.axes if axes_titles else []:
        room = max(ax.get_window_extent(measure).width * 1.15, 150)
        texts += [(t, room) for t in titles(ax)]
    wrapped = False
    for text, room in texts:
        content = text.get_text()
        width = text.get_window_extent(measure).width
        if content and width > room:
            longest = max(len(line) for line in content.split("\n"))
            chars = max(12, int(longest * room / width))
            # never inside a word, nor after the hyphen of "in-sample" or "1e-06" (issue 51)
            text.set_text("\n".join(textwrap.wrap(content.replace("\n", " "), chars,
                                                   break_on_hyphens=False,
                                                   break_long_words=False)))
            wrapped = True
    return wrapped


def saved_width_px(fig) -> float:
    """The width in pixels at DPI of the figure's image as `save_png` saves it."""
    box = fig.get_tightbbox(measured(fig))
    return box.width * DPI + 2 * DPI * 0.1  # savefig's pad_inches = 0.1


def save_png(fig, dpi: int, tight: bool = True,
             text_px: float | None = None) -> tuple[bytes, float]:
    """PNG bytes of a figure laid out already (cut to what it draws, unless not `tight`: the
    frames of a slider keep one size), and the height in pixels of the PNG of its smallest
    text (its font size in points at `dpi`). A figure redrawn per frame with the same texts
    (other data, other words) passes the `text_px` its first frame returned.

    savefig would lay the figure out once more before drawing it (for its tight box, and for
    any layout engine, even tight_layout's inert placeholder), and measuring the text would take
    another: here one layout, at the dpi it is saved at as savefig's own, serves both, and
    savefig only draws. A frame of a slider needs no layout at all."""
    import io

    import matplotlib
    keep_canvas(fig)
    engine = fig.get_layout_engine()
    if tight or text_px is None or not laid_out_by_hand(fig):
        original_dpi = fig.dpi
        fig.set_dpi(dpi)
        try:
            renderer = drawn(fig)   # (runs a live layout engine, as savefig would)
            if tight:
                box = fig.get_tightbbox(renderer).padded(matplotlib.rcParams["savefig.pad_inches"])
            if text_px is None:
                text_px = smallest_text_pt(fig, renderer) * dpi / 72
        finally:
            fig.set_dpi(original_dpi)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)   # laid out already: savefig need not lay it out again
    try:
        # its pixels, not a PNG: palette_png makes the PNG
        fig.savefig(buffer, format="rgba", dpi=dpi, bbox_inches=box if tight else None)
    finally:
        fig.set_layout_engine(engine)
    return palette_png(buffer.getvalue(),
                       _canvas_px(box.size if tight else fig.get_size_inches(), dpi)), text_px


def keep_canvas(fig) -> None:
    """Give a figure that pyplot has closed an agg canvas of its own again.

    pyplot's `close` leaves a figure a bare canvas (FigureCanvasBase), which can draw nothing,
    so each savefig of it makes a new agg canvas, hence a new renderer, and a renderer's caches
    start empty: its parser of math text (matplotlib keeps parses per parser: every $10^{3}$
    tick label and $\\tau$ in a legend parsed again at every frame of a slider, most of a
    frame's time) and its fonts. A canvas made here stays the figure's, and savefig draws with
    its renderer for as long as the size and dpi stay the same (every frame of a slider). The
    pixels are the same: agg clears its renderer before every draw."""
    if not hasattr(fig.canvas, "print_rgba"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)   # (a canvas made for a figure becomes its canvas)


def _canvas_px(size_in, dpi: float) -> tuple[int, int]:
    """The size in pixels of agg's canvas for a figure of `size_in` inches at `dpi`, as savefig
    sizes it (FigureCanvasBase.get_width_height: the figure's box at dpi, cut to whole pixels,
    but 629.99999999 taken as 630)."""
    from matplotlib.transforms import Affine2D, Bbox, TransformedBbox
    corner = TransformedBbox(Bbox.from_bounds(0, 0, *size_in), Affine2D().scale(dpi)).max
    return int(corner[0] + 1e-8), int(corner[1] + 1e-8)


def smallest_text_pt(fig, renderer=None) -> float:
    """The font size in points of the smallest text the figure draws (texts, labels, legends,
    tick labels inside the axes' limits); `renderer`: the figure's, just laid out."""
    from matplotlib.text import Text
    renderer = renderer or drawn(fig)
    sizes = [text.get_fontsize() for text in fig.findobj(Text)
             if text.get_visible() and text.get_text().strip()
             and _drawn_inside(text.get_window_extent(renderer), fig.bbox)]
    return min(sizes, default=MIN_FONT_PT)


def _drawn_inside(box, figure_box) -> bool:
    """Whether a text's box has a size and lies at least partly in the figure (tick labels of
    ticks outside an axes' limits are laid out but not drawn)."""
    return (box.width > 0 and box.x1 >= figure_box.x0 and box.x0 <= figure_box.x1
            and box.y1 >= figure_box.y0 and box.y0 <= figure_box.y1)


def palette_png(rgba: bytes, size: tuple[int, int]) -> bytes:
    """A PNG of these pixels (RGBA, rows top first, `size` = (width, height)) in at most 256
    colours (a palette PNG, no dithering): plots have few colours, and the page weighs about a
    quarter (slider frames are inlined in the pages)."""
    import io

    from PIL import Image
    if len(rgba) != 4 * size[0] * size[1]:
        raise LengthgenError(f"{len(rgba)} bytes of pixels are not an image of {size[0]} x "
                             f"{size[1]} pixels")
    image = Image.frombuffer("RGBA", size, rgba, "raw", "RGBA", 0, 1).convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                             dither=Image.Dither.NONE)
    out = io.BytesIO()
    # zlib's level 8: 1% more bytes than its best (9, Pillow's optimize), in 40% of the time
    palette.save(out, format="PNG", compress_level=8)
    return out.getvalue()
