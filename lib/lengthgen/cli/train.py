"""`python -m lengthgen train ...` trains one decoder on one task and writes one record;
`python -m lengthgen list` shows the task, language and figure ids."""
import time
from dataclasses import replace
from pathlib import Path

from lengthgen.cli.args import (DefaultsFormatter, check_length, count, device, positive,
                                positive_finite, seed)
from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.models.positions import DECODER_ENCODINGS, values
from lengthgen.results import (check_writable, record_path, results_dir, run_finished,
                               run_started, write_record)
from lengthgen.tasks.base import MAX_SAMPLE_LENGTH

LISTS = ("tasks", "figures")


MAX_SAMPLES_PER_BIN = 100_000   # --samples: test examples per bin (each bin is read in batches)
RECORD_BYTES = 16_384            # a train record without its history (measured: 3 to 9 KB)
HISTORY_POINT_BYTES = 256        # one evaluation point of the history in the record


def add_parser(sub):
    if "train" in sub.choices:  # this module serves two commands; build them once
        return
    p = sub.add_parser("train", help="train a decoder on a task, evaluate on its test bins",
                       formatter_class=DefaultsFormatter,
                       description="Train one decoder on one task with fresh batches, evaluate it "
                                   "on the task's test bins, and write one record (under --out, "
                                   "never into results/). The memory of the run is estimated "
                                   "from these options first and refused above the limit "
                                   "($LENGTHGEN_MEMORY_LIMIT).")
    p.add_argument("--task", required=True, help="task or language id (see `list tasks`)")
    p.add_argument("--pe", choices=values(DECODER_ENCODINGS), default="ape",
                   help="positional encoding: learned absolute positions or none")
    p.add_argument("--layers", type=positive, default=1, help="decoder layers")
    p.add_argument("--heads", type=positive, default=1,
                   help="attention heads per layer (a divisor of the width)")
    p.add_argument("--dim", type=positive, default=64, help="model width d_model")
    p.add_argument("--mlp-ratio", type=positive_finite, default=4.0,
                   help="MLP width as a multiple of --dim")
    p.add_argument("--log-length-scaling", action="store_true",
                   help="multiply attention logits by log(position + 1)")
    p.add_argument("--steps", type=positive, default=1000,
                   help="most optimizer steps (training stops early at 100%% in-distribution "
                        "accuracy)")
    p.add_argument("--lr", type=positive_finite, default=1e-3, help="peak learning rate (> 0)")
    p.add_argument("--batch-size", type=positive, default=64, help="sequences per step")
    p.add_argument("--warmup", type=count, default=0, help="linear warmup steps")
    p.add_argument("--schedule", default="constant",
                   help="after warmup: constant, linear (to 0) or cosine (to 0)")
    p.add_argument("--min-len", type=count, default=None,
                   help="shortest training Len (default: the task's training range)")
    p.add_argument("--max-len", type=count, default=None,
                   help=f"longest training Len, at most {MAX_SAMPLE_LENGTH} (default: the "
                        f"task's training range)")
    p.add_argument("--eval-every", type=positive, default=100,
                   help="steps between in-distribution evaluations (early stop is checked there)")
    p.add_argument("--samples", type=positive, default=500,
                   help=f"test examples per bin, at most {MAX_SAMPLES_PER_BIN:,}")
    p.add_argument("--generation", action="store_true",
                   help="also score free-running greedy generation (seq2seq tasks)")
    p.add_argument("--seed", type=seed, default=0,
                   help="seed of the initialization and the data stream")
    p.add_argument("--device", type=device, default=None, help="cuda, mps or cpu (default: best available)")
    p.add_argument("--out", default="runs", help="folder for the record")
    p.add_argument("--checkpoint", default=None,
                   help="checkpoint file: saved as it trains, resumed from if it exists "
                        "(default: none)")
    p.add_argument("--checkpoint-every", type=positive, default=500,
                   help="steps between checkpoints")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=_train)
    lst = sub.add_parser("list", help="list task, language and figure ids")
    lst.add_argument("what", nargs="?", default=None, help="tasks or figures (default both)")
    lst.set_defaults(func=_list)


def _protected_folders() -> list[Path]:
    """Where `train` must not write: the results folder in use ($LENGTHGEN_RESULTS) and the
    committed results/ of the repository, whichever the environment points at."""
    from lengthgen.results import REPO_ROOT
    return list(dict.fromkeys(p.resolve() for p in (results_dir(), REPO_ROOT / "results")))


