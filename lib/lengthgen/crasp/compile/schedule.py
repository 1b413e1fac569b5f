"""Scheduling: stack the stages of blocks.py into transformer layers.

The residual stream at time 2l is read by layer l's heads, at 2l+1 by its MLP; a dimension
written there is ready at 2l+1 (heads) or 2l+2 (MLP). Stages are placed greedily, in program
order, at the earliest sublayer where everything they read is ready; an MLP holds one kind of
activation, so a stage needing the other kind moves to a later layer. The schedule also fixes the
dimensions of the residual stream: every name it has seen, in the order it saw them.
"""
from dataclasses import dataclass, field

from lengthgen.crasp.compile.blocks import Stage


@dataclass
class LayerPlan:
    heads: list = field(default_factory=list)    # attention stages
    stages: list = field(default_factory=list)   # MLP stages
    activation: str | None = None


class Schedule:
    """Places stages greedily (see the module docstring); `ready` maps every dimension name to
    the time it is ready, so its keys are the residual stream's dimensions."""

    def __init__(self, inputs):
        self.layers: list[LayerPlan] = []
        self.ready: dict[str, int] = {name: 0 for name in inputs}

    def _layer(self, index: int) -> LayerPlan:
        while len(self.layers) <= index:
            self.layers.append(LayerPlan())
        return self.layers[index]

    def place(self, stage: Stage) -> None:
        time = max((self.ready[r] for r in stage.reads), default=0)
        if stage.kind == "attn":
            index = (time + 1) // 2
            self._layer(index).heads.append(stage)
            done = 2 * index + 1
        else:
            index = time // 2
            while stage.needs and self._layer(index).activation not in (None, stage.needs):
                index += 1  # that layer's MLP already has the other activation
            layer = self._layer(index)
            layer.activation = layer.activation or stage.needs
            layer.stages.append(stage)
            done = 2 * index + 2
        for name in stage.writes:
            self.ready[name] = done

    def dims(self) -> dict[str, int]:
        """Dimension index of every name in the residual stream."""
        return {name: i for i, name in enumerate(self.ready)}


def schedule(inputs, stages) -> Schedule:
    """Place every stage; `inputs` are the dimensions ready before the first layer (helpers and
    embedded operations)."""
    plan = Schedule(inputs)
    for stage in stages:
        plan.place(stage)
    return plan
