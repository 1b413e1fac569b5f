"""Figures drawn for the book's column read well: no tick labels run into each other (the "1000"
that was a "1" and a "100" on the same spot), and no title runs into another title, an axis's
labels or another panel (the figure title over the panels' titles of a tall figure)."""
import matplotlib
import matplotlib.pyplot as plt
import pytest

from lengthgen.runs.records import committed_records
from lengthgen.viz.book import Picture, _phone_figure, picture
from lengthgen.viz.fit import fit_to_column
from lengthgen.viz.layout import (COLUMN_PX, DPI, MIN_FONT_PT, NARROW_DPI, NARROW_PX,
                                  save_png, saved_width_px)
from test_figure_text_overlap import _corners, _depth   # (turned boxes of texts)
from test_figure_text_overlap import drawn   # (each figure drawn once for both files)

matplotlib.use("Agg")

pytestmark = pytest.mark.xdist_group("figures")   # (with test_figure_text_overlap: `drawn`)

# the multi-panel figures of the Dyck chapter and its appendix that were laid out for the column
# after they had overlapping titles or ticks (each takes about two seconds to draw and fit; the
# other Dyck figures passed this check when it was written)
DYCK = ["richard-fig1-boolean", "richard-fig4-completions", "richard-fig5-sign-study",
        "richard-fig7-learned-pe", "richard-table1-deepest"]

# figures of the book whose phone rendition panned (was wider than 1.05 NARROW_PX) before the
# phone's layout broke long program names into lines (crasp-long-unary), kept a legend wider
# than its panel from squeezing the panel (izzo-thm41-bound, limit-inference-procedure), and
# put panels with colorbars one per row (richard-fig5-spectrum, drawn for phones since: below).
PHONE = ["crasp-long-unary", "izzo-thm41-bound", "limit-inference-procedure"]
# figures whose named x ticks ran into each other on a phone (turn_crowded_tick_labels)
PHONE += ["richard-fig7-order-study", "richard-fig5-sign-study", "huang-ape-leads"]
# figures whose module draws a phone's version (phone_figure): Huang's Fig. 1, 17 (or 8) tasks
# in a row, whose slanted names ran into each other at any phone layout of the column's figure
DRAWN_FOR_PHONES = ["huang-fig1-languages", "huang-fig1-algorithmic"]
# and the Dyck chapter's completions (issue 51): Fig. 6.5 panned and was three phone screens
# tall (its completions, strings of up to 24 brackets, beside bars), Fig. 6.6's table wrote
# its columns over each other
DYCK_FOR_PHONES = ["richard-fig4-completions", "richard-table1-deepest"]
DRAWN_FOR_PHONES += DYCK_FOR_PHONES
# and two tall ones (issue 51): Fig. 1.3 (eight panels, one per row, each upper one with a
# legend of six lines) was 2,470 CSS px tall on a phone, the Dyck chapter's spectrum (six
# panels, two legends) 1,780, and its spectra did not say which model they were
TALL_ON_PHONES = ["huang-fig5-6-positional", "richard-fig5-spectrum"]
# and the Boolean compute ladder (Dyck appendix): its rungs' five-line names, laid flat and turned
# upright by the phone's layout, made it about 1,260 CSS px tall, twice its height with short names
TALL_ON_PHONES += ["richard-fig1-ladder"]
# and the learned positional embeddings (Dyck chapter): nine models' panels and a summary, one
# per row, made it about 3,010 CSS px tall; now two to a row on one scale
TALL_ON_PHONES += ["richard-fig7-learned-pe"]
DRAWN_FOR_PHONES += TALL_ON_PHONES
# a phone's screen is about 800 CSS px tall: a figure drawn for phones takes at most two (its
# height at its natural size, NARROW_PX wide; a 360 px screen shows it 297 / 380 of that)
PHONE_SCREENS_PX = 2 * 800


def _boxes(texts, renderer):
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts
            if t.get_visible() and t.get_text().strip()]


def _shown_tick_labels(axis, renderer):
    """The tick labels an axis draws: those of ticks inside its view limits."""
    low, high = sorted(axis.get_view_interval())
    return _boxes([label for tick, label in zip(axis.get_majorticklocs(),
                                                 axis.get_majorticklabels())
                   if low - 1e-9 * abs(high - low) <= tick <= high + 1e-9 * abs(high - low)],
                  renderer)


