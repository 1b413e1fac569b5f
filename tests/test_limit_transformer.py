"""The Limit Transformer against hand-worked numbers and an explicit-loop reference."""
import math

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.limit import (LimitHead, LimitLayer, LimitMLP, LimitTransformer,
                                    translation_invariant_values)

T = lambda rows: torch.tensor(rows, dtype=torch.float64)  # noqa: E731


def copy_head(local=None):
    """Logit x_i[0] * x_j[0]; value x_j[0]; written into dimension 1."""
    return LimitHead(T([[1.0], [0.0]]), T([[1.0], [0.0]]), T([[1.0], [0.0]]), T([[0.0, 1.0]]),
                     local=local)


def tiny_model(local=None, mlp=None, **kwargs):
    return LimitTransformer(T([[1.0, 0.0], [0.0, 1.0]]), None,
                            [LimitLayer([copy_head(local)], mlp)], **kwargs)


def test_hand_worked_forward_without_phi():
    # i=2 has query 0: uniform over values 1, 1, 0 -> 2/3 added to dimension 1
    out = tiny_model()(torch.tensor([[0, 0, 1]]))[0]
    assert torch.allclose(out, T([[1, 1], [1, 1], [0, 1 + 2 / 3]]))


def test_hand_worked_forward_with_local_phi_and_log_scaling():
    # phi(distance 1) = 1; N = 3 so logits are multiplied by log 3:
    # i=1: logits 2, 1 -> weights 3/4, 1/4 over values 1, 1 -> 1
    # i=2: logits 0, 1, 0 -> weights 1/5, 3/5, 1/5 over values 1, 1, 0 -> 4/5
    out = tiny_model(local=T([0.0, 1.0]))(torch.tensor([[0, 0, 1]]))[0]
    assert torch.allclose(out, T([[1, 1], [1, 1], [0, 1.8]]))
    weights = tiny_model(local=T([0.0, 1.0])).attention_weights(torch.tensor([[0, 0, 1]]))
    assert weights[0].shape == (1, 1, 3, 3)
    assert torch.allclose(weights[0][0, 0], T([[1, 0, 0], [0.75, 0.25, 0], [0.2, 0.6, 0.2]]))


@pytest.mark.parametrize("activation, expected", [
    ("relu", [[2, 1], [2, 1], [0, 1.8]]),       # relu(y0 - y1 + 0.5) * [2, 0]
    ("heaviside", [[3, 1], [3, 1], [0, 1.8]]),  # step(y0 - y1 + 0.5) * [2, 0]
])
def test_hand_worked_mlp(activation, expected):
    mlp = LimitMLP(T([[1.0], [-1.0]]), T([0.5]), T([[2.0, 0.0]]), T([0.0, 0.0]), activation)
    out = tiny_model(local=T([0.0, 1.0]), mlp=mlp)(torch.tensor([[0, 0, 1]]))[0]
    assert torch.allclose(out, T(expected))


def test_heaviside_is_one_at_zero():
    mlp = LimitMLP(T([[1.0]]), T([0.0]), T([[1.0]]), T([0.0]), "heaviside")
    assert mlp(T([[0.0], [-1e-12]])).flatten().tolist() == [1.0, 0.0]


def reference_forward(model_args, tokens, precision_bits=None, period=None):
    """The definition with explicit Python loops over positions, heads and coordinates."""
    embedding, positional, layers = model_args
    n = len(tokens)
    x = [[embedding[t][c] + (positional[i % period][c] if positional else 0.0)
          for c in range(len(embedding[0]))] for i, t in enumerate(tokens)]
    for heads, mlp in layers:
        new = [row[:] for row in x]
        for q, k, v, o, local in heads:
            proj = lambda vec, m: [sum(vec[r] * m[r][c] for r in range(len(vec)))  # noqa: E731
                                   for c in range(len(m[0]))]
            for i in range(n):
                logits = []
                for j in range(i + 1):
                    a = sum(a * b for a, b in zip(proj(x[i], q), proj(x[j], k)))
                    a += local[i - j] if i - j < len(local) else 0.0
                    if precision_bits is not None:
                        a = round(a * 2 ** precision_bits) / 2 ** precision_bits
                    logits.append(math.log(n) * a)
                top = max(logits)
                w = [math.exp(s - top) for s in logits]
                w = [e / sum(w) for e in w]
                mixed = [sum(w[j] * proj(x[j], v)[c] for j in range(i + 1))
                         for c in range(len(v[0]))]
                for c, val in enumerate(proj(mixed, o)):
                    new[i][c] += val
        x = new
        if mlp is not None:
            w_in, b_in, w_out, b_out = mlp
            for i in range(n):
                hidden = [max(0.0, h + b) for h, b in zip(
                    [sum(x[i][r] * w_in[r][c] for r in range(len(x[i]))) for c in range(len(b_in))],
                    b_in)]
                x[i] = [x[i][c] + sum(hidden[m] * w_out[m][c] for m in range(len(hidden)))
                        + b_out[c] for c in range(len(b_out))]
    return x


