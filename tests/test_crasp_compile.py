"""The C-RASP compiler: compiled Limit Transformers agree with the interpreter, far out in length."""
import numpy as np
import pytest
import torch

from lengthgen.crasp import ir
from lengthgen.crasp.compile import (compile_and_verify, compile_program, verify,
                                     verify_up_to)
from lengthgen.crasp.syntax import parse_program
from lengthgen.errors import LengthgenError


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Long float64 attention on a shared 2-core machine runs faster without thread contention."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# Every operation kind and every comparison, with constants that make the conditional's bound
# and the start-symbol mask matter (K is -4 at the start symbol, and #(K <= A) counts it
# if the mask fails).
EVERYTHING = parse_program("""
alphabet a b c
A := #Q(a)
B := #Q(b) + 3
D := (Q(c) ? A : B) - 2
K := Q(b) ? 7 : 0 - 4
L := #[i - j in {0, 2, 5}] (Q(a) or Q(c))
E := i mod 3 in {0, 2}
G := #(K <= A)
F := (D > L) or (A != B and not E) or (A >= 2 and L <= 1) or (G > A) or false
accept F and (A = L or D < 7 or K >= 0) and E and true
""", name="everything")

DYCK = parse_program("""
alphabet a b
Ca := #Q(a)
Cb := #Q(b)
V := Ca < Cb
CV := #V
M := CV = 0 and Ca = Cb
""", name="dyck1")



TOMITA4 = parse_program("""
alphabet 0 1
p1 := #[j = i - 1] Q(0) >= 1
p2 := #[j = i - 2] Q(0) >= 1
accept #(Q(0) and p1 and p2) = 0
""", name="tomita4")


def test_the_test_program_covers_every_operation_kind():
    kinds = {type(op) for op in EVERYTHING.ops.values()}
    assert kinds >= set(ir.BOOL_OPS + ir.COUNT_OPS)
    ops = {op.op for op in EVERYTHING.ops.values() if isinstance(op, ir.Compare)}
    assert ops == set(ir.COMPARISONS)
    assert any(isinstance(op, ir.Count) and op.offsets is None for op in EVERYTHING.ops.values())
    assert EVERYTHING.uses_local() and EVERYTHING.uses_periodic()


@pytest.mark.parametrize("mlp", ["heaviside", "relu"])
@pytest.mark.parametrize("program", [EVERYTHING, DYCK, TOMITA4], ids=lambda p: p.name)
def test_compiled_model_agrees_with_interpreter_beyond_length_1000(program, mlp):
    compiled = compile_program(program, max_length=1200, mlp=mlp)
    report = verify_up_to(program, compiled, n=1200, samples=4, seed=1)
    assert report.ok, str(report)
    assert max(report.by_length) == 1200 and report.positions > 2000
    assert report.max_error < 1e-9  # every stored value is its exact representation


def test_members_and_non_members_are_both_checked():
    compiled = compile_program(DYCK, max_length=300)
    report = verify_up_to(DYCK, compiled, n=300, samples=10, seed=0)
    assert report.ok and 0 < report.members < report.strings


def test_relu_only_compile_breaks_just_beyond_its_max_length():
    """Shown, not assumed: exact up to max_length, inexact at max_length + 1, and on long
    members the accept bit goes wrong while the Heaviside compile stays right."""
    relu = compile_program(DYCK, max_length=20, mlp="relu")
    heaviside = compile_program(DYCK, max_length=20, mlp="heaviside")
    at_limit = verify(DYCK, relu, ["ab" * 10])
    beyond = verify(DYCK, relu, ["ab" * 10 + "a"], allow_longer=True)
    assert at_limit.ok and at_limit.max_error < 1e-12
    # D = Cb - Ca = -1 at i = 21: the ramp of slope 21 gives 1/2 - 21/44 = 1/44 instead of 0 in
    # both units of Ca = Cb, so that dimension is off by 1/22.
    assert beyond.max_error == pytest.approx(1 / 22, rel=1e-9)
    member = ["a" * 30 + "b" * 30]
    wrong = verify(DYCK, relu, member, allow_longer=True)
    assert wrong.accept_mismatches > 0 and not relu.accept_bits(member[0], allow_longer=True)[-1]
    assert verify(DYCK, heaviside, member).ok and heaviside.accept_bits(member[0])[-1]


def test_nope_program_compiles_without_positional_parameters():
    compiled = compile_program(DYCK, max_length=50)
    model = compiled.model
    assert model.positional is None and model.period is None
    assert all(h.local is None and h.phi is None for layer in model.layers for h in layer.heads)
    assert compiled.size()["positional_parameters"] == 0
    assert not any("pos" in name for name, _ in model.named_parameters())


def test_local_and_periodic_programs_use_only_local_phi_and_a_periodic_table():
    local = compile_program(TOMITA4, max_length=50).model
    assert local.positional is None
    local.check_periodic_local(tau=2)
    with pytest.raises(LengthgenError, match="not local"):
        local.check_periodic_local(tau=1)
    both = compile_program(EVERYTHING, max_length=50).model
    assert both.period == 3 and both.positional.shape[0] == 3
    both.check_periodic_local(tau=5)


@pytest.mark.parametrize("k", [0, 1, 3])
def test_local_head_threshold_constants_hold_at_every_length(k):
    """The scratch value of a local head is >= 4/7 when P(i-k) holds and <= 1/3 otherwise
    (also for i < k), at every position of worst-case strings of lengths 1..600."""
    program = parse_program(f"alphabet a b\nC := #[j = i - {k}] Q(a)\naccept C = 1", name="local")
    compiled = compile_program(program, max_length=600)
    column = compiled.dims[f"C@v{k}"]
    for n in [1, 2, 3, 4, 7, 40, 600]:
        for string in ["a" * n, "b" * n, "ab" * (n // 2) + "a" * (n % 2)]:
            v = compiled.residual([string])[0, 1:, column]
            truth = np.array([i - k >= 1 and string[i - k - 1] == "a" for i in range(1, n + 1)])
            assert (v[truth] >= 4 / 7).all() and (v[~truth] <= 1 / 3).all(), (n, string)


def test_clear_errors():
    wrong_symbol = ir.Program(("a", "b"), {"P": ir.Initial("c")}, "P", name="bad")
    with pytest.raises(LengthgenError, match="not in the alphabet"):
        compile_program(wrong_symbol, 10)
    compiled = compile_program(DYCK, 10, mlp="relu")
    with pytest.raises(LengthgenError, match="not in the alphabet"):
        compiled.run("abc")
    with pytest.raises(LengthgenError, match="exceeds max_length=10"):
        compiled.run("ab" * 6)
    assert len(compile_program(DYCK, 10).run("ab" * 6)["M"]) == 12  # Heaviside: no limit
    with pytest.raises(LengthgenError, match="unknown MLP mode"):
        compile_program(DYCK, 10, mlp="gelu")


def test_compile_and_verify_report_reads_well():
    report = compile_and_verify(TOMITA4, max_length=40, mlp="relu", samples=5)
    text = str(report)
    assert report.ok and "AGREES" in text and "layers" in text and "parameters" in text