def _shown_tick_quads(axis, renderer):
    """The tick labels an axis draws, each with the corners of its box turned with it."""
    low, high = sorted(axis.get_view_interval())
    room = 1e-9 * abs(high - low)
    return [(label.get_text(), _corners(label, label.get_window_extent(renderer), renderer))
            for tick, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
            if low - room <= tick <= high + room and label.get_visible()
            and label.get_text().strip()]


def _overlap(a, b, slack: float = 1.0) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > slack and
            min(a.y1, b.y1) - max(a.y0, b.y0) > slack)


def layout_problems(fig) -> list[str]:
    """Tick labels of one axis that overlap each other; titles (the figure's and the panels')
    that overlap each other, a panel, or a panel's tick labels."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    problems = []
    axes = [ax for ax in fig.axes if ax.axison]
    for n, ax in enumerate(axes):
        for axis in (ax.xaxis, ax.yaxis):
            # (slanted names by their turned boxes: their upright boxes overlap, they do not)
            labels = _shown_tick_quads(axis, renderer)
            for i, (a, quad_a) in enumerate(labels):
                for b, quad_b in labels[i + 1:]:
                    if _depth(quad_a, quad_b) > 1.0:
                        problems.append(f"panel {n}: tick labels {a!r} and {b!r} overlap")
    titles = _boxes([ax.title for ax in axes] + ([fig._suptitle] if fig._suptitle else []),
                    renderer)
    for i, (a, box_a) in enumerate(titles):
        for b, box_b in titles[i + 1:]:
            if _overlap(box_a, box_b):
                problems.append(f"titles {a!r} and {b!r} overlap")
        for n, ax in enumerate(axes):
            if ax.title.get_text() != a and _overlap(box_a, ax.get_window_extent(renderer)):
                problems.append(f"title {a!r} overlaps panel {n}")
            for label, box in (_shown_tick_labels(ax.xaxis, renderer)
                               + _shown_tick_labels(ax.yaxis, renderer)):
                if _overlap(box_a, box):
                    problems.append(f"title {a!r} overlaps tick label {label!r} of panel {n}")
    return problems


def test_the_check_sees_overlapping_ticks_and_titles():
    fig, axes = plt.subplots(2, 1, figsize=(2, 2))
    axes[0].set_xticks([0, 1, 2, 3])
    axes[0].set_xticklabels(["1", "100", "1000", "10000"], fontsize=14)
    axes[1].set_title("a title much taller\nthan its room\nbetween\nthe panels", fontsize=14)
    fig.suptitle("the figure's title", y=0.55)
    problems = layout_problems(fig)
    plt.close(fig)
    assert any("tick labels" in p for p in problems), problems
    assert any("overlap" in p and "title" in p for p in problems), problems


def test_a_tall_figure_keeps_its_title_clear_of_the_panels():
    """A long figure title is wrapped to the column and the layout makes room for its lines,
    and on a tall figure it is not drawn over the first panel's title."""
    fig, axes = plt.subplots(6, 1, figsize=(7.4, 16))
    for n, ax in enumerate(axes):
        ax.set_title(f"panel {n}\nsecond line")
    fig.suptitle("a figure title long enough to need two lines in the column of the book, "
                 "as the Dyck chapter's have, with seeds and colours")
    fit_to_column(fig)
    assert layout_problems(fig) == []
    assert saved_width_px(fig) <= COLUMN_PX + 1
    assert fig.get_size_inches()[0] * DPI >= 0.95 * COLUMN_PX  # wrapped, not narrowed
    plt.close(fig)


@pytest.mark.parametrize("figure_id", DYCK)
def test_dyck_figures_read_well_in_the_column(figure_id):
    if committed_records(figure_id, missing_ok=True) is None:
        pytest.skip(f"{figure_id}: no committed records")
    fig = drawn(figure_id)[0]   # laid out for the column
    problems = layout_problems(fig)
    assert saved_width_px(fig) <= COLUMN_PX + 1, figure_id
    assert problems == [], f"{figure_id}: {problems[:5]}"


