"""Where a group's training batches come from: the host's samplers, or the device.

Two feeds, one interface (`batch(step)` -> inputs, targets, mask [S, B, T] and APE offsets
[S, B] or None; `retain(keep)` when members leave):

* `HostFeed` draws each member's batch with its task's numpy sampler and its own seeded
  generator, exactly as `train` always has (the same batches and offsets, in the same order),
  then stacks them padded to a common width. Every CPU figure trains through it, so the
  book's records keep their data streams. Its cost is host time every step. A member's
  place in its stream (its generator's state and its task's `training_state`, a fixed
  set's place in its epoch) goes into the member's state (`engine.checkpoints`), so that a
  resumed member draws what it would have drawn.
* `DeviceFeed` makes batches on the device (`lengthgen.engine.device_data`), many steps at a
  time, keyed by (member seed, step, row) with a counter-based generator: a member's batches
  depend only on its run and the step, so they are the same in any group, after a resume and
  on any device (the step is its whole state). No host work per step and a fixed width
  (static shapes). It draws the same
  law as the host samplers (tests/test_engine_sampling.py, tests/test_device_regression.py),
  not the same stream. A regression group's targets are real values, padded across members
  as `stack_targets` pads the host's; a pool holds at most POOL_TOKENS tokens per tensor (a
  group of many members at batch 1024 draws fewer steps at a time; the values are the same).

The fixed in-distribution evaluation sets are drawn once, on the host, exactly as `evaluate`
draws them, so a member's evaluation numbers mean what a single run's mean.
"""
import numpy as np
import torch

from lengthgen.engine.single import sample_offsets
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import EVAL_BATCH_SIZE, bin_batches

# the random stream of APE offsets (the data streams of lengthgen.engine.rng are 0x1000-0x1fff)
STREAM_OFFSETS = 0x2001
# the most tokens (members x steps x rows x width) a device pool draws at once: 2**28 int64
# inputs are 2 GiB, and a sampler's work tensors a few times that. Huang et al.'s sweep (256
# members, batch 64, width 203) keeps its 64 steps; 256 Izzo members at batch 1024 draw a few
POOL_TOKENS = 2 ** 28


def _pad(array: np.ndarray, width: int) -> np.ndarray:
    pad = [(0, 0), (0, width - array.shape[1])] + [(0, 0)] * (array.ndim - 2)
    return np.pad(array, pad)


def stack_targets(arrays: list, width: int) -> np.ndarray:
    """Members' targets stacked [S, B, width, ...]: padded to `width`, and where members have
    different numbers of outputs (a regression target [B, T] is one, [B, T, C] is C), each
    padded with zeros to the most (a stacked forward gives 0 at a member's padded outputs:
    their squared error is 0, as the member alone has none)."""
    if len({a.shape[2:] for a in arrays}) > 1:
        arrays = [a[..., None] if a.ndim == 2 else a for a in arrays]
        most = max(a.shape[2] for a in arrays)
        arrays = [np.pad(a, [(0, 0), (0, 0), (0, most - a.shape[2])]) for a in arrays]
    return np.stack([_pad(a, width) for a in arrays])


