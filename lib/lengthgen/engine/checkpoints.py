"""Checkpoints of one training run: written atomically, read with a clear error, and the
random-generator states and settings a resume must match."""
import errno
import os
import tempfile
from pathlib import Path

import numpy as np
import torch

from lengthgen.engine.settings import TrainConfig
from lengthgen.errors import LengthgenError
from lengthgen.results import shared_mode

def save_checkpoint(path, state: dict) -> None:
    """torch.save to a temp file in the same folder, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pt")
    try:
        shared_mode(fd)   # a state is a results file: readable by the group, not 0600
    finally:
        os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except RuntimeError as e:   # torch's writer reports a full disk as a RuntimeError
        Path(tmp).unlink(missing_ok=True)
        first = str(e).strip().splitlines()[-1][:160] if str(e).strip() else "no reason given"
        raise OSError(errno.EIO, f"torch could not write the file: {first}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path) -> dict:
    import warnings
    try:
        with warnings.catch_warnings():   # torch warns at length about foreign files: one line
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a corrupt or foreign file: say which, never a pickle traceback
        text = str(e).splitlines()[0] if str(e) else ""
        raise LengthgenError(f"{path}: cannot load checkpoint: not one this library wrote, or "
                             f"a damaged one ({e.__class__.__name__}: {text[:120]}); delete it "
                             f"or choose another file") from e


def _rng_state(rng: np.random.Generator, device) -> dict:
    state = {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}
    if torch.device(device).type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(torch.device(device))
    return state


def _restore_rng(rng: np.random.Generator, state: dict, device) -> None:
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.device(device).type == "cuda":
        torch.cuda.set_rng_state(state["cuda"], torch.device(device))


def _resumable_fields(cfg: TrainConfig) -> dict:
    """The settings a checkpoint must share with the run resuming it (not where it is saved)."""
    fields = cfg.to_dict()
    del fields["checkpoint_path"], fields["checkpoint_every"]
    if fields["ape_offsets"] == "table":   # the rule before the field existed: old checkpoints
        del fields["ape_offsets"]          # (saved without it) still resume
    return fields