@pytest.mark.parametrize("precision_bits", [None, 3])
def test_random_two_layer_two_head_model_matches_loops(precision_bits):
    g = torch.Generator().manual_seed(0)
    rand = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    d, k, m, vocab, period = 3, 2, 4, 4, 3
    layer_weights = [([(rand(d, k), rand(d, k), rand(d, k), rand(k, d), rand(2)) for _ in range(2)],
                      (rand(d, m), rand(m), rand(m, d), rand(d))) for _ in range(2)]
    embedding, positional = rand(vocab, d), rand(period, d)
    model = LimitTransformer(
        embedding, positional,
        [LimitLayer([LimitHead(*h[:4], local=h[4]) for h in heads], LimitMLP(*mlp))
         for heads, mlp in layer_weights],
        period=period, precision_bits=precision_bits)
    tokens = [1, 3, 0, 2, 2, 1, 0, 3]
    got = model(torch.tensor([tokens]))[0]
    as_lists = ([[v.tolist() for v in h] for h in heads] for heads, _ in layer_weights)
    ref_layers = [(heads, [w.tolist() for w in mlp])
                  for heads, (_, mlp) in zip(as_lists, layer_weights)]
    want = reference_forward((embedding.tolist(), positional.tolist(), ref_layers), tokens,
                             precision_bits, period)
    assert torch.allclose(got, T(want), atol=1e-9)


def previous_token_model(strength, **kwargs):
    """Attends from every position to the previous one with margin `strength` (via phi)."""
    zero = torch.zeros(2, 1, dtype=torch.float64)
    head = LimitHead(zero, zero, zero, torch.zeros(1, 2, dtype=torch.float64),
                     local=T([0.0, strength]))
    return LimitTransformer(T([[1.0, 0.0]]), None, [LimitLayer([head])], **kwargs)


def weight_on_previous(model, n):
    return model.attention_weights(torch.zeros(1, n, dtype=torch.long))[0][0, 0, -1, -2].item()


def test_log_length_scaling_concentrates_attention_as_n_grows():
    # margin 2 over n - 1 competitors: weight n^2 / (n^2 + n - 1) -> 1
    model = previous_token_model(2.0)
    weights = [weight_on_previous(model, n) for n in (4, 16, 64, 256)]
    assert all(a < b for a, b in zip(weights, weights[1:]))
    assert weights[-1] == pytest.approx(256 ** 2 / (256 ** 2 + 255))
    # without log N the weight on the previous token decays like e^2 / (e^2 + n - 1)
    flat = previous_token_model(2.0, log_length_scaling=False)
    assert weight_on_previous(flat, 256) == pytest.approx(math.e ** 2 / (math.e ** 2 + 255))


def test_rounded_softmax_is_exactly_hardmax_past_two_to_p_over_margin():
    # p = 4 bits, margin 1: hardmax for N >= 2^(4/1) = 16, not before
    model = previous_token_model(1.0, precision_bits=4, round_softmax=True)
    assert 0 < weight_on_previous(model, 12) < 1
    assert weight_on_previous(model, 17) == 1.0
    assert weight_on_previous(model, 300) == 1.0
    assert weight_on_previous(previous_token_model(1.0, precision_bits=4), 300) < 1


def test_logits_are_rounded_to_p_fractional_bits():
    # phi = 0.3 rounds to 0.25 at 2 bits: weight n^0.25 / (n^0.25 + n - 1)
    n = 10
    model = previous_token_model(0.3, precision_bits=2)
    assert weight_on_previous(model, n) == pytest.approx(n ** 0.25 / (n ** 0.25 + n - 1))
    assert weight_on_previous(previous_token_model(0.3), n) == pytest.approx(
        n ** 0.3 / (n ** 0.3 + n - 1))


