"""What a training run minimizes and reports: the one seam between tasks and trainers.

A task names its objective (`Task.objective`); the trainers (`train.train`,
`engine.jobs.train_jobs`) and `evaluate.evaluate` look it up here and never branch on it
themselves. An objective fixes three things:

* the dtype of the targets (class ids, or real values),
* the per-position loss (masked cross-entropy, or masked squared error),
* the metric reported beside the loss: "accuracy" (a sequence counts only if the argmax is
  right at every masked position) for classification, none for regression, whose quality is
  its loss (mean squared error).

"classification" is what every task before the Izzo chapter uses, and its operations are
exactly those the trainer always ran, so earlier results reproduce bit for bit.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from lengthgen.errors import LengthgenError, unknown_name


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor,
                         mask: torch.Tensor) -> torch.Tensor:
    """Per-position cross-entropy [B,T] in float32, zero where the mask is off."""
    losses = F.cross_entropy(logits.float().transpose(1, 2), targets, reduction="none")
    return losses * mask


def masked_squared_error(outputs: torch.Tensor, targets: torch.Tensor,
                         mask: torch.Tensor) -> torch.Tensor:
    """Per-position squared error [B,T] in float32, summed over the output dimension (targets
    [B,T] for one real value per position, [B,T,C] for C of them), zero where the mask is off.

    Masked positions are zeroed with `where`, not a product, so a NaN in an unused output
    column cannot leak into the loss."""
    outputs = outputs.float()
    targets = targets.float()
    if targets.dim() == 2:
        targets = targets[..., None]
    if outputs.shape[-1] != targets.shape[-1]:
        raise LengthgenError(f"regression: the model gives {outputs.shape[-1]} output(s) per "
                             f"position but the targets have {targets.shape[-1]}")
    errors = (outputs - targets).pow(2).sum(dim=-1)
    return torch.where(mask, errors, torch.zeros((), device=errors.device))


@dataclass(frozen=True)
class Objective:
    name: str
    target_dtype: torch.dtype
    metric: str | None      # the name of the extra metric evaluate() reports, if any

    def losses(self, outputs: torch.Tensor, targets: torch.Tensor,
               mask: torch.Tensor) -> torch.Tensor:
        """Per-position losses [B,T] in float32, zero where the mask is off."""
        if self.name == "classification":
            return masked_cross_entropy(outputs, targets, mask)
        return masked_squared_error(outputs, targets, mask)

    def correct(self, outputs: torch.Tensor, targets: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        """Per sequence [B]: right at every masked position (classification only)."""
        if self.metric != "accuracy":
            raise LengthgenError(f"the {self.name} objective has no accuracy")
        return ((outputs.argmax(-1) == targets) | ~mask).all(dim=1)


OBJECTIVES: dict[str, Objective] = {
    "classification": Objective("classification", torch.long, "accuracy"),
    "regression": Objective("regression", torch.float32, None),
}


def get_objective(name: str) -> Objective:
    if name not in OBJECTIVES:
        raise unknown_name("objective", name, OBJECTIVES)
    return OBJECTIVES[name]


def objective_of(task) -> Objective:
    """The objective a task declares (classification unless it says otherwise)."""
    return get_objective(getattr(task, "objective", "classification"))
