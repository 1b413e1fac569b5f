"""The book's decoder against the authors' model: Hugging Face's GPT2LMHeadModel.

Huang et al. (2025) train `transformers.GPT2LMHeadModel`; our `Decoder` is written anew in the
spirit of nanoGPT and claims to be the same network. Here a small decoder (APE, dropout 0) has
its weights copied into a GPT2LMHeadModel built from a config (never downloaded), and both must
give the same logits, the same next-token loss, the same gradients and, after one AdamW step
with gradient clipping (ours through the library's `training_step`, theirs through
`torch.optim.AdamW`), the same weights, within float tolerance, on CPU.

Where the book's model deliberately differs from GPT-2, a test below says how:
  - NoPE: GPT-2 has a learned position table; the NoPE decoder equals GPT-2 whose table is zero.
  - the class head: a language's decoder reads out n_classes (sets of legal next symbols), not
    the vocabulary; it equals GPT-2 whose untied lm_head has n_classes rows.
  - tied embeddings: GPT-2 ties its input and output embeddings by default; ours only when
    asked (`tied_embeddings`), as the APE vs NoPE sweep does where inputs and outputs share a
    vocabulary. Both ways are checked against GPT-2 with `tie_word_embeddings` set alike.
  - log-length scaling has no GPT-2 counterpart: it changes every query's logits but the first.
  - not checked here, GPT-2 has none of them: uniform attention, blocks without an MLP, muP.
"""
import math
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the network
import transformers  # noqa: E402  (requirements.txt: the tests need it)

from lengthgen.engine.settings import TrainConfig  # noqa: E402
from lengthgen.engine.single import make_optimizer, training_step  # noqa: E402
from lengthgen.models import Decoder, DecoderConfig  # noqa: E402

VOCAB, WIDTH, LAYERS, HEADS, POSITIONS = 11, 32, 2, 4, 40
TOLERANCE = dict(rtol=1e-5, atol=1e-5)  # float32, summed in different orders
GRADIENT_TOLERANCE = dict(rtol=1e-4, atol=1e-7)  # clipped to norm 1 over 30k weights: ~1e-3 each


def decoder(seed=0, scale=0.3, **options) -> Decoder:
    """A small decoder whose every weight (LayerNorm gains and biases too) is redrawn from
    N(0, scale^2): at GPT-2's init the activations are so small that GELU's two forms, or two
    LayerNorm epsilons, would agree within the tolerance. scale=None keeps the init."""
    base = dict(vocab_size=VOCAB, n_classes=VOCAB, n_layers=LAYERS, n_heads=HEADS,
                d_model=WIDTH, n_positions=POSITIONS, dropout=0.0)
    base.update(options)
    torch.manual_seed(seed)
    model = Decoder(DecoderConfig(**base))
    if scale is not None:
        with torch.no_grad():
            for param in model.parameters():
                param.normal_(0.0, scale)
    return model


def gpt2_for(model: Decoder) -> "transformers.GPT2LMHeadModel":
    """A GPT2LMHeadModel of the decoder's shape holding the decoder's weights."""
    cfg = model.cfg
    config = transformers.GPT2Config(
        vocab_size=cfg.vocab_size, n_positions=cfg.n_positions, n_embd=cfg.d_model,
        n_layer=cfg.n_layers, n_head=cfg.n_heads, n_inner=cfg.mlp_width,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=1e-5, tie_word_embeddings=cfg.tied_embeddings,
        bos_token_id=None, eos_token_id=None)
    theirs = transformers.GPT2LMHeadModel(config)
    if cfg.n_classes != cfg.vocab_size:  # the class head: only the readout's size differs
        theirs.lm_head = torch.nn.Linear(cfg.d_model, cfg.n_classes, bias=False)
    with torch.no_grad():
        for ours, their, transposed in parameter_pairs(model, theirs):
            their.copy_(ours.T if transposed else ours)
    return theirs


