"""Every model class the trainers train meets TrainableModel; roles, muP and per-role rates."""
import math

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.dyck import SelfAttentionHead
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.models.protocol import ROLES, TrainableModel, check_trainable
from lengthgen.models.token_mlp import TokenMLP, TokenMLPConfig
from lengthgen.tasks import get_task
from lengthgen.train import TrainConfig, make_optimizer, set_learning_rates, train

MODELS = {
    "decoder": lambda: Decoder(DecoderConfig(vocab_size=6, n_classes=6, d_model=16)),
    "decoder-mup": lambda: Decoder(DecoderConfig(vocab_size=6, n_classes=6, d_model=16,
                                                 init="mup")),
    "dyck-head": lambda: SelfAttentionHead(8, 32, uniform=False, fixed_tokens=True),
    "limit-style": lambda: LimitStyleTransformer(LimitStyleConfig(vocab_size=4, pe="periodic",
                                                                  period=3, local_tau=2)),
    "token-mlp": lambda: TokenMLP(TokenMLPConfig(vocab_size=6, n_classes=4)),
    "limit-style-2layer": lambda: LimitStyleTransformer(LimitStyleConfig(
        vocab_size=4, n_outputs=3, n_layers=2, pe="ape", n_positions=40, init="standard")),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_meets_the_protocol(name):
    model = MODELS[name]()
    assert isinstance(model, TrainableModel)
    check_trainable(model)  # roles name exactly the trainable parameters, with valid roles
    roles = model.parameter_roles()
    assert set(roles.values()) <= set(ROLES)
    inputs = torch.randint(1, 4, (3, 7))
    out = model(inputs, None, check=False)
    assert out.shape[:2] == (3, 7)
    assert model.num_parameters() >= sum(p.numel() for p in model.parameters()
                                         if p.requires_grad)
    assert hasattr(model.cfg, "pe") and hasattr(model.cfg, "n_positions")
    assert isinstance(model.cfg.to_dict(), dict)


def test_a_module_without_roles_is_refused_by_the_trainer():
    class Bare(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = DecoderConfig(vocab_size=4, n_classes=4)
            self.w = torch.nn.Linear(2, 2)

        def forward(self, inputs, offsets=None, check=True):
            return torch.zeros(*inputs.shape, 4)

    with pytest.raises(LengthgenError, match="not a trainable model"):
        train(Bare(), get_task("binary_majority"), TrainConfig(steps=1))


def test_mup_init_scales_by_role():
    torch.manual_seed(0)
    model = LimitStyleTransformer(LimitStyleConfig(vocab_size=4, d_model=64, mlp_width=256))
    layer = model.layers[0]
    assert torch.all(layer.query.weight == 0)  # muP's zero query: uniform attention at start
    assert layer.up.weight.std().item() == pytest.approx(1 / math.sqrt(64), rel=0.1)
    assert layer.down.weight.std().item() == pytest.approx(1 / math.sqrt(256), rel=0.1)
    assert model.unembed.weight.std().item() < 3 / 64  # 1/fan_in, not 1/sqrt(fan_in)
    assert model.token_embeddings.weight.std().item() == pytest.approx(1.0, rel=0.5)
    standard = LimitStyleTransformer(LimitStyleConfig(vocab_size=4, init="standard"))
    assert standard.layers[0].query.weight.abs().max() > 0


def test_mup_init_draws_nothing_for_a_model_built_on_the_meta_device(monkeypatch):
    """A model built on the meta device only to count its parameters (`runs.cost`) has no
    values: mup_init leaves it as it is (each draw there took about 0.7 ms), and the count is
    the real model's."""
    from lengthgen.runs.cost import count_parameters
    drawn_on = []
    normal = torch.Tensor.normal_

    def spy(self, *args, **kwargs):
        drawn_on.append(self.device.type)
        return normal(self, *args, **kwargs)
    monkeypatch.setattr(torch.Tensor, "normal_", spy)
    config = LimitStyleConfig(vocab_size=4, d_model=64, mlp_width=256)
    counted = count_parameters(lambda: LimitStyleTransformer(config))
    assert drawn_on == []
    real = LimitStyleTransformer(config)
    assert drawn_on and set(drawn_on) == {"cpu"}
    assert counted == sum(p.numel() for p in real.parameters())


def test_unknown_init_scheme_names_the_valid_ones():
    with pytest.raises(LengthgenError, match="initialization scheme"):
        DecoderConfig(vocab_size=4, n_classes=4, init="xavier")
    with pytest.raises(LengthgenError, match="initialization scheme"):
        LimitStyleConfig(vocab_size=4, init="mu-p")


def test_group_learning_rates_follow_roles_and_schedule():
    model = MODELS["limit-style"]()
    cfg = TrainConfig(lr=1e-2, group_lr={"hidden": 1e-2 / 16, "readout": 1e-3},
                      warmup_steps=4, steps=10)
    optimizer = make_optimizer(model, cfg, "cpu")
    set_learning_rates(optimizer, cfg, 1)  # warmup: half of each group's rate
    rates = {}
    for group in optimizer.param_groups:
        rates.setdefault(group["role"], []).append(group["lr"])
    assert rates["hidden"] == pytest.approx([0.5 * 1e-2 / 16])
    assert rates["readout"] == pytest.approx([0.5 * 1e-3])
    assert rates["embeddings"] == pytest.approx([0.5 * 1e-2])
    assert rates["vectors"] == pytest.approx([0.5 * 1e-2])
    grouped = {id(p) for g in optimizer.param_groups for p in g["params"]}
    assert grouped == {id(p) for p in model.parameters()}  # every parameter exactly once
    assert sum(len(g["params"]) for g in optimizer.param_groups) == len(grouped)


def test_default_groups_are_the_two_weight_decay_groups():
    model = MODELS["decoder"]()
    optimizer = make_optimizer(model, TrainConfig(), "cpu")
    assert len(optimizer.param_groups) == 2
    assert [g["weight_decay"] for g in optimizer.param_groups] == [0.01, 0.0]
    assert all(p.dim() >= 2 for p in optimizer.param_groups[0]["params"])


@pytest.mark.parametrize("bad", [{"hiden": 1e-3}, {"hidden": 0.0}, {"hidden": float("nan")},
                                 [1e-3]])
def test_bad_group_lr_is_a_clear_error(bad):
    with pytest.raises(LengthgenError, match="group_lr"):
        TrainConfig(group_lr=bad)
