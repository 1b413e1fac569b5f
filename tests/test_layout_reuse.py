"""What `viz.layout` keeps instead of computing again, for speed: an axis's ticks while a figure
is laid out and saved (`ticks_reused`: computed again only when what they come from changed),
and the height of a font's lines (agg's renderer offers them to matplotlib's text layout). Each
must give what matplotlib computes itself, and so the same pixels."""
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.ticker import FormatStrFormatter

from lengthgen.viz import layout
from lengthgen.viz.book import picture
from lengthgen.viz.layout import ticks_reused

matplotlib.use("Agg")


def _panels():
    """A figure with what the layout steps change ticks through: log scales with minor ticks,
    shared axes whose hidden labels a phone shows again, legends moved under their panels,
    long named y ticks broken into lines, crowded named x ticks turned, and a colorbar."""
    fig, axes = plt.subplots(2, 3, figsize=(13, 6), sharey="row")
    n = np.arange(1, 60)
    for k, ax in enumerate(axes[0]):
        ax.loglog(n, 1.0 / n ** (k + 1), label=f"slope {k + 1}")
        ax.loglog(n, 3.0 / n ** (k + 1), label=f"3 x slope {k + 1}")
        ax.set_title(f"a log-log panel, number {k}")
        ax.legend()
    names = [f"binary_majority_interleave_{k}" for k in range(6)]
    axes[1, 0].barh(range(6), range(1, 7))
    axes[1, 0].set_yticks(range(6), names)
    axes[1, 1].bar(range(8), range(8))
    axes[1, 1].set_xticks(range(8), [f"setting number {k}" for k in range(8)])
    image = axes[1, 2].imshow(np.arange(20.0).reshape(4, 5))
    fig.colorbar(image, ax=axes[1, 2])
    axes[1, 2].set_xlabel("a long label of the x axis under the picture")
    return fig


def _counted(monkeypatch):
    """The number of times matplotlib computes ticks, from now on."""
    calls = [0]
    compute = Axis._update_ticks

    def counting(self):
        calls[0] += 1
        return compute(self)
    monkeypatch.setattr(Axis, "_update_ticks", counting)
    return calls


def test_reused_ticks_draw_the_same_pixels_for_the_column_and_a_phone(monkeypatch):
    calls = _counted(monkeypatch)
    reused = picture(_panels(), phone=_panels)
    reused_calls = calls[0]
    monkeypatch.setattr(layout, "REUSE_TICKS", False)
    calls[0] = 0
    computed = picture(_panels(), phone=_panels)
    plt.close("all")
    assert (reused.wide, reused.narrow) == (computed.wide, computed.narrow)
    assert (reused.wide_text_px, reused.narrow_text_px) == \
        (computed.wide_text_px, computed.narrow_text_px)
    # (not a test of nothing: most measures did reuse ticks, in this process; picture lays the
    # phone's rendition out in another where there are two)
    assert reused_calls < calls[0] / 3


def _ticks(ticks):
    return [(tick.get_loc(), tick.label1.get_text()) for tick in ticks]


CHANGES = {
    "limits": lambda fig, ax: ax.set_xlim(0, 1000),
    "size": lambda fig, ax: fig.set_size_inches(1.5, 4),
    "label size": lambda fig, ax: ax.tick_params(axis="x", labelsize=40),
    "none shown": lambda fig, ax: (ax.xaxis.grid(False, which="both"), ax.tick_params(
        axis="x", which="both", bottom=False, top=False, labelbottom=False, labeltop=False)),
    "scale": lambda fig, ax: ax.set_xscale("log"),
    "named ticks": lambda fig, ax: ax.set_xticks([1, 5, 50], ["one", "five", "fifty"]),
    "formatter": lambda fig, ax: ax.xaxis.set_major_formatter(FormatStrFormatter("%.2f")),
    "ticks made anew": lambda fig, ax: ax.tick_params(axis="x", reset=True, labelsize=12),
}


