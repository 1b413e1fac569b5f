"""The rows of the Lemma 37 and Theorem 9 figures (crasp-long-unary, crasp-compile-check),
which the chapter's "Paper vs this book" table reads too: below both the figure modules and
`huang.crasp.analysis`, so the analysis imports them instead of looking a figure module up by
id (Tables 2 and 3 share `expressiveness.cell_rows`).
"""
EXACT = 1e-9  # a stored value this close to its exact representation counts as exact


def unary_data(records):
    """One row per program and n: the verdict of the program's output on a^n (0 or 1; for a
    next-token program its first token output, the one drawn), with the program's last change
    (of its outputs, and of any Boolean operation: the bars)."""
    rows = []
    for r in sorted(records, key=lambda r: (r["metrics"]["fragment"], r["run_name"])):
        m = r["metrics"]
        for output, values in list(m["outputs"].items())[:1]:
            rows += [{"program": r["run_name"], "fragment": m["fragment"], "symbol": m["symbol"],
                      "output": output, "n": n, "value": value,
                      "last_change_output": m["last_change_output"],
                      "last_change_any": m["last_change_any"],
                      "boolean_operations": m["boolean_operations"]}
                     for n, value in enumerate(values)]
    return rows


MODES = ("heaviside", "relu", "relu_break")  # the compilations checked


def mode_series(record, mode):
    """(lengths, the by-length entries) of one compilation mode of a record."""
    rows = record["metrics"][mode]["by_length"]
    ns = sorted(int(n) for n in rows)
    return ns, [rows[str(n)] for n in ns]


def compile_data(records: list[dict]) -> list[dict]:
    """One row per program, compilation and input length: how many positions were checked,
    how many values and accept bits agree with the interpreter, and the largest deviation of a
    stored value from its exact representation (mode relu_break: compiled for the short
    max_length and run beyond it)."""
    rows = []
    for record in sorted(records, key=lambda r: r["params"]["program"]):
        m = record["metrics"]
        for mode in MODES:
            ns, entries = mode_series(record, mode)
            rows += [{"program": record["params"]["program"], "fragment": m["fragment"],
                      "seed": record["params"]["seed"], "mode": mode,
                      "max_length": m[mode]["max_length"], "length": n,
                      "strings": e["strings"], "positions": e["positions"],
                      "value_agree": e["value_agree"], "accept_agree": e["accept_agree"],
                      "accept_fraction": e["accept_agree"] / e["positions"],
                      "max_error": e["max_error"],
                      "exact": e["value_agree"] == e["positions"] and e["max_error"] <= EXACT}
                     for n, e in zip(ns, entries)]
    return rows
