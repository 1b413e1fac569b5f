"""Tables as real HTML (searchable, copyable, readable on a phone), for notebook cells.

`HTMLTable(header, rows, caption)` displays as a table in Jupyter and on the built site; cells
are escaped text. `HTMLTable.from_dicts(rows)` takes one dict per row (the keys of the first are
the columns). Wide tables scroll sideways inside their own box instead of the page. (Markdown
printed by display(Markdown(...)) is not rendered as a table on the built site: raw pipes.)
"""
import html
import string

from lengthgen.errors import LengthgenError
from lengthgen.experiments.prose import for_reader

_PUNCTUATION = set(string.punctuation)


def _escape_markdown(text: str) -> str:
    """Backslash before every ASCII punctuation mark: a cell shows as written (no italics from
    *, no column break from |), which CommonMark allows for any punctuation."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in text).replace("\n", " ")


def _text(value) -> str:
    """A cell as a reader reads it: floats to 3 significant digits, yes/no for booleans, a dash
    for a missing value, lists as comma-separated values (never Python's brackets); numbers,
    ranges and short formulas unbreakable, with true minus signs and × 10⁻⁶ for 1e-06, and
    D_12 as D₁₂ (`for_reader`)."""
    return for_reader(_plain_text(value))


def _plain_text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{readable_header(k)} {_plain_text(v)}" for k, v in value.items())
    return str(value)


def readable_header(name) -> str:
    """A column name as a reader reads it: snake_case words split by spaces (train_length ->
    train length); names already written for readers are left as they are."""
    text = str(name)
    return text.replace("_", " ") if "_" in text and " " not in text else text


class HTMLTable:
    def __init__(self, header: list[str], rows: list[list], caption: str | None = None):
        self.header = [readable_header(h) for h in header]
        self.rows, self.caption = [list(r) for r in rows], caption

    @classmethod
    def from_dicts(cls, rows: list[dict], caption: str | None = None) -> "HTMLTable":
        """One table row per dict; the columns are the keys of the first dict, in order."""
        if not rows:
            raise LengthgenError("no rows to show")
        columns = list(rows[0])
        return cls(columns, [[row.get(c, "") for c in columns] for row in rows], caption)

    @property
    def html(self) -> str:
        def cell(tag, value):
            return f"<{tag}>{html.escape(_text(value))}</{tag}>"
        head = "".join(cell("th", h) for h in self.header)
        body = "".join("<tr>" + "".join(cell("td", v) for v in row) + "</tr>" for row in self.rows)
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        return (f'<div style="overflow-x:auto"><table class="lengthgen-table">{caption}'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")

    @property
    def markdown(self) -> str:
        """The same table in Markdown, for `lengthgen.viz.book.book_table` (numbered tables on
        the site); the caption goes into the table directive instead."""
        def row(values):
            return "| " + " | ".join(_escape_markdown(_text(v)) for v in values) + " |"
        return "\n".join([row(self.header), "|" + "---|" * len(self.header)]
                         + [row(r) for r in self.rows])

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:  # a plain-text fallback, e.g. in a terminal
        lines = [" | ".join(map(_text, row)) for row in [self.header] + self.rows]
        return "\n".join(lines)
