"""fit_to_column: a figure drawn for the book's column, or for a phone's.

The figure modules choose sizes for a notebook; this is the one place where the site's sizes
are decided. It runs the steps in order: text no smaller than MIN_FONT_PT, panels re-arranged
into fewer columns where the column is narrow (`layout.reflow`), a tight layout that hangs
legends below their panels (`layout.tight_layout`), titles wrapped, legends narrowed and the
figure narrowed until its saved image fits; on a phone's column also the steps of `viz.phone`
(legends under their panels and wrapped, long names and labels broken into lines, rows of
panels given the height they need).
"""
from lengthgen.viz import phone as phone_layout
from lengthgen.viz.layout import (COLUMN_PX, DPI, MIN_FONT_PT, MIN_PANEL_IN, below_axes,
                                  laid_out_by_hand, measured, reflow, relegend, saved_width_px,
                                  tight_layout, wrap_titles)


def fit_to_column(fig, width_px: int = COLUMN_PX, min_font_pt: float = MIN_FONT_PT):
    """Draw `fig` for the book's column, in place: no text smaller than `min_font_pt`, and a
    width of at most `width_px` pixels at DPI (a wider figure is narrowed, its height by the
    square root of that factor, and laid out again). Returns the figure.

    The figure modules choose sizes for a notebook; this is the one place where the site's
    sizes are decided, for figures (`book_figure`) and slider frames (`viz.frames`) alike."""
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
    phone = target < 2 * MIN_PANEL_IN   # a phone's column (viz.phone)
    if phone:   # no legend inside a panel, too narrow
        moved = [phone_layout.legend_below(ax) for ax in fig.axes
                 if ax.get_legend() is not None and not below_axes(ax.get_legend())]
    if not reflow(fig, target) and width > target:
        fig.set_size_inches(target, height * (target / width) ** 0.5)
    if phone:   # before the first layout (see wrap_legends)
        phone_layout.wrap_legends(fig, target)
    if moved:   # the panels keep their height, the legends under them get theirs
        renderer = measured(fig)
        extra = sum(legend.get_window_extent(renderer).height for legend in moved) / fig.dpi
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + extra)
    if laid_out_by_hand(fig):
        tight_layout(fig, taller=phone)
    # Legends and labels outside the axes widen the saved image (bbox_inches="tight"): wrap
    # titles to the column, take columns off legends, and only then narrow the figure (by at
    # most a fifth: narrower, the panels would be crushed).
    if wrap_titles(fig, target):  # lines added to a title: the layout makes room for them
        tight_layout(fig, taller=phone)
    if phone and phone_layout.wrap_tick_labels(fig, target):
        tight_layout(fig, taller=phone)
    if phone and phone_layout.wrap_labels(fig):
        tight_layout(fig, taller=phone)
    if phone and phone_layout.turn_crowded_tick_labels(fig):
        tight_layout(fig, taller=phone)
    for _ in range(8):
        saved = saved_width_px(fig)
        if saved <= width_px + 1:
            break
        legends = [legend for legend in fig.findobj(Legend) if legend._ncols > 1]
        width, height = fig.get_size_inches()
        if legends:  # a legend in several columns is narrowed first, by one column
            widest = max(legends, key=lambda lg: lg.get_window_extent().width)
            relegend(widest, widest._ncols - 1)
        elif width * width_px / saved >= 0.8 * target:
            fig.set_size_inches(width * width_px / saved, height)
            # the figure's title and notes were wrapped to the old width
            wrap_titles(fig, width * width_px / saved, axes_titles=False)
        else:
            break
        tight_layout(fig, taller=phone)
    if phone:   # the panels' width and height, last: no tight_layout comes after them
        phone_layout.widen_crushed_panels(fig)
        phone_layout.stack_rows(fig, width_px)
    return fig
