"""Tables of many columns as one card per row on a phone.

A table of CARD_COLUMNS columns or more (the APE vs NoPE chapter's cell tables have 13) is hard
to read on a phone as a table: squeezed into a sideways box, each row is a stack of one-word
lines about 120 px tall. Such a table is marked with the class `lengthgen-cards`, and each of
its body's cells carries its column's header as `data-label`. book/_static/lengthgen.css then
shows it, on screens up to 620 px, as one card per row (the first cell as the card's title,
each other cell on a line of its own after its column's name); elsewhere, and on paper, it stays
the table it is. The same HTML serves both: no script, nothing duplicated.

The page's body is rewritten as it is handed to the template (`html-page-context`), so the
search index and the PDF read the table as before.
"""
import html
import re

# Tables of 10 columns or more are cards on a phone (13: the APE vs NoPE cells; 11: the paper
# budget's cells; 10: Limit Transformers' Table 1.1); those of 9 (Try your own's runs, the
# quantitative bounds' short numbers) stay tables that scroll, their rows 33-100 px tall.
CARD_COLUMNS = 10

_TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.S)
_HEAD = re.compile(r"<thead\b.*?</thead>", re.S)
_CELL = re.compile(r"<(th|td)\b[^>]*>(.*?)</\1>", re.S)
_ROW = re.compile(r"<tr\b[^>]*>.*?</tr>", re.S)
_TD = re.compile(r"<td\b")


def _text(fragment: str) -> str:
    """The text of an HTML fragment, as an attribute's value."""
    plain = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    return html.escape(re.sub(r"\s+", " ", plain).strip(), quote=True)


def as_cards(table: str) -> str:
    """`table` (one <table> element) marked for cards where it has CARD_COLUMNS columns or
    more, each body cell labelled with its column's header; else unchanged."""
    head = _HEAD.search(table)
    if head is None:
        return table
    rows = _ROW.findall(head.group(0))
    if len(rows) != 1:      # a header of several rows (spans): no one label per column
        return table
    labels = [_text(inner) for _, inner in _CELL.findall(rows[0])]
    if len(labels) < CARD_COLUMNS:
        return table

    def label_row(match):
        at = iter(labels)
        return _TD.sub(lambda m: f'<td data-label="{next(at, "")}"', match.group(0))

    body = table[head.end():]
    table = table[:head.end()] + _ROW.sub(label_row, body)
    if re.match(r'<table\b[^>]*\bclass="', table):
        return re.sub(r'^(<table\b[^>]*\bclass=")', r"\1lengthgen-cards ", table, count=1)
    return table.replace("<table", '<table class="lengthgen-cards"', 1)


def _cards(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and "<table" in body:
        context["body"] = _TABLE.sub(lambda m: as_cards(m.group(0)), body)


def setup(app):
    app.connect("html-page-context", _cards)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
