"""The tables and glued numbers of the Izzo and communication chapters come from library
functions (the notebooks only call them): each is checked here against the rows it summarizes."""
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.comm import analysis as comm_analysis
from lengthgen.experiments.huang.comm import tables as comm_tables
from lengthgen.experiments.izzo import (izzo_fig2_modp, izzo_fig3_hardmax, izzo_kgram,
                                        izzo_thm41_bound)
from lengthgen.experiments.izzo import analysis, rows, tables
from lengthgen.experiments.prose import sig
from lengthgen.results import load_records, results_dir
from lengthgen.theory import communication as cc
from lengthgen.theory.copying import copy_model, copy_steps, step_rows


MODULES = {m.FIGURE_ID: m for m in (izzo_fig2_modp, izzo_fig3_hardmax, izzo_kgram,
                                     izzo_thm41_bound)}


def experiment(figure_id):
    return MODULES[figure_id]


def records(figure_id):
    """The committed book-scale records the chapter shows."""
    found = load_records(figure_id, "book", results_dir())
    assert found, f"no committed book records of {figure_id}"
    return found


@pytest.mark.parametrize("figure_id, key, symbol", [("izzo-fig1-simpletask", "omega", "omega"),
                                                     ("izzo-fig2-modp", "period", "Delta")])
def test_summary_table_renames_the_summary_rows(figure_id, key, symbol):
    recs = records(figure_id)
    rows, table = analysis.summary_rows(recs, key), analysis.summary_table(recs, key, symbol)
    assert len(table) == len(rows)
    assert list(table[0])[:3] == [symbol, "N", "seeds"] and "plateau (mean)" in table[0]
    for row, shown in zip(rows, table):
        assert (shown[symbol], shown["N"], shown["plateau (mean)"]) == \
            (row[key], row["train_length"], row["plateau"])


def test_simulation_table_keeps_the_worst_of_each_model_and_eps():
    module = experiment("izzo-thm41-bound")
    recs = records("izzo-thm41-bound")
    rows, table = module.data(recs), tables.simulation_table(recs)
    assert len(table) == len({(r["model"], r["eps"]) for r in rows})
    for shown in table:
        group = [r for r in rows if (r["model"], r["eps"]) == (shown["model"], shown["eps"])]
        assert shown["longest |x|"] == max(r["x_length"] for r in group)
        assert shown["longest z"] == max(r["z_length_max"] for r in group)
        assert shown["largest output error"] == max(r["output_error_max"] for r in group)
    low, high = tables.theorem_lengths(recs)
    assert low == min(r["N"] for r in rows) and high == max(r["N"] for r in rows) and low <= high


def test_hardmax_table_and_headline_follow_the_data():
    recs = records("izzo-fig3-hardmax")
    groups = rows.group_rows(recs)   # the per-group summary the chapter tabulates
    table = tables.hardmax_table(recs)
    assert len(table) == len(groups) and set(table[0]) == {
        "N", "seed", "positions", "count", "mean weight", "std of the weight", "test MSE at 80"}
    numbers = tables.hardmax_headline(recs)
    lengths = sorted({r["train_length"] for r in groups})
    assert (numbers["first-n"], numbers["last-n"]) == (lengths[0], lengths[-1])
    assert numbers["lengths"].split(", ") == [str(n) for n in lengths]
    assert len(numbers["std"].split(", ")) == len(lengths)
    worst_off = max(r["mean_weight"] for r in groups
                    if r["positions"] == "other" and r["train_length"] > lengths[0])
    assert numbers["off"] == sig(worst_off)


def test_kgram_tables_have_a_row_per_setting_and_per_run_and_length():
    module = experiment("izzo-kgram")
    recs = records("izzo-kgram")
    assert len(tables.kgram_table(recs)) == len(module.data(recs))
    attention = tables.kgram_attention_rows(recs)
    assert len(attention) == sum(len(r["metrics"]["attention"]) for r in recs)
    assert all(isinstance(r["test length"], int) and r["phi layer 1"] for r in attention)
    for run in {(r["S"], r["k"], r["seed"]) for r in attention}:   # lengths in numeric order
        lengths = [r["test length"] for r in attention if (r["S"], r["k"], r["seed"]) == run]
        assert lengths == sorted(lengths), lengths
    gap = tables.kgram_gap_table([{"S": 2, "k": 3, "lengths": "1-32", "gap_mse": 0.5}])
    assert gap == [{"S": 2, "k": 3, "lengths": "1-32", "smoothed vs proportion (MSE)": 0.5}]


def test_scaling_growth_has_one_value_per_compared_length():
    recs = records("izzo-fig2-modp")
    numbers = tables.scaling_growth(recs)
    lengths = numbers["lengths"].split(", ")
    assert len(lengths) >= 1 and lengths == sorted(lengths, key=int)
    assert len(numbers["suffix"].split(", ")) == len(numbers["all"].split(", ")) == len(lengths)


def test_rounding_table_and_numbers():
    rows = comm_analysis.rounding_rows([16, 32], [None, 4, 8], inputs=1)
    table = comm_tables.rounding_table(rows)
    assert [r["keys"] for r in table] == ["exact", "exact", 4, 4, 8, 8]
    numbers = comm_analysis.rounding_numbers(rows)
    at = {r["key_bits"]: r for r in rows if r["n"] == 32}
    assert numbers["n"] == 32 and numbers["4-bits"] == at[4]["bits"]
    assert numbers["4-classes"] <= numbers["exact-classes"]  # rounded keys merge classes
    # the growth the prose states is computed: classes per N, still growing, bits over N/2
    growth = comm_analysis.rounding_growth(rows)
    assert numbers["8-classes-series"] == " and ".join(str(c) for c in growth[8]["classes"])
    assert numbers["8-growing"] == ("yes" if growth[8]["classes"][1] > growth[8]["classes"][0]
                                    else "no")
    assert float(numbers["4-over-half"]) == round(at[4]["bits"] / 16)
    assert numbers["below-half"] == "none"        # at N = 16, 32 every message is long
    with pytest.raises(LengthgenError, match="lack keys 8"):
        comm_analysis.rounding_numbers([r for r in rows if r["key_bits"] != 8])


def test_matrix_table_and_message_counts():
    table = comm_tables.matrix_table([cc.summary("equality", 3), cc.summary("parity", 3)])
    assert [(r["problem"], r["distinct rows"]) for r in table] == [("equality", 8), ("parity", 2)]
    assert table[1]["fooling set"] == ""      # no fooling set checked for parity
    counts = comm_analysis.message_counts(["majority_ab"], 4)
    assert counts[0]["Alice's halves"] == 16
    # Alice's message carries counts, not the order: fewer messages than halves
    assert 1 < counts[0]["different messages"] < 16


def test_copy_step_rows_mark_where_the_copy_breaks():
    model = copy_model(6)
    unique = step_rows(copy_steps(model, ["3", "1", "4", "0", "5", "2"]))
    repeat = step_rows(copy_steps(model, ["3", "1", "4", "1", "5", "2"]))
    assert {r["ok"] for r in unique} == {"yes"}
    assert "NO" in {r["ok"] for r in repeat}
    assert unique[0]["model predicts"] == "{3}"
