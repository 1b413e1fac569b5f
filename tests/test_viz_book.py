"""book_figure / book_table send the display message that myst-nb's glue reads."""
import matplotlib
import matplotlib.pyplot as plt
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.viz import book
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
