"""The steps of laying a figure out for the site, and saving it.

The book's column and a phone's have their sizes here (COLUMN_PX, NARROW_PX and their dpi).
`viz.fit.fit_to_column` runs the steps in order: re-arranging a grid of panels into fewer
columns (`reflow`), a tight layout that keeps legends hung below their panels
(`tight_layout`), wrapping titles (`wrap_titles`), narrowing a legend (`relegend`) and
measuring the saved width (`saved_width_px`); the steps only a phone's column takes are in
`viz.phone`. `save_png` saves a laid-out figure as a palette PNG and measures its smallest
text, which the browser test turns into pixels on screen. Layouts measure a figure many times,
and matplotlib computes much of it again at every measure: here the parses of math text, the
heights of fonts and, while a figure is laid out and saved (`ticks_reused`), its axes' ticks
are kept instead, with the same pixels.
"""
import contextlib
import functools

from lengthgen.errors import LengthgenError


def _share_mathtext_parses() -> None:
    """Let every renderer reuse matplotlib's parse of a math text ($10^{2}$, log-scale ticks).

    matplotlib caches the last 50 parses per parser, and each renderer has its own parser. A
    renderer is made for each size and dpi a figure is drawn at, and a figure here is drawn at
    several of each (`fit_to_column`, for the column and for a phone, then saved), so that cache
    never served a slider's next frame: parsing was a third of saving a log-scale frame. One
    cache per kind of output (raster or vector) gives the same parses, found again. Where
    matplotlib's internals differ from the version this was written for, nothing is changed."""
    from matplotlib.mathtext import MathTextParser
    parse = getattr(MathTextParser, "_parse_cached", None)
    unwrapped = getattr(parse, "__wrapped__", None)
    if unwrapped is None or getattr(parse, "_lengthgen_shared", False):
        return
    parsers = {}

    @functools.lru_cache(maxsize=4096)
    def shared(output_type, *key, **named):
        parser = parsers.setdefault(output_type, MathTextParser(
            {"vector": "path", "raster": "agg"}[output_type]))
        return unwrapped(parser, *key, **named)

    def parse_cached(self, *key, **named):
        # (the text, dpi, font and antialiasing, and in matplotlib 3.11 the glyph flags, not
        # in 3.8: whatever this matplotlib passes, passed on, and part of the cache's key)
        return shared(self._output_type, *key, **named)

    # A parse holds the fonts it was laid out with, which read their font files through the
    # file offsets this process shares with a forked copy of it (`viz.parallel`): a copy
    # parses again with fonts of its own, as matplotlib's cache of fonts does.
    import os
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=shared.cache_clear)
    parse_cached._lengthgen_shared = True
    parse_cached.cache = shared      # (its cache_info(), for the tests)
    parse_cached.original = parse
    MathTextParser._parse_cached = parse_cached


_FONT_HEIGHTS_CHECKED = False


def _share_font_heights() -> None:
    """Let agg's renderers measure a font's height once per font, size and dpi (from the first
    figure laid out or saved here on: `measuring_once`; the check below needs a figure).

    Laying a text out (its box, for every measure of a layout) starts with the height of a line
    of its font: the typographic ascender, descender and line gap of the font file's OS/2 table
    (else its hhea table), in font units, scaled to the font's size at the dpi. matplotlib
    looks the font up and reads those tables afresh for every text at every measure, unless
    the renderer offers them (`_get_font_height_metrics`, asked where it exists): that was
    a fifth of the time the Dyck chapter's figures took. Here agg's renderer offers them,
    read the same way and kept. Where matplotlib's renderer has the method already, nothing is
    changed, nor where texts measured with it differ from texts measured without it (another
    matplotlib, which reads the heights otherwise or asks otherwise);
    tests/test_layout_reuse.py compares the pixels with and without."""
    global _FONT_HEIGHTS_CHECKED
    from matplotlib.backends.backend_agg import RendererAgg
    if _FONT_HEIGHTS_CHECKED or hasattr(RendererAgg, "_get_font_height_metrics") or \
            not font_heights_asked():
        return
    _FONT_HEIGHTS_CHECKED = True

    def font_height_metrics(self, props):
        return _font_heights(props.copy(), self.dpi)   # (a copy: a FontProperties can change)

    font_height_metrics._lengthgen_shared = True
    try:
        read = _text_boxes()
        RendererAgg._get_font_height_metrics = font_height_metrics
        same = _text_boxes() == read
    except Exception:   # (asked with other arguments, say)
        same = False
    if not same and "_get_font_height_metrics" in vars(RendererAgg):
        del RendererAgg._get_font_height_metrics


