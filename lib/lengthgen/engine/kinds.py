"""The kinds of model a `Job` trains, each with its own typed config.

As minGPT gives the model and the trainer each their own config section, a Job holds its
model's section as the kind's options (`Job.model`) beside its TrainConfig (`Job.train`), and
the kind says how those options become the model's typed config (sized for the task where the
kind takes its sizes from it) and the module. A paper's protocol has one function from a
figure's params to a Job; that function is the one place the paper spells a model's size.

  decoder      DecoderConfig (lengthgen.models.decoder): options are its fields beyond the
               task's sizes (vocabulary, output classes, and a position table for the longest
               test bin unless n_positions is given). The only kind train_jobs stacks.
  limit-style  LimitStyleConfig (lengthgen.models.limit_style, Izzo et al.): options are its
               fields beyond the task's vocabulary and outputs.
  dyck         DyckModelConfig (lengthgen.models.dyck_variants, Richard's ablation): a variant
               and its size, all in the options (its table is 2N rows, whatever the task).
"""
from dataclasses import dataclass
from typing import Callable

import torch

from lengthgen.errors import unknown_name
from lengthgen.engine.single import decoder_config_for_task
from lengthgen.models.decoder import Decoder
from lengthgen.models.dyck_variants import DyckModelConfig, build_dyck_model
from lengthgen.models.limit_style import LimitStyleConfig, LimitStyleTransformer
from lengthgen.tasks.base import Task


@dataclass(frozen=True)
class ModelKind:
    config: Callable                 # (task or None, options) -> the kind's typed config
    build: Callable                  # typed config -> a fresh module (torch seeded before)
    sized_by_task: bool = True       # False: config() never reads the task (none is made)
    stacks: bool = False             # whether train_jobs trains it in stacked groups


def _limit_style_config(task: Task, options: dict) -> LimitStyleConfig:
    return LimitStyleConfig(vocab_size=len(task.vocab), n_outputs=task.n_classes, **options)


KINDS = {
    "decoder": ModelKind(lambda task, options: decoder_config_for_task(task, **options),
                         Decoder, stacks=True),
    "limit-style": ModelKind(_limit_style_config, LimitStyleTransformer),
    "dyck": ModelKind(lambda task, options: DyckModelConfig(**options), build_dyck_model,
                      sized_by_task=False),
}


def kind(name: str) -> ModelKind:
    if name not in KINDS:
        raise unknown_name("model kind", name, KINDS)
    return KINDS[name]


def model_config(name: str, get_task: Callable[[], Task], options: dict):
    """The typed config of a model of kind `name` with these options (get_task is called only
    where the kind takes sizes from the task)."""
    spec = kind(name)
    return spec.config(get_task() if spec.sized_by_task else None, options)


def build(name: str, config, seed: int) -> torch.nn.Module:
    """A fresh module of a kind's typed config, its weights drawn after torch.manual_seed(seed)
    (as every run alone has drawn them)."""
    torch.manual_seed(seed)
    return kind(name).build(config)
