"""The C-RASP playground's box on a page (book/_static/crasp_playground.js fills it), with what
its "Train this program" links need, computed when the page is built:

  - where the "Try your own language" notebook opens on Colab and on Binder (`launch_links`,
    from _config.yml, as the theme's launch buttons);
  - how long training a program there takes on a CPU, from the wall times of the committed
    try-gallery records (the runs of `python -m lengthgen try` at the book scale, the scale the
    notebook's text area trains at), never typed by hand.

Neither Colab nor Binder passes text into a notebook, so the links carry the program the way
the reader can: the page copies it to the clipboard (and puts it into its share link), and the
notebook's text area takes it, or the whole share link (lengthgen.viz.try_widget).
"""
import html
import math

from lengthgen.viz.rerun import launch_links

TRY_NOTEBOOK = "book/try_your_own.ipynb"   # the notebook with the text area, in the repository


def train_minutes(records: list) -> str:
    """The minutes a run of the gallery took, as the page says them: "1 to 3" (the shortest
    rounded, at least 1, to the longest rounded up), or one number when the two meet."""
    minutes = [r["wall_time_s"] / 60 for r in records]
    low, high = max(1, round(min(minutes))), max(1, math.ceil(max(minutes)))
    return str(high) if low >= high else f"{low} to {high}"


def playground_html(program: str = "", word: str = "", records=None) -> str:
    """The playground's box: starting from library program `program` on input `word`, with the
    train links' data. `records` are the try gallery's (default: the committed ones)."""
    if records is None:
        from lengthgen.experiments import try_gallery
        from lengthgen.runs.records import committed_records
        _, records = committed_records(try_gallery.FIGURE_ID)
    links = launch_links(TRY_NOTEBOOK)
    data = {"program": program, "input": word, "train-colab": links["colab"],
            "train-binder": links["binder"], "train-minutes": train_minutes(records)}
    attrs = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in data.items())
    return (f'<div class="crasp-playground" {attrs}><p>The playground needs JavaScript.</p>'
            "</div>")
