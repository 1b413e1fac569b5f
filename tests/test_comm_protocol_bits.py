"""The comm-protocol-bits experiment: measured bits, the log fit, the crossing, tidy data."""
import math

import pytest

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.comm import comm_protocol_bits as exp
from lengthgen.experiments.huang.comm import analysis as comm_analysis
from lengthgen.experiments.huang.comm import protocol as comm_protocol
from lengthgen.viz.message_slider import message_frame, message_slider


def test_crossing_solves_the_fit_against_n_over_2():
    a, b = 20.0, 6.0
    n = comm_analysis.crossing(a, b)
    assert n / 2 == pytest.approx(a + b * math.log2(n), rel=1e-9)
    assert all(m / 2 > a + b * math.log2(m) for m in (n * 1.01, n * 10, n * 1000))


def test_fit_recovers_a_log_law():
    ns = [10, 100, 1000, 10000]
    assert comm_analysis.fit_log(ns, [3 + 2 * math.log2(n) for n in ns]) == pytest.approx((3, 2))


def test_data_rows_are_measured_bits_with_their_program_fit():
    config = dict(exp.CONFIGS["test"], programs=["majority_ab"], ns=[8, 64, 512])
    params = exp.runs(config)[0]
    record = {"params": params, "metrics": exp.run_one(params, config, "cpu")}
    rows = exp.data([record])
    assert [r["n"] for r in rows] == [8, 64, 512]
    assert set(rows[0]) == {"program", "n", "bits", "bits_min", "equality_bits", "classes",
                            "bob_max_error", "fit_a", "fit_b", "crossing_n"}
    assert all(r["bits"] >= r["bits_min"] > 0 for r in rows)
    assert rows[0]["bits"] < rows[1]["bits"] < rows[2]["bits"] < 512 // 2
    assert rows[0]["bob_max_error"] < 1e-9 and rows[2]["bob_max_error"] is None  # 512 > check
    assert len({(r["fit_a"], r["fit_b"]) for r in rows}) == 1


def test_unknown_program_is_one_clear_error():
    with pytest.raises(LengthgenError, match="unknown C-RASP program 'dyk1'.*dyck1"):
        comm_protocol.load("dyk1")


def test_slider_frame_refuses_what_was_not_measured():
    config = dict(exp.CONFIGS["test"], programs=["dyck1"], ns=[8, 16])
    params = exp.runs(config)[0]
    records = [{"params": params, "metrics": exp.run_one(params, config, "cpu")}]
    with pytest.raises(LengthgenError, match="not measured at N = 9"):
        message_frame(records, "dyck1", 9)
    with pytest.raises(LengthgenError, match="no record"):
        message_frame(records, "tomita4", 8)
    slider = message_slider(records, ["dyck1"])
    assert len(slider.frames) == 2 and slider.frames[0] != slider.frames[1]


def test_rounded_keys_bound_the_classes_and_bob_still_matches_the_forward_pass():
    rows = comm_analysis.rounding_rows([16, 128, 512], [None, 4], inputs=1, check_up_to=128)
    exact = {r["n"]: r for r in rows if r["key_bits"] == "exact"}
    rounded = {r["n"]: r for r in rows if r["key_bits"] == 4}
    # exact keys: from layer 2 on every far position of Alice's is its own class
    assert exact[512]["classes_layer_2"] == exact[512]["alice_positions"] - 1  # tau = 1 window
    assert rounded[512]["classes_layer_2"] < exact[512]["classes_layer_2"] / 4
    # the rounded message grows far slower than the exact one
    assert rounded[512]["bits"] / rounded[128]["bits"] < 1.5 < exact[512]["bits"] / exact[128]["bits"]
    for r in rows:
        assert r["max_error"] is None if r["n"] > 128 else r["max_error"] < 1e-9


def test_key_bits_round_the_keys_in_the_model_itself():
    import torch
    model = comm_analysis.random_model(0, key_bits=2)
    head = model.layers[0].heads[0]
    stream = model.embed(torch.tensor([[0, 1, 2, 3, 1]]))
    keys = stream @ head.key
    got = head.logits(stream, None, 2) - head.positional_logits(5)
    want = (stream @ head.query) @ (torch.round(keys * 4) / 4).transpose(-1, -2)
    assert torch.allclose(got, want)
    with pytest.raises(LengthgenError, match="key_bits"):
        comm_analysis.random_model(0, key_bits=-1)


def test_paper_vs_book_rows_follow_their_inputs():
    from lengthgen.theory import communication as cc
    config = dict(exp.CONFIGS["test"], programs=["majority_ab"], ns=[8, 64])
    params = exp.runs(config)[0]
    records = [{"params": params, "metrics": exp.run_one(params, config, "cpu")}]
    rounding = comm_analysis.rounding_rows([16, 64], [None, 4], inputs=1)
    matrices = [cc.summary(n, m) for n in ("equality", "parity", "inner_equality",
                                           "inner_equality_early") for m in (2, 4)]
    rows = comm_analysis.paper_vs_book_rows(records, rounding, matrices)
    claims = [r["claim"] for r in rows]
    assert len(claims) == 5 and all(set(r) == {"claim", "paper", "this book", "verdict"}
                                    for r in rows)
    by = dict(zip(claims, rows))
    assert "full rank at every m" in by[claims[2]]["verdict"]
    assert by["PARITY"]["verdict"].startswith("1 bit")
    assert "2 bits (rank 4)" in by[claims[-1]]["verdict"]
    assert "open" in by["PARITY"]["paper"]