@pytest.mark.parametrize("width", [COLUMN_PX, NARROW_PX])
@pytest.mark.parametrize("figure_id", ["huang-fig2-dotdepth", "huang-prop54-regularizer"])
def test_no_label_lies_on_another_and_no_legend_on_the_data(figure_id, width):
    """Huang et al.'s Fig. 2 printed "Tomita 1" over "Tomita 2" (labels beside points that
    coincide) and the Prop. 54 figure's legend covered measured points: in the column and on a
    phone, no two texts of a panel overlap and every legend lies outside the panels."""
    if committed_records(figure_id, missing_ok=True) is None:
        pytest.skip(f"{figure_id}: no committed records")
    from lengthgen.runs.registry import experiment
    assert not hasattr(experiment(figure_id), "phone_figure")   # (a phone's rendition is the
    fig = drawn(figure_id)[0 if width == COLUMN_PX else 1]       # figure, laid out at NARROW_PX)
    problems = layout_problems(fig)
    renderer = fig.canvas.get_renderer()
    for n, ax in enumerate(fig.axes):
        texts = _boxes(ax.texts, renderer) + _shown_tick_labels(ax.yaxis, renderer)
        for i, (a, box_a) in enumerate(texts):
            for b, box_b in texts[i + 1:]:
                if _overlap(box_a, box_b):
                    problems.append(f"panel {n}: {a!r} lies on {b!r}")
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        for n, ax in enumerate(fig.axes):
            if _overlap(legend.get_window_extent(renderer), ax.get_window_extent(renderer)):
                problems.append(f"a legend covers panel {n}")
    assert problems == [], f"{figure_id} at {width} px: {problems[:5]}"


def test_long_tick_names_are_broken_into_lines_on_a_phone():
    """Names of programs beside a panel, too long for a phone's column next to it, are broken
    at their underscores and spaces, and each row gets the height of its lines."""
    names = [f"binary_majority_interleave_{n} [periodic]" for n in range(12)]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax in axes:
        ax.barh(range(len(names)), range(1, len(names) + 1))
        ax.set_yticks(range(len(names)), names)
    fit_to_column(fig, width_px=NARROW_PX)
    problems = layout_problems(fig)
    labels = [label.get_text() for label in axes[0].get_yticklabels()]
    width = saved_width_px(fig)
    plt.close(fig)
    assert labels[0] == "binary_majority_\ninterleave_0\n[periodic]"
    assert width <= NARROW_PX + 1
    assert problems == []


@pytest.mark.parametrize("figure_id", PHONE + DRAWN_FOR_PHONES)
def test_figures_read_on_a_phone_without_panning(figure_id):
    """The phone's rendition of these figures fits a phone's column (Picture.html makes a wider
    one pan sideways), with no text under MIN_FONT_PT and none over another."""
    if committed_records(figure_id, missing_ok=True) is None:
        pytest.skip(f"{figure_id}: no committed records")
    from lengthgen.runs.registry import experiment
    assert hasattr(experiment(figure_id), "phone_figure") == (figure_id in DRAWN_FOR_PHONES)
    _, phone = drawn(figure_id)   # as book_figure draws it: again, for the phone
    narrow, narrow_text_px = save_png(phone, NARROW_DPI)   # (and saves it)
    shown = Picture(b"", "", narrow, narrow_text_px=narrow_text_px)
    problems = layout_problems(phone)
    assert shown.narrow_layout_px <= 1.05 * NARROW_PX, figure_id
    assert shown.narrow_text_px >= MIN_FONT_PT * NARROW_DPI / 72 - 0.01
    assert problems == [], f"{figure_id} on a phone: {problems[:5]}"
    if figure_id in DYCK_FOR_PHONES + TALL_ON_PHONES:
        import io

        from PIL import Image
        height = Image.open(io.BytesIO(shown.narrow)).height * DPI / NARROW_DPI
        assert height <= PHONE_SCREENS_PX, f"{figure_id}: {height:.0f} CSS px tall on a phone"


HYPHENATED = ["accuracy % on Len 101-150 (length-generalization)",
              "out-of-sample (full) and in-sample (dashed), error 1.29e-06",
              "MSE at unseen distances (i-j >= 50), seeds 98.9-100.0",
              "uniform-pm1-v binary_majority_interleave [periodic]"]


@pytest.mark.parametrize("text", HYPHENATED)
def test_broken_lines_never_end_after_a_hyphen_inside_a_word(text):
    """Issue 51: labels broken into lines on a phone split "length-" from "generalization",
    "101-" from "150". At any width they break at spaces, underscores and bars only, and
    keep every character."""
    from lengthgen.viz.phone import _break_lines
    for chars in range(4, len(text) + 1):
        broken = _break_lines(text, chars)
        assert not any(line.endswith("-") for line in broken.split("\n")), (chars, broken)
        assert "".join(broken.split()) == "".join(text.split())


