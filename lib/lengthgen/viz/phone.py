"""How `viz.fit.fit_to_column` lays a figure out for a phone's column (NARROW_PX).

A phone's column is too narrow for two panels side by side, for a legend inside a panel, or
for the long names and labels a notebook's figure was drawn with. These steps let the figure
read there without panning: legends go under their panels in one column and are wrapped to
the column, named ticks (program names, say) and axis labels are broken into lines, and panels
get the room they need, sideways and down. A phone scrolls down, not sideways, so the figure
grows taller rather than wider where it can.
"""
import re

from lengthgen.viz.layout import (DPI, below_axes, measured, hang_legends, relegend,
                                  saved_width_px, tight_layout)

MIN_PHONE_PANEL_IN = 1.6   # a panel gets this much width even if its labels need more
MIN_PHONE_PANEL_HEIGHT_IN = 1.2   # and this much height, or what its tick labels need


def panels(fig) -> list:
    """The axes that plot something at a size the layout decides (no colorbars, no images of
    fixed aspect)."""
    return [ax for ax in fig.axes
            if ax.axison and not hasattr(ax, "_colorbar") and ax.get_aspect() == "auto"]


def legend_below(ax):
    """Move an axes' legend under it, in one column (`layout.tight_layout` hangs it below the x label).
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


def wrap_legends(fig, width_in: float) -> None:
    """Put a legend wider than the column in one column, and break its entries that are still
    too wide into lines; a legend hung under a panel is kept as narrow as the panel will be
    (the column less the panel's tick labels and y label).

    This comes before the first layout. tight_layout keeps what an axes draws beside it as it
    is when the axes moves: a legend centred under a panel, wider than the panel, sticks out
    more the narrower the panel gets, and tight_layout squeezes the panel to a sliver."""
    from matplotlib.legend import Legend
    legends = fig.findobj(Legend)
    if not legends:
        return
    renderer = measured(fig)
    for legend in legends:
        room = width_in * DPI * 0.9
        if below_axes(legend):
            ax = legend.axes
            beside = ax.get_window_extent(renderer).x0 - ax.yaxis.get_tightbbox(renderer).x0
            room = min(room, width_in * DPI - beside - 0.4 * DPI)
        box = legend.get_window_extent(renderer)
        if box.width > room and legend._ncols > 1:
            legend = relegend(legend, 1)
            renderer = measured(fig)
            box = legend.get_window_extent(renderer)
        if box.width > room:
            texts = legend.texts + [legend.get_title()]
            widest = max(text.get_window_extent(renderer).width for text in texts)
            for text in texts:
                _wrap(text, widest - (box.width - room), renderer)


def wrap_tick_labels(fig, width_in: float) -> bool:
    """Break the named ticks of a y axis (program names, say) that leave less than
    MIN_PHONE_PANEL_IN beside them for the panel into lines (`stack_rows` then gives every
    row room for its lines). Numbers are never broken. Returns whether any was."""
    named = _named_tick_panels(fig, "y")
    renderer = measured(fig) if named else None   # most figures have none
    wrapped = False
    for ax in named:
        labels = [label for label in ax.get_yticklabels() if label.get_text().strip()]
        if not labels:
            continue
        label = ax.yaxis.label
        beside = label.get_window_extent(renderer).width if label.get_text() else 0
        # the y label, the ticks and the figure's margins take the rest of the column
        room = (width_in - MIN_PHONE_PANEL_IN) * DPI - beside - 0.6 * DPI
        widest = max(label.get_window_extent(renderer).width for label in labels)
        if widest > room:
            texts = _tick_names(ax.yaxis)
            chars = _chars_in(texts, room, widest)
            ax.yaxis.set_ticklabels([_break_lines(text, chars) for text in texts])
            wrapped = True
    return wrapped


def wrap_labels(fig) -> bool:
    """Break titles wider than their panels, and axis labels longer than their axes, into
    lines. Returns whether any was broken."""
    renderer = measured(fig)
    wrapped = False
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        if ax.title.get_text() and ax.title.get_window_extent(renderer).width > box.width:
            # a title wider than its panel ends at the panel's right edge and reaches left
            # over the labels, instead of past both edges of the figure
            ax.title.set_horizontalalignment("right")
            ax.title.set_x(1.0)
            wrapped |= _wrap(ax.title, box.x1 - fig.bbox.x0 - 10, renderer) or True
        # (a panel squeezed by the legends between the rows gets its height back at the end)
        height = max(box.height, MIN_PHONE_PANEL_HEIGHT_IN * fig.dpi)
        wrapped |= _wrap(ax.yaxis.label, height * 1.05, renderer, vertical=True)
        wrapped |= _wrap(ax.xaxis.label, max(box.width * 1.1, 150), renderer)
    return wrapped


def turn_crowded_tick_labels(fig) -> bool:
    """Where the named x ticks (settings, say) of a panel run into each other on a phone's
    narrow panel, put each word of a name on its own line if the widest word fits between two
    ticks, else turn the names upright (on one line each). Returns whether any changed."""
    named = _named_tick_panels(fig, "x")
    renderer = measured(fig) if named else None   # most figures have none
    changed = False
    for ax in named:
        labels = sorted((label for label in ax.get_xticklabels()
                         if label.get_visible() and label.get_text().strip()),
                        key=lambda label: label.get_window_extent(renderer).x0)
        boxes = [label.get_window_extent(renderer) for label in labels]
        if not any(left.x1 > right.x0 - 2 for left, right in zip(boxes, boxes[1:])):
            continue
        gap = min(right.x0 + right.width / 2 - left.x0 - left.width / 2
                  for left, right in zip(boxes, boxes[1:]))
        # the widest word, from each name's width per character on its longest line
        word = max(box.width / max(len(line) for line in label.get_text().split("\n"))
                   * max(len(w) for w in label.get_text().split())
                   for label, box in zip(labels, boxes))
        locs, names = ax.xaxis.get_major_locator().locs, _tick_names(ax.xaxis)
        # (turned about their box's centre: names slanted about their anchor, the end of the
        # name at the tick, would stand upright above it, over the panel)
        if word + 6 < gap:
            ax.set_xticks(locs, ["\n".join(name.split()) for name in names], rotation=0,
                          ha="center", rotation_mode="default")
        else:
            ax.set_xticks(locs, [" ".join(name.split()) for name in names], rotation=90,
                          ha="center", rotation_mode="default")
        changed = True
    return changed


def widen_crushed_panels(fig) -> None:
    """A panel that long labels beside it squeeze below MIN_PHONE_PANEL_IN gets the width it
    lacks: the figure is then wider than the column, and pans on a phone (Picture.html) rather
    than show a plot too narrow to read. (The layout of the wider figure may give the panel
    more than it lacked, titles that reached past the labels having room now: the figure is
    then narrowed again, to what the panel needs.)"""
    for attempt in range(4):
        renderer = measured(fig)
        widths = [ax.get_window_extent(renderer).width / fig.dpi for ax in panels(fig)]
        lacking = MIN_PHONE_PANEL_IN - min(widths, default=MIN_PHONE_PANEL_IN)
        if lacking < 0.05 and (attempt == 0 or lacking > -0.05):
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + lacking, height)
        tight_layout(fig, taller=True)


def stack_rows(fig, width_px: float) -> None:
    """Stack the rows of panels again, top to bottom, each with the room its own titles, labels
    and legends take, each panel at least MIN_PHONE_PANEL_HEIGHT_IN tall or as tall as its tick
    labels need (`_needed_height`). The figure gets the height this takes.

    tight_layout leaves the same room between every two rows: the room the tallest legend hung
    under a panel needs, which squeezes every panel of a figure of fixed height (and with
    images of fixed aspect it may leave none, a title on the x label above). A figure whose
    rows are apart and would change by less than a tenth of an inch is left as it is. A taller
    panel may get longer tick labels beside it: the panels are then narrowed to keep the figure
    within `width_px` (tight_layout, which would do it, would undo the rows' heights)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.pyplot import rcParams
    from matplotlib.transforms import Bbox
    rows = _rows(fig, measured(fig))
    if not rows:
        return
    # tight_layout's room between two rows' decorations (its pad, in font sizes)
    gap = 1.08 * FontProperties(size=rcParams["font.size"]).get_size_in_points() / 72 * fig.dpi
    old = fig.bbox.height
    margin_top, margin_bottom = old - rows[0]["outer"].y1, rows[-1]["outer"].y0
    new = (margin_top + margin_bottom + gap * (len(rows) - 1)
           + sum(row["outer"].height + row["lack"] for row in rows))
    touching = any(upper["outer"].y0 - lower["outer"].y1 < gap / 2
                   for upper, lower in zip(rows, rows[1:]))
    if all(row["lack"] < 1 for row in rows) and old - new < 0.1 * fig.dpi and not touching:
        return
    places = []
    top = new - margin_top   # where the next row's decorations begin, from the bottom
    for row in rows:
        box, outer, lack = row["box"], row["outer"], row["lack"]
        shift = top - (outer.y1 - box.y1) - box.y1   # the row's top moves by this
        for ax, place in row["axes"]:
            if abs(place.y0 - box.y0) < 1 and abs(place.y1 - box.y1) < 1:
                # an axes as tall as its row grows with it
                place = Bbox([[place.x0, place.y0 + shift - lack], [place.x1, place.y1 + shift]])
            else:
                place = place.translated(0, shift)
            places.append((ax, place))
        top = box.y0 + shift - lack - (box.y0 - outer.y0) - gap
    width = fig.get_size_inches()[0]
    _keep_figure_texts(fig, old, new)
    fig.set_size_inches(width, new / fig.dpi)
    for ax, place in places:
        ax._set_position(place.transformed(fig.transFigure.inverted()), which="both")
    hang_legends(fig)   # under an axes whose height changed
    sized = panels(fig)
    for _ in range(3):
        excess = saved_width_px(fig) - width_px
        narrowest = min([place.width for ax, place in places if ax in sized], default=0)
        left = min(place.x0 for _, place in places)
        span = max(place.x1 for _, place in places) - left
        scale = (span - excess) / span
        # (a figure whose panels would get narrower than MIN_PHONE_PANEL_IN pans anyway, see
        # widen_crushed_panels)
        if excess <= 1 or narrowest * scale < MIN_PHONE_PANEL_IN * fig.dpi:
            break
        places = [(ax, Bbox([[left + (place.x0 - left) * scale, place.y0],
                             [left + (place.x1 - left) * scale, place.y1]]))
                  for ax, place in places]
        for ax, place in places:
            ax._set_position(place.transformed(fig.transFigure.inverted()), which="both")
        hang_legends(fig)


def _rows(fig, renderer) -> list[dict]:
    """The figure's axes in rows, top first: those whose allotted boxes overlap vertically (a
    panel, its colorbar, a twin). Each row: its axes with their boxes ("axes"), the box they
    fill ("box"), the box with their titles, labels and legends ("outer"), and the height its
    panels lack ("lack"), in pixels."""
    from matplotlib.transforms import Bbox
    placed = [(ax, ax.get_position(original=True).transformed(fig.transFigure))
              for ax in fig.axes if ax.get_visible()]
    sized = panels(fig)
    rows = []
    for ax, place in sorted(placed, key=lambda item: -item[1].y1):
        if rows and place.y1 > rows[-1]["box"].y0 + 1:
            rows[-1]["axes"].append((ax, place))
            rows[-1]["box"] = Bbox.union([rows[-1]["box"], place])
        else:
            rows.append({"axes": [(ax, place)], "box": place})
    for row in rows:
        outer = [ax.get_tightbbox(renderer) for ax, _ in row["axes"]]
        row["outer"] = Bbox.union([row["box"]] + [box for box in outer if box is not None])
        row["lack"] = max([0.0] + [_needed_height(ax, renderer) - ax.get_window_extent(
            renderer).height for ax, _ in row["axes"] if ax in sized])
    return rows


def _keep_figure_texts(fig, old: float, new: float) -> None:
    """Keep the figure's title as far from the top, and its notes and legends in its lower
    half as far from the bottom, in pixels, when the figure's height goes from `old` to `new`
    pixels (they are placed in fractions of the figure)."""
    in_figure = (fig.transFigure, fig.transSubfigure)
    title = fig._suptitle
    if title is not None:
        title.set_y(1 - (1 - title.get_position()[1]) * old / new)
    for text in fig.texts:
        if text is not title and text.get_transform() in in_figure and \
                text.get_position()[1] < 0.5:
            text.set_y(text.get_position()[1] * old / new)
    for legend in fig.legends:
        anchor = legend._bbox_to_anchor
        if anchor is not None and anchor is not legend.parent.bbox and \
                anchor._transform in in_figure:
            x0, y0, width, height = anchor._bbox.bounds
            if y0 < 0.5:
                legend.set_bbox_to_anchor((x0, y0 * old / new, width, height * old / new),
                                          transform=anchor._transform)


def _needed_height(ax, renderer) -> float:
    """The height in pixels a panel needs: MIN_PHONE_PANEL_HEIGHT_IN, or more where its y tick
    labels (names broken into lines, say) would touch: each two neighbours' centres then lie
    1.15 times their mean height apart."""
    box = ax.get_window_extent(renderer)
    # (the labels of ticks outside the axis' limits are laid out too, but not drawn)
    labels = sorted(((b.y0 + b.y1) / 2, b.height) for b in (
        label.get_window_extent(renderer) for label in ax.get_yticklabels()
        if label.get_visible() and label.get_text().strip())
        if box.y0 - 1 <= (b.y0 + b.y1) / 2 <= box.y1 + 1)
    stretch = max([1.15 * (low[1] + high[1]) / 2 / (high[0] - low[0])
                   for low, high in zip(labels, labels[1:]) if high[0] > low[0]], default=0)
    return max(MIN_PHONE_PANEL_HEIGHT_IN * ax.figure.dpi, stretch * box.height)


def _named_tick_panels(fig, axis: str) -> list:
    """The panels whose `axis` ("x" or "y") has named ticks: set_xticks(positions, names) gives
    a fixed locator and a formatter that looks the names up (no number formatter)."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter
    return [ax for ax in panels(fig)
            if isinstance(getattr(ax, f"{axis}axis").get_major_locator(), FixedLocator)
            and isinstance(getattr(ax, f"{axis}axis").get_major_formatter(),
                           (FixedFormatter, FuncFormatter))]


def _tick_names(axis) -> list[str]:
    """The names of an axis's named ticks, as its formatter gives them."""
    locator, formatter = axis.get_major_locator(), axis.get_major_formatter()
    return [formatter(loc, pos) for pos, loc in enumerate(locator.locs)]


def _break_lines(content: str, chars: int) -> str:
    """`content` in lines of about `chars` characters, broken after spaces, underscores and
    bars, never inside a word or a name: binary_majority_interleave [periodic] becomes
    binary_majority_ / interleave / [periodic]. Never after a hyphen either: it joins a word
    ("length-generalization"), a number ("1.29e-06"), a range ("101-150") or a formula
    ("i-j>=50"), which a line ending in "-" would split (issue 51). A piece longer than `chars`
    sets the width of every line (they would not make the text narrower, only taller)."""
    # (a bar between two brackets, say, not one of the bars of |x|)
    pieces = re.split(r"(?<=[ _])|(?<=[^\s\w]\|)(?=[^\s\w])", content.replace("\n", " "))
    chars = max([chars] + [len(piece.strip()) for piece in pieces])
    lines, line = [], ""
    for piece in pieces:
        if line.strip() and len((line + piece).rstrip()) > chars:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    return "\n".join(lines + [line.rstrip()])


def _chars_in(texts: list[str], room: float, width: float) -> int:
    """How many characters a line of `texts`, drawn `width` pixels wide, may have in `room`."""
    longest = max(len(line) for text in texts for line in text.split("\n"))
    return max(10, int(longest * room / width))


def _wrap(text, room: float, renderer, vertical: bool = False) -> bool:
    """Break a text longer than `room` pixels (its height if `vertical`) into lines."""
    content = text.get_text()
    box = text.get_window_extent(renderer)
    size = box.height if vertical else box.width
    if not content.strip() or size <= room:
        return False
    text.set_text(_break_lines(content, _chars_in([content], room, size)))
    return True
