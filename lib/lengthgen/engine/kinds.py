"""The kinds of model a `Job` trains, each with its own typed config.

As minGPT gives the model and the trainer each their own config section, a Job holds its
model's section as the kind's options (`Job.model`) beside its TrainConfig (`Job.train`), and
the kind says how those options become the model's typed config (sized for the task where the
kind takes its sizes from it) and the module. A paper's protocol has one function from a
figure's params to a Job; that function is the one place the paper spells a model's size.

  decoder      DecoderConfig (lengthgen.models.decoder): options are its fields beyond the
               task's sizes (vocabulary, output classes, and a position table for the longest
               test bin unless n_positions is given), or all of them (a model sized by its
               own vocabulary and window, such as Richard's Boolean decoder, makes no task to
               be sized). train_jobs stacks it (lengthgen.engine.stacked).
  limit-style  LimitStyleConfig (lengthgen.models.limit_style, Izzo et al.): options are its
               fields beyond the task's vocabulary and outputs. train_jobs stacks it too
               (lengthgen.engine.stacked_limit).
  dyck         DyckModelConfig (lengthgen.models.dyck_variants, Richard's ablation): a variant
               and its size, all in the options (its table is 2N rows, whatever the task).
               train_jobs trains each alone, as train() does.
  token-mlp    TokenMLPConfig (lengthgen.models.token_mlp, Huang et al.'s baseline): options
               are its width and hidden units; the task gives its vocabulary and classes.
               train_jobs refuses it (train() trains it).

A kind that stacks names its `shape_key`: models of equal keys (of one kind) can step in one
stacked group, whatever else their configs hold (`engine.jobs.group_key`).
"""
from dataclasses import dataclass
from typing import Callable

import torch

from lengthgen.errors import unknown_name
from lengthgen.engine import stacked, stacked_limit
from lengthgen.engine.single import decoder_config_for_task
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.models.dyck_variants import DyckModelConfig, build_dyck_model
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.models.token_mlp import TokenMLP, TokenMLPConfig
from lengthgen.tasks.base import Task


@dataclass(frozen=True)
class ModelKind:
    config: Callable                 # (get_task, options) -> the kind's typed config; it
    #                                  calls get_task() only where it takes sizes from the task
    build: Callable                  # typed config -> a fresh module (torch seeded before)
    # typed config -> a key; models of equal keys train in one stacked group (None: the kind
    # does not stack)
    shape_key: Callable | None = None
    alone: bool = False              # whether train_jobs trains it in a group of its own, as
    #                                  train() does (lengthgen.engine.jobs, "Alone")

    @property
    def stacks(self) -> bool:
        """Whether train_jobs trains it in stacked groups."""
        return self.shape_key is not None


# the DecoderConfig fields that a task would otherwise size
_TASK_SIZES = {"vocab_size", "n_classes", "n_positions"}


def _decoder_config(get_task: Callable[[], Task], options: dict) -> DecoderConfig:
    if _TASK_SIZES <= options.keys():
        return DecoderConfig(**options)
    return decoder_config_for_task(get_task(), **options)


def _token_mlp_config(get_task: Callable[[], Task], options: dict) -> TokenMLPConfig:
    task = get_task()
    return TokenMLPConfig(len(task.vocab), task.n_classes, **options)


def _limit_style_config(get_task: Callable[[], Task], options: dict) -> LimitStyleConfig:
    task = get_task()
    return LimitStyleConfig(vocab_size=len(task.vocab), n_outputs=task.n_classes, **options)


KINDS = {
    "decoder": ModelKind(_decoder_config, Decoder, shape_key=stacked.shape_key),
    "limit-style": ModelKind(_limit_style_config, LimitStyleTransformer,
                             shape_key=stacked_limit.shape_key),
    "dyck": ModelKind(lambda get_task, options: DyckModelConfig(**options), build_dyck_model,
                      alone=True),
    "token-mlp": ModelKind(_token_mlp_config, TokenMLP),
}


def kind(name: str) -> ModelKind:
    if name not in KINDS:
        raise unknown_name("model kind", name, KINDS)
    return KINDS[name]


def model_config(name: str, get_task: Callable[[], Task], options: dict):
    """The typed config of a model of kind `name` with these options (get_task is called only
    where the kind takes sizes from the task)."""
    return kind(name).config(get_task, options)


def build(name: str, config, seed: int) -> torch.nn.Module:
    """A fresh module of a kind's typed config, its weights drawn after torch.manual_seed(seed)
    (as every run alone has drawn them)."""
    torch.manual_seed(seed)
    return kind(name).build(config)
