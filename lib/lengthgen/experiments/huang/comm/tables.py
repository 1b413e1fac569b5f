"""The communication chapter's tables, from the rows of `analysis`."""
from lengthgen.experiments.huang.comm.analysis import bit_rows


def program_table(records: list[dict]) -> list[dict]:
    """One row per program: its fit, the bits at the largest N and the crossing point."""
    rows = {}
    for row in bit_rows(records):
        rows[row["program"]] = row    # the last row has the largest N
    return [{"program": p, "fit": f"{r['fit_a']:.1f} + {r['fit_b']:.2f} log2 N",
             f"bits at N={r['n']}": r["bits"], "N/2": r["equality_bits"],
             "crossing N*": r["crossing_n"]} for p, r in rows.items()]


def rounding_table(rows) -> list[dict]:
    """The chapter's table of `rounding_rows`."""
    return [{"keys": r["key_bits"], "N": r["n"], "bits": r["bits"],
             "classes, layer 1": r["classes_layer_1"], "classes, layer 2": r["classes_layer_2"],
             "bits per Alice position": r["bits_per_alice_position"],
             "Bob vs forward pass": "" if r["max_error"] is None else r["max_error"]}
            for r in rows]


def matrix_table(summaries) -> list[dict]:
    """The chapter's table of communication matrices (`theory.communication.summary` rows)."""
    return [{"problem": r["problem"], "m": r["m"], "rows": r["rows"],
             "distinct rows": r["distinct_rows"], "exact rank": r["rank"],
             "one-way bits": r["one_way_bits"], "fooling set": r["fooling_set"] or ""}
            for r in summaries]


def agreement_table(rows) -> list[dict]:
    """The chapter's table of comm-agreement's data() rows, the error written as in the records
    (e.g. 2.2e-16)."""
    return [{"program": r["program"], "fragment": r["fragment"], "runs": r["runs"],
             "lengths": r["lengths"], "max |Bob - forward|": f"{r['max_error']:.1e}"}
            for r in rows]


def agreement_worst(rows) -> str:
    """The largest difference over every program of comm-agreement's data() rows, as the
    chapter's prose writes it."""
    return f"{max(r['max_error'] for r in rows):.1e}"


def messages_table(rows) -> list[dict]:
    """The chapter's table of comm-messages' data() rows."""
    return [{"program": r["program"], "Alice's halves": r["halves"],
             "different messages": r["messages"]} for r in rows]
