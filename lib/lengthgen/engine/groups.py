"""What the training loop trains: a group of runs that step together.

The loop (`lengthgen.engine.loop`) asks a group for five things: set this step's learning
rates, take one step on a batch [S, B, T] and return each member's loss [S], evaluate every
member on its fixed in-distribution set, drop members that finished, and hand back models. Two
kinds of group answer:

* `ModuleGroup`: one model of any class that meets `TrainableModel`, trained exactly as `train`
  always trained it (torch's AdamW over the model's parameter groups, length chunks, clipping
  by the model's global norm, `evaluate` on the host-drawn set). A group of one.
* `StackedGroup`: S models of one shape held as stacked tensors, through a batched forward:
  Decoders (`lengthgen.engine.stacked`) or limit-style transformers
  (`lengthgen.engine.stacked_limit`), by the models' class. Each member keeps everything a run alone has (initial
  weights, data stream, AdamW moments, learning-rate schedule, clipping by its own norm,
  evaluation set, stop and give-up rule).

Both hand out a member's state and load one back (`member_state`, `load_member`) in the
library's one resume format (`lengthgen.engine.checkpoints`).
"""
import numpy as np
import torch

from lengthgen.engine.compiled import CompiledOrEager, check_backend
from lengthgen.engine.feeds import eval_sets
from lengthgen.engine.optim import StackedAdamW, clip_per_member
from lengthgen.engine.stacked import StackedDecoders
from lengthgen.engine.stacked_limit import StackedLimitStyle
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import autocast, evaluate
from lengthgen.models.decoder import Decoder
from lengthgen.models.limit_style import LimitStyleTransformer
from lengthgen.objectives import objective_of
from lengthgen.tasks.base import bin_name
from lengthgen.engine.settings import EVAL_SEED_OFFSET, learning_rate
from lengthgen.engine.single import (make_optimizer, sequence_extent, set_learning_rates,
                                     training_step)


class ModuleGroup:
    """One model, trained as `train` trains it."""

    def __init__(self, model, task, cfg, device):
        self.model, self.task, self.cfg = model, task, cfg
        self.device = torch.device(device)
        self.objective = objective_of(task)
        self.lo, self.hi = cfg.length_range(task)
        self.absolute = model.cfg.pe.absolute
        model.to(self.device).train()
        self.optimizer = make_optimizer(model, cfg, self.device)
        self.size = 1

    def set_rates(self, step: int) -> None:
        set_learning_rates(self.optimizer, self.cfg, step)

    def train_step(self, inputs, targets, mask, offsets) -> torch.Tensor:
        loss = training_step(self.model, self.optimizer, inputs[0], targets[0], mask[0],
                             offsets[0] if self.absolute else None, self.cfg.grad_clip,
                             self.cfg.length_chunks, self.objective, self.cfg.precision)
        return loss[None]

    def evaluate(self) -> list[dict]:
        return [evaluate(self.model, self.task, [(self.lo, self.hi)], self.cfg.eval_samples,
                         self.cfg.seed + EVAL_SEED_OFFSET, self.device,
                         precision=self.cfg.precision)[bin_name(self.lo, self.hi)]]

    def retain(self, keep: list[int]) -> None:
        if keep != [0]:
            raise LengthgenError("a group of one cannot drop its member")

    def member_state(self, j: int = 0) -> dict:
        """The model's weights and AdamW state by parameter name, as `StackedGroup.member_state`
        gives them (the resume format of `lengthgen.engine.checkpoints`). A parameter that has
        not stepped yet has no moments."""
        names = {p: n for n, p in self.model.named_parameters()}
        adam, steps = {"exp_avg": {}, "exp_avg_sq": {}}, set()
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                state = self.optimizer.state.get(p)
                if state:
                    adam["exp_avg"][names[p]] = state["exp_avg"]
                    adam["exp_avg_sq"][names[p]] = state["exp_avg_sq"]
                    steps.add(float(state["step"]))
        if len(steps) > 1:   # one count per member, as the stacked AdamW keeps it
            raise LengthgenError(f"the model's parameters took different numbers of AdamW steps "
                                 f"({sorted(steps)}): a parameter outside the forward of some "
                                 f"batches; its state cannot be kept as one member's")
        adam["step"] = steps.pop() if steps else 0.0
        return {"model": self.model.state_dict(), "adam": adam}

    def load_member(self, j: int, state: dict) -> None:
        """Load `member_state`'s weights and moments (ValueError where they do not fit)."""
        self.model.load_state_dict(state["model"])
        adam = state["adam"]
        names = {p: n for n, p in self.model.named_parameters()}
        order = [names[p] for g in self.optimizer.param_groups for p in g["params"]]
        shapes = {n: p.shape for n, p in self.model.named_parameters()}
        for key in ("exp_avg", "exp_avg_sq"):
            for name, value in adam[key].items():
                if name not in shapes or not isinstance(value, torch.Tensor) \
                        or value.shape != shapes[name]:
                    raise ValueError(f"AdamW {key} {name!r} is not a moment of a parameter of "
                                     f"this model")
        # torch's own loader places each tensor (and the step count) where its AdamW keeps it
        per_param = {i: {"step": torch.tensor(float(adam["step"])),
                         "exp_avg": adam["exp_avg"][n], "exp_avg_sq": adam["exp_avg_sq"][n]}
                     for i, n in enumerate(order) if n in adam["exp_avg"]}
        groups = self.optimizer.state_dict()["param_groups"]
        self.optimizer.load_state_dict({"state": per_param, "param_groups": groups})


