"""The library's one resume format, and checkpoints of one training run: written atomically,
read with a clear error, and the random-generator states and settings a resume must match.

A member's state (`member_state`) is what any training needs to go on where it stopped: its
weights and AdamW moments by parameter name ("model", "adam": {"exp_avg", "exp_avg_sq",
"step"}), its step, evaluation history, elapsed seconds and the losses since its last
evaluation ("recent"). `train_jobs` hands one back for every job a slice leaves unfinished;
`train()`'s checkpoint file is one too, plus what a run alone keeps besides: its identity
("run": task, model and settings) and its stop flags. Where a member stands in its random
streams has one home, "feed" (`feed_state` writes it, `restore_feed` reads it): its host
generator and its task's place in its data for any member the host feeds, and torch's global
generators besides for a run that owns them (`train()` and a job trained alone, whose dropout
draws from them). Either group kind (`engine.groups`) writes and loads it."""
import errno
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

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


# the format's version, for caches of checkpoints to key by (a file of another format is then
# never found, rather than refused): 2 since train() writes member states (before: torch's
# optimizer state_dict and "recent_losses"); 3 since every generator state lives under "feed"
# (before: train() and a job alone kept theirs under "rng", numpy's twice; such a file is
# refused in one line, `OLDER_FORMAT`)
RESUME_FORMAT = 3
# a member's state: weights and AdamW state by name, and where its loop stood
STATE_KEYS = ("model", "adam", "step", "history", "elapsed", "recent")
# train()'s checkpoint: a member's state, its run, its generators and its stop flags
CHECKPOINT_KEYS = STATE_KEYS + ("run", "feed", "stopped")
OLDER_FORMAT = ("of an older format (resume format 2: its generators under 'rng'), which this "
                "library no longer resumes")


def member_state(group, row: int, member, loop_state: dict, feed=None, device=None) -> dict:
    """Row `row` of a group, in the resume format: the group's weights and moments, and the
    loop's step, elapsed time and recent losses with the member's history (`loop.run`'s state
    and MemberState); and, from a feed that has one, where the member stands in its random
    streams ("feed": `feed_state`, with torch's generators where `device` is given; a state
    without it resumes with its generator from the start, as states written before it did)."""
    state = {**group.member_state(row), "step": loop_state["step"], "history": member.history,
             "elapsed": loop_state["elapsed"],
             "recent": [float(r[row]) for r in loop_state["recent"]]}
    data = None if feed is None else feed_state(feed, row, device)
    return state if data is None else {**state, "feed": data}


def feed_state(feed, row: int, device=None) -> dict | None:
    """Where row `row` of a feed stands in its random streams: its host generator and its
    task's training state (`engine.feeds.HostFeed.state`), and, for a run that owns torch's
    global generators (`device` given: train() and a job trained alone, whose dropout draws from
    them), their states ("torch", and "cuda" on a CUDA device). None where the feed keeps none
    (the device feed: its batches are keyed by seed and step)."""
    data = feed.state(row)
    if data is None or device is None:
        return data
    data = {**data, "torch": torch.get_rng_state()}
    if torch.device(device).type == "cuda":
        data["cuda"] = torch.cuda.get_rng_state(torch.device(device))
    return data


def restore_feed(feed, row: int, state: dict, device=None) -> None:
    """Put row `row` of a feed, and torch's generators where the state holds them (`device`
    given), where a member state's "feed" says (`feed_state`)."""
    data = state.get("feed")
    if data is None:
        return
    if not isinstance(data, dict):
        raise LengthgenError("a member's feed state is not a host generator's and its task's "
                             "state")
    feed.restore(row, {k: data.get(k) for k in ("numpy", "task")})
    if device is not None and "torch" in data:
        torch.set_rng_state(data["torch"])
        if "cuda" in data and torch.device(device).type == "cuda":
            torch.cuda.set_rng_state(data["cuda"], torch.device(device))


