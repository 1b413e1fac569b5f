"""The C-RASP expressiveness tables of Huang et al. (2025), Tables 2 and 3: shared by the two
figures that regenerate them (huang_table2_languages, huang_table3_algorithmic).

Each cell is our entry for one task and one fragment (C-RASP[] for NoPE, C-RASP[periodic,
local] for APE): a "yes" is a program of the library checked by running it (against the
language's DFA, or the task's solver), a "no" names the result that proves it
(crasp.lemmas). Each cell is compared with the paper's entry (tasks.metadata).
"""
import re

import matplotlib.pyplot as plt

from lengthgen.crasp.check import MAX_EXHAUSTIVE_STRINGS as MAX_EXHAUSTIVE
from lengthgen.crasp.check import check_language, check_task
from lengthgen.crasp.lemmas import APE, COLUMNS, NOPE, claim
from lengthgen.crasp.library import get_program
from lengthgen.experiments.prose import for_reader
from lengthgen.tasks.metadata import algorithmic_ids, info, language_ids


def verify_cell(task_id: str, column: str, config: dict) -> dict:
    """Our entry for one cell, with the check of its program or the reference of its proof."""
    entry, backing = claim(task_id, column)
    cell = {"entry": entry}
    if entry == "yes":
        program = get_program(backing)
        if program.token_outputs:
            report = check_task(program, task_id, config["n_random"], config["max_random_length"],
                                config.get("n_lengths", 40))
        else:
            report = check_language(program, task_id, config["max_length"], config["n_random"],
                                    config["max_random_length"],
                                    exhaustive_cap=config.get("exhaustive_cap", MAX_EXHAUSTIVE))
        cell.update(program=backing, fragment=program.fragment(), operations=len(program.ops),
                    checked=report.checked, exhaustive_length=report.exhaustive_length,
                    disagreements=report.n_disagreements, examples=report.disagreements,
                    verified=report.ok)
    elif entry == "no":
        cell.update(proof=backing.result, argument=backing.argument,
                    illustration=backing.illustration)
    elif entry == "none found":
        cell.update(note=backing)
    return cell


def cells_of(task_id: str, config: dict) -> dict:
    """Both columns of one row, each compared with the paper's entry."""
    meta = info(task_id)
    cells = {}
    for column, paper in ((NOPE, meta.crasp), (APE, meta.crasp_periodic_local)):
        same = cells.get(NOPE, {})  # a C-RASP[] program backs both columns: check it once
        cell = dict(same) if same.get("entry") == "yes" else verify_cell(task_id, column, config)
        cell["paper"] = paper
        cell["agrees"] = cell["entry"] == paper and cell.get("verified", True)
        cells[column] = cell
    return cells


# ----- the table ------------------------------------------------------------------------------
COLORS = {"yes": "#d5ecd0", "no": "#f3d9d4", "none found": "#f6ecc8", "missing": "#ffffff"}


def cell_text(cell: dict) -> str:
    if cell["entry"] == "yes":
        mark = "ok" if cell["verified"] else f"{cell['disagreements']} WRONG"
        return f"yes: {cell['program']} ({mark})"
    if cell["entry"] == "no":
        return f"no: {cell['proof']}"
    return cell["entry"]


def rows_of(records: list[dict], extra_columns) -> tuple[list[str], list[list[str]], list]:
    """Header, text rows and per-row cells (for colors), in the order of the records' runs."""
    header = ["task", NOPE + " (NoPE)", APE + " (APE)"] + [name for name, _ in extra_columns]
    rows, cells = [], []
    for r in records:
        m = r["metrics"]
        row_cells = [m["cells"][c] for c in COLUMNS]
        flag = "" if all(c["agrees"] for c in row_cells) else "  [differs from paper]"
        rows.append([m["name"] + flag] + [cell_text(c) for c in row_cells] +
                    [fmt(m) for _, fmt in extra_columns])
        cells.append(row_cells)
    return header, rows, cells


