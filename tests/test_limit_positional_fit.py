"""Fitting positional products (App. G.2): the batched objective and the targets."""
import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.products import locality_distance, periodicity_distance
from lengthgen.theory.positional_fit import (band_errors, causal_mse, distance_band,
                                             extrapolation_errors, fit,
                                             target_matrix, window_weights)
from lengthgen.theory.positional_targets import TARGETS


def test_window_weights_reproduce_the_mean_loss_over_windows():
    g = torch.Generator().manual_seed(0)
    predicted, target = torch.randn(30, 30, generator=g, dtype=torch.float64), torch.zeros(30, 30)
    offsets = torch.tensor([0, 3, 3, 17, 20])
    per_window = [causal_mse(predicted[o:o + 10, o:o + 10], target[o:o + 10, o:o + 10])
                  for o in offsets.tolist()]
    weights = window_weights(offsets, 10, 30)
    weighted = (weights * (predicted - target) ** 2).sum() / weights.sum()
    assert weighted == pytest.approx(float(torch.stack(per_window).mean()))
    assert weights[12, 3] == 2 and weights[12, 2] == 0 and weights[3, 12] == 0


def test_targets_have_their_declared_shape():
    for name, (kind, _) in TARGETS.items():
        phi = target_matrix(name, 40)
        assert phi.max() > 0
        if kind == "local":
            assert locality_distance(phi, 3) < 1e-12
        if kind == "periodic":
            assert periodicity_distance(phi, 12) < 1e-12
        if kind == "neither":
            assert locality_distance(phi, 10) > 0.5 and periodicity_distance(phi, 12) > 0.1
    with pytest.raises(LengthgenError, match="unknown positional target"):
        target_matrix("i-j=3", 10)


def test_fitting_reduces_the_error_at_the_training_length():
    before = extrapolation_errors(fit("i-j=2", 8, 0, seed=0, n_positions=40, train_length=10),
                                  "i-j=2", [10])[10]
    after = extrapolation_errors(fit("i-j=2", 8, 150, seed=0, n_positions=40, train_length=10,
                                     lr=1e-2), "i-j=2", [10])[10]
    assert after < 0.5 * before


def test_band_baselines_are_exact_for_a_hand_counted_target():
    # i - j = 2 in windows of 10: 55 causal entries, 8 ones; distances >= 5: 5+4+3+2+1 = 15 entries, no one.
    products = torch.zeros(40, 40, dtype=torch.float64)
    whole = band_errors(products, "i-j=2", 10, distance_band(10))
    assert whole["model"] == pytest.approx(8 / 55) == pytest.approx(whole["zero"])
    assert whole["constant"] == pytest.approx(8 / 55 - (8 / 55) ** 2)
    far = band_errors(products, "i-j=2", 10, distance_band(10, far=5))
    assert far == {"model": 0.0, "zero": 0.0, "constant": 0.0}
    assert distance_band(10, far=5).sum() == 15 and distance_band(10, near=5).sum() == 55 - 15
    # the exact target has no error; a constant predictor equal to the mean has the constant's
    exact = band_errors(target_matrix("i-j=2", 40), "i-j=2", 10, distance_band(10))
    assert exact["model"] == 0.0
    flat = band_errors(torch.full((40, 40), 8 / 55, dtype=torch.float64), "i-j=2", 10,
                       distance_band(10))
    assert flat["model"] == pytest.approx(whole["constant"])
    with pytest.raises(LengthgenError, match="empty"):
        band_errors(products, "i-j=2", 10, distance_band(10, far=10))


def test_checkpoints_report_the_model_of_that_step():
    seen = {}
    final = fit("i-j=2", 8, 20, seed=1, n_positions=30, train_length=10, lr=1e-2,
                checkpoints=[5, 20], on_checkpoint=lambda s, m: seen.setdefault(
                    s, m.products().detach().clone()))
    assert sorted(seen) == [5, 20]
    assert torch.equal(seen[20], final.products().detach())
    assert not torch.equal(seen[5], seen[20])
    # the same seed without checkpoints draws the same batches: the same model
    assert torch.equal(fit("i-j=2", 8, 20, seed=1, n_positions=30, train_length=10,
                           lr=1e-2).products().detach(), seen[20])
    with pytest.raises(LengthgenError, match="checkpoints"):
        fit("i-j=2", 8, 20, seed=1, checkpoints=[21])


def test_positional_figure_summary_and_table_agree_with_the_records(tmp_path, monkeypatch):
    from lengthgen.experiments.huang.limit import huang_fig5_6_positional as figure
    from lengthgen.experiments.huang.limit.rows import positional_table, summary
    config = figure.CONFIGS["test"]
    records = [{"config": config, "params": p, "metrics": figure.run_one(p, config, "cpu")}
               for p in figure.runs(config)]
    rows = summary(records)
    assert len(rows) == len(config["targets"]) * len(config["widths"])
    for row, record in zip(rows, records):
        whole = record["metrics"]["bands"]["all"]["100"]
        assert row["mse"] == record["metrics"]["test_mse"]["100"] == whole["model"]
        assert row["ratio_to_constant"] == whole["model"] / whole["constant"]
    table = positional_table(records)
    assert [r["target"] for r in table] == config["targets"]
    assert table[0]["ratio n=100"] == rows[0]["ratio_to_constant"]
    # the first checkpoint's ratio comes from the errors recorded at that step
    early = records[0]["metrics"]["test_mse_by_steps"]["10"]["100"]
    assert table[0]["ratio n=100, 10 steps"] == early / rows[0]["constant_mse"]
    # tidy rows: one per run, band and length (no unseen band at the training length)
    assert len(figure.data(records)) == len(records) * (2 * 2 + 1)
    # at the training length there is no unseen band: the summary says so instead of failing
    assert all(r["unseen_mse"] is None for r in summary(records, 50))
