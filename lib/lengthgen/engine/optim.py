"""AdamW and gradient clipping for stacked members, each with its own settings.

`torch.optim.AdamW` takes one learning rate per parameter group, but the members of a stacked
group each have their own learning rate, schedule, weight decay, per-role rates and (after a
resume) step count. So the update is written out here, exactly as torch's AdamW computes it
(decoupled weight decay, bias-corrected moments, eps outside the square root), with every
per-member number a tensor [S] broadcast over that member's slice. Clipping likewise scales each
member's gradients by its own global norm, as `clip_grad_norm_` would for a model alone.

The optimizer works on leaf tensors [S, ...]. A leaf may hold one parameter (one role, decayed
or not) or, as the stacked decoders do, every parameter of a member side by side in one row
[S, N]: then `roles` and `decays` give each column its role and whether it decays, and a step is
a few kernels on one tensor.
"""
import torch

from lengthgen.models.protocol import ROLES

BETAS = (0.9, 0.999)   # torch.optim.AdamW's defaults, which every trainer here uses
EPS = 1e-8


def _per_member(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A [S] tensor of per-member numbers shaped to broadcast over `like` [S, ...]."""
    return values.view(-1, *[1] * (like.dim() - 1))


class StackedAdamW:
    """AdamW over stacked leaves.

    leaves: {name: leaf [S, ...]} (call `rebind` when the group replaces them);
    roles: {name: a role of ROLES (the whole leaf) or a LongTensor [N] of role indices, one per
    column of a 2-D leaf}; decays: {name: bool, or a bool tensor [N] per column};
    configs: each member's TrainConfig (lr, weight_decay, group_lr)."""

    def __init__(self, leaves: dict, roles: dict, decays: dict, configs: list, device):
        self.device = torch.device(device)
        self.leaves = leaves
        self.roles = {n: (ROLES.index(r) if isinstance(r, str) else r.to(self.device))
                      for n, r in roles.items()}
        self.decays = {n: (float(d) if isinstance(d, bool) else d.to(self.device, torch.float32))
                       for n, d in decays.items()}
        self.exp_avg = {n: torch.zeros_like(p) for n, p in leaves.items()}
        self.exp_avg_sq = {n: torch.zeros_like(p) for n, p in leaves.items()}
        self.steps = torch.zeros(len(configs), device=self.device, dtype=torch.float64)
        self._settings(configs)

    def _settings(self, configs) -> None:
        dev = self.device
        self.weight_decay = torch.tensor([c.weight_decay for c in configs], device=dev)
        # each role's rate over the member's base lr (muP's per-role rates); 1 without group_lr
        self.role_scale = torch.tensor([[(c.group_lr or {}).get(role, c.lr) / c.lr
                                         for role in ROLES] for c in configs], device=dev)

    def rebind(self, leaves: dict) -> None:
        """Point at new leaf tensors (after the group dropped members)."""
        self.leaves = leaves

    def retain(self, keep: list[int], configs) -> None:
        index = torch.tensor(keep, device=self.device)
        self.exp_avg = {n: t.index_select(0, index) for n, t in self.exp_avg.items()}
        self.exp_avg_sq = {n: t.index_select(0, index) for n, t in self.exp_avg_sq.items()}
        self.steps = self.steps.index_select(0, index)
        self._settings(configs)

    def _scale(self, name: str, leaf: torch.Tensor) -> torch.Tensor:
        """Each member's per-role factor for every element of the leaf (broadcastable)."""
        role = self.roles[name]
        if isinstance(role, int):
            return _per_member(self.role_scale[:, role], leaf)
        return self.role_scale[:, role]   # [S, N]

    @torch.no_grad()
    def step(self, rates: torch.Tensor) -> None:
        """One update; rates [S] is each member's scheduled learning rate for this step."""
        beta1, beta2 = BETAS
        self.steps += 1
        correction1 = (1 - beta1 ** self.steps).float()
        correction2_sqrt = (1 - beta2 ** self.steps).sqrt().float()
        rates = rates.float()
        for name, leaf in self.leaves.items():
            grad = leaf.grad
            if grad is None:
                continue
            lr = _per_member(rates, leaf) * self._scale(name, leaf)
            decay = self.decays[name]
            if not isinstance(decay, float) or decay:
                leaf.mul_(1 - lr * _per_member(self.weight_decay, leaf) * decay)
            m, v = self.exp_avg[name], self.exp_avg_sq[name]
            m.lerp_(grad, 1 - beta1)
            v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = (v.sqrt() / _per_member(correction2_sqrt, v)).add_(EPS)
            leaf.sub_(lr / _per_member(correction1, leaf) * m / denom)

    def member_state(self, index: int) -> dict:
        return {"exp_avg": {n: t[index].clone() for n, t in self.exp_avg.items()},
                "exp_avg_sq": {n: t[index].clone() for n, t in self.exp_avg_sq.items()},
                "step": float(self.steps[index])}

    @torch.no_grad()
    def load_member_state(self, index: int, state: dict) -> None:
        for key, table in (("exp_avg", self.exp_avg), ("exp_avg_sq", self.exp_avg_sq)):
            for name, value in state[key].items():
                table[name][index].copy_(value.to(table[name].device))
        self.steps[index] = state["step"]


@torch.no_grad()
def clip_per_member(grads: list[torch.Tensor], max_norms: torch.Tensor) -> torch.Tensor:
    """Scale each member's gradients so that their joint norm is at most its max_norm (inf: no
    clipping), as clip_grad_norm_ does for one model; returns the norms before clipping [S]."""
    squares = torch.stack([g.float().pow(2).flatten(1).sum(dim=1) for g in grads]).sum(dim=0)
    norms = squares.sqrt()
    scale = (max_norms / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(_per_member(scale.to(g.dtype), g))
    return norms
