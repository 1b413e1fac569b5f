"""Lists of dicts as Markdown tables, for notebook cells (display(Markdown(...)))."""
from lengthgen.errors import LengthgenError


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value).replace("|", "\\|")


def markdown_rows(rows: list[dict]) -> str:
    """One table row per dict; the columns are the keys of the first dict, in order."""
    if not rows:
        raise LengthgenError("no rows to show")
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