def test_labels_and_titles_wrapped_for_a_phone_keep_hyphenated_words_whole():
    """The same through the layout: a figure's title, its panel's title (`layout.wrap_titles`,
    which used textwrap's breaks after hyphens) and its axis labels (`phone.wrap_labels`),
    all too long for a phone's column, are wrapped at spaces only."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([1, 2], [1, 2])
    fig.suptitle(" ".join(HYPHENATED[:2]))
    ax.set_title(HYPHENATED[1])
    ax.set_ylabel(HYPHENATED[0])
    ax.set_xlabel(HYPHENATED[2])
    fit_to_column(fig, width_px=NARROW_PX)
    texts = [fig._suptitle, ax.title, ax.yaxis.label, ax.xaxis.label]
    plt.close(fig)
    assert all("\n" in text.get_text() for text in texts)   # (each was wrapped)
    for text in texts:
        assert not any(line.endswith("-") for line in text.get_text().split("\n")), \
            text.get_text()


def _titles(ax) -> str:
    """An axes' titles (left, centre, right), one after another."""
    return " ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right"))
                    if t)


def test_each_lower_panel_of_the_positional_figure_names_its_group():
    """Issue 51: on a phone the panels of Fig. 1.3 stack in one column, and its lower panels
    (error at unseen distances), untitled, no longer sat under their group's panel."""
    if committed_records("huang-fig5-6-positional", missing_ok=True) is None:
        pytest.skip("huang-fig5-6-positional: no committed records")
    phone = _phone_figure("huang-fig5-6-positional")
    titles = [_titles(ax) for ax in phone.axes if ax.axison]
    plt.close(phone)
    groups = [t for t in titles if ":" not in t]
    assert len(titles) == 8 and titles == [title for group in groups for title in
                                           (group, f"{group}: unseen distances")]


def test_each_panel_of_the_spectrum_on_a_phone_names_its_model():
    """Issue 51: on a phone the Dyck chapter's spectrum put its six panels in one column, and
    the singular values and eigenvalues no longer said which model (single-word or many-word)
    they were. Each panel's title now starts with its model, and the models alternate."""
    if committed_records("richard-fig5-spectrum", missing_ok=True) is None:
        pytest.skip("richard-fig5-spectrum: no committed records")
    phone = _phone_figure("richard-fig5-spectrum")
    panels = [ax for ax in phone.axes if ax.axison and not hasattr(ax, "_colorbar")]
    titles = [_titles(ax) for ax in sorted(panels, key=lambda ax: -ax.get_position().y1)]
    plt.close(phone)
    models = [title.split("\n")[0] for title in titles]
    assert len(titles) == 6 and len(set(models)) == 2
    assert all("word" in model for model in models)
    assert models[0::2] == [models[0]] * 3 and models[1::2] == [models[1]] * 3
    assert [title.split("\n")[1].split()[0] for title in titles] == \
        ["W_O", "W_O", "singular", "singular", "eigenvalues", "eigenvalues"]


def test_the_small_multiples_on_a_phone_read_each_setting_then_the_next(monkeypatch):
    """On a phone the limit chapter's small multiples put each setting's logits above its own
    attention (laid out again from the column's 2 x 4 grid, all four logits came first), fit
    the column, and no text runs into another."""
    from lengthgen.viz.limit_widgets import draw_small_multiples
    monkeypatch.setenv("LENGTHGEN_DRAW_WORKERS", "1")   # (the phone's figure laid out here)
    settings = ((2, 0), (4, 0), (4, 6), (7, 12))
    phone = draw_small_multiples(settings, precision=2, phone=True)
    shown = picture(draw_small_multiples(settings, precision=2), phone=phone)
    titles = [ax.get_title() for ax in phone.axes if not hasattr(ax, "_colorbar")]
    problems = layout_problems(phone)
    plt.close(phone)
    assert [t.split("\n")[0] for t in titles] == \
        ["positional logit a(i, j)", "attention weights, N = 64"] * len(settings)
    assert [t.split("\n")[1] for t in titles[::2]] == \
        [f"Δ = {d}, τ = {t}, p = 2" for d, t in settings]
    assert shown.narrow_layout_px <= 1.05 * NARROW_PX
    assert problems == []