# the stack of each model class a stacked group trains (its batched forward)
STACKS = {Decoder: StackedDecoders, LimitStyleTransformer: StackedLimitStyle}


class StackedGroup:
    """S models of one shape, stepped together; see the module docstring."""

    def __init__(self, models: list, tasks: list, configs: list, device, graphs: bool = False,
                 compile: bool | str = False):
        """models: Decoders, or limit-style transformers, of one shape (STACKS; `train` trains
        any other TrainableModel, alone).
        graphs: on CUDA, replay each training step as one captured CUDA graph (`GraphStep`).
        compile: run the step's loss and update through torch.compile (`engine.compiled`;
        True is TorchInductor, or name a backend of compiled.BACKENDS); eager where it fails."""
        self.device = torch.device(device)
        self.graphs = bool(graphs) and self.device.type == "cuda"
        self._graph = None
        self.tasks, self.configs = list(tasks), list(configs)
        precisions = {c.precision for c in self.configs}
        if len(precisions) != 1:   # one autocast context holds the whole batched forward
            raise LengthgenError(f"the members of a group must share a precision, not "
                                 f"{', '.join(sorted(precisions))}")
        self.precision = self.configs[0].precision   # TrainConfig.precision, every member's
        objectives = {objective_of(t).name for t in tasks}
        if len(objectives) != 1:
            raise LengthgenError("the members of a group must share an objective")
        self.objective = objective_of(tasks[0])
        stack = STACKS.get(type(models[0]))
        odd = next((type(m).__name__ for m in models if type(m) is not type(models[0])
                    or stack is None), None)
        if odd is not None:
            raise LengthgenError(f"a stacked group trains Decoders or limit-style models, all "
                                 f"of one class, not a {odd}; train() trains any "
                                 f"TrainableModel alone")
        if stack is StackedLimitStyle:   # padded outputs: 0 against padded targets, or -inf
            self.stack = stack(models, self.device,
                               regression=self.objective.name == "regression")
        else:
            self.stack = stack(models, self.device)
        roles, dims = {}, {}
        for model in models:
            for name, param in model.named_parameters():
                roles.setdefault(name, model.parameter_roles()[name])
                dims.setdefault(name, param.dim())
        leaf_roles, leaf_decays = self.stack.layout(roles, dims)
        self.optimizer = StackedAdamW(self.stack.leaves(), leaf_roles, leaf_decays,
                                      self.configs, self.device)
        self.eval_seeds = [c.seed + EVAL_SEED_OFFSET for c in self.configs]
        self.evals = eval_sets(self.tasks, self.configs, self.eval_seeds, self.device)
        self._member_settings()
        self._rates, self._rates_start = None, None
        self._losses, self._update = self._chunk_losses, self._clip_and_update
        if compile:
            backend = check_backend("inductor" if compile is True else compile)
            self._losses = CompiledOrEager(self._chunk_losses, "loss", backend)
            self._update = CompiledOrEager(self._clip_and_update, "update", backend)
        self.ids = list(range(len(models)))   # each current member's index at the start
        self.released: dict = {}             # start index -> model, for members that left

    RATE_BLOCK = 256   # steps of learning rates computed (on the host) and sent at once

    def _member_settings(self) -> None:
        self.max_norms = torch.tensor([float("inf") if c.grad_clip is None else c.grad_clip
                                       for c in self.configs], device=self.device)

    @property
    def size(self) -> int:
        return len(self.configs)

    def set_rates(self, step: int) -> None:
        if self._rates is None or not 0 <= step - self._rates_start < self.RATE_BLOCK:
            table = np.array([[learning_rate(c, s) for c in self.configs]
                              for s in range(step, step + self.RATE_BLOCK)])
            self._rates = torch.as_tensor(table, dtype=torch.float64).to(self.device)
            self._rates_start = step
        self.rates = self._rates[step - self._rates_start]

    def _position_losses(self, logits, targets, mask) -> torch.Tensor:
        """Each member's summed loss over its masked positions [S]."""
        per_position = self.objective.losses(logits.flatten(0, 1), targets.flatten(0, 1),
                                             mask.flatten(0, 1)).view(mask.shape)
        return per_position.sum(dim=(1, 2))

    def train_step(self, inputs, targets, mask, offsets) -> torch.Tensor:
        """One step of every member: the mean loss over its masked positions, its gradient
        (accumulated over length chunks, as `training_step` does for one model), clipping by
        its own norm, its own AdamW update. Returns the losses [S] (no sync)."""
        if self.graphs and self.configs[0].length_chunks == 1:
            if self._graph is None or not self._graph.fits(inputs, offsets):
                self._graph = GraphStep(self, inputs, targets, mask, offsets)
            return self._graph.replay(inputs, targets, mask, offsets, self.rates)
        return self._eager_step(inputs, targets, mask, offsets, self.rates)

    def _eager_step(self, inputs, targets, mask, offsets, rates) -> torch.Tensor:
        """One step, its two halves eager or compiled (what GraphStep captures)."""
        for leaf in self.stack.leaves().values():
            leaf.grad = None
        total = mask.sum(dim=(1, 2)).clamp(min=1)
        losses = torch.zeros(inputs.shape[0], device=inputs.device)
        for part in stacked_length_chunks(inputs, targets, mask, offsets,
                                          self.configs[0].length_chunks):
            part_losses = self._losses(*part, total)
            part_losses.sum().backward()   # members share no parameters: each its own grad
            losses += part_losses.detach()
        self._update(rates)
        return losses

    def _chunk_losses(self, inputs, targets, mask, offsets, total) -> torch.Tensor:
        """Each member's loss on one length chunk, over its positions in the whole batch."""
        with autocast(self.device, self.precision):
            logits = self.stack.forward(inputs, offsets)
        return self._position_losses(logits, targets, mask) / total

    def _clip_and_update(self, rates) -> None:
        grads = [leaf.grad for leaf in self.stack.leaves().values() if leaf.grad is not None]
        clip_per_member(grads, self.max_norms)
        self.optimizer.step(rates)

    @torch.no_grad()
    def evaluate(self) -> list[dict]:
        """Each member on its own fixed in-distribution set: accuracy (classification) and the
        mean loss over masked positions, as `evaluate` computes them."""
        inputs, targets, mask = self.evals
        s, e, w = inputs.shape
        width = max(getattr(getattr(self.stack, "cfg", None), "d_model", 64), 64)
        chunk = max(1, min(e, int(4e7 // (s * w * width))))
        correct = torch.zeros(s, device=self.device)
        loss_sum = torch.zeros(s, device=self.device)
        for start in range(0, e, chunk):
            rows = slice(start, start + chunk)
            with autocast(self.device, self.precision):
                logits = self.stack.forward(inputs[:, rows], None)
            m = mask[:, rows]
            flat = lambda t: t.flatten(0, 1)
            loss_sum += self.objective.losses(flat(logits), flat(targets[:, rows]),
                                              flat(m)).view(m.shape).sum(dim=(1, 2))
            if self.objective.metric == "accuracy":
                correct += self.objective.correct(flat(logits), flat(targets[:, rows]),
                                                  flat(m)).view(m.shape[:2]).sum(dim=1)
        positions = mask.sum(dim=(1, 2)).clamp(min=1)
        losses = (loss_sum / positions).tolist()
        accuracies = (correct / e).tolist()
        points = []
        for i in range(s):
            point = {"loss": losses[i], "n": e}
            if self.objective.metric == "accuracy":
                point = {"accuracy": accuracies[i], **point}
            points.append(point)
        return points

    def retain(self, keep: list[int]) -> None:
        """Drop the members not in `keep` (they finished); their models are kept for
        `finished_models`."""
        for j in range(self.size):
            if j not in keep:
                self.released[self.ids[j]] = self.stack.unstack(j)
        self.ids = [self.ids[j] for j in keep]
        index = torch.tensor(keep, device=self.device)
        self.stack.retain(keep)
        self.tasks = [self.tasks[i] for i in keep]
        self.configs = [self.configs[i] for i in keep]
        self.eval_seeds = [self.eval_seeds[i] for i in keep]
        self.evals = [t.index_select(0, index) for t in self.evals]
        self.optimizer.rebind(self.stack.leaves())
        self.optimizer.retain(keep, self.configs)
        self._member_settings()
        self._rates = None
        self._graph = None   # new shapes, new tensors: capture again

    def finished_models(self) -> dict:
        """{start index: model} for every member, those that left and those still here."""
        return {**self.released, **{self.ids[j]: self.stack.unstack(j) for j in range(self.size)}}

    def member_state(self, j: int) -> dict:
        """Member j's weights and AdamW state by parameter name, unpadded (a file of its own,
        resumable in any group of its shape)."""
        model = self.stack.unstack(j)
        rows = {name: p.shape[0] for name, p in model.named_parameters()}
        adam = self.optimizer.member_state(j)
        for key in ("exp_avg", "exp_avg_sq"):
            tensors = self.stack.split_leaves(adam[key])
            adam[key] = {n: t[: rows[n]].clone() for n, t in tensors.items() if n in rows}
        return {"model": {n: t.clone() for n, t in model.state_dict().items()}, "adam": adam}

    @torch.no_grad()
    def load_member(self, j: int, state: dict) -> None:
        self.stack.load_member(j, state["model"])
        adam = dict(state["adam"])
        for key in ("exp_avg", "exp_avg_sq"):
            adam[key] = self.stack.join_leaves(adam[key])
        self.optimizer.load_member_state(j, adam)


class GraphStep:
    """A stacked group's training step captured once as a CUDA graph and replayed every step.

    A small model's step is hundreds of kernel launches that each do little: on an H200 a group
    of 64 one-layer width-16 decoders spent about 6 ms a step in the host's Python and
    launches, whatever the group's size. Replaying a captured graph launches them all at once.
    What makes it possible: fixed shapes (batches made on the device at a fixed width, one
    length chunk), no sync inside the step, and every per-member number a device tensor (the
    learning rates arrive in a static buffer). Warm-up steps before the capture run on copies
    of the state, so the trajectory is the eager one's; a group that drops members captures
    again. tests/test_engine_cuda.py compares it with eager steps on the card."""

    def __init__(self, group, inputs, targets, mask, offsets):
        self.group = group
        self.static = [t.clone() for t in (inputs, targets, mask)]
        self.offsets = None if offsets is None else offsets.clone()
        self.rates = group.rates.clone()
        saved = self._state()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):   # warm-up (cuBLAS workspaces, autograd) off the record
            for _ in range(2):
                group._eager_step(*self.static, self.offsets, self.rates)
        torch.cuda.current_stream().wait_stream(stream)
        self._restore(saved)
        for leaf in group.stack.leaves().values():
            leaf.grad = None
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.losses = group._eager_step(*self.static, self.offsets, self.rates)

    def _state(self):
        opt = self.group.optimizer
        return ([t.detach().clone() for t in self.group.stack.leaves().values()],
                [t.clone() for t in opt.exp_avg.values()],
                [t.clone() for t in opt.exp_avg_sq.values()], opt.steps.clone())

    @torch.no_grad()
    def _restore(self, saved) -> None:
        leaves, m, v, steps = saved
        opt = self.group.optimizer
        for target, value in zip(list(self.group.stack.leaves().values()) + list(
                opt.exp_avg.values()) + list(opt.exp_avg_sq.values()), leaves + m + v):
            target.copy_(value)
        opt.steps.copy_(steps)

    def fits(self, inputs, offsets) -> bool:
        return inputs.shape == self.static[0].shape and (offsets is None) == (self.offsets is None)

    def replay(self, inputs, targets, mask, offsets, rates) -> torch.Tensor:
        for static, value in zip(self.static, (inputs, targets, mask)):
            static.copy_(value)
        if offsets is not None:
            self.offsets.copy_(offsets)
        self.rates.copy_(rates)
        self.graph.replay()
        return self.losses.clone()


def stacked_length_chunks(inputs, targets, mask, offsets=None, chunks: int = 1):
    """`lengthgen.engine.single.length_chunks` for a stacked batch [S, B, T]: each member's
    rows sorted by length and cut into `chunks` groups; a group is trimmed after the longest
    sequence any member has in it. Padding only follows a sequence and attention is causal, so
    the cut columns change nothing at the positions that remain. (Reads the lengths: on a GPU
    a sync per chunk, which is why GPU configs use one chunk.)"""
    if chunks <= 1:
        yield inputs, targets, mask, offsets
        return
    extent = sequence_extent(inputs, mask)                                       # [S, B]
    order = torch.argsort(extent, dim=1, stable=True)

    def rows(t, index):   # t [S, B, ...] -> the rows `index` [S, b] of each member
        expand = index.view(*index.shape, *[1] * (t.dim() - 2)).expand(*index.shape,
                                                                          *t.shape[2:])
        return t.gather(1, expand)
    for index in order.tensor_split(chunks, dim=1):
        if index.shape[1] == 0:
            continue
        cut = int(extent.gather(1, index).max())
        yield (rows(inputs, index)[:, :, :cut], rows(targets, index)[:, :, :cut],
               rows(mask, index)[:, :, :cut],
               None if offsets is None else offsets.gather(1, index))
