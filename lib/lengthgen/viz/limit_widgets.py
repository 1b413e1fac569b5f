"""Sliders for period Delta, locality tau and logit precision p of a one-head Limit Transformer.

The head's logit for query i and key j (i >= j) is
    periodic part  p_i^T Q^T K p_j = cos(2 pi (i - j) / Delta)   (p_i on a circle, period Delta)
  + local part     phi(i - j) = 1 if i - j <= tau else 0
rounded to p fractional bits and scaled by log N. The largest logit, 2, sits at keys in the same
phase as the query and at most tau positions back, so attention picks out those keys.
`draw_limit_panel` draws one setting; `limit_widget` wires live sliders to it (needs a kernel);
`limit_frame_slider` draws every setting of a grid in advance (`draw_limit_frame`) so that the
sliders work on the static site too; `draw_small_multiples` shows several settings at once.
"""
import math

import matplotlib.pyplot as plt
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.limit import LimitHead, LimitLayer, LimitTransformer, round_to_bits

DEFAULTS = {"delta": 4, "tau": 6, "precision": 2}
LENGTH = 64  # positions drawn: far beyond the period and the locality window


def _check(delta: int, tau: int, precision: int) -> None:
    if delta < 1 or tau < 0 or precision < 0:
        raise LengthgenError(f"need delta >= 1, tau >= 0, precision >= 0; got {delta}, {tau}, "
                             f"{precision}")


def example_model(delta: int, tau: int, precision: int) -> LimitTransformer:
    """The one-head Limit Transformer described above (one token, width 2, value = identity)."""
    _check(delta, tau, precision)
    angles = 2 * math.pi * torch.arange(delta, dtype=torch.float64) / delta
    positional = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)
    eye = torch.eye(2, dtype=torch.float64)
    head = LimitHead(eye, eye, eye, eye, local=torch.ones(tau + 1, dtype=torch.float64))
    return LimitTransformer(torch.zeros(1, 2, dtype=torch.float64), positional,
                            [LimitLayer([head])], period=delta, precision_bits=precision,
                            round_softmax=True, check=True)


def positional_logits(delta: int, tau: int, precision: int, length: int = LENGTH) -> torch.Tensor:
    """The head's rounded logit a[i, j] before log N scaling (NaN above the diagonal)."""
    model = example_model(delta, tau, precision)
    stream = model.embed(torch.zeros(1, length, dtype=torch.long))
    logits = model.layers[0].heads[0].logits(stream, precision)[0]
    return logits.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("nan"))


def attention(delta: int, tau: int, precision: int, length: int = LENGTH) -> torch.Tensor:
    """Attention weights [i, j] of the example model on an input of `length` positions."""
    model = example_model(delta, tau, precision)
    return model.attention_weights(torch.zeros(1, length, dtype=torch.long))[0][0, 0]


def logit_margin(delta: int, tau: int, precision: int) -> float:
    """The smallest gap between distinct achievable logits (Izzo et al. 2026, 3.2)."""
    distances = torch.arange(max(delta, 1) + tau + 1, dtype=torch.float64)
    values = torch.cos(2 * math.pi * distances / delta) + (distances <= tau).double()
    values = torch.unique(round_to_bits(values, precision))
    gaps = values[1:] - values[:-1]
    return float(gaps.min()) if len(gaps) else math.inf


def notes(delta: int, tau: int, precision: int, length: int = LENGTH) -> str:
    """What to notice in the drawing for this setting."""
    margin = logit_margin(delta, tau, precision)
    threshold = 2 ** (precision / margin) if math.isfinite(margin) else 1.0
    hard = "yes" if length >= threshold else "not yet"
    return "\n".join([
        f"Period Delta = {delta}: stripes repeat every {delta}",
        "  positions; p_i only knows i mod Delta.",
        f"Locality tau = {tau}: the diagonal band is {tau + 1} wide;",
        "  further back only the stripes remain.",
        f"Precision p = {precision}: logits are multiples of",
        f"  2^-{precision}; margin gamma = {margin:.3g}.",
        "Hardmax on every input once N >= 2^(p/gamma)",
        f"  = {threshold:.3g}: at N = {length}, {hard}.",
        "Nothing changes with where the input is cut:",
        "  short inputs pin down long ones.",
    ])


def _draw(ax_logits, ax_attention, delta: int, tau: int, precision: int) -> None:
    logits = positional_logits(delta, tau, precision)
    image = ax_logits.imshow(logits.numpy(), cmap="viridis", interpolation="nearest")
    ax_logits.set_title(f"positional logit a(i, j)\nΔ = {delta}, τ = {tau}, p = {precision}",
                        fontsize=9)
    ax_logits.set_xlabel("key position j")
    ax_logits.set_ylabel("query position i")
    plt.colorbar(image, ax=ax_logits, fraction=0.046)
    weights = attention(delta, tau, precision)
    ax_attention.imshow(weights.numpy(), cmap="magma", interpolation="nearest", vmin=0, vmax=1)
    ax_attention.set_title(f"attention weights, N = {LENGTH}", fontsize=9)
    ax_attention.set_xlabel("key position j")
    ax_attention.set_ylabel("query position i")


