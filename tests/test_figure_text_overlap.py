"""No text of a figure is drawn over another text, in the column or on a phone.

Every registered figure the book shows is drawn from its committed records as `book_figure`
draws it (`show`, then `fit_to_column` for the column; `_phone_figure`, then `fit_to_column` at
NARROW_PX for a phone), and every two texts it draws (titles, labels, tick labels inside the
axes' limits, legends, notes, annotations, a table's cells) must not overlap by more than
SLACK_PX in both directions; neighbouring tick labels of one axis keep TICK_GAP_PX apart.
When it was written (issue 51) it caught Dyck Fig. 6.6 on a phone, whose table of completions
wrote each column over the next; the language names of Fig. 3.2, slanted 1 px apart, which
read "D_2D_3D_4D_12"; the legend of Izzo's Thm. 4.1 over its panel's y label; the minor tick
labels of Izzo's Fig. 1 (c) ("0.5" ... "1") and of the k-gram figure on a phone; and the
names of comm-protocol-bits, 1.3 px apart. No text is broken into lines right after a hyphen
either: on phones "accuracy % on Len 101-" stood over "150", "(sympy-" over "equivalent)" and
"in-" over "sample", and "uniform-" over "pm1-v" in the column too (issue 51).
"""
import functools

import matplotlib
import matplotlib.pyplot as plt
import pytest

from lengthgen.runs.records import committed_records
from lengthgen.viz.book import _phone_figure, show
from lengthgen.viz.fit import fit_to_column
from lengthgen.viz.layout import COLUMN_PX, NARROW_PX, keep_canvas

matplotlib.use("Agg")

# The figures are drawn once per test process (`drawn`) for this file's tests and those of
# test_figure_layout, which pytest-xdist runs in one process for that.
pytestmark = pytest.mark.xdist_group("figures")

# Two texts may touch: the boxes matplotlib gives a text include the font's ascent and
# descent, so stacked lines of two texts (a title over tick labels) can share a pixel or two
# without any glyph touching (the boxes are measured at the figure's 100 dpi).
SLACK_PX = 2.0

# Neighbouring tick labels of one axis keep this far apart: names slanted at 40 degrees that
# kept 1 px apart read as one word in Fig. 3.2 ("D_2D_3D_4D_12", issue 51).
TICK_GAP_PX = 3.0

# Deliberate overlaps, none so far: (figure id, text, text) pairs a figure draws on purpose
# one over the other. Each would need a reason written here.
DELIBERATE: set[tuple[str, str, str]] = set()


def _shown_figures() -> list[str]:
    """The registered figures the book's chapters show by id, in the chapters' order."""
    from lengthgen.results import REPO_ROOT
    from lengthgen.viz.book import figures_shown
    shown = []
    for notebook in sorted((REPO_ROOT / "book").glob("*.ipynb")):
        shown += [f for f in figures_shown(notebook) if f not in shown]
    return shown


FIGURES = _shown_figures()


def _hidden_texts(fig) -> set[int]:
    """The ids of the texts a figure lays out but does not draw: tick labels of ticks outside
    an axes' view limits, everything of an axis that is off, and the texts of an axes or a
    legend that is not visible."""
    from matplotlib.legend import Legend
    from matplotlib.text import Text
    hidden = set()
    for owner in fig.axes + fig.findobj(Legend):   # an invisible axes or legend hides its texts
        if not owner.get_visible():
            hidden |= {id(text) for text in owner.findobj(Text)}
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            low, high = sorted(axis.get_view_interval())
            room = 1e-9 * abs(high - low)
            off = not ax.axison or not axis.get_visible()
            if off:
                hidden |= {id(axis.label), id(axis.offsetText)}
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if off or not low - room <= tick.get_loc() <= high + room:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return hidden


def drawn_texts(fig) -> list[tuple[str, object]]:
    """(text, corners of its box in pixels) of every text the figure draws, laid out as a draw
    lays it out."""
    from matplotlib.text import Text
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    texts = fig.findobj(Text)
    for ax in fig.axes:   # (a table's cells keep their texts out of findobj)
        for table in ax.tables:
            texts += [cell.get_text() for cell in table.get_celld().values()
                      if cell.get_visible()]
    hidden = _hidden_texts(fig)
    drawn, seen = [], set()
    for text in texts:
        if id(text) in seen or id(text) in hidden:
            continue
        seen.add(id(text))
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.width <= 0 or not box.overlaps(fig.bbox):
            continue
        drawn.append((text.get_text(), _corners(text, box, renderer)))
    return drawn


