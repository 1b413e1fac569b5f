"""What every task gives the trainer: padded batches of (inputs, targets, mask) as numpy arrays.

Sequence-to-sequence tasks predict the next token (targets are token ids, the mask covers the
answer and <eos>); languages predict the set of legal next symbols (targets are set-class ids,
the mask covers every real position). Either way a sequence is correct iff the argmax is right
at every masked position, so one evaluation serves both.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from lengthgen.errors import LengthgenError

PAD = "<pad>"
# The longest input drawn on request (the command line): counting a language's members and drawing
# inputs cost time and memory that grow with the length (a length-10,000 member of d4: ~35 ms).
MAX_SAMPLE_LENGTH = 10_000


@dataclass
class Batch:
    inputs: np.ndarray     # int64 [B, T] token ids fed to the model, PAD (id 0) after each sequence
    targets: np.ndarray    # int64 [B, T] the class to predict at each position (0 where masked
    #                        out); for regression tasks float [B, T] or [B, T, C] real values
    loss_mask: np.ndarray  # bool  [B, T] positions that count for loss and accuracy
    lengths: np.ndarray    # int64 [B]    the task's Len of each example (bins are defined on it)
    prompt_lengths: np.ndarray | None = None  # int64 [B] tokens before the answer (seq2seq only)

    def __post_init__(self):
        b, t = self.inputs.shape
        if self.targets.shape[:2] != (b, t) or self.loss_mask.shape != (b, t):
            raise ValueError("inputs, targets and loss_mask must have the same shape")


def bin_name(lo: int, hi: int) -> str:
    """The name of the length bin [lo, hi] in metrics and records ("51-100")."""
    return f"{lo}-{hi}"


class Task(ABC):
    """A source of fresh random examples at any length in a range.

    vocab[0] is always PAD. n_classes is the size of the output layer: len(vocab) for
    next-token tasks, the number of distinct legal-next sets for languages, the number of real
    values per target for regression tasks. `objective` names the loss and metric
    (lengthgen.objectives): "classification" unless a task says otherwise.
    """
    objective: str = "classification"
    id: str
    vocab: tuple[str, ...]
    n_classes: int
    train_range: tuple[int, int]
    test_bins: tuple[tuple[int, int], ...]

    @abstractmethod
    def sample(self, rng: np.random.Generator, batch_size: int, min_len: int,
               max_len: int) -> Batch:
        """batch_size fresh examples with Len uniform over the feasible lengths in [min_len, max_len]."""

    def training_batch(self, rng: np.random.Generator, batch_size: int, min_len: int,
                       max_len: int) -> Batch:
        """The next training batch. A task's training data are fresh samples (`sample`); a
        wrapper that trains on a finite set (`tasks.fixed.FixedTrainingSet`) serves that set
        here instead, while `sample` keeps drawing the evaluation sets from the task's law."""
        return self.sample(rng, batch_size, min_len, max_len)

    def training_state(self):
        """What the next training batches depend on besides the run's generator, for a resume
        to continue from (a finite set's place in its epoch: `tasks.fixed`); None for a task
        that draws fresh batches. The trainers keep it in a run's state (`engine.feeds`)."""
        return None

    def restore_training_state(self, state) -> None:
        """Go on from a `training_state()` (None: from the start, as a new run does)."""
        if state is not None:
            raise LengthgenError(f"{self.id}: draws fresh training batches and has no training "
                                 f"state to restore; this state is another task's")

    @abstractmethod
    def max_tokens(self, length: int) -> int:
        """Number of model input positions (T) an example of Len = length occupies."""

    def class_names(self) -> list[str]:
        """A readable name per output class (the token for next-token tasks)."""
        return list(self.vocab)

    def check_length_range(self, min_len: int, max_len: int, smallest: int = 1) -> None:
        if not (isinstance(min_len, (int, np.integer)) and isinstance(max_len, (int, np.integer))):
            raise LengthgenError(f"{self.id}: lengths must be integers, got {min_len!r}, {max_len!r}")
        if min_len < smallest or max_len < min_len:
            raise LengthgenError(f"{self.id}: impossible length range [{min_len}, {max_len}] "
                                 f"(lengths start at {smallest} and the range must not be empty)")
