"""A task trained on a finite training set, by epochs: the data regime of Huang et al.'s
formal-language code.

The paper's text (App. E.3) and the book train on fresh batches drawn at every step. The
authors' released language code (`formal_lang_suite/train_with_ce.py`) instead draws a dataset
of 10,000 strings once and trains on it by epochs. `FixedTrainingSet` wraps any task so that
its *training* batches (`Task.training_batch`, what the trainer's host feed asks for) come from
such a set: `size` strings drawn once from the task's own law with a seed of their own, served
in a new random order each epoch (the order drawn from the training run's generator), the
batch size kept; a batch that reaches the end of an epoch is completed from the next one.
Where it stands (the rest of the epoch's order, the epochs started) is its `training_state`,
which a run's checkpoint and a slice's hand-off keep with the run's generator, so that a
resumed run serves the batches an uninterrupted one would (`engine.feeds.HostFeed`). One
object serves one run.
Everything else is the wrapped task's: `sample` still draws fresh strings from its law, so the
in-distribution evaluation sets and every test bin are strings the model may never have seen,
as in the authors' code. Only the data regime changes, nothing else (the APE vs NoPE chapter's
third lead on its fit-then-fail cells, `huang-ape-data-lead`).
"""
import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks.base import Batch, Task

AUTHORS_SIZE = 10_000   # the language code's dataset size (the chapter's protocol table)


class FixedTrainingSet(Task):
    """`task` trained on `size` strings of Len in [lo, hi] drawn once (seed `data_seed`)."""

    def __init__(self, task: Task, size: int = AUTHORS_SIZE, data_seed: int = 0,
                 length_range: tuple[int, int] | None = None):
        if size < 1:
            raise LengthgenError(f"a fixed training set needs at least 1 string, got {size}")
        self.task = task
        self.size, self.data_seed = int(size), int(data_seed)
        self.lo, self.hi = length_range or task.train_range
        task.check_length_range(self.lo, self.hi)
        self.id = f"{task.id}-fixed{self.size}"
        for name in ("vocab", "n_classes", "train_range", "test_bins", "objective"):
            setattr(self, name, getattr(task, name))
        # drawn in chunks with a generator of their own: the set depends on (task, size, seed)
        # only, not on how the training run draws its offsets or epoch orders
        rng = np.random.default_rng([self.data_seed, 0xF1ED])
        parts = [task.sample(rng, min(1024, self.size - start), self.lo, self.hi)
                 for start in range(0, self.size, 1024)]
        self.pool = _concatenate(parts)
        self._order = np.zeros(0, np.int64)   # the rest of the current epoch
        self.epochs = 0                       # epochs started so far

    def sample(self, rng, batch_size, min_len, max_len) -> Batch:
        """Fresh strings from the wrapped task's law (evaluation sets)."""
        return self.task.sample(rng, batch_size, min_len, max_len)

    def training_batch(self, rng, batch_size, min_len, max_len) -> Batch:
        """The next `batch_size` strings of the set in this epoch's order."""
        if (min_len, max_len) != (self.lo, self.hi):
            raise LengthgenError(f"{self.id}: the fixed set holds Len {self.lo}-{self.hi}, "
                                 f"not the requested {min_len}-{max_len}")
        while len(self._order) < batch_size:
            self._order = np.concatenate([self._order, rng.permutation(self.size)])
            self.epochs += 1
        take, self._order = self._order[:batch_size], self._order[batch_size:]
        return _select(self.pool, take, self.task)

    def training_state(self) -> dict:
        """The rest of this epoch's order and the epochs started."""
        return {"order": [int(i) for i in self._order], "epochs": self.epochs}

    def restore_training_state(self, state) -> None:
        if state is None:   # a new run: the first epoch
            self._order, self.epochs = np.zeros(0, np.int64), 0
            return
        order = np.asarray(state.get("order") if isinstance(state, dict) else None)
        whole = order.ndim == 1 and (order.dtype.kind in "iu" or len(order) == 0)  # [] is float
        if not whole or not ((0 <= order) & (order < self.size)).all() \
                or not isinstance(state.get("epochs"), int):
            raise LengthgenError(f"{self.id}: a training state that is not this set's (an "
                                 f"order over {self.size} strings and an epoch count)")
        self._order, self.epochs = order.astype(np.int64), state["epochs"]

    def max_tokens(self, length: int) -> int:
        return self.task.max_tokens(length)

    def class_names(self) -> list[str]:
        return self.task.class_names()


def epochs_started(batches: int, batch_size: int, size: int) -> int:
    """The epochs a run of `batches` batches has started on a set of `size` strings (its
    `epochs` at the end): an epoch starts when the one before runs out."""
    return -(-batches * batch_size // size)


def _concatenate(batches: list[Batch]) -> Batch:
    """One batch of all rows, padded to the widest."""
    width = max(b.inputs.shape[1] for b in batches)

    def pad(a):
        return np.pad(a, [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2))
    prompts = [b.prompt_lengths for b in batches]
    return Batch(inputs=np.concatenate([pad(b.inputs) for b in batches]),
                 targets=np.concatenate([pad(b.targets) for b in batches]),
                 loss_mask=np.concatenate([pad(b.loss_mask) for b in batches]),
                 lengths=np.concatenate([b.lengths for b in batches]),
                 prompt_lengths=None if any(p is None for p in prompts)
                 else np.concatenate(prompts))


def _select(pool: Batch, rows: np.ndarray, task: Task) -> Batch:
    """The rows of the pool, trimmed to the widest of them (as a fresh batch would be)."""
    width = max(task.max_tokens(int(n)) for n in pool.lengths[rows])
    return Batch(inputs=pool.inputs[rows, :width], targets=pool.targets[rows, :width],
                 loss_mask=pool.loss_mask[rows, :width], lengths=pool.lengths[rows],
                 prompt_lengths=None if pool.prompt_lengths is None
                 else pool.prompt_lengths[rows])
