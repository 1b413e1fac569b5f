"""The communication protocol of Theorem 12: Bob's activations are the forward pass's, the
message is a real bit string whose corruption is caught, and bad inputs are refused."""
import math

import numpy as np
import pytest
import torch

from lengthgen.crasp import library
from lengthgen.crasp.compile import compile_program, sample_strings
from lengthgen.crasp.library import SMALL_VOCAB, program_over
from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitHead, LimitLayer, LimitMLP, LimitTransformer
from lengthgen.theory import protocol
from lengthgen.theory.protocol import (BitReader, BitWriter, alice, bob, flip,
                                       forward_activations, replay, run_protocol)

TOL = 1e-9


def compiled(name):
    return compile_program(program_over(name, SMALL_VOCAB), 100)


@pytest.mark.parametrize("name", library.program_names())
def test_bob_matches_the_forward_pass_on_every_library_program(name):
    c = compiled(name)
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 30, 95):
        for string in sample_strings(c.program.alphabet, [n] * 5, rng):
            tokens = c.tokens(string)
            for cut in sorted({1, (n + 1) // 2, n}):
                run = run_protocol(c.model, tokens, cut)
                assert len(run.errors) == 2 * len(c.model.layers) + 1
                assert run.max_error < TOL, (name, string, cut)


def test_reference_activations_end_in_the_models_forward():
    c = compiled("tomita4")
    tokens = c.tokens("0111001")
    final = c.model(tokens[None])[0]
    assert torch.equal(forward_activations(c.model, tokens)[-1], final)


def random_model(seed, precision_bits=None, round_softmax=False, phi_table=False, period=3):
    """A 2-layer model with generic float keys (so many classes), periodic positions, local phi
    (or a translation-invariant phi table) and ReLU MLPs."""
    g = torch.Generator().manual_seed(seed)
    d, k = 6, 2

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    def head(tau):
        local = r(tau + 1) if not phi_table else None
        phi = None
        if phi_table:
            by_distance = torch.zeros(64, dtype=torch.float64)
            by_distance[:tau + 1] = r(tau + 1)
            i, j = torch.meshgrid(torch.arange(64), torch.arange(64), indexing="ij")
            phi = torch.where(j >= i, by_distance[(j - i).clamp(min=0)], torch.zeros(()))
        return LimitHead(r(d, k), r(d, k), r(d, k), r(k, d), local=local, phi=phi)

    layers = [LimitLayer([head(2), head(0)], LimitMLP(r(d, 8), r(8), r(8, d) / 4, r(d), "relu")),
              LimitLayer([head(1)], None)]
    return LimitTransformer(r(4, d), r(period, d), layers, period=period,
                            precision_bits=precision_bits, round_softmax=round_softmax, check=True)


@pytest.mark.parametrize("options", [{}, {"precision_bits": 3}, {"precision_bits": 2,
                                                                  "round_softmax": True},
                                     {"phi_table": True}])
def test_bob_matches_a_generic_periodic_local_model(options):
    model = random_model(1, **options)
    rng = np.random.default_rng(1)
    for n in (2, 9, 40):
        tokens = torch.as_tensor(rng.integers(0, 4, n))
        for cut in (1, 2, n // 2, n - 1):
            if 1 <= cut < n:
                assert run_protocol(model, tokens, cut).max_error < TOL


def test_generic_keys_make_many_classes_compiled_ones_few():
    # float keys after layer 0 differ at every position: the message grows with the cut
    model = random_model(2)
    tokens = torch.as_tensor(np.random.default_rng(0).integers(0, 4, 60))
    classes = [p["classes"] for p in alice(model, tokens[:50], 60).parts if p["part"] == "header"]
    assert classes[1] >= 40
    c = compiled("tomita4")  # compiled keys read only the start symbol: <= 2 classes per layer
    message = alice(c.model, c.tokens("01" * 500)[:500], 1001)
    classes = [p["classes"] for p in message.parts if p["part"] == "header"]
    assert max(classes) == 2 and min(classes) == 1


def test_message_grows_like_log_n_for_a_compiled_program():
    c = compiled("dyck1")
    bits = [len(alice(c.model, c.tokens("a" * n)[: n // 2], n + 1)) for n in (100, 1000, 10000)]
    steps = np.diff(bits)
    assert 0 < steps[0] < 100 and abs(steps[1] - steps[0]) <= 0.35 * steps[0]  # equal per decade


def test_every_single_bit_flip_is_caught():
    rng = np.random.default_rng(3)
    for name in ("majority_ab", "tomita4", "binary_majority_interleave"):
        c = compiled(name)
        tokens = c.tokens(sample_strings(c.program.alphabet, [14], rng)[0])
        run = run_protocol(c.model, tokens, 7)
        assert replay(c.model, tokens, 7, run.message.bits) < TOL
        for position in range(len(run.message)):
            assert replay(c.model, tokens, 7, flip(run.message.bits, position)) > 1e-6, \
                (name, position)


def test_bob_never_sees_alices_tokens():
    # two Alice halves with the same counts (NoPE majority): same message, same Bob activations
    c = compiled("majority_ab")
    one, two = c.tokens("abbaab"), c.tokens("babaab")
    m1, m2 = alice(c.model, one[:3], 7), alice(c.model, two[:3], 7)
    assert m1.bits == m2.bits
    b1 = bob(c.model, one[3:], 7, m1.bits)
    assert all(torch.equal(x, y) for x, y in zip(b1, bob(c.model, two[3:], 7, m2.bits)))


@pytest.mark.parametrize("value", [0.0, 1.0, -3.0, 37.0, 0.1, -1e-300, 2.0 ** 60, 5e-324])
def test_floats_and_counts_round_trip_exactly(value):
    w = BitWriter()
    w.float(value)
    w.gamma(12345)
    r = BitReader(w.bits)
    assert r.float() == value and r.gamma() == 12345
    r.done()


def test_integers_cost_about_two_log2_bits():
    w = BitWriter()
    w.gamma(1000)
    assert len(w.bits) == 2 * math.floor(math.log2(1000)) + 1


def test_truncated_or_padded_message_is_refused():
    c = compiled("majority_ab")
    tokens = c.tokens("abbaab")
    bits = alice(c.model, tokens[:3], 7).bits
    for bad in (bits[:-1], bits + "0", "", bits.replace("1", "2", 1)):
        with pytest.raises(LengthgenError, match="corrupted|'0' and '1'"):
            bob(c.model, tokens[3:], 7, bad)


def test_not_periodic_is_refused_naming_the_property():
    eye = torch.eye(3, dtype=torch.float64)
    model = LimitTransformer(eye, torch.zeros(50, 3, dtype=torch.float64), [])
    with pytest.raises(LengthgenError, match="Periodic and Local.*not periodic"):
        run_protocol(model, torch.tensor([0, 1, 2, 1]), 2)


def test_not_translation_invariant_is_refused_naming_the_property():
    phi = torch.zeros(8, 8, dtype=torch.float64)
    phi[0, 3] = 1.0   # distance 3 only for one pair
    head = LimitHead(*(torch.zeros(2, 1, dtype=torch.float64),) * 3,
                     torch.zeros(1, 2, dtype=torch.float64), phi=phi)
    model = LimitTransformer(torch.eye(2, dtype=torch.float64), None, [LimitLayer([head])])
    with pytest.raises(LengthgenError, match="Periodic and Local.*not translation-invariant"):
        run_protocol(model, torch.tensor([0, 1, 1, 0]), 2)


@pytest.mark.parametrize("cut", [0, 4, -1, 9])
def test_cut_outside_the_input_is_refused(cut):
    c = compiled("dyck1")
    with pytest.raises(LengthgenError, match="cut point"):
        run_protocol(c.model, c.tokens("aab"), cut)


def test_too_long_is_refused_before_allocating(monkeypatch):
    c = compiled("dyck1")
    with pytest.raises(LengthgenError, match="too long.*use N <="):
        alice(c.model, torch.zeros(10, dtype=torch.long), 10 ** 9)
    monkeypatch.setattr(protocol, "MAX_BYTES", 2 ** 20)
    limit = protocol.max_length(c.model)
    assert protocol.memory_needed(c.model, limit) <= 2 ** 20 < protocol.memory_needed(c.model,
                                                                                    limit + 1)
    with pytest.raises(LengthgenError, match="forward pass"):
        run_protocol(c.model, c.tokens("a" * (limit + 5)), 3)


def test_message_parts_add_up_to_its_length():
    c = compiled("tomita4")
    message = alice(c.model, c.tokens("0110" * 10)[:21], 41)
    assert len(message.by_layer()) == len(c.model.layers)
    assert sum(message.by_layer()) == sum(message.by_part().values()) == len(message)
    # tau = 2: the local part carries Alice's last two positions in the layer with local heads
    assert [p["positions"] for p in message.parts if p["part"] == "local positions"
            and p["bits"]] == [2]
