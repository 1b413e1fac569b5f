"""The interpreter against values computed by hand on small inputs."""
import numpy as np
import pytest

from lengthgen.crasp import accepts, parse_program, run_batch, run_program
from lengthgen.errors import LengthgenError

PROGRAM = parse_program("""
alphabet a b
Ca := #Q(a)
Cb := #Q(b)
V := Ca < Cb
CV := #V
Prev := #[j = i - 1] Q(a)
Two := #[i - j in {0, 1}] Q(b)
Strict := #[j < i] Q(a)
Even := i mod 2 = 0
Pick := Even ? Ca : Cb + 10
Diff := Ca - Cb - 1
D := CV = 0 and Ca = Cb
""")


def test_values_by_hand_on_abba():
    v = run_program(PROGRAM, "abba")     # positions 0 (start) 1..4 = a b b a
    assert v["Q(a)"].tolist() == [False, True, False, False, True]
    assert v["Ca"].tolist() == [0, 1, 1, 1, 2]
    assert v["Cb"].tolist() == [0, 0, 1, 2, 2]
    assert v["V"].tolist() == [False, False, False, True, False]
    assert v["CV"].tolist() == [0, 0, 0, 1, 1]
    assert v["Prev"].tolist() == [0, 0, 1, 0, 0]
    assert v["Two"].tolist() == [0, 0, 1, 2, 1]
    assert v["Strict"].tolist() == [0, 0, 1, 1, 1]
    assert v["Even"].tolist() == [True, False, True, False, True]
    assert v["Pick"].tolist() == [0, 10, 1, 12, 2]
    assert v["Diff"].tolist() == [-1, 0, -1, -2, -1]
    assert v["D"].tolist() == [True, False, True, False, False]


def test_acceptance_is_the_output_at_the_last_position():
    assert accepts(PROGRAM, "aabb") and accepts(PROGRAM, "abab") and accepts(PROGRAM, "")
    assert not accepts(PROGRAM, "abba") and not accepts(PROGRAM, "aab")


def test_the_start_position_is_never_counted():
    p = parse_program("alphabet a\nN := #not Q(a)\nAll := #true\naccept N = 0\n")
    v = run_program(p, "aaa")
    assert v["N"].tolist() == [0, 0, 0, 0]        # not Q(a) holds at the start, uncounted
    assert v["All"].tolist() == [0, 1, 2, 3]       # #true at i is i


def test_batch_equals_one_at_a_time():
    rng = np.random.default_rng(0)
    strings = ["".join(rng.choice(list("ab"), 12)) for _ in range(50)]
    batch = run_batch(PROGRAM, strings)
    for k, s in enumerate(strings):
        single = run_program(PROGRAM, s)
        for name in PROGRAM.ops:
            assert np.array_equal(batch[name][k], single[name]), name


def test_symbols_of_several_characters_split_on_spaces():
    p = parse_program("alphabet 10 <sep>\nC := #Q(10)\naccept C = 2\n")
    assert accepts(p, "10 <sep> 10") and accepts(p, ["10", "10"]) and not accepts(p, "10")


def test_unknown_symbol_is_a_clear_error():
    with pytest.raises(LengthgenError, match="not in the program's alphabet"):
        run_program(PROGRAM, "abc")


def test_long_inputs_are_fast_enough_to_run_in_a_test():
    values = run_program(PROGRAM, "ab" * 5000)
    assert values["Ca"][-1] == 5000 and values["D"][-1]


def test_trace_text_lists_every_operation_with_its_values():
    from lengthgen.crasp.trace import trace_html, trace_text
    text = trace_text(PROGRAM, "ab")
    lines = text.splitlines()
    assert len(lines) == 1 + len(PROGRAM.ops)
    assert lines[0].split() == ["^", "a", "b"]
    assert next(line for line in lines if line.strip().startswith("Cb ")).split()[1:] == \
        ["0", "0", "1"]
    assert trace_html(PROGRAM, "ab").count("<tr>") == 1 + len(PROGRAM.ops)