def test_periodic_positional_encoding_repeats():
    positional = T([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    model = LimitTransformer(T([[0.0, 0.0]]), positional, [], period=3)
    stream = model(torch.zeros(1, 10, dtype=torch.long))[0]
    assert torch.equal(stream[0], stream[3]) and torch.equal(stream[2], stream[8])
    model.check_periodic_local(tau=0)


def test_nope_model_has_no_positional_parameters():
    model = tiny_model()
    model.check_periodic_local(tau=0)
    assert model.summary()["positional_parameters"] == 0
    assert not [name for name, _ in model.named_parameters()
                if "positional" in name or "local" in name]
    assert model.summary()["parameters"] == 4 + 4 * 2  # embedding + query, key, value, output


def test_general_table_is_not_periodic():
    model = LimitTransformer(T([[0.0, 0.0]]), torch.zeros(5, 2, dtype=torch.float64), [])
    with pytest.raises(LengthgenError, match="not periodic"):
        model.check_periodic_local()
    with pytest.raises(LengthgenError, match="longer than the positional table"):
        model(torch.zeros(1, 6, dtype=torch.long))
    with pytest.raises(LengthgenError, match="not periodic"):
        LimitTransformer(T([[0.0, 0.0]]), torch.zeros(5, 2, dtype=torch.float64), [], period=4)
    with pytest.raises(LengthgenError, match="not periodic"):
        LimitTransformer(T([[0.0, 0.0]]), torch.zeros(5, 2, dtype=torch.float64), [], check=True)


def test_phi_beyond_tau_is_not_local():
    model = tiny_model(local=T([0.0, 1.0, 0.0, 0.5]))
    model.check_periodic_local(tau=3)
    with pytest.raises(LengthgenError, match=r"not local \(phi nonzero at distance 3"):
        model.check_periodic_local(tau=2)


def general_phi_model(phi):
    zero = torch.zeros(2, 1, dtype=torch.float64)
    head = LimitHead(zero, zero, zero, torch.zeros(1, 2, dtype=torch.float64), phi=phi)
    return LimitTransformer(T([[1.0, 0.0]]), None, [LimitLayer([head])])


def test_general_phi_table_checks_translation_invariance_and_locality():
    n = 6
    distance = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # [j, i] -> i - j
    toeplitz = torch.where((distance >= 0) & (distance <= 1), 1.0 + distance, 0.0).double()
    general_phi_model(toeplitz).check_periodic_local(tau=1)
    assert translation_invariant_values(toeplitz)[:3].tolist() == [1.0, 2.0, 0.0]
    with pytest.raises(LengthgenError, match="not local"):
        general_phi_model(toeplitz).check_periodic_local(tau=0)
    skewed = toeplitz.clone()
    skewed[2, 3] = 5.0
    with pytest.raises(LengthgenError, match="not translation-invariant"):
        general_phi_model(skewed).check_periodic_local()
    # the table drives attention exactly like the equivalent local vector
    tokens = torch.zeros(1, n, dtype=torch.long)
    local = LimitTransformer(T([[1.0, 0.0]]), None, [LimitLayer([LimitHead(
        *(torch.zeros(2, 1, dtype=torch.float64),) * 3, torch.zeros(1, 2, dtype=torch.float64),
        local=T([1.0, 2.0]))])])
    assert torch.allclose(general_phi_model(toeplitz).attention_weights(tokens)[0],
                          local.attention_weights(tokens)[0])


def test_bad_shapes_and_tokens_are_clear_errors():
    with pytest.raises(LengthgenError, match="head shapes"):
        LimitHead(T([[1.0]]), T([[1.0, 2.0]]), T([[1.0]]), T([[1.0]]))
    with pytest.raises(LengthgenError, match="activation"):
        LimitMLP(T([[1.0]]), T([0.0]), T([[1.0]]), T([0.0]), "gelu")
    with pytest.raises(LengthgenError, match="token ids"):
        tiny_model()(torch.tensor([[0, 2]]))
    with pytest.raises(LengthgenError, match="round_softmax needs precision_bits"):
        tiny_model(round_softmax=True)
