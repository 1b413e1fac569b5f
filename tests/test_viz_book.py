"""book_figure / book_table send the display message that myst-nb's glue reads."""
import matplotlib
import matplotlib.pyplot as plt
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.viz import book, layout
from lengthgen.viz.frames import FrameSlider

matplotlib.use("Agg")


@pytest.fixture
def shown(monkeypatch):
    """What the cell would display: (mime bundle, metadata) per display call."""
    calls = []
    import IPython.display

    def fake_display(bundle, raw=False, metadata=None):
        assert raw, "glue outputs must be sent as raw mime bundles"
        calls.append((bundle, metadata))

    monkeypatch.setattr(IPython.display, "display", fake_display)
    return calls


def test_figure_is_glued_under_its_key_and_closed(shown):
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    book.book_figure("my-figure", fig, provenance="Scale: book | commit: abc")
    (image, image_meta), (prov, prov_meta) = shown
    assert image_meta["scrapbook"] == {"name": "my-figure", "mime_prefix": ""}
    assert "image/png" in image
    assert prov_meta["scrapbook"]["name"] == "my-figure" + book.PROVENANCE
    assert "lengthgen-provenance" in prov["text/markdown"] and "commit: abc" in prov["text/markdown"]
    assert "<span" not in prov["text/plain"], "the terminal view should not show HTML"
    assert not plt.fignum_exists(fig.number), "the figure must be closed, or Jupyter shows it twice"


def test_figure_without_provenance_glues_only_the_figure(shown):
    slider = FrameSlider(lambda x: b"\x89PNG", {"x": [1, 2]})
    assert book.book_figure("a-slider", slider) is slider
    assert len(shown) == 1 and "text/html" in shown[0][0]
    assert "lengthgen-frame-slider" in shown[0][0]["text/html"]


def test_a_figure_id_is_drawn_from_committed_results_with_provenance(shown):
    book.book_figure("richard-fig2-closed-form-paths")
    assert [m["scrapbook"]["name"] for _, m in shown] == [
        "richard-fig2-closed-form-paths", "richard-fig2-closed-form-paths-provenance"]
    assert "Scale: " in shown[1][0]["text/markdown"]


def test_table_is_glued_as_markdown(shown):
    book.book_table("my-table", "| a | b |\n|---|---|\n| 1 | 2 |", provenance="x")
    assert shown[0][0]["text/markdown"].startswith("| a | b |")
    with pytest.raises(LengthgenError, match="Markdown table"):
        book.book_table("my-table", "a, b\n1, 2")


@pytest.mark.parametrize("key", ["", "Has Caps", "under_score", "-lead", "a:b"])
def test_keys_are_checked(shown, key):
    with pytest.raises(LengthgenError, match="figure key"):
        book.book_figure(key, object())
    assert not shown


def test_tables_read_as_prose_not_python():
    from lengthgen.viz.tables import HTMLTable
    table = HTMLTable.from_dicts([{"train_length": 8, "shape": [2, 2, 64, 0.001], "ok": True,
                                   "fit": None, "mean weight": 0.123456}])
    assert table.header == ["train length", "shape", "ok", "fit", "mean weight"]
    text = table.markdown
    assert "[" not in text and "True" not in text and "None" not in text
    assert "2\\, 2\\, 64\\, 0\\.001" in text and "| yes |" in text and "0\\.123" in text


def test_a_figure_is_glued_as_a_picture_for_the_column_and_for_a_phone(shown):
    """The page shows a <picture>: the phone's rendition (one panel per row, NARROW_PX wide at
    NARROW_DPI, no text under MIN_FONT_PT) on narrow screens, the column's elsewhere; its alt
    text is what the figure writes."""
    import base64
    import io
    import re

    from PIL import Image
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, name in zip(axes, ("APE", "NoPE")):
        ax.plot([1, 2, 3], [3, 1, 2])
        ax.set_title(name)
        ax.set_xlabel("test length")
        ax.set_ylabel("accuracy")
    book.book_figure("two-panels", fig)
    page = shown[0][0]["text/html"]
    assert '<picture class="lengthgen-picture">' in page
    assert f'media="(max-width: {layout.NARROW_SCREEN_PX}px)"' in page
    wide, narrow = (Image.open(io.BytesIO(base64.b64decode(uri))) for uri in (
        re.search(r'<img src="data:image/png;base64,([^"]+)"', page).group(1),
        re.search(r'srcset="data:image/png;base64,([^"]+)"', page).group(1)))
    assert wide.width <= layout.COLUMN_PX + 1
    assert narrow.width <= layout.NARROW_PX * layout.NARROW_DPI / layout.DPI + 2
    assert narrow.height > narrow.width, "the phone's rendition puts the panels one per row"
    alt = re.search(r'alt="([^"]*)"', page).group(1)
    assert alt == "Panels: APE; NoPE. accuracy against test length"
    text_px = float(re.search(r'<source[^>]*data-text-px="([\d.]+)"', page).group(1))
    assert text_px >= layout.MIN_FONT_PT * layout.NARROW_DPI / 72 - 0.01


