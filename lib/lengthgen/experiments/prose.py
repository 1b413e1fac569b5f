"""Numbers in prose and tables: how the chapters write a record's value.

The chapters' numbers are computed from the committed records, never typed, by the analysis
module of each paper's package (`izzo.analysis`, `huang.limit.analysis`, `huang.crasp.analysis`,
`huang.sweep.tables`, `richard.analysis` and `richard.analysis_sweeps`): its numbers, verdicts
and "Paper vs this book" rows. What they share is here, and every formatter of a number in
prose or in a table is one of these: how a share, a number, a range over seeds, a list or a wall time is written (`pct`,
`num`, `span`, `mean_span`, `listing`, `seconds`, `seeds_note`), how a number, a range or a
short formula stays on one line and an indexed name (D_12) reads as in the prose
(`keep_together`, `for_reader`, which the tables and the glued texts of `lengthgen.viz` apply
to every cell and text; `math_names` for a figure's text), when two settings differ over
seeds (`separate`), a figure's committed records (`chapter_records`) and the "Paper vs this
book" Markdown table (`markdown_table`).

Numbers the papers report stay typed in the prose, marked as the paper's (see
tests/test_book_hygiene.py for the convention).
"""
import math
import re
from statistics import mean

from lengthgen.errors import LengthgenError

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
MINUS, NB_HYPHEN, NBSP = "\u2212", "\u2011", "\u00a0"   # minus, non-breaking hyphen and space


# ---------------------------------------------------------------- formatting

def pct(x: float) -> str:
    """A share as a whole percentage (one decimal just below 100% and just above 0%, so that
    99.6% never reads as 100% nor 0.4% as 0%)."""
    value = 100 * float(x)
    if 99.5 <= value < 100 or 0 < value < 0.5:
        return f"{value:.1f}%"
    return f"{round(value)}%".replace("-", MINUS)


def num(x: float, signed: bool = False, digits: int = 2) -> str:
    """`digits` significant digits (at least the integer part); powers of ten as a × 10ⁿ outside
    0.01..1000 (never 'e-05'); true minus signs."""
    x = float(x)
    sign = "+" if signed and x > 0 else ""
    if x == 0:
        return "0"
    if math.isnan(x):
        return "n/a"
    if 0.01 <= abs(x) < 1000:
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
        text = f"{x:.{decimals}f}"
        return sign + text.replace("-", MINUS)
    return keep_together(f"{sign}{x:.0e}")


def sig(x, digits: int = 2) -> str:
    """`digits` significant digits in plain notation ('1 × 10⁻⁵' past it), whole numbers
    below 10^4 as integers, '-' for None: how the quantitative bounds chapter writes losses and
    lengths, where a missing value is a table's dash."""
    if x is None:
        return "-"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e4):
        return keep_together(str(int(x)))
    return keep_together(f"{x:.{digits}g}")


# Where a line may not break (UAX #14 as browsers apply it): a hyphen-minus next to a digit
# ("1.29e-06", "98.9-100.0") or between letters ("(i-j)%4") is a break opportunity. A number's
# exponent becomes "× 10⁻⁶" (no-break spaces), a range's hyphen a non-breaking hyphen, a sign and
# a formula's minus the true minus (which does not break from what it joins). Left as they are:
# code spans, math, HTML tags, link targets and addresses.
_SKIP = re.compile(r"(`[^`]*`|\$[^$]*\$|<[^>]*>|\]\([^)]*\)|https?://\S+)")
_NUMBER = r"\d+(?:\.\d+)?%?"
_EXPONENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?)(\d+)(?![\w.])")
_RANGE = re.compile(rf"(?<![\w.])({_NUMBER})-(?=\d+(?:\.\d+)?%?(?![\w.]))")
_SIGN = re.compile(r"(?<![\w.)\]])-(?=\.?\d)")
# a minus between one-letter or numeric operands, where a bracket or an operator shows a formula
_FORMULA = re.compile(r"(?<![\w-])([A-Za-z]|\d+)-(?=(?:[A-Za-z]|\d+)[)=%<>+*/^])"
                      r"|(?<=\()([A-Za-z]|\d+)-(?=(?:[A-Za-z]|\d+)\b)")


def _exponent(match) -> str:
    mantissa, sign, power = match.groups()
    return (f"{mantissa}{NBSP}×{NBSP}10"
            f"{str(int(sign + power) if sign == '-' else int(power)).translate(_SUPERSCRIPT)}")


_NAME_INDEX = re.compile(r"(?<![\w\\])([A-Z])_(\d+)(?!\w)")   # D_12, the paper's names
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def math_names(text: str) -> str:
    """The paper's indexed names in a figure's text as matplotlib math: 'D_32' -> '$D_{32}$'."""
    return _NAME_INDEX.sub(lambda m: f"${m.group(1)}_{{{m.group(2)}}}$", str(text))