def parameter_pairs(model: Decoder, theirs) -> list[tuple[torch.Tensor, torch.Tensor, bool]]:
    """(our parameter, GPT-2's, transposed) for every weight: GPT-2's Conv1D stores a matrix as
    [in, out] where our nn.Linear stores [out, in]; the embedding tables are laid out alike."""
    gpt = theirs.transformer
    pairs = [(model.token_embeddings.weight, gpt.wte.weight, False),
             (model.ln_final.weight, gpt.ln_f.weight, False),
             (model.ln_final.bias, gpt.ln_f.bias, False)]
    if model.position_embeddings is not None:
        pairs.append((model.position_embeddings.weight, gpt.wpe.weight, False))
    if not model.cfg.tied_embeddings:  # GPT-2's lm_head is an nn.Linear, like ours
        pairs.append((model.unembed.weight, theirs.lm_head.weight, False))
    for block, their in zip(model.blocks, gpt.h):
        for ours, conv in ((block.attn.in_proj, their.attn.c_attn),
                           (block.attn.out_proj, their.attn.c_proj),
                           (block.mlp.up, their.mlp.c_fc), (block.mlp.down, their.mlp.c_proj)):
            pairs += [(ours.weight, conv.weight, True), (ours.bias, conv.bias, False)]
        for ours, norm in ((block.ln_attn, their.ln_1), (block.ln_mlp, their.ln_2)):
            pairs += [(ours.weight, norm.weight, False), (ours.bias, norm.bias, False)]
    return pairs


def assert_same_step(model: Decoder, theirs, lr: float) -> None:
    """After one AdamW step from the same weights, every weight agrees within what the two
    gradients' rounding explains. Adam's first step moves a weight by lr * g / (|g| + eps) (plus
    weight decay), whose slope in g is eps / (|g| + eps)^2: negligible for most gradients, but a
    gradient near eps = 1e-8 that is zero but for rounding (a key bias's: it adds q . b_K to all
    of a query's logits, which softmax ignores) turns a 1e-11 difference into a visible one."""
    pairs = parameter_pairs(model, theirs)
    # every GPT-2 parameter is paired, so nothing of theirs goes unchecked
    assert {id(t) for _, t, _ in pairs} == {id(p) for p in theirs.parameters()}
    eps, loose, total = 1e-8, 0, 0
    for ours, their, transposed in pairs:
        their, their_grad = (their.T, their.grad.T) if transposed else (their, their.grad)
        smaller = torch.minimum(ours.grad.abs(), their_grad.abs())
        explained = lr * eps * (ours.grad - their_grad).abs() / (smaller + eps) ** 2
        gap = (ours.detach() - their.detach()).abs()
        assert bool((gap <= 1e-6 + 2 * explained).all()), \
            f"after one AdamW step: {int((gap > 1e-6 + 2 * explained).sum())} weights differ " \
            f"by up to {gap.max():.3g}"
        loose += int((explained > 1e-6).sum())
        total += gap.numel()
    assert loose < total / 50  # the rounding excuses few weights: the check checks the rest


def tokens(b=4, t=24, seed=1) -> torch.Tensor:
    return torch.randint(1, VOCAB, (b, t), generator=torch.Generator().manual_seed(seed))


def gpt2_logits(theirs, inputs, offsets=None):
    position_ids = None
    if offsets is not None:
        position_ids = offsets[:, None] + torch.arange(inputs.shape[1])
    return theirs(input_ids=inputs, position_ids=position_ids).logits


# ---- the same network --------------------------------------------------------------------
@pytest.mark.parametrize("tied", [False, True])
def test_same_logits_as_gpt2(tied):
    model = decoder(tied_embeddings=tied).eval()
    theirs = gpt2_for(model).eval()
    x = tokens()
    offsets = torch.tensor([0, 3, 9, POSITIONS - x.shape[1]])
    with torch.no_grad():
        torch.testing.assert_close(model(x), gpt2_logits(theirs, x), **TOLERANCE)
        # APE offsets (how training shifts positions) are GPT-2's position_ids
        torch.testing.assert_close(model(x, offsets), gpt2_logits(theirs, x, offsets),
                                   **TOLERANCE)
        assert not torch.allclose(model(x, offsets), model(x))  # the offsets did something