def _tracked_results(path: Path) -> Path | None:
    """The folder named results/ at or above `path` in which a git work tree tracks files (any
    checkout of this repository, or of another), else None."""
    import subprocess
    for folder in (path, *path.parents):
        if folder.name != "results":
            continue
        try:
            if not folder.parent.is_dir():
                continue
            listed = subprocess.run(["git", "-C", str(folder.parent), "ls-files", "-z", "--",
                                     "results"], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):   # no git here: nothing it tracks
            continue
        if listed.returncode == 0 and listed.stdout.strip(b"\0"):
            return folder
    return None


def out_dir(out: str, scale: str, record_id: str = "train") -> Path:
    """The record folder, checked before training (not after an hour of it); results folders
    belong to the figure runner alone: the one in use, the committed one, and any results/
    whose files a git work tree tracks (another checkout, a worktree). record_id: the
    command's records (`train`, `try`)."""
    path = Path(out).resolve()
    for protected in _protected_folders():
        if path == protected or protected in path.parents:
            raise LengthgenError(f"--out {out!r} is inside {protected}: results/ holds only "
                                 f"records written by `figure run`; choose another folder "
                                 f"(default runs/)")
    tracked = _tracked_results(path)
    if tracked is not None:
        raise LengthgenError(f"--out {out!r} is inside {tracked}, whose records git tracks: "
                             f"results/ holds only records written by `figure run`; choose "
                             f"another folder (default runs/)")
    check_writable(record_path(record_id, scale, "run", path).parent,
                   f"the record of --out {out!r}")
    return path