class HostFeed:
    """Each member's task.sample with its own np.random.default_rng(seed), as `train` draws."""

    def __init__(self, tasks, configs, n_positions, absolute, target_dtype, device,
                 width: int | None = None):
        self.tasks, self.configs = list(tasks), list(configs)
        self.rngs = [np.random.default_rng(c.seed) for c in self.configs]
        self.ranges = [c.length_range(t) for t, c in zip(self.tasks, self.configs)]
        self.n_positions, self.absolute = list(n_positions), list(absolute)
        self.any_absolute = any(self.absolute)
        self.target_dtype, self.device = target_dtype, device
        self.width = width   # None: the widest batch of the step (what `train` feeds)
        for task in self.tasks:   # a run starts at the start of its task's training data
            task.restore_training_state(None)
        shared = [t for t in self.tasks if self.tasks.count(t) > 1 and
                  t.training_state() is not None]
        if shared:   # one object, one place in its data: it cannot serve two members
            raise LengthgenError(f"{shared[0].id}: one task object with a training state "
                                 f"serves several members; give each its own")

    def batch(self, step: int):
        batches, offsets = [], []
        for i, (task, rng, (lo, hi)) in enumerate(zip(self.tasks, self.rngs, self.ranges)):
            batch = task.training_batch(rng, self.configs[i].batch_size, lo, hi)
            batches.append(batch)
            offsets.append(sample_offsets(rng, batch.inputs, self.n_positions[i],
                                          self.configs[i].ape_offsets)
                           if self.absolute[i] else np.zeros(len(batch.inputs), np.int64))
        width = self.width or max(b.inputs.shape[1] for b in batches)
        stack = lambda name: np.stack([_pad(getattr(b, name), width) for b in batches])
        inputs = torch.as_tensor(stack("inputs"), dtype=torch.long)
        targets = torch.as_tensor(stack_targets([b.targets for b in batches], width),
                                  dtype=self.target_dtype)
        mask = torch.as_tensor(stack("loss_mask"), dtype=torch.bool)
        tensors = [t.to(self.device, non_blocking=True) for t in (inputs, targets, mask)]
        shifts = (torch.as_tensor(np.stack(offsets)).to(self.device, non_blocking=True)
                  if self.any_absolute else None)
        return (*tensors, shifts)

    def state(self, row: int) -> dict:
        """Where row `row` stands in its data: its generator's state and its task's training
        state (`Task.training_state`)."""
        return {"numpy": self.rngs[row].bit_generator.state,
                "task": self.tasks[row].training_state()}

    def restore(self, row: int, state: dict) -> None:
        """Put row `row` where `state` (a `state()`) says, to draw what it would have drawn."""
        if not isinstance(state, dict) or set(state) != {"numpy", "task"}:
            raise LengthgenError("a member's feed state is not a host generator's and its "
                                 "task's state")
        self.rngs[row].bit_generator.state = state["numpy"]
        self.tasks[row].restore_training_state(state["task"])

    def retain(self, keep: list[int]) -> None:
        for name in ("tasks", "configs", "rngs", "ranges", "n_positions", "absolute"):
            setattr(self, name, [getattr(self, name)[i] for i in keep])
        self.any_absolute = any(self.absolute)