def in_order(records: list[dict]) -> list[dict]:
    """Records in the paper's row order (Table 2, then Table 3)."""
    ids = language_ids() + algorithmic_ids()
    return sorted(records, key=lambda r: ids.index(r["run_name"]))


def draw_table(records: list[dict], extra_columns, title: str):
    header, rows, cells = rows_of(records, extra_columns)
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.32 * len(rows)))
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=header, loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    for i, row_cells in enumerate(cells, start=1):
        for j, cell in enumerate(row_cells, start=1):
            table[i, j].set_facecolor(COLORS[cell["entry"]] if cell["agrees"] else "#ff9c8a")
    table.auto_set_column_width(list(range(len(header))))
    table.scale(1, 1.25)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def regenerated_figure(records: list[dict], extra_columns, table: str, checked_by: str):
    """Table `table` of the paper drawn from the records, its title counting the cells that
    agree with the paper; `checked_by` says what each yes was run against."""
    records = in_order(records)
    ok = sum(c["agrees"] for r in records for c in r["metrics"]["cells"].values())
    return draw_table(records, extra_columns, f"{table} regenerated: {ok} of "
                                              f"{2 * len(records)} cells agree with Huang et "
                                              f"al.; every yes is a program checked against "
                                              f"{checked_by}")


def _md(text: str) -> str:
    """A Markdown table cell: pipes, asterisks, underscores and brackets stay literal (D_12 as
    D₁₂ and numbers kept on one line, `for_reader`)."""
    return re.sub(r"([\\|*_`\[\]<>])", r"\\\1", for_reader(str(text)))


# the columns each table has beyond the verdicts: (heading, record metrics -> cell)
LANGUAGE_COLUMNS = [("star-free", lambda m: {True: "yes", False: "no"}[m["star_free"]]),
                    ("dot-depth", lambda m: str(m["dot_depth"] or "-")),
                    ("AC0", lambda m: "yes" if m["ac0"] else "no")]   # Table 2
ALGORITHMIC_COLUMNS = [("AC0", lambda m: "yes" if m["ac0"] else "no")]   # Table 3


def table_markdown(records: list[dict], extra_columns) -> str:
    """The same table as Markdown (for the book's HTML tables): each verdict cell is wrapped in
    a span of class lengthgen-yes / -no / -none-found / -missing, or lengthgen-differs where it
    disagrees with the paper, so that the page can colour it like the figure."""
    ordered = in_order(records)
    header, rows, cells = rows_of(ordered, extra_columns)
    lines = ["| " + " | ".join(_md(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row, row_cells in zip(rows, cells):
        out = [_md(row[0])]
        for text, cell in zip(row[1:], row_cells):
            kind = cell["entry"].replace(" ", "-") if cell["agrees"] else "differs"
            out.append(f'<span class="lengthgen-{kind}">{_md(text)}</span>')
        out += [_md(t) for t in row[1 + len(row_cells):]]
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)


def cell_rows(records: list[dict]) -> list[dict]:
    """One row per task and column of the table: our entry, the paper's, whether they agree,
    and what backs ours (the checked program and how many strings it was run on, or the
    proof)."""
    rows = []
    for r in in_order(records):
        m = r["metrics"]
        for column in COLUMNS:
            cell = m["cells"][column]
            rows.append({"task": r["run_name"], "name": m["name"], "number": m["number"],
                         "column": column, "entry": cell["entry"], "paper": cell["paper"],
                         "agrees": cell["agrees"], "program": cell.get("program", ""),
                         "fragment": cell.get("fragment", ""),
                         "operations": cell.get("operations", ""),
                         "checked": cell.get("checked", ""),
                         "exhaustive_length": cell.get("exhaustive_length", ""),
                         "disagreements": cell.get("disagreements", ""),
                         "verified": cell.get("verified", ""), "proof": cell.get("proof", ""),
                         "star_free": m.get("star_free", ""), "dot_depth": m.get("dot_depth", ""),
                         "ac0": m["ac0"]})
    return rows
