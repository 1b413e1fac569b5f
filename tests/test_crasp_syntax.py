"""The parser: what it builds, and that malformed programs fail at the right line:col."""
import pytest

from lengthgen.crasp import ir
from lengthgen.crasp.syntax import parse_program
from lengthgen.errors import LengthgenError


def test_majority_builds_the_expected_operations():
    p = parse_program("alphabet a b\nCa := #Q(a)\nCb := #Q(b)\nM := Cb <= Ca\n")
    assert p.alphabet == ("a", "b")
    assert p.ops["Ca"] == ir.Count("Q(a)")
    assert p.ops["Q(a)"] == ir.Initial("a")
    assert p.ops["M"] == ir.Compare("Cb", "<=", "Ca")
    assert p.output == "M"
    assert p.fragment() == "C-RASP[]"


def test_every_operation_kind_parses():
    p = parse_program("""
alphabet 0 1
T := true
F := false
E := i mod 4 in {0, 2}
O := i mod 3 != 1
L := #[j <= i, j = i - 2] Q(1)
W := #[i - j in {1, 3}] (Q(0) or Q(1))
S := #[j < i] Q(0)
C := (not E and T) ? L + 2 : W - S
K := -3
B := C >= K or F
accept exists[i - j <= 1] B
""")
    assert p.ops["E"] == ir.Periodic(4, frozenset({0, 2}))
    assert p.ops["O"] == ir.Periodic(3, frozenset({0, 2}))
    assert p.ops["L"] == ir.Count("Q(1)", frozenset({2}))
    assert p.ops["W"].offsets == frozenset({1, 3})
    assert isinstance(p.ops["S"], ir.Sub)
    assert isinstance(p.ops["C"], ir.Cond)
    assert p.ops["K"] == ir.CountConst(-3)
    assert p.output == "accept" and isinstance(p.ops["accept"], ir.Compare)
    assert p.fragment() == "C-RASP[periodic,local]"


def test_operands_come_before_their_users_and_forward_references_work():
    p = parse_program("alphabet a\nA := not B\nB := Q(a)\naccept A\n")
    order = list(p.ops)
    for name, op in p.ops.items():
        assert all(order.index(x) < order.index(name) for x in ir.operands(op))
    assert p.output == "A"


def test_equal_subexpressions_are_shared():
    p = parse_program("alphabet a b\nX := #Q(a) >= 1\nY := #Q(a) < 5\n")
    assert sum(isinstance(op, ir.Count) for op in p.ops.values()) == 1


def test_next_token_outputs():
    p = parse_program("alphabet 0 1 <sep>\nnext(<eos>) := exists Q(<sep>)\nnext(1) := Q(0)\n")
    assert set(p.token_outputs) == {"<eos>", "1"}
    assert p.token_outputs["1"] == "next(1)"


# Malformed programs: (text, line:col of the error, words of its message). Shared with the
# browser engine's differential test (test_crasp_playground.py).
MALFORMED = [
    ("alphabet a\nP := #Q(a) <=\n", "2:14", "expected an operand"),
    ("alphabet a\nP := Q(a) and #Q(a)\n", "2:15", "must be Boolean"),
    ("alphabet a\nP := #Q(a) < Q(a)\n", "2:14", "must be Count"),
    ("alphabet a\nC := #(#Q(a))\n", "2:8", "must be Boolean"),
    ("alphabet a\nA := B\nB := not A\n", "2:1", "cyclic definition: A -> B -> A"),
    ("alphabet a\nA := Q(a)\nB := A and Zed\n", "3:12", "undefined name 'Zed'"),
    ("alphabet a\nA := Q(a)\n\nA := true\n", "4:1", "redefinition of 'A' (first defined at 2:1)"),
    ("alphabet a\nC := #[j > i] Q(a)\n", "2:8", "unknown relation"),
    ("alphabet a\nC := #[j = i + 1] Q(a)\n", "2:8", "unknown relation"),
    ("alphabet a\nP := Q(b)\n", "2:6", "not in the alphabet"),
    ("alphabet a\nP := i mod 2 = 2\n", "2:6", "residues"),
    ("P := true\n", "1:1", "no 'alphabet'"),
    ("alphabet a\nP := (Q(a)\n", "2:6", "'(' is not closed"),
    ("alphabet a\nP := Q(a) $ Q(a)\n", "2:11", "unexpected character"),
    ("alphabet a\nand := Q(a)\n", "2:1", "keyword"),
    ("alphabet a\nC := #Q(a)\n", "1:1", "no Boolean operation"),
    ("alphabet a\nC := #[j = i - INT] Q(a) > 0\n", "2:8", "unknown relation"),
    ("alphabet a\nP := #Q(a) > ²\n", "2:14", "unexpected character '²'"),
]


@pytest.mark.parametrize("text, where, words", MALFORMED)
def test_errors_point_at_the_offending_place(text, where, words):
    with pytest.raises(LengthgenError) as e:
        parse_program(text, filename="prog.crasp")
    message = str(e.value)
    assert message.startswith(f"prog.crasp:{where}: "), message
    assert words in message