@pytest.mark.parametrize("change", CHANGES)
def test_reused_ticks_follow_what_they_are_computed_from(change):
    """After each change, the ticks an axis reuses are those matplotlib computes (the places,
    the labels, and Tick objects the axis still holds); unchanged, the axis reuses them."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(np.arange(1, 101), np.arange(1, 101))
    with ticks_reused(fig):
        first_ticks = ax.xaxis._update_ticks()
        assert ax.xaxis._update_ticks() == first_ticks   # nothing changed: the same ticks
        first = _ticks(first_ticks)
        CHANGES[change](fig, ax)
        reused = ax.xaxis._update_ticks()
        seen = _ticks(reused)
        held = set(ax.xaxis.majorTicks) | set(ax.xaxis.minorTicks)
        computed = _ticks(Axis._update_ticks(ax.xaxis))   # matplotlib's own, not reused
    plt.close(fig)
    assert seen == computed
    assert all(tick in held for tick in reused)
    # (each change changes the ticks: their places or labels, or the Tick objects; matplotlib
    # 3.8 still computed ticks none of which is shown, 3.11 does not)
    if change != "none shown" or hasattr(Axis, "_tick_group_visible"):
        assert first != computed or not set(first_ticks) & held


def test_the_figure_computes_its_ticks_again_after_the_layout():
    """Ticks are reused only inside ticks_reused: afterwards the axes compute them as
    matplotlib does (a reader's kernel that changes the figure sees new ticks)."""
    fig, ax = plt.subplots()
    ax.plot([0, 10], [0, 10])
    with ticks_reused(fig):
        assert "_update_ticks" in vars(ax.xaxis)
        with ticks_reused(fig):   # nested: the outer one keeps reusing
            pass
        assert "_update_ticks" in vars(ax.xaxis)
    assert "_update_ticks" not in vars(ax.xaxis)
    ax.set_xlim(0, 1000)
    labels = [label.get_text() for label in ax.get_xticklabels()]
    plt.close(fig)
    assert "1000" in labels


def test_agg_offers_the_heights_of_fonts_as_matplotlib_reads_them(monkeypatch):
    """Texts of several fonts, sizes and lines, plain and math, at several dpi, have the same
    boxes whether the renderer offers the fonts' heights (kept per font) or matplotlib reads
    them from the font files each time, and the figures the same pixels."""
    if not layout.font_heights_asked():
        pytest.skip("this matplotlib's text layout asks no renderer for the fonts' heights")
    layout._share_font_heights()   # (done at the first layout; again, it does nothing)
    assert getattr(RendererAgg._get_font_height_metrics, "_lengthgen_shared", False)

    def texts_and_picture():
        fig = plt.figure(figsize=(6, 3))
        texts = [fig.text(0.1, 0.1 + 0.2 * k, text, family=family, size=size)
                 for k, (text, family, size) in enumerate([
                     ("one line", "sans-serif", 10.5), ("two\nlines", "serif", 7),
                     (r"math $\tau \Delta L^2/\varepsilon^2$", "monospace", 14.3),
                     ("bold and\nthree\nlines", "sans-serif", 12)])]
        texts[-1].set_weight("bold")
        boxes = []
        for dpi in (72, 100, 200):
            fig.set_dpi(dpi)
            fig.draw_without_rendering()
            boxes.append([tuple(t.get_window_extent().bounds) for t in texts])
        fig.set_dpi(100)
        shown = picture(_panels(), phone=_panels)
        plt.close("all")
        return boxes, (shown.wide, shown.narrow)

    asked = layout._font_heights.cache_info()
    kept = texts_and_picture()
    # (not a test of nothing: matplotlib asked the renderer, and was answered from what was kept)
    assert layout._font_heights.cache_info().hits - asked.hits > 100
    monkeypatch.delattr(RendererAgg, "_get_font_height_metrics")
    read = texts_and_picture()
    assert kept == read


def test_heights_that_would_change_a_text_are_not_offered(monkeypatch):
    """Where texts measured with the renderer's heights differ from texts measured without
    (another matplotlib, reading them otherwise), the renderer offers none."""
    from matplotlib.backends import backend_agg
    monkeypatch.delattr(RendererAgg, "_get_font_height_metrics", raising=False)
    monkeypatch.setattr(layout, "_FONT_HEIGHTS_CHECKED", False)
    monkeypatch.setattr(layout, "_font_heights",
                        lambda props, dpi: (1.5 * dpi, 0.5 * dpi, 0.0))   # heights read wrong
    layout._share_font_heights()
    assert not hasattr(backend_agg.RendererAgg, "_get_font_height_metrics")
