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
