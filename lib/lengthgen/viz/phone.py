"""How `viz.layout.fit_to_column` lays a figure out for a phone's column (NARROW_PX).

A phone's column is too narrow for two panels side by side, for a legend inside a panel, or
for the long names and labels a notebook's figure was drawn with: legends go under their
panels, legends, titles and axis labels are broken into lines, and a panel that its labels
squeeze gets the width it lacks.
"""
from lengthgen.viz.layout import DPI, _layout

MIN_PHONE_PANEL_IN = 1.6  # a panel gets this much room even if its labels need more


def widen_crushed_panels(fig) -> None:
    """A panel that long labels beside it squeeze below MIN_PHONE_PANEL_IN gets the width it
    lacks: the figure is then wider than the column, and pans on a phone (Picture.html) rather
    than show a plot too narrow to read."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    widths = [ax.get_window_extent(renderer).width / fig.dpi for ax in fig.axes
              if ax.axison and not hasattr(ax, "_colorbar") and ax.get_aspect() == "auto"]
    lacking = MIN_PHONE_PANEL_IN - min(widths, default=MIN_PHONE_PANEL_IN)
    if lacking > 0.05:
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + lacking, height)
        _layout(fig)


def legend_below(ax):
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


def wrap_labels(fig, width_in: float) -> bool:
    """Break legend entries wider than the column, and axis labels longer than their axes, into
    lines. Returns whether any was broken."""
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