def font_heights_asked() -> bool:
    """Whether matplotlib's text layout asks a renderer for the fonts' heights (3.11 does,
    3.8 did not)."""
    from matplotlib.text import Text
    code = getattr(getattr(Text, "_get_layout", None), "__code__", None)
    return code is not None and "_get_font_height_metrics" in code.co_names


def _text_boxes() -> list:
    """The boxes of a few texts (sizes, weights, lines) as agg measures them, at two dpi."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    boxes = []
    for dpi in (100, 200):
        figure = Figure(figsize=(3, 2), dpi=dpi)
        renderer = FigureCanvasAgg(figure).get_renderer()
        for text, size, weight in (("Tg", 10.5, "normal"), ("two\nlines", 7, "bold"),
                                   ("one\ntwo\nthree", 14, "normal")):
            boxes.append(figure.text(0.1, 0.5, text, size=size, weight=weight)
                         .get_window_extent(renderer).bounds)
    return boxes


@functools.lru_cache(maxsize=1024)
def _font_heights(props, dpi: float) -> tuple:
    """(ascent, descent, line gap) in pixels of the font matplotlib finds for `props`, at its
    size and `dpi`; (None, None, None) where the font has neither table (matplotlib then
    measures "lp" instead)."""
    from matplotlib.font_manager import fontManager, get_font
    font = get_font(fontManager._find_fonts_by_props(props))
    for name, gap, ascent, descent in (("OS/2", "sTypoLineGap", "sTypoAscender",
                                        "sTypoDescender"),
                                       ("hhea", "lineGap", "ascent", "descent")):
        table = font.get_sfnt_table(name)
        if table is not None:   # (scaled in matplotlib's order of operations: the same bits)
            units = font.get_sfnt_table("head")["unitsPerEm"]
            scale = 1 / units * props.get_size_in_points() * dpi / 72
            return table[ascent] * scale, -table[descent] * scale, table[gap] * scale
    return None, None, None


_share_mathtext_parses()


# Whether `ticks_reused` reuses ticks (the tests compare pixels with and without).
REUSE_TICKS = True


@contextlib.contextmanager
def ticks_reused(fig):
    """While `fig` is laid out or saved, each axis computes its ticks again only when what they
    are computed from has changed.

    matplotlib computes an axis's ticks (where they go, their labels, the Tick objects moved
    there) afresh every time anything measures the axis: the axes' box, each spine (for the
    length of the tick marks), the title's place, the labels of axes that share it. One
    phone layout of a four-panel figure with log scales did so about 1,200 times where the
    ticks changed a few times, a third of the layout's time. Here an axis keeps its last ticks
    with what they were computed from: the view limits, the axes' box in pixels and the dpi
    (a locator fits as many ticks as the axis's length in points allows), the scale, the
    locators and formatters, the lists of ticks and the tick parameters (label size, which
    labels show). The layout steps change ticks only through these (set_xticks and
    set_ticklabels make a new locator or formatter, tick_params changes the parameters), so
    the figure is drawn with the same ticks, pixel for pixel (tests/test_layout_reuse.py). Where
    matplotlib's internals differ from the version this was written for, nothing is reused."""
    from matplotlib.axis import Axis
    compute = getattr(Axis, "_update_ticks", None)
    axes = [axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            if "_update_ticks" not in vars(axis)]   # (an outer ticks_reused has them)
    known = all(hasattr(axis, name) for axis in axes[:1]   # (what `_reused_ticks` reads)
                for name in ("_scale", "major", "minor", "_major_tick_kw", "_minor_tick_kw"))
    if compute is None or not known or not REUSE_TICKS:
        yield fig
        return
    for axis in axes:
        axis._update_ticks = functools.partial(_reused_ticks, axis, compute, [None])
    try:
        yield fig
    finally:
        for axis in axes:
            vars(axis).pop("_update_ticks", None)


def measuring_once(function):
    """`function(fig, ...)` (a layout step, a save), with what matplotlib computes again at every
    measure kept instead: the axes' ticks (`ticks_reused`) and the fonts' heights
    (`_share_font_heights`)."""
    @functools.wraps(function)
    def run(fig, *args, **kwargs):
        _share_font_heights()
        with ticks_reused(fig):
            return function(fig, *args, **kwargs)
    return run


def _reused_ticks(axis, compute, last: list):
    """Axis._update_ticks, or the ticks it returned last where nothing they depend on changed
    (`ticks_reused`); `last` holds them and what they were computed from."""
    def inputs():
        # objects compared by identity (held here, so none is freed and its id reused), values
        # by equality
        ticks = vars(axis)
        objects = (axis._scale, axis.major.locator, axis.major.formatter, axis.minor.locator,
                   axis.minor.formatter, ticks.get("majorTicks"), ticks.get("minorTicks"))
        values = (tuple(axis.get_view_interval()), axis.axes.bbox.bounds,
                  axis.axes.figure.dpi, len(ticks.get("majorTicks") or ()),
                  len(ticks.get("minorTicks") or ()), repr(axis._major_tick_kw),
                  repr(axis._minor_tick_kw))
        return objects, values

    if last[0] is not None:
        objects, values = inputs()
        kept_objects, kept_values, ticks = last[0]
        if values == kept_values and all(a is b for a, b in zip(objects, kept_objects)):
            return list(ticks)
    ticks = compute(axis)
    last[0] = (*inputs(), ticks)   # (after: computing them may make the lists of ticks)
    return list(ticks)


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
    return its renderer, to measure what it draws (the figure's own: a closed figure's canvas
    may have no get_renderer)."""
    fig.draw_without_rendering()
    return fig._get_renderer()


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


def below_axes(legend) -> bool:
    """Whether a legend hangs under its axes at a fixed fraction of the axes' height (which
    larger text and a shorter axes turn into an overlap with the x label)."""
    anchor, ax = legend._bbox_to_anchor, legend.axes
    return (ax is not None and anchor is not None and anchor is not legend.parent.bbox
            and getattr(anchor, "_transform", None) == ax.transAxes
            and anchor._bbox.y1 < 0 and legend._loc in (1, 2, 9))


def hang_legends(fig) -> bool:
    """Hang each legend placed under its axes just below that axes' x label (the fraction of
    the axes' height it was placed at does not clear larger text on a shorter axes). Returns
    whether the figure has such a legend."""
    from matplotlib.legend import Legend
    hung = [legend for legend in fig.findobj(Legend) if below_axes(legend)]
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


def tight_layout(fig, taller: bool = False) -> None:
    """tight_layout that keeps figure-level legends and notes below the axes, and legends hung
    under an axes below its x label. With `taller` (a phone's column), a figure too short for
    its panels' titles, labels and legends, which tight_layout leaves where they were, over each
    other, grows by half until they fit (a few times at most)."""
    import warnings
    for _ in range(6 if taller else 1):
        title = fig._suptitle
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
                fig.tight_layout(rect=(0, _figure_level_bottom(fig), 1, 1))
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
    return parent.legend(handles, labels, **kwargs)


def wrap_titles(fig, width_in: float, axes_titles: bool = True) -> bool:
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
            # never inside a word, nor after the hyphen of "in-sample" or "1e-06" (issue 51)
            text.set_text("\n".join(textwrap.wrap(content.replace("\n", " "), chars,
                                                   break_on_hyphens=False,
                                                   break_long_words=False)))
            wrapped = True
    return wrapped


def saved_width_px(fig) -> float:
    fig.draw_without_rendering()  # legends and texts lay themselves out when drawn
    renderer = fig._get_renderer()
    box = fig.get_tightbbox(renderer)
    return box.width * DPI + 2 * DPI * 0.1  # savefig's pad_inches = 0.1


@measuring_once
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