@pytest.mark.parametrize("tied", [False, True])
def test_same_loss_gradients_and_adamw_step_as_gpt2(tied):
    """One training step of the library (next-token targets, masked mean cross-entropy,
    clipping to norm 1, AdamW with weight decay on matrices and embeddings only) against GPT-2's
    own loss (`labels=`, which shifts them and skips -100) and torch's AdamW on the same
    parameter groups."""
    model = decoder(tied_embeddings=tied).train()
    theirs = gpt2_for(model).train()
    x = tokens(b=6, t=20)
    # targets[t] = x[t + 1]; the last position and a ragged tail of some rows are not scored
    targets = torch.zeros_like(x)
    targets[:, :-1] = x[:, 1:]
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[:, -1] = False
    mask[0, 12:] = False
    mask[3, 5:] = False
    labels = torch.full_like(x, -100)
    labels[:, 1:] = torch.where(mask[:, :-1], x[:, 1:], torch.full_like(x[:, 1:], -100))

    cfg = TrainConfig(lr=3e-2, weight_decay=0.1, grad_clip=1.0)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = make_optimizer(model, cfg, "cpu")
    loss = training_step(model, optimizer, x, targets, mask, grad_clip=cfg.grad_clip)

    decay = [p for p in theirs.parameters() if p.dim() >= 2]
    no_decay = [p for p in theirs.parameters() if p.dim() < 2]
    their_optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                         {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
    their_loss = theirs(input_ids=x, labels=labels).loss
    their_loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(theirs.parameters(), cfg.grad_clip)
    assert norm > cfg.grad_clip  # the clipping is exercised, not skipped
    torch.testing.assert_close(loss, their_loss.detach(), **TOLERANCE)
    for ours, their, transposed in parameter_pairs(model, theirs):  # both clipped
        torch.testing.assert_close(ours.grad, their.grad.T if transposed else their.grad,
                                   **GRADIENT_TOLERANCE)
    their_optimizer.step()
    assert_same_step(model, theirs, cfg.lr)
    moved = max((p.detach() - b).abs().max() for p, b in zip(model.parameters(), before))
    assert moved > 1e-3  # the step moved the weights (lr 3e-2), so agreeing after it says more
    with torch.no_grad():  # the weights' small, explained gaps give logits' gaps of about 3e-5
        torch.testing.assert_close(model.eval()(x), gpt2_logits(theirs.eval(), x),
                                   rtol=1e-4, atol=1e-4)


def test_same_initialization_as_gpt2():
    """GPT-2's init: N(0, 0.02) for embeddings and matrices, 0.02 / sqrt(2 n_layers) for the
    residual branches' output projections, zero biases, unit LayerNorm gains. Each weight's
    sample standard deviation is within 10% of GPT-2's own (thousands of draws: about 1-3%)."""
    model = decoder(scale=None, d_model=64, n_layers=3, n_heads=4)
    theirs = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=POSITIONS, n_embd=64, n_layer=3, n_head=4,
        tie_word_embeddings=False, bos_token_id=None, eos_token_id=None))
    for ours, their, _ in parameter_pairs(model, theirs):
        if their.dim() >= 2:
            assert ours.std().item() == pytest.approx(their.std().item(), rel=0.1)
            assert abs(ours.mean().item()) < 5 * ours.std().item() / math.sqrt(ours.numel())
        else:
            torch.testing.assert_close(ours, their)  # zeros and ones, exactly
    residual = model.blocks[0].mlp.down.weight.std().item()
    assert residual == pytest.approx(0.02 / math.sqrt(2 * 3), rel=0.1)


# ---- where the book's model deliberately differs -------------------------------------------
def test_nope_is_gpt2_with_a_zero_position_table():
    model = decoder(pe="nope").eval()
    theirs = gpt2_for(model).eval()
    with torch.no_grad():
        theirs.transformer.wpe.weight.zero_()
        torch.testing.assert_close(model(tokens()), gpt2_logits(theirs, tokens()), **TOLERANCE)


def test_the_class_head_is_gpt2_with_a_readout_of_n_classes():
    model = decoder(n_classes=5).eval()
    theirs = gpt2_for(model).eval()
    with torch.no_grad():
        logits = model(tokens())
        assert logits.shape[-1] == 5
        torch.testing.assert_close(logits, gpt2_logits(theirs, tokens()), **TOLERANCE)


def test_log_length_scaling_departs_from_gpt2_after_the_first_position():
    model = decoder(log_length_scaling=True).eval()
    theirs = gpt2_for(model).eval()
    with torch.no_grad():
        ours, their = model(tokens()), gpt2_logits(theirs, tokens())
    # position 0 attends to itself alone whatever its logits, so it still agrees
    torch.testing.assert_close(ours[:, 0], their[:, 0], **TOLERANCE)
    for position in range(1, ours.shape[1]):  # every later one departs beyond the tolerance
        assert not torch.allclose(ours[:, position], their[:, position], **TOLERANCE)