def _check_checkpoint(checkpoint: str | None) -> None:
    if checkpoint is None:
        return
    path = Path(checkpoint)
    if path.is_dir():
        raise LengthgenError(f"--checkpoint {checkpoint!r} is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise LengthgenError(f"--checkpoint {checkpoint!r} is not a regular file (a device or "
                             f"a pipe); give a file name")
    check_writable(path.parent.resolve(), f"--checkpoint {checkpoint!r}")


def estimate(job, samples: int) -> dict:
    """What a run of a decoder Job needs, from the job alone (nothing allocated; `samples`
    test examples per bin): the parameter count (DecoderConfig's own count, with a position
    table for the longest input it may see), memory in bytes (float32 weights, gradients and
    two Adam moments, plus the activations kept for the backward pass of the largest batch:
    per layer and token about 12 + 3 x mlp_ratio values of width d and 3 attention rows per
    head), and the sizes of the files it writes. Measured against bench_train.py: 0.75 GB
    estimated for the 4-layer, d=256 model at batch 64 and length 100, 0.69 GB peak."""
    task, train = job.get_task(), job.train
    lo = task.train_range[0] if train.min_len is None else train.min_len
    hi = task.train_range[1] if train.max_len is None else train.max_len
    longest = max([task.max_tokens(b) for _, b in task.test_bins] + [task.max_tokens(hi)])
    # the job's decoder with that table (DecoderConfig refuses over 1e9 weights)
    cfg = replace(job, model={**job.model, "n_positions": longest}).model_config()
    params = cfg.approximate_parameters()

    def activations(batch: int, tokens: int, backward: bool) -> float:
        per_token = cfg.n_layers * (cfg.d_model * (12 + 3 * cfg.mlp_ratio)
                                    + 3 * cfg.n_heads * tokens)
        per_token += 3 * task.n_classes
        return 4.0 * batch * tokens * per_token * (1 if backward else 0.5)

    train_tokens = task.max_tokens(max(lo, hi))
    eval_batch = min(256, samples)
    memory = 16.0 * params + max(activations(train.batch_size, train_tokens, True),
                                 activations(eval_batch, longest, False),
                                 activations(min(512, train.batch_size), train_tokens, False))
    history = train.steps // train.eval_every + 2
    return {"parameters": params, "memory": memory,
            "record": RECORD_BYTES + HISTORY_POINT_BYTES * history,
            "checkpoint": 12.0 * params + 65_536}


def job(task, args):
    """The run the flags describe, as the engine's typed Job: the decoder's settings by
    DecoderConfig's names (the one place the CLI spells a model's size) and the training
    settings by TrainConfig's (and the two whose flags are shorter). The estimate, the
    training and the record's name and params all read it."""
    from lengthgen.engine.jobs import Job
    from lengthgen.train import TrainConfig
    hidden = args.mlp_ratio * args.dim
    if not hidden < 1e12:
        raise LengthgenError(f"--mlp-ratio {args.mlp_ratio:g} x --dim {args.dim} gives an MLP "
                             f"of {hidden:.3g} units; use a smaller --mlp-ratio")
    model = dict(pe=args.pe, n_layers=args.layers, n_heads=args.heads, d_model=args.dim,
                 mlp_ratio=args.mlp_ratio, log_length_scaling=args.log_length_scaling)
    train = TrainConfig.from_config(vars(args), warmup_steps=args.warmup,
                                    checkpoint_path=args.checkpoint)
    name = (f"{task.id}-{args.pe}-L{args.layers}H{args.heads}D{args.dim}-lr{args.lr:g}"
            f"-s{args.seed}")
    return Job(task, model, train, name=name)


def _check_file_size(out: Path, sizes: dict, checkpoint: str | None) -> None:
    """A file-size limit (ulimit -f) below what the run will write: refused before training,
    not after it."""
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY:
        return
    from lengthgen.cli.args import gib
    for what, size in (("the record", sizes["record"]),
                       ("the checkpoint", sizes["checkpoint"] if checkpoint else 0)):
        if size > soft:
            raise LengthgenError(f"{what} of this run needs about {gib(size)} but files are "
                                 f"limited to {gib(soft)} here (ulimit -f); raise the limit or "
                                 f"train a smaller model")


def _train(args):
    from lengthgen.cli.args import check_memory
    from lengthgen.tasks import get_task
    from lengthgen.train import train_and_evaluate

    task = get_task(args.task)
    for option, value in (("--min-len", args.min_len), ("--max-len", args.max_len)):
        if value is not None:
            check_length(value, MAX_SAMPLE_LENGTH, option)
    if args.samples > MAX_SAMPLES_PER_BIN:
        raise LengthgenError(f"--samples must be at most {MAX_SAMPLES_PER_BIN:,} test examples "
                             f"per bin, got {args.samples:,}")
    scale, device = get_scale(), get_device(args.device)
    out = out_dir(args.out, scale)
    _check_checkpoint(args.checkpoint)
    run = job(task, args)
    run.train.length_range(task)   # a bad --min-len/--max-len for this task, said now
    need = estimate(run, args.samples)
    check_memory(need["memory"], f"this run ({need['parameters']:,.0f} parameters, batch "
                                 f"{args.batch_size:,})",
                 "use a smaller --dim, --layers, --mlp-ratio or --batch-size")
    _check_file_size(out, need, args.checkpoint)
    started = run_started(str(device))  # the commit of the code that runs, read now
    start = time.perf_counter()
    metrics = train_and_evaluate(task, run.train, device, samples_per_bin=args.samples,
                                 generation=args.generation, progress=args.progress, **run.model)
    name = run.name
    params = {"name": name, "task": task.id, "seed": args.seed, "samples_per_bin": args.samples,
              "generation": args.generation, **run.model}
    record = {"figure_id": "train", "run_name": name, "task": task.id,
              "config": run.train.to_dict(), "params": params, "scale": scale,
              "seed": args.seed, "metrics": metrics,
              **run_finished(started, time.perf_counter() - start)}
    stop = "stopped early" if metrics["stopped_early"] else "ran all steps"
    print(f"{task.id} ({args.pe}, {metrics['n_params']} parameters): {metrics['steps']} steps, "
          f"{stop}, {metrics['train_wall_time_s']:.1f} s on {device}")
    for bin_name, score in metrics["bins"].items():
        line = f"  Len {bin_name:>9s}: accuracy {score['accuracy']:.3f}  loss {score['loss']:.4f}"
        if args.generation:
            line += f"  generation {metrics['generation'][bin_name]['accuracy']:.3f}"
        print(line, flush=True)
    try:
        path = write_record(record, out)
    except OSError as e:   # the results are printed above: say that only the file is missing
        raise LengthgenError(f"the record could not be written into {out} "
                             f"({e.strerror or e.__class__.__name__}); the results printed "
                             f"above are all there is") from None
    print(f"record: {path}")


def _list(args):
    if args.what is not None and args.what not in LISTS:
        raise unknown_name("list", args.what, LISTS)
    if args.what in (None, "tasks"):
        _list_tasks()
    if args.what in (None, "figures"):
        _list_figures()


def _list_tasks():
    from lengthgen.tasks import task_ids
    try:
        from lengthgen.tasks.metadata import TABLE
    except ImportError:
        TABLE = {}
    print("Tasks and languages (train --task ID):")
    for task_id in task_ids():
        row = TABLE.get(task_id)
        if row is None:
            print(f"  {task_id}")
        else:
            print(f"  {task_id:28s} {row.kind:11s} {row.name:26s} "
                  f"C-RASP[]: {row.crasp:10s} C-RASP[periodic,local]: {row.crasp_periodic_local}")


def _list_figures():
    from lengthgen.runs.registry import figure_listing
    print("Figures (figure run ID):")
    for line in figure_listing():
        print(f"  {line}")
