"""The kernel-free slider: one frame per combination, the right frame for each setting."""
import html
import json
import re

import matplotlib
import matplotlib.pyplot as plt
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.viz.frames import FrameSlider

matplotlib.use("Agg")


def draw(a, b):
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.text(0.5, 0.5, f"{a}-{b}")
    ax.plot([0, a], [0, b])
    return fig


def test_one_distinct_frame_per_combination_in_row_major_order():
    slider = FrameSlider(draw, {"a": [1, 2, 3], "b": [5, 6]}, initial={"a": 2, "b": 6})
    assert len(slider.frames) == 6 and len(set(slider.frames)) == 6
    assert slider.settings[slider.index(a=3, b=5)] == {"a": 3, "b": 5}
    assert slider.index(a=3, b=5) == 2 * 2 + 0  # stride of a is len(b)
    # the frame for (a, b) is the drawing of (a, b): re-render and compare bytes
    again = FrameSlider(draw, {"a": [3], "b": [5]})
    assert again.frames[0] == slider.frames[slider.index(a=3, b=5)]


def test_html_starts_on_the_initial_frame_and_strides_match():
    slider = FrameSlider(draw, {"a": [1, 2, 3], "b": [5, 6]}, initial={"a": 2, "b": 6})
    page = slider.html
    first = slider.index(a=2, b=6)
    assert f'data-shown="{first}"' in page
    frames = json.loads(html.unescape(re.search(r'data-frames="([^"]*)"', page).group(1)))
    assert frames == slider.frames
    assert re.findall(r'data-stride="(\d+)"', page) == ["2", "1"]
    assert re.findall(r'type="range" min="0" max="(\d+)" step="1" value="(\d+)"', page) == \
        [("2", "1"), ("1", "1")]
    assert "<script" not in page  # works where script tags are not run


@pytest.mark.parametrize("sliders, initial", [({}, None), ({"a": []}, None),
                                              ({"a": [1, 1]}, None), ({"a": [1, 2]}, {"a": 9}),
                                              ({"a": list(range(30)), "b": list(range(30))},
                                               None)])
def test_bad_sliders_are_one_clear_error(sliders, initial):
    with pytest.raises(LengthgenError):
        FrameSlider(lambda **k: b"", sliders, initial=initial)


def test_each_frame_has_a_phone_rendition_and_an_alt_naming_its_setting():
    def titled(a, b):
        fig = draw(a, b)
        fig.axes[0].set_title(f"a line to ({a}, {b})")
        return fig

    slider = FrameSlider(titled, {"a": [1, 2], "b": [5, 6]}, labels={"a": "slope Δ"})
    assert slider.narrow_frames and len(slider.narrow_frames) == 4
    assert len(set(slider.narrow_frames)) == 4 and set(slider.narrow_frames).isdisjoint(slider.frames)
    assert slider.alts[slider.index(a=2, b=5)] == "a line to (2, 5) (at slope Δ = 2, b = 5)"
    page = slider.html
    alts = json.loads(html.unescape(re.search(r'data-alts="([^"]*)"', page).group(1)))
    assert alts == slider.alts
    assert f'alt="{html.escape(slider.alts[0])}"' in page and 'alt="figure frame"' not in page
    assert '<source media="(max-width:' in page and "data-narrow-frames=" in page


def test_frames_given_as_png_bytes_get_the_sliders_alt():
    slider = FrameSlider(lambda x: b"\x89PNG" + bytes([x]), {"x": [1, 2]},
                         alt="A test pattern of one pixel")
    assert slider.narrow_frames is None and "<source" not in slider.html
    assert slider.alts == ["A test pattern of one pixel (at x = 1)",
                           "A test pattern of one pixel (at x = 2)"]


def test_a_redrawn_slider_lays_out_once_per_rendition_and_redraws_each_frame(monkeypatch):
    """FrameSlider.redrawn builds its figure twice (the column's, the phone's) for every
    setting with the fixed values added, then shows each frame on both: each frame its own
    picture. (In one process, so that every call is seen here.)"""
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "1")
    made, shown = [], []

    class Level:
        def __init__(self, settings):
            made.append(settings)
            self.fig, ax = plt.subplots(figsize=(4, 3))
            (self.line,) = ax.plot([0, 1], [0, 0])
            ax.set_ylim(0, 10)

        def show(self, height, width):
            shown.append((height, width))
            self.line.set_ydata([height, height])
            return self.fig

    slider = FrameSlider.redrawn(Level, {"height": [1, 5, 9]}, fixed={"width": 2})
    assert made == [[{"width": 2, "height": h} for h in (1, 5, 9)]] * 2
    assert shown == [(h, 2) for h in (1, 5, 9) for _ in range(2)]
    assert len(set(slider.frames)) == 3 and len(set(slider.narrow_frames)) == 3
    assert slider.alts[1].endswith("at height = 5")


def test_the_bound_figure_marks_each_setting_on_one_range_of_n():
    """The quantitative-bounds sliders' figure: at each setting the marked N is Theorem 4.1's,
    the bold curve is the chosen tau's, and one range of N holds every setting it was built for."""
    from lengthgen.experiments.izzo.drawing import BoundFigure
    from lengthgen.theory.izzo_bound import theorem41_length
    settings = [{"delta": d, "tau": t, "L": 4.0, "eps": 0.1, "p": 8, "gamma": g}
                for d in (1, 32) for t in (1, 8) for g in (0.5, 2.0)]
    figure = BoundFigure(settings)
    low, high = figure.ax.get_ylim()
    for s in settings:
        fig = figure.show(**s)
        n = theorem41_length(s["delta"], s["tau"], s["L"], s["eps"], s["p"], s["gamma"])["N"]
        assert list(figure.point.get_ydata()) == [n] and low < n < high
        assert figure.curves[s["tau"]].get_linewidth() > max(
            line.get_linewidth() for t, line in figure.curves.items() if t != s["tau"])
        assert f"N = {n:.3g}" in fig.axes[0].get_legend().texts[-1].get_text()
    plt.close(figure.fig)


def test_a_figure_closed_by_pyplot_is_saved_with_one_renderer_and_the_pixels_of_an_open_one():
    """pyplot's close leaves a figure a canvas that cannot draw (a redrawn slider's figures are
    closed once laid out): save_png gives it an agg canvas of its own, whose renderer, and its
    parses of math text, serve every save after (a new renderer per frame parsed every
    $10^{k}$ tick label again), and the pixels are those the figure gives open."""
    from lengthgen.viz.layout import DPI, save_png

    def draw():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.loglog([1, 1e4], [1, 1e4])
        ax.set_title(r"$\tau\Delta$ at $N = 2^{10}$")
        return fig

    fig = draw()
    want = save_png(fig, DPI, tight=False)
    plt.close(fig)
    fig = draw()
    plt.close(fig)
    first = save_png(fig, DPI, tight=False)
    renderer = fig.canvas.renderer
    assert save_png(fig, DPI, tight=False, text_px=first[1]) == first == want
    assert fig.canvas.renderer is renderer