def test_a_figure_id_has_an_alt_from_its_module_and_its_panels(shown):
    import re
    book.book_figure("richard-fig2-closed-form-paths")
    alt = re.search(r'alt="([^"]*)"', shown[0][0]["text/html"]).group(1)
    assert alt.startswith("Fig. 2 of Richard (2024): the closed-form head drawn as paths")
    assert "/" not in alt.split(":")[0]


def test_math_in_titles_reads_as_text_in_alt():
    assert book._plain_math(r"$\frac{1}{N}\sum_{j\leq i} (p_j^\top K)^2$ at $\tau\Delta$") == \
        "(1)/(N)Σ_j≤ i (p_j^ᵀ K)^2 at τΔ"


def test_a_phone_rendition_too_wide_for_a_phone_pans_instead_of_shrinking():
    """Labels that need more room than a phone's column (Richard's Fig. 4: 33 monospace
    characters a row) make a wider phone rendition: it is shown at its own size in a box that
    scrolls sideways, so its text stays MIN_FONT_PT at DPI on screen."""
    import io

    from PIL import Image

    def png(width_px):
        out = io.BytesIO()
        Image.new("RGB", (width_px, 10)).save(out, format="PNG")
        return out.getvalue()

    scale = layout.NARROW_DPI / layout.DPI
    fits = book.Picture(png(700), "A plot of one thing against another", png(int(layout.NARROW_PX * scale)))
    wide = book.Picture(png(700), "A plot of one thing against another", png(int(510 * scale)))
    assert "lengthgen-pan" not in fits.html()
    assert 'class="lengthgen-picture lengthgen-pan" style="--lengthgen-phone-width: 510px"' in \
        wide.html()


def test_the_site_build_moves_a_figures_images_into_files(tmp_path):
    """book/_ext/lengthgen_figures.py: the inline PNGs of a glued <picture> and of a slider's
    frames become files under _images (named by content) that the page points at."""
    import importlib.util
    from pathlib import Path
    source = Path(__file__).resolve().parents[1] / "book" / "_ext" / "lengthgen_figures.py"
    spec = importlib.util.spec_from_file_location("lengthgen_figures", source)
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    import io

    from PIL import Image

    def png(width_px):
        out = io.BytesIO()
        Image.new("RGB", (width_px, 10)).save(out, format="PNG")
        return out.getvalue()

    wide, narrow = png(700), png(2 * layout.NARROW_PX)
    picture = book.Picture(wide, "A plot of one thing against another", narrow)
    slider = FrameSlider(lambda x: png(5 + x), {"x": [1, 2]}, alt="A test pattern")
    (tmp_path / "book").mkdir()
    page = tmp_path / "book" / "chapter.html"
    page.write_text(f"<html><body>{picture.html()}{slider.html}</body></html>")
    assert figures.externalize(page, tmp_path / "_images") == 2 + 3   # the first frame twice
    text = page.read_text()
    files = sorted((tmp_path / "_images").iterdir())
    assert sorted(f.read_bytes() for f in files) == sorted([wide, narrow, png(6), png(7)])
    for f in files:
        assert f"../_images/{f.name}" in text
    assert "data:image" not in text
    import html as html_module
    import json
    import re
    frames = json.loads(html_module.unescape(re.search(r'data-frames="([^"]*)"', text).group(1)))
    assert all(f.startswith("../_images/lengthgen-") for f in frames)


# Texts that myst-nb's {glue:text} role used to print as something else: it reads text/plain
# with ast.literal_eval ("6,000" became the tuple (6, 0), "0.50" the float 0.5).
AMBIGUOUS_TEXTS = ["6,000", "30,000", "0.50", "1.29e-06", "012", "(3, 4)", "True", "None",
                   "98.9\u2013100.0", "a < b & c", "'quoted'"]


def test_every_glued_text_reads_back_verbatim_through_the_text_role(shown):
    """Whatever the library glues, {glue:text} and {glue:md} paste the same text: the
    text/plain of every glued value evaluates (as myst-nb evaluates it) to the text the
    Markdown shows, never a tuple or a float."""
    import ast
    import html as html_module

    from lengthgen.experiments.prose import keep_together
    book.glue_numbers({f"n{i}": text for i, text in enumerate(AMBIGUOUS_TEXTS)}, prefix="t")
    for i, text in enumerate(AMBIGUOUS_TEXTS):
        book.book_text(f"s{i}", text)
    assert len(shown) == 2 * len(AMBIGUOUS_TEXTS)
    for (bundle, meta), text in zip(shown, AMBIGUOUS_TEXTS * 2):
        assert html_module.unescape(bundle["text/markdown"]) == keep_together(text)
        assert ast.literal_eval(bundle["text/plain"]) == keep_together(text), \
            (meta["scrapbook"]["name"], bundle)
    try:
        from myst_nb.core.variables import format_plain_text
    except ImportError:   # the book is run but not built here (Colab)
        return
    for (bundle, _), text in zip(shown, AMBIGUOUS_TEXTS * 2):
        assert format_plain_text(bundle["text/plain"], "") == keep_together(text)
