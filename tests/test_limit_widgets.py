"""The drawing callback behind the Delta / tau / p sliders, at several slider values."""
import matplotlib
import numpy as np
import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.products import limit_distance, periodicity_distance, translation_distance
from lengthgen.viz.limit_widgets import (LENGTH, draw_limit_panel, draw_small_multiples,
                                         limit_widget, logit_margin)

matplotlib.use("Agg")


def panel(fig, title):
    return next(ax for ax in fig.axes if title in ax.get_title())


def drawn(fig, title, column=0):
    """The matrix drawn in the column-th panel whose title contains `title` (NaN where masked)."""
    array = [ax for ax in fig.axes if title in ax.get_title()][column].images[0].get_array()
    return torch.tensor(np.ma.filled(array.astype(float), np.nan))


@pytest.mark.parametrize("delta, tau, precision", [(1, 0, 0), (3, 2, 3), (4, 6, 2), (7, 12, 1),
                                                   (5, 20, 6)])
def test_panel_draws_a_periodic_local_logit_matrix(delta, tau, precision):
    fig = draw_limit_panel(delta, tau, precision)
    titles = [ax.get_title() for ax in fig.axes]
    assert any("positional logit" in t for t in titles)
    assert any("attention weights" in t for t in titles)
    assert any("what to notice" in t for t in titles)
    assert f"Delta = {delta}" in panel(fig, "what to notice").texts[0].get_text()
    logits = drawn(fig, "positional logit")
    assert logits.shape == (LENGTH, LENGTH)
    assert torch.isnan(logits.triu(1)[torch.ones(LENGTH, LENGTH).triu(1).bool()]).all()
    full = torch.nan_to_num(logits)
    assert translation_distance(full) < 1e-12
    assert limit_distance(full, delta, tau) < 1e-9
    if tau >= 1 and delta > 1:
        assert limit_distance(full, delta, tau - 1) > 1e-3  # the band really reaches tau
    # beyond tau, the logit depends only on (i - j) mod delta
    i, j = tau + 2 * delta + 5, 0
    assert full[i, j] == full[i, j + delta] == full[i + delta, j]
    weights = drawn(fig, "attention")
    row_sums = torch.nan_to_num(weights).sum(dim=1)
    assert torch.allclose(row_sums, torch.ones(LENGTH, dtype=torch.float64))
    matplotlib.pyplot.close(fig)


def test_hardmax_attention_picks_same_phase_keys_inside_the_window():
    fig = draw_limit_panel(4, 6, 2)  # margin 1, threshold 2^2 = 4 <= 64
    weights = torch.nan_to_num(drawn(fig, "attention"))
    i = 40
    attended = torch.nonzero(weights[i]).flatten().tolist()
    assert attended == [i - 4, i]
    assert logit_margin(4, 6, 2) == 1.0
    matplotlib.pyplot.close(fig)


def test_small_multiples_has_two_rows_per_setting():
    fig = draw_small_multiples(((2, 0), (4, 3)), precision=2)
    images = [ax for ax in fig.axes if ax.images]
    assert len(images) == 4
    # the band along the diagonal breaks pure periodicity
    assert periodicity_distance(torch.nan_to_num(drawn(fig, "logit")), 2) > 0
    matplotlib.pyplot.close(fig)


def test_widget_has_three_sliders_and_bad_values_are_errors():
    widget = limit_widget()
    sliders = {child.description for child in widget.children if hasattr(child, "max")}
    assert sliders == {"period Δ", "locality τ", "precision p"}
    matplotlib.pyplot.close("all")
    with pytest.raises(LengthgenError, match="delta >= 1"):
        draw_limit_panel(0, 2, 2)
