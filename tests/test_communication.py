"""Communication matrices built exhaustively: equality, copying, adding zero and Dyck-2 need
m bits; majority, Dyck-1 and PARITY have few distinct rows."""
import math

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.theory import communication as cc


@pytest.mark.parametrize("m", [1, 3, 6])
def test_equality_matrix_has_full_rank_and_a_diagonal_fooling_set(m):
    mat, rows, columns = cc.problem_matrix("equality", m)
    assert mat.shape == (2 ** m, 2 ** m) and np.array_equal(mat, np.eye(2 ** m, dtype=np.int64))
    assert cc.exact_rank(mat) == 2 ** m
    assert cc.is_fooling_set(cc.equality, [(x, x) for x in rows])
    assert cc.one_way_bits(mat) == m


@pytest.mark.parametrize("name", ["copy", "addition", "dyck2"])
def test_copy_addition_and_dyck2_contain_equality(name):
    m = 5
    s = cc.summary(name, m)
    assert s["rank"] == s["rows"] == s["distinct_rows"] == s["fooling_set"]
    assert s["rows"] == (2 ** (m - 1) if name == "addition" else 2 ** m)


@pytest.mark.parametrize("name, rows", [("majority_ab", lambda m: m + 1),
                                        ("dyck1", lambda m: m // 2 + 2),
                                        ("parity", lambda m: 2)])
def test_counting_languages_and_parity_have_few_rows(name, rows):
    for m in (2, 4, 6):
        s = cc.summary(name, m)
        assert s["distinct_rows"] == rows(m), (name, m)
        assert s["rank"] <= s["distinct_rows"] and s["one_way_bits"] == math.ceil(
            math.log2(rows(m)))


def test_exact_rank_is_exact_where_floats_are_not():
    # rows (1, 1e16 + 1) and (1, 1e16) are independent; numpy's SVD rank says 1
    big = np.array([[1, 10 ** 16 + 1], [1, 10 ** 16]], dtype=np.int64)
    assert cc.exact_rank(big) == 2 and np.linalg.matrix_rank(big.astype(float)) == 1
    assert cc.exact_rank(np.array([[1, 2], [2, 4]])) == 1


def test_a_non_fooling_set_is_recognized():
    assert cc.is_fooling_set(cc.parity, [("0", "1"), ("1", "0")])  # crossings 00, 11: even
    assert not cc.is_fooling_set(cc.parity, [("00", "1"), ("11", "1")])  # same row


def test_bad_requests_are_clear_errors():
    with pytest.raises(LengthgenError, match="unknown communication problem"):
        cc.problem_matrix("equalty", 3)
    with pytest.raises(LengthgenError, match="at least one symbol"):
        cc.problem_matrix("equality", 0)
    with pytest.raises(LengthgenError, match="limit"):
        cc.problem_matrix("equality", 12)


def test_distinct_messages_counts_what_alice_can_say():
    assert cc.distinct_messages(lambda x: x.count("1"), cc.strings("01", 4)) == 5


def test_html_table_from_dicts_keeps_order_and_escapes():
    from lengthgen.viz.tables import HTMLTable
    table = HTMLTable.from_dicts([{"a": 1, "b": "x<y"}, {"a": 0.123456, "b": None}])
    assert table.header == ["a", "b"]
    assert "<td>x&lt;y</td>" in table.html and "<td>0.123</td>" in table.html
    assert str(table).splitlines() == ["a | b", "1 | x<y", "0.123 | –"]
    with pytest.raises(LengthgenError):
        HTMLTable.from_dicts([])


def test_one_function_cheap_at_one_cut_is_equality_at_another():
    from lengthgen.theory import communication as cc
    middle, early = cc.summary("inner_equality", 6), cc.summary("inner_equality_early", 6)
    assert (middle["distinct_rows"], middle["one_way_bits"]) == (2, 1)
    assert early["rank"] == early["rows"] == 8 and early["fooling_set"] == 8
    # the same function of the whole word at both cuts
    mat, rows, cols = cc.problem_matrix("inner_equality_early", 4)
    for r, x in enumerate(rows):
        for c, y in enumerate(cols):
            w = x + y
            assert mat[r, c] == (w[:2] == w[2:4])
    with pytest.raises(LengthgenError, match="must be even"):
        cc.problem_matrix("inner_equality", 3)