def restore_member(group, row: int, state: dict, member) -> None:
    """Load a state into row `row` of a group and its member's history (the caller sets the
    loop's step, elapsed time and recent losses, which a group's members share)."""
    group.load_member(row, state)
    member.history = list(state["history"])


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def checkpoint_problem(state, steps: int) -> str | None:
    """What makes a loaded checkpoint unusable for a run of `steps` steps, or None: checked
    before anything is restored, so a damaged file is one line, not a traceback from deep in
    torch (the weights themselves are checked as they load, by `restoring`)."""
    if not isinstance(state, dict):
        return f"it holds a {type(state).__name__}, not the state of a training"
    if "rng" in state:
        return f"it is {OLDER_FORMAT}"
    missing = [k for k in CHECKPOINT_KEYS if k not in state]
    if missing:
        return f"it lacks {', '.join(missing)}"
    rng = state["feed"]
    if not (isinstance(rng, dict) and isinstance(rng.get("numpy"), dict)
            and isinstance(rng.get("torch"), torch.Tensor)
            and rng["torch"].dtype == torch.uint8):
        return "its random-generator states are not numpy's and torch's"
    step = state["step"]
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= steps:
        return f"its step is {step!r}, not a step of this run (0..{steps})"
    history = state["history"]
    if not (isinstance(history, list) and all(isinstance(h, dict) and _number(h.get("step"))
                                              for h in history)):
        return "its history is not a list of evaluations"
    if not _number(state["elapsed"]) or state["elapsed"] < 0:
        return f"its elapsed time is {state['elapsed']!r}"
    if not isinstance(state["stopped"], bool) \
            or not isinstance(state.get("abandoned", False), bool):
        return "its stopped or abandoned flag is not true or false"
    if not (isinstance(state["recent"], list) and all(_number(v) for v in state["recent"])):
        return "its recent losses are not numbers"
    if not isinstance(state["model"], dict):
        return "its weights are not tensors by name"
    adam = state["adam"]
    if not (isinstance(adam, dict) and _number(adam.get("step"))
            and all(isinstance(adam.get(k), dict) for k in ("exp_avg", "exp_avg_sq"))):
        return "its optimizer state is not AdamW's moments by name"
    return None


def state_problem(state, model) -> str | None:
    """What is wrong with a member state (the resume format: a slice's hand-off, the core of
    train()'s checkpoint) for its freshly built decoder `model`, or None: the weights and AdamW
    moments by name, each of the decoder's shape, and where its loop stood."""
    if not isinstance(state, dict):
        return f"holds a {type(state).__name__}, not a job's state"
    if "rng" in state:   # a job alone's state of resume format 2
        return f"is {OLDER_FORMAT}"
    missing = sorted(set(STATE_KEYS) - set(state))
    if missing:
        return f"lacks {', '.join(missing)}"
    step, elapsed = state["step"], state["elapsed"]
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        return f"its step is {step!r}, not a count"
    if not isinstance(elapsed, (int, float)) or not math.isfinite(elapsed) or elapsed < 0:
        return f"its elapsed time is {elapsed!r}"
    if not isinstance(state["history"], list) \
            or not all(isinstance(h, dict) for h in state["history"]):
        return "its history is not a list of evaluations"
    if not isinstance(state["recent"], list) \
            or not all(isinstance(r, (int, float)) for r in state["recent"]):
        return "its recent losses are not numbers"
    want = {n: t.shape for n, t in model.state_dict().items()}
    params = {n: p.shape for n, p in model.named_parameters()}
    tables = [("weights", state["model"], want)]
    adam = state["adam"]
    if not isinstance(adam, dict) or not isinstance(adam.get("step"), (int, float)):
        return "its optimizer state is not AdamW's"
    tables += [(f"AdamW {key}", adam.get(key), params) for key in ("exp_avg", "exp_avg_sq")]
    for what, table, shapes in tables:
        if not isinstance(table, dict) or set(table) != set(shapes):
            return f"its {what} are not those of the job's decoder"
        for name, shape in shapes.items():
            t = table[name]
            if not isinstance(t, torch.Tensor) or t.shape != shape or not t.is_floating_point():
                return f"its {what} {name} is not a tensor of shape {tuple(shape)}"
    return None


@contextmanager
def restoring(path):
    """Restore a checked checkpoint: weights of other shapes, an optimizer of other parameters
    or generator states torch refuses are one line naming the file."""
    try:
        yield
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as e:
        if isinstance(e, LengthgenError):
            raise
        # torch's first line may only say "Error(s) in loading state_dict": add the first detail
        text = " ".join(line.strip() for line in str(e).strip().splitlines()[:2])[:200]
        raise LengthgenError(f"{path}: a damaged checkpoint: its weights, optimizer state or "
                             f"random-generator states do not fit this run "
                             f"({e.__class__.__name__}: {text}); delete it or choose another "
                             f"file") from None


def _resumable_fields(cfg: TrainConfig) -> dict:
    """The settings a checkpoint must share with the run resuming it (not where it is saved)."""
    fields = cfg.to_dict()
    del fields["checkpoint_path"], fields["checkpoint_every"]
    # the rules before these fields existed: old checkpoints (saved without them) still resume
    for name, default in (("ape_offsets", "table"), ("precision", "auto")):
        if fields[name] == default:
            del fields[name]
    return fields