class DeviceFeed:
    """Batches made on the device, `pool` steps at a time, keyed by (seed, step, row)."""

    def __init__(self, tasks, configs, n_positions, absolute, device, width: int,
                 pool: int = 64):
        from lengthgen.engine.device_data import device_sampler
        self.tasks, self.configs = list(tasks), list(configs)
        self.samplers = []
        for task in self.tasks:
            sampler = device_sampler(task)
            if sampler is None:
                raise LengthgenError(f"{task.id}: no device sampler for this task; train it with "
                                     f"the host's sampler (sampler='host')")
            self.samplers.append(sampler)
        self.ranges = [c.length_range(t) for t, c in zip(self.tasks, self.configs)]
        self.device = torch.device(device)
        self.width = width
        # the values do not depend on the pool's size (rows are keyed by step): memory only
        tokens = len(self.configs) * self.configs[0].batch_size * width
        self.pool_steps = max(1, min(pool, POOL_TOKENS // max(tokens, 1)))
        self.target_dtype = self.samplers[0].target_dtype
        if any(s.target_dtype != self.target_dtype for s in self.samplers):
            raise LengthgenError("the members of a group must share an objective")
        # targets past [B, W]: members with different numbers of outputs are padded to the most
        shapes = {s.target_shape for s in self.samplers}
        self.target_shape = shapes.pop() if len(shapes) == 1 else \
            (max(s.target_shape[0] if s.target_shape else 1 for s in self.samplers),)
        self.seeds = torch.tensor([c.seed for c in self.configs], device=self.device)
        self.n_positions = torch.tensor(list(n_positions), device=self.device)
        self.half = torch.tensor([c.ape_offsets == "half" for c in self.configs],
                                 device=self.device)   # TrainConfig.ape_offsets, per member
        self.absolute = list(absolute)
        self.batch_size = self.configs[0].batch_size
        if any(c.batch_size != self.batch_size for c in self.configs):
            raise LengthgenError("the members of a group must share a batch size")
        self._pool, self._pool_start = None, None

    def _fill(self, start: int) -> None:
        """Batches of every member for steps start .. start + pool - 1."""
        from lengthgen.engine import rng
        k, s, b, w = self.pool_steps, len(self.configs), self.batch_size, self.width
        steps = torch.arange(start, start + k, device=self.device)
        inputs = torch.zeros(s, k, b, w, dtype=torch.long, device=self.device)
        targets = torch.zeros(*inputs.shape, *self.target_shape, dtype=self.target_dtype,
                              device=self.device)
        mask = torch.zeros_like(inputs, dtype=torch.bool)
        groups: dict = {}
        for i, (lo, hi) in enumerate(self.ranges):
            groups.setdefault((self.tasks[i].id, lo, hi), []).append(i)
        for members in groups.values():
            i = members[0]
            lo, hi = self.ranges[i]
            index = torch.tensor(members, device=self.device)
            seeds = self.seeds[index].repeat_interleave(k)
            batch = self.samplers[i].sample(seeds, steps.repeat(len(members)), b, lo, hi, w)
            inputs[index] = batch.inputs.view(len(members), k, b, w)
            own = batch.targets.view(len(members), k, b, w, *self.samplers[i].target_shape)
            if own.dim() < targets.dim():     # one value among members of several: column 0
                own = own[..., None]
            if own.shape[4:] == targets.shape[4:]:
                targets[index] = own
            else:                             # fewer outputs than the group's most: padded
                targets[index, ..., :own.shape[-1]] = own
            mask[index] = batch.mask.view(len(members), k, b, w)
        offsets = None
        if any(self.absolute):
            real = (inputs != 0).sum(dim=-1)                                       # [S, K, B]
            rows = torch.arange(b, device=self.device)
            table = self.n_positions[:, None, None]
            limit = torch.where(self.half[:, None, None], (table // 2).clamp(min=1),
                                table - real + 1)
            offsets = rng.below(limit, self.seeds[:, None, None], steps[None, :, None],
                                rows[None, None, :], STREAM_OFFSETS)
        self._pool = (inputs, targets, mask, offsets)
        self._pool_start = start

    def batch(self, step: int):
        if self._pool is None or not 0 <= step - self._pool_start < self.pool_steps:
            self._fill(step)
        j = step - self._pool_start
        inputs, targets, mask, offsets = self._pool
        return (inputs[:, j], targets[:, j], mask[:, j],
                None if offsets is None else offsets[:, j])

    def state(self, row: int) -> None:
        """None: a member's device batches depend on its seed and step only."""
        return None

    def restore(self, row: int, state: dict) -> None:
        """Nothing to restore (a state a host feed wrote is of no use here: see `state`)."""

    def retain(self, keep: list[int]) -> None:
        index = torch.tensor(keep, device=self.device)
        for name in ("tasks", "configs", "samplers", "ranges", "absolute"):
            setattr(self, name, [getattr(self, name)[i] for i in keep])
        self.seeds = self.seeds.index_select(0, index)
        self.n_positions = self.n_positions.index_select(0, index)
        self.half = self.half.index_select(0, index)
        if self._pool is not None:
            self._pool = tuple(None if t is None else t.index_select(0, index)
                               for t in self._pool)


def eval_sets(tasks, configs, eval_seeds, device, width: int | None = None):
    """Each member's fixed in-distribution set (cfg.eval_samples inputs, drawn as `evaluate`
    draws them for that seed), stacked: inputs, targets, mask [S, E, W]."""
    rows = []
    for task, cfg, seed in zip(tasks, configs, eval_seeds):
        lo, hi = cfg.length_range(task)
        rows.append(list(bin_batches(task, lo, hi, cfg.eval_samples, seed, EVAL_BATCH_SIZE)))
    widest = width or max(b.inputs.shape[1] for member in rows for _, b in member)
    sizes = {c.eval_samples for c in configs}
    if len(sizes) != 1:
        raise LengthgenError("the members of a group must share eval_samples")
    out = []
    for name in ("inputs", "targets", "loss_mask"):
        arrays = [np.concatenate([_pad(getattr(b, name), widest) for _, b in member])
                  for member in rows]
        stacked = stack_targets(arrays, widest) if name == "targets" else np.stack(arrays)
        out.append(torch.as_tensor(stacked).to(device))
    return out