def draw_limit_panel(delta: int = DEFAULTS["delta"], tau: int = DEFAULTS["tau"],
                     precision: int = DEFAULTS["precision"]):
    """Three panels: (a) positional logits, (b) attention on a long input, (c) notes."""
    _check(delta, tau, precision)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [1, 1, 1.15]})
    _draw(axes[0], axes[1], delta, tau, precision)
    axes[2].axis("off")
    axes[2].text(0, 0.5, notes(delta, tau, precision), va="center", fontsize=9, family="monospace")
    axes[2].set_title("what to notice", fontsize=9)
    fig.tight_layout()
    return fig


def draw_small_multiples(settings=((2, 0), (4, 0), (4, 6), (7, 12)),
                         precision: int = DEFAULTS["precision"], phone: bool = False):
    """Logits (top row) and attention (bottom row) for several (Delta, tau): the static view.
    With `phone`, for a phone's column: one setting after another, its logits above its
    attention (laid out again, the grid would read all the logits first)."""
    if phone:
        fig, axes = plt.subplots(2 * len(settings), 1, figsize=(3.8, 6.0 * len(settings)),
                                 squeeze=False)
        pairs = [(axes[2 * k][0], axes[2 * k + 1][0]) for k in range(len(settings))]
    else:
        fig, axes = plt.subplots(2, len(settings), figsize=(3.3 * len(settings), 6.4),
                                 squeeze=False)
        pairs = [(axes[0][k], axes[1][k]) for k in range(len(settings))]
    for (ax_logits, ax_attention), (delta, tau) in zip(pairs, settings):
        _draw(ax_logits, ax_attention, delta, tau, precision)
    fig.tight_layout()
    return fig


SLIDER_DELTAS = (1, 2, 3, 4, 5, 6, 7, 8)
SLIDER_TAUS = (0, 1, 2, 3, 4, 6, 8, 12)


def draw_limit_frame(delta: int, tau: int, precision: int = DEFAULTS["precision"]):
    """Two panels, (a) positional logits and (b) attention, compact enough for a phone."""
    _check(delta, tau, precision)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    _draw(axes[0], axes[1], delta, tau, precision)
    fig.tight_layout()
    return fig


class LimitFrame:
    """`draw_limit_frame`'s picture, built once and redrawn per setting (for
    `FrameSlider.redrawn`: a fresh figure per frame spends most of its time in matplotlib's
    layout)."""

    def __init__(self, settings: list[dict]):
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
        blank = torch.zeros(LENGTH, LENGTH).numpy()
        # Logits of this head lie in [-1, 2] (cosine plus the 0/1 local term), so one colour
        # scale serves every frame and frames can be compared by eye.
        self.logits = axes[0].imshow(blank, cmap="viridis", interpolation="nearest", vmin=-1,
                                     vmax=2)
        self.weights = axes[1].imshow(blank, cmap="magma", interpolation="nearest", vmin=0,
                                      vmax=1)
        plt.colorbar(self.logits, ax=axes[0], fraction=0.046)
        for ax in axes:
            ax.set_xlabel("key position j")
            ax.set_ylabel("query position i")
        axes[1].set_title(f"attention weights, N = {LENGTH}", fontsize=9)
        # Two lines, as every frame's title has, so that the layout leaves room for them.
        self.title = axes[0].set_title("positional logit a(i, j)\n", fontsize=9)
        fig.tight_layout()
        self.fig = fig

    def show(self, delta: int, tau: int, precision: int):
        _check(delta, tau, precision)
        self.logits.set_data(positional_logits(delta, tau, precision).numpy())
        self.weights.set_data(attention(delta, tau, precision).numpy())
        self.title.set_text(f"positional logit a(i, j)\nΔ = {delta}, τ = {tau}, p = {precision}")
        return self.fig

    @staticmethod
    def alt(delta: int, tau: int, precision: int) -> str:
        return (f"Heat maps over query position i and key position j: the positional logit "
                f"a(i, j) and the attention weights on an input of {LENGTH} positions, for period "
                f"Δ = {delta}, locality τ = {tau}, precision p = {precision}")


def limit_frame_slider(deltas=SLIDER_DELTAS, taus=SLIDER_TAUS,
                       precision: int = DEFAULTS["precision"]):
    """Period and locality sliders that work without a kernel (every frame drawn in advance)."""
    from lengthgen.viz.frames import FrameSlider

    initial = {"delta": DEFAULTS["delta"] if DEFAULTS["delta"] in deltas else deltas[0],
               "tau": DEFAULTS["tau"] if DEFAULTS["tau"] in taus else taus[0]}
    return FrameSlider.redrawn(LimitFrame, {"delta": list(deltas), "tau": list(taus)},
                               fixed={"precision": precision}, initial=initial,
                               labels={"delta": "period Δ", "tau": "locality τ"})


def limit_widget():
    """Sliders for Delta, tau and p, redrawing `draw_limit_panel` (needs a running kernel)."""
    import ipywidgets as widgets
    from IPython.display import display

    def redraw(delta, tau, precision):
        fig = draw_limit_panel(delta, tau, precision)
        display(fig)
        plt.close(fig)

    return widgets.interactive(
        redraw,
        delta=widgets.IntSlider(value=DEFAULTS["delta"], min=1, max=12, description="period Δ"),
        tau=widgets.IntSlider(value=DEFAULTS["tau"], min=0, max=20, description="locality τ"),
        precision=widgets.IntSlider(value=DEFAULTS["precision"], min=0, max=6,
                                    description="precision p"))