def _corners(text, box, renderer) -> list[tuple[float, float]]:
    """The four corners of a text's box as drawn, turned with the text: matplotlib's window
    extent of a turned text is the upright box around it, which for names slanted at 40
    degrees covers much of their neighbours' (they do not touch). The turned box touches each
    side of that upright box at one corner."""
    import math
    angle = math.radians(text.get_rotation())
    if abs(math.sin(angle)) < 1e-6 or abs(math.cos(angle)) < 1e-6:   # upright or sideways
        return [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    rotation = text.get_rotation()
    try:
        text.set_rotation(0)
        flat = text.get_window_extent(renderer)
    finally:
        text.set_rotation(rotation)
    cos, sin = math.cos(angle), math.sin(angle)
    turned = [(x * cos - y * sin, x * sin + y * cos)
              for x, y in ((0, 0), (flat.width, 0), (flat.width, flat.height), (0, flat.height))]
    left, bottom = min(x for x, _ in turned), min(y for _, y in turned)
    return [(box.x0 + x - left, box.y0 + y - bottom) for x, y in turned]


def _depth(a: list, b: list) -> float:
    """How far two convex quadrilaterals overlap: the least overlap of their shadows on the
    normals of their sides (separating axes); zero or less where they do not meet. For two
    upright boxes, the lesser of their overlaps across and down."""
    import math
    depth = math.inf
    for quad in (a, b):
        for (x0, y0), (x1, y1) in zip(quad, quad[1:] + quad[:1]):
            length = math.hypot(x1 - x0, y1 - y0)
            if length == 0:
                continue
            nx, ny = (y0 - y1) / length, (x1 - x0) / length
            shadow_a = [x * nx + y * ny for x, y in a]
            shadow_b = [x * nx + y * ny for x, y in b]
            depth = min(depth, min(max(shadow_a), max(shadow_b))
                        - max(min(shadow_a), min(shadow_b)))
    return depth


def overlapping_texts(fig, figure_id: str = "", slack: float = SLACK_PX) -> list[str]:
    """Every two drawn texts whose boxes overlap by more than `slack` pixels, across and down
    (along and across a turned text)."""
    texts = drawn_texts(fig)
    problems = []
    for i, (a, quad_a) in enumerate(texts):
        for b, quad_b in texts[i + 1:]:
            depth = _depth(quad_a, quad_b)
            if depth > slack and \
                    (figure_id, a, b) not in DELIBERATE and (figure_id, b, a) not in DELIBERATE:
                problems.append(f"{a!r} and {b!r} overlap by {depth:.0f} px")
    return problems


def crowded_tick_labels(fig) -> list[str]:
    """Neighbouring tick labels of one axis closer than TICK_GAP_PX (laid out already)."""
    renderer = fig._get_renderer()
    hidden = _hidden_texts(fig)
    problems = []
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            labels = [tick.label1 for tick in sorted(axis.get_major_ticks(),
                                                     key=lambda tick: tick.get_loc())
                      if id(tick.label1) not in hidden and tick.label1.get_visible()
                      and tick.label1.get_text().strip()]
            quads = [(label.get_text(), _corners(label, label.get_window_extent(renderer),
                                                 renderer)) for label in labels]
            for (a, quad_a), (b, quad_b) in zip(quads, quads[1:]):
                if _depth(quad_a, quad_b) > -TICK_GAP_PX:
                    problems.append(f"tick labels {a!r} and {b!r} are less than "
                                    f"{TICK_GAP_PX:.0f} px apart")
    return problems


def broken_after_hyphens(fig) -> list[str]:
    """Every drawn text broken into lines right after a hyphen inside a word, a number, a
    range or a formula ("length-" over "generalization", "101-" over "150", "in-" over
    "sample": issue 51); the layout's wrapping breaks at spaces (`viz.phone._break_lines`,
    `viz.layout.wrap_titles`)."""
    import re
    return [f"{text!r} is broken after a hyphen" for text, _ in drawn_texts(fig)
            if re.search(r"\S-\n\S", text)]


def test_the_check_sees_a_text_broken_after_a_hyphen():
    fig, ax = plt.subplots()
    ax.set_ylabel("accuracy % on Len 101-\n150")
    ax.set_xlabel("out-of-sample -\nin-sample")   # (a minus between spaces may end a line)
    problems = broken_after_hyphens(fig)
    plt.close(fig)
    assert problems == ["'accuracy % on Len 101-\\n150' is broken after a hyphen"]


def test_the_check_sees_texts_over_texts_and_nothing_else():
    """A table too narrow for its cells and two labels on one spot are caught; the same
    texts apart, ticks outside the limits and an axis turned off are not."""
    fig, (ax, table_ax, apart, slanted) = plt.subplots(4, 1, figsize=(2.5, 8))
    ax.text(0.5, 0.5, "D_2", ha="right")
    ax.text(0.5, 0.5, "D_12", ha="center", va="center")
    slanted.axis("off")
    for n in range(3):   # slanted names side by side: their upright boxes overlap, they do not
        slanted.text(0.1 + 0.3 * n, 0.9, f"Tomita {n}", rotation=40, ha="right", va="top")
    ax.set_xticks([0, 1, 5], ["0", "1", "far"])   # "far": outside the limits, not drawn
    ax.set_xlim(0, 1)
    table_ax.axis("off")
    table = table_ax.table(cellText=[["1000 (q <= 8), seed 0", "))))))))))))))))", "89"]],
                           bbox=[0, 0, 1, 1])
    table.auto_set_font_size(False)
    table.set_fontsize(10.5)
    apart.text(0.1, 0.5, "one")
    apart.text(0.7, 0.5, "two")
    problems = overlapping_texts(fig)
    plt.close(fig)
    assert any("'D_2' and 'D_12'" in p for p in problems), problems
    assert any("seed 0" in p for p in problems), problems
    assert not any("far" in p or "'one'" in p or "Tomita" in p for p in problems), problems


def test_names_slanted_close_together_are_crowded():
    """Slanted names about a pixel apart (not overlapping) are crowded; the same names
    further apart are not."""
    fig, (close, apart) = plt.subplots(2, 1, figsize=(4, 5))
    names = ["Tomita 7", "D_2", "D_3", "D_4", "D_12", "(aa)*"]
    for ax, slots in ((close, 0.29), (apart, 0.6)):
        ax.set_xticks([slots * n for n in range(len(names))], names, rotation=40, ha="right")
        ax.set_xlim(-0.2, 3.6)
        ax.set_yticks([])
    fig.draw_without_rendering()
    crowded = crowded_tick_labels(fig)
    overlaps = overlapping_texts(fig)
    plt.close(fig)
    assert len(crowded) == len(names) - 1, crowded   # the close axis only
    assert overlaps == []   # (crowded without touching: what the gap adds)


@functools.cache
def drawn(figure_id: str):
    """(the figure laid out for the column, its rendition laid out for a phone) as `book_figure`
    draws a registered figure before it saves them: `show` laid out by `fit_to_column` at
    COLUMN_PX, and `_phone_figure` at NARROW_PX. Drawn once per test process, for the tests of
    this file and of test_figure_layout (`pytestmark`); the tests only measure them."""
    fig, _ = show(figure_id)
    phone = _phone_figure(figure_id)
    for figure in (fig, phone):   # (pyplot lets go of them, each keeps a canvas that draws)
        plt.close(figure)
        keep_canvas(figure)
    return fit_to_column(fig, width_px=COLUMN_PX), fit_to_column(phone, width_px=NARROW_PX)


@pytest.mark.parametrize("width", ["phone", "column"])
@pytest.mark.parametrize("figure_id", FIGURES)
def test_no_text_of_a_figure_lies_on_another(figure_id, width):
    if committed_records(figure_id, missing_ok=True) is None:
        pytest.skip(f"{figure_id}: no committed records")
    fig = drawn(figure_id)[0 if width == "column" else 1]
    problems = overlapping_texts(fig, figure_id) + crowded_tick_labels(fig) + \
        broken_after_hyphens(fig)
    assert problems == [], f"{figure_id}, {width}: {len(problems)} overlaps: {problems[:6]}"


def test_every_figure_a_chapter_shows_is_checked():
    """The list is read from the chapters: the figures of issue 51 are in it."""
    assert {"richard-table1-deepest", "richard-fig4-completions", "huang-fig1-languages",
            "huang-fig2-dotdepth", "huang-fig5-6-positional"} <= set(FIGURES)
