"""`figure data ID` prints what figure ID draws: for every figure with committed records, the
module's data() exists, its rows have named columns (not the generic metric/value dump), and
every value the figure plots (line and scatter heights, bar lengths, image pixels) is a number
in those rows."""
import csv
import io
import re

import matplotlib
import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

from lengthgen.runs.records import committed_records, figure_data
from lengthgen.runs.registry import EXPERIMENTS, experiment
from lengthgen.results import results_dir
from lengthgen.runs.registry import source_ids
from lengthgen.runs.runner import in_progress
from lengthgen.experiments.spread import over_seeds

matplotlib.use("Agg")
GENERIC = {"figure_id", "run", "metric", "value"}
WITH_RECORDS = sorted(f for f in EXPERIMENTS if committed_records(f, missing_ok=True) is not None)


def plotted_values(fig, numbers: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The data values a figure draws along its value axis, and how many drawn artists (lines,
    sets of points) were left out as not data. Collected: the y of lines and scatter points in data coordinates, the
    length of bars, the pixels of images. Left out: reference lines in axes coordinates,
    error-bar caps and empty legend proxies; with `numbers` given, lines and points whose x are
    not all among them (a formula drawn on a grid of its own), whose heights are then not looked
    for either. Points and lines over a categorical axis (its ticks named by hand, with names
    that are not their positions) are values along the other axis wherever they are placed."""
    values, skipped = [], 0

    def placed_by_data(xs) -> bool:
        return numbers is None or not not_found(np.asarray(xs, dtype=float), numbers)

    for ax in fig.axes:
        if hasattr(ax, "_colorbar"):
            continue
        categorical_x = categorical(ax.xaxis)
        caps = {id(line) for c in ax.containers if isinstance(c, ErrorbarContainer)
                for line in c.lines[1]}
        for line in ax.lines:
            if id(line) in caps or line.get_transform() != ax.transData:
                continue
            ys = np.asarray(line.get_ydata(), dtype=float).ravel()
            if categorical_x or placed_by_data(line.get_xdata()):
                values += list(ys)
            else:
                skipped += 1
        for collection in ax.collections:
            if type(collection).__name__ == "PathCollection" and \
                    collection.get_offset_transform() == ax.transData:
                offsets = np.asarray(collection.get_offsets(), dtype=float).reshape(-1, 2)
                categorical_y = any(t.get_text() and not _number(t.get_text())
                                    for t in ax.get_yticklabels())
                value, place = (offsets[:, 0], offsets[:, 1]) if categorical_y else \
                    (offsets[:, 1], offsets[:, 0])
                if categorical_y or categorical_x or placed_by_data(place):
                    values += list(value)
                else:
                    skipped += 1
        bars = [p for p in ax.patches if type(p).__name__ == "Rectangle"]
        if bars:  # horizontal bars all start at one x, vertical ones at one y
            xs, ys = {round(b.get_x(), 9) for b in bars}, {round(b.get_y(), 9) for b in bars}
            horizontal = len(xs) == 1 and (len(ys) > 1 or (xs == {0} and ys != {0}))
            values += [b.get_width() if horizontal else b.get_height() for b in bars]
        for image in ax.images:
            values += list(np.asarray(image.get_array(), dtype=float).ravel())
    values = np.array(values, dtype=float)
    return values[np.isfinite(values)], skipped


def categorical(axis) -> bool:
    """Ticks named by hand (a fixed or function formatter) with names that are not their
    positions: the categories of a categorical axis ("star-free"; dot-depths 1, 2, 12 at
    positions 0, 1, 2)."""
    from matplotlib.ticker import FixedFormatter, FuncFormatter
    if not isinstance(axis.get_major_formatter(), (FixedFormatter, FuncFormatter)):
        return False
    for position, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels()):
        text = label.get_text()
        if text and _value(text) != position:
            return True
    return False


def _value(text: str) -> float | None:
    try:
        return float(text.replace("\N{MINUS SIGN}", "-").replace(",", ""))
    except ValueError:
        return None


def _number(text: str) -> bool:
    try:
        float(text.replace("\N{MINUS SIGN}", "-").replace("$", "").replace("{", "")
              .replace("}", "").replace("^", "e").replace("\\mathdefault", "").replace(",", ""))
        return True
    except ValueError:
        return text.startswith("$") or text.startswith("\N{MINUS SIGN}")


def table_cells(fig) -> list[str]:
    """The texts of the body cells of every table drawn on the figure."""
    return [cell.get_text().get_text() for ax in fig.axes for t in ax.tables
            for (row, _), cell in t.get_celld().items() if row > 0]


def data_numbers(rows: list[dict]) -> np.ndarray:
    numbers = []
    for row in rows:
        for value in row.values():
            if isinstance(value, (bool, int, float)):
                numbers.append(float(value))
    numbers = np.array(sorted(numbers), dtype=float)
    return numbers[np.isfinite(numbers)]


def not_found(values: np.ndarray, numbers: np.ndarray, rtol: float = 1e-6) -> list[float]:
    """The values (up to rtol) that are not among the numbers."""
    missing = []
    for v in values:
        i = np.searchsorted(numbers, v)
        near = [numbers[j] for j in (i - 1, i) if 0 <= j < len(numbers)]
        if not any(abs(n - v) <= rtol * max(1.0, abs(v)) for n in near):
            missing.append(float(v))
    return missing


# Values a figure draws that are not in its rows on purpose: a margin or a floor, named.
DRAWN_NOT_DATA = {
    "crasp-long-unary": [1.0],         # bars of programs that never change start at n = 1 (log axis)
    "crasp-compile-check": [1e-17],    # exact values are drawn at a floor of 1e-17 (log axis)
}
# Figures whose data() does not yet hold everything they draw, and what is missing (none now).
NOT_YET_COVERED: dict[str, str] = {}


@pytest.fixture(scope="module", params=WITH_RECORDS)
def drawn(request):
    figure_id = request.param
    scale, records = committed_records(figure_id)
    folders = [results_dir() / source / scale for source in source_ids(figure_id)]
    if any(in_progress(f) is not None for f in folders) and not figure_data(figure_id, records):
        pytest.skip(f"{figure_id}: its sweep is in progress and has no drawn value yet")
    fig = experiment(figure_id).figure(records)
    yield figure_id, records, fig
    matplotlib.pyplot.close(fig)


def test_every_figure_with_records_is_checked():
    """The figures checked here are exactly those whose sources all have a committed folder,
    and every committed folder is a registered figure's (the paper-budget sweep's job records
    too: a planned figure): a renamed figure id whose old records linger, or a figure whose
    records are skipped, fails."""
    folders = {p.name for p in results_dir().iterdir() if p.is_dir()}
    assert folders - set(EXPERIMENTS) == set()
    assert WITH_RECORDS == sorted(f for f in EXPERIMENTS
                                  if set(source_ids(f)) <= folders)
    assert len(WITH_RECORDS) >= 25, WITH_RECORDS


def test_data_has_named_columns_and_rows(drawn):
    figure_id, records, _ = drawn
    module = experiment(figure_id)
    assert hasattr(module, "data"), f"{figure_id}: no data() (the generic dump would be used)"
    rows = figure_data(figure_id, records)
    assert rows, f"{figure_id}: data() returned no rows"
    columns = list(rows[0])
    assert set(columns) != GENERIC and "metric" not in columns, f"{figure_id}: generic dump"
    assert all(list(row) == columns for row in rows), f"{figure_id}: rows differ in columns"
    assert all(isinstance(c, str) and c for c in columns)
    for row in rows:  # one CSV cell per value: no lists or dicts left in a cell
        assert not any(isinstance(v, (list, dict, tuple)) for v in row.values()), \
            f"{figure_id}: a cell holds a list or dict: {row}"
    text = io.StringIO()
    csv.DictWriter(text, fieldnames=columns).writerows(rows)
    assert text.getvalue()


def test_data_covers_what_the_figure_draws(drawn):
    figure_id, records, fig = drawn
    if figure_id in NOT_YET_COVERED:
        pytest.xfail(NOT_YET_COVERED[figure_id])
    rows = figure_data(figure_id, records)
    # a mean over seeds that the figure draws is in `figure data --over-seeds`
    by = getattr(experiment(figure_id), "SPREAD_BY", None)
    summary = data_numbers(over_seeds(rows, by)) if by else []
    numbers = np.sort(np.concatenate([data_numbers(rows), summary,
                                      DRAWN_NOT_DATA.get(figure_id, [])]))
    values, _ = plotted_values(fig, numbers)
    cells = table_cells(fig)
    assert len(values) or cells, f"{figure_id}: the figure draws no values to compare"
    texts = [str(v) for row in rows for v in row.values() if isinstance(v, str)]
    for cell in cells:  # every number in a table cell is a number or part of a text of the rows
        for token in re.findall(r"\d+(?:\.\d+)?", cell):
            assert not_found(np.array([float(token)]), numbers) == [] or \
                any(token in t for t in texts), f"{figure_id}: table cell {cell!r}: {token}"
    missing = not_found(values, numbers)
    assert not missing, (f"{figure_id}: {len(missing)} of {len(values)} plotted values are not "
                         f"in figure data, e.g. {sorted(set(missing))[:5]}")


def test_the_check_catches_a_dropped_column():
    """The coverage check fails when a plotted quantity is left out of the rows."""
    figure_id = "richard-fig6-ablation"
    records = committed_records(figure_id)[1]
    fig = experiment(figure_id).figure(records)
    values, _ = plotted_values(fig)
    matplotlib.pyplot.close(fig)
    rows = [{k: v for k, v in row.items() if k != "out_of_sample"}
            for row in figure_data(figure_id, records)]
    assert not_found(values, data_numbers(rows))