def markdown_literal(text: str) -> str:
    """Plain text made safe to paste as Markdown ({glue:md}, e.g. into a caption): the
    characters MyST would read as emphasis, code, links, math ($), raw HTML (<), a role or a
    substitution ({...}) or a table's cell border (|) are escaped, and so is a '#' or '>' that
    begins a line (a heading, a quote), so a language such as {0,1,2}*02* keeps its stars."""
    escaped = re.sub(r"([\\`*_\[\]$<{}|])", r"\\\1", str(text))
    return re.sub(r"(?m)^([#>])", r"\\\1", escaped)


def for_reader(text: str) -> str:
    """A table cell or a pasted text as the page shows it: indexed names with subscripts
    ('D_12' -> 'D₁₂', as the prose's $D_{12}$ reads; a cell cannot hold math), and numbers,
    ranges and formulas kept on one line (`keep_together`). Code spans, math, tags and links
    are left as they are."""
    parts = _SKIP.split(str(text))
    for i in range(0, len(parts), 2):
        parts[i] = _NAME_INDEX.sub(lambda m: m.group(1) + m.group(2).translate(_SUBSCRIPT),
                                   parts[i])
    return keep_together("".join(parts))


def keep_together(text: str) -> str:
    """The text with every number, range and short formula unbreakable: '1.29e-06' ->
    '1.29 × 10⁻⁶', '98.9-100.0' -> '98.9‑100.0' (non-breaking hyphen), '-0.5' -> '−0.5',
    '(i-j)%4=0' -> '(i−j)%4=0'. Code spans, math, HTML tags and link targets are left as they
    are, so Markdown may be passed; hyphens inside words and names ('copy-unique',
    'huang-fig1-algorithmic') too."""
    parts = _SKIP.split(str(text))
    for i in range(0, len(parts), 2):
        part = _EXPONENT.sub(_exponent, parts[i])
        part = _RANGE.sub(rf"\1{NB_HYPHEN}", part)
        part = _SIGN.sub(MINUS, part)
        parts[i] = _FORMULA.sub(lambda m: (m.group(1) or m.group(2)) + MINUS, part)
    return "".join(parts)


def cell_pct(value) -> str:
    """A share as a percentage with one decimal and no sign, '' for None: a table cell."""
    return "" if value is None else f"{100 * value:.1f}".replace("-", MINUS)


def span(values, fmt=num) -> str:
    """'lo to hi' of some values (one value if they agree once formatted)."""
    values = [v for v in values if v is not None]
    if not values:
        raise LengthgenError("no values to quote")
    lo, hi = fmt(min(values)), fmt(max(values))
    if lo == hi:
        return lo
    if fmt is pct:
        return f"{lo[:-1]} to {hi}"
    return f"{lo} to {hi}"


def listing(texts) -> str:
    """'a', 'a and b', 'a, b and c' (numbers written as str() writes them)."""
    texts = [str(t) for t in texts]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def seconds(s: float) -> str:
    return f"{round(s)} s" if s < 100 else f"{round(s)} s ({s / 60:.0f} min)"


def seeds_note(records) -> str:
    """'1 seed' or 'n seeds': how many seeds the records have per setting (the smallest)."""
    counts = {}
    for r in records:
        key = tuple(sorted((k, str(v)) for k, v in r["params"].items()
                           if k not in ("name", "seed")))
        counts[key] = counts.get(key, 0) + 1
    n = min(counts.values())
    return f"{n} seed" + ("" if n == 1 else "s")


def chapter_records(figure_id: str, root=None) -> list[dict]:
    """The committed records of a figure (at the scale the book shows)."""
    from lengthgen.runs.records import committed_records
    found = committed_records(figure_id, root)
    if found is None:
        raise LengthgenError(f"{figure_id}: no committed records to quote")
    return found[1]




def mean_span(values, fmt=pct) -> str:
    """The mean over seeds with the min-max range, 'mean (lo to hi)'; just the value where
    there is one seed or the seeds agree once formatted."""
    values = [v for v in values if v is not None]
    whole = span(values, fmt)
    if fmt(min(values)) == fmt(max(values)):
        return whole
    return f"{fmt(mean(values))} ({whole})"


def separate(high, low) -> bool:
    """Two settings differ only where their ranges over seeds do not overlap."""
    return min(high) > max(low)


PAPER_VS_BOOK_COLUMNS = ["figure", "the paper", "`book` config", "verdict",
                         "the book-scale numbers"]
PAPER_VS_BOOK_HEADER = ["figure", "the paper", "verdict", "the book-scale numbers"]


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; each row lists the cells of PAPER_VS_BOOK_COLUMNS, and only the
    columns of `header` are kept (the book config is said under each figure, and a narrower
    table fits the page)."""
    keep = [PAPER_VS_BOOK_COLUMNS.index(h) for h in header]
    clean = lambda text: for_reader(str(text).replace("|", "\\|").replace("\n", " "))  # noqa: E731
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(clean(row[i]) for i in keep) + " |" for row in rows])
