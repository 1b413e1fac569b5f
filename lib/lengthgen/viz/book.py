"""Numbered figures and tables: one call in a code cell, one directive in the prose after it.

Every figure of the book is shown in two places from the same code cell:

* in Jupyter, Binder and Colab the cell displays the figure and its provenance line;
* on the built site the cell's output is hidden (the cell carries the tag `remove-output`) and
  the markdown cell after it places the same output as a numbered figure, with a caption written
  in the prose and the provenance line pasted into it. The figure gets a label that the text
  cross-references with {numref}.

A code cell (tags: ["remove-output"]):

    book_figure("huang-fig5-6-positional")                 # a registered figure id
    book_figure("limit-slider", FrameSlider(draw, ...))    # anything displayable, no provenance

and the markdown cell right after it:

    ```{glue:figure} huang-fig5-6-positional
    :name: fig-huang-positional

    What the figure shows, in a sentence or two. {glue:md}`huang-fig5-6-positional-provenance`
    ```

Tables work the same way with `book_table(key, markdown)` and a `{table}` directive around
`{glue:md}` (see `book_table`). The pasting is myst-nb's "glue" mechanism; it is implemented
here in a few lines (the same display message myst-nb's `glue` sends) so that the library does
not need myst-nb where the book is only run, not built (Colab).
"""
import html
import re

from lengthgen.errors import LengthgenError

PROVENANCE = "-provenance"  # the provenance line of figure KEY is glued as KEY-provenance
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _glue(key: str, obj) -> None:
    """Display `obj` and mark the output so that myst-nb can paste it elsewhere as `key`."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if hasattr(obj, "savefig"):  # a matplotlib Figure: PNG whatever the backend or shell
        import base64
        import io
        buffer = io.BytesIO()
        obj.savefig(buffer, format="png", bbox_inches="tight")
        bundle = {"image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                  "text/plain": repr(obj)}
        metadata = {}
    else:
        bundle, metadata = format_display_data(obj)
    metadata["scrapbook"] = {"name": key, "mime_prefix": ""}
    display(bundle, raw=True, metadata=metadata)


class _Markdown:
    """Markdown for the page, plain text for a terminal."""

    def __init__(self, text: str):
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return re.sub(r"<[^>]+>", "", self.text)


def provenance_markdown(line: str) -> str:
    """The provenance line as it appears at the end of a caption (small, wraps anywhere)."""
    return f'<span class="lengthgen-provenance">Provenance: {html.escape(line)}</span>'


def _check_key(key: str) -> None:
    if not _KEY.match(key):
        raise LengthgenError(f"figure key {key!r}: use lowercase letters, digits and dashes")


def book_figure(key: str, content=None, provenance: str | None = None):
    """Show one figure and glue it (and its provenance line) for a numbered figure on the site.

    With only `key`, `key` is a figure id: the figure is drawn from its committed results by
    `lengthgen.experiments.show`, and the provenance is the scale, device, commit and date of
    those results. Otherwise `content` is what to show (a matplotlib Figure, a FrameSlider, any
    object Jupyter can display) and `provenance`, if given, a line saying where it comes from.
    Returns the content. A matplotlib figure is closed after it is shown, so it appears once.
    """
    _check_key(key)
    if content is None:
        from lengthgen.experiments import show
        content, provenance = show(key)
    _glue(key, content)
    if hasattr(content, "savefig"):
        import matplotlib.pyplot as plt
        plt.close(content)
    if provenance is not None:
        _glue(key + PROVENANCE, _Markdown(provenance_markdown(provenance)))
    return content


def book_text(key: str, text) -> str:
    """Glue a short piece of text (a number computed from records) for the prose: the markdown
    cell pastes it inline with {glue:md}`KEY`, so no number from a record is typed by hand.
    Returns the text."""
    _check_key(key)
    text = str(text)
    _glue(key, _Markdown(text))
    return text


def book_table(key: str, markdown: str, provenance: str | None = None) -> None:
    """Show a Markdown table and glue it for a numbered table on the site.

    The markdown cell after the code cell wraps the pasted table in a `{table}` directive
    (whose caption may paste the provenance line):

        ````{table} What the table shows. {glue:md}`KEY-provenance`
        :name: tab-something

        ```{glue:md} KEY
        :format: myst
        ```
        ````
    """
    _check_key(key)
    if not markdown.lstrip().startswith("|"):
        raise LengthgenError(f"table {key!r}: expected a Markdown table (rows starting with |)")
    _glue(key, _Markdown(markdown))
    if provenance is not None:
        _glue(key + PROVENANCE, _Markdown(provenance_markdown(provenance)))

