"""The C-RASP chapter's "Paper vs this book" table (Huang et al. 2025, Tables 2 and 3,
Lemmas 37 and 38, Theorem 9), from the committed records: the paper's claims are proofs, so
the book's outcome is whether every program it runs agrees with them.
"""
from lengthgen.experiments.huang.crasp.expressiveness import cell_rows
from lengthgen.experiments.huang.crasp.rows import compile_data, unary_data
from lengthgen.experiments.prose import (PAPER_VS_BOOK_COLUMNS, chapter_records, markdown_table,
                                         num, span)


def crasp_paper_vs_book(root=None) -> str:
    """The C-RASP chapter's 'Paper vs this book' table: the paper's claims are proofs, so the
    book's outcome is whether every program it runs agrees with them; settings and counts from
    the records (and the configs they were run with). What it needs from a figure is imported
    from below the figure modules (`expressiveness.cell_rows`, `rows`), never looked up by id."""
    rows = []
    for figure_id, label, paper, what, compared in (
            ("huang-table2-languages", "tab-crasp-languages",
             "Table 2 (App. E.1): C-RASP[] and C-RASP[periodic,local] membership of 18 languages, "
             "settled by proof sketches; no programs are run", "strings",
             "prefix verdicts"),
            ("huang-table3-algorithmic", "tab-crasp-algorithmic",
             "Table 3 (App. E.2): the same for 8 algorithmic tasks, by proof sketches",
             "instances", "distinct instances")):
        records = chapter_records(figure_id, root)
        data = cell_rows(records)   # both tables' data(); Table 3's drops two unused columns
        yes = [r for r in data if r["entry"] == "yes"]
        agree = sum(bool(r["agrees"]) for r in data)
        clean = all(r["verified"] and not r["disagreements"] for r in yes)
        checked = sorted({int(r["checked"]) for r in yes})
        verdict = "matches" if agree == len(data) and clean else "differs"

        def setting(c):
            exhaustive = (f"all strings up to length {c['max_length']}, " if "max_length" in c
                          and figure_id.endswith("languages") else "")
            lengths = f"{c['n_lengths']} lengths, " if "n_lengths" in c else ""
            return (f"every \"yes\" a library program checked on {exhaustive}{lengths}"
                    f"{c['n_random']:,} random {what} up to length {c['max_random_length']:,}; "
                    f"every \"no\" cites its proof")
        rows.append([f"`{figure_id}` ({{numref}}`{label}`)", paper, setting(records[0]["config"]),
                     f"**{verdict}**",
                     f"{agree} of {len(data)} cells agree with the paper; "
                     f"{sum(not r['disagreements'] for r in yes)} of {len(yes)} \"yes\" cells' "
                     f"programs agree on all of them ({span(checked, lambda c: f'{c:,}')} {compared} "
                     f"compared per program)"])
    records = chapter_records("crasp-long-unary", root)
    data = unary_data(records)
    last = {}
    for r in data:
        last[(r["program"], r["fragment"])] = max(last.get((r["program"], r["fragment"]), 0),
                                                  int(r["last_change_any"]))
    n = records[0]["config"]["n"]
    plain = [v for (p, f), v in last.items() if "periodic" not in f]
    periodic = [v for (p, f), v in last.items() if "periodic" in f]
    unary_ok = max(plain) < n and all(v > max(plain) for v in periodic)
    rows.append(["`crasp-long-unary` ({numref}`fig-crasp-unary`)",
                 "Lemmas 37 and 38: a proof, **no experiment**",
                 f"all {len(last)} library programs on $a^n$, $n \\le {n:,}$",
                 f"**{'matches' if unary_ok else 'differs'}**",
                 f"the {len(plain)} programs without "
                 f"periodic relations stop changing by $n = {max(plain)}$; the "
                 f"{len(periodic)} periodic ones still change at $n = {min(periodic):,}$ or later"])
    records = chapter_records("crasp-compile-check", root)
    data = compile_data(records)
    book = records[0]["config"]
    heavi = [r for r in data if r["mode"] == "heaviside"]
    relu = [r for r in data if r["mode"] == "relu"]
    broken = [r for r in data if r["mode"] == "relu_break"]
    within = all(r["exact"] for r in broken if r["length"] <= r["max_length"])
    first_wrong = {}
    for r in sorted(broken, key=lambda r: r["length"]):
        if r["length"] > r["max_length"] and r["accept_agree"] < r["positions"]:
            first_wrong.setdefault(r["program"], r["length"])
    programs = {r["program"] for r in data}
    exact = all(r["exact"] for r in heavi) and all(r["exact"] for r in relu) and within
    wrong = sorted(first_wrong.values())
    rows.append(["`crasp-compile-check` (not drawn in this chapter; the cells of \"From program "
                 "to transformer\" run the same compiler)",
                 "Theorem 9: a construction, **no experiment**",
                 f"all {len(programs)} programs compiled with Heaviside and with ReLU comparisons, "
                 f"run at lengths up to {max(book['lengths']):,}; ReLU compiled for length "
                 f"{book['relu_max_length']} and run up to {max(book['break_lengths']):,}",
                 f"**{'matches' if exact else 'differs'}**",
                 f"Heaviside exact at every length "
                 f"(largest deviation {num(max(r['max_error'] for r in heavi), digits=1)}); "
                 f"ReLU exact within the length it was compiled for, and beyond it "
                 f"{len(first_wrong)} of {len(programs)} programs give a wrong output by length "
                 + (f"{wrong[0]} to {wrong[-1]}" if wrong else "(none)")])
    return markdown_table(PAPER_VS_BOOK_COLUMNS, rows)
