"""`python -m lengthgen train ...` trains one decoder on one task and writes one record;
`python -m lengthgen list` shows the task, language and figure ids."""
import time
from pathlib import Path

from lengthgen.cli.args import check_length, count, positive, positive_finite, seed
from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError, unknown_name
from lengthgen.results import (check_writable, record_path, results_dir, run_finished,
                               run_started, write_record)
from lengthgen.tasks.base import MAX_SAMPLE_LENGTH

LISTS = ("tasks", "figures")


def add_parser(sub):
    if "train" in sub.choices:  # this module serves two commands; build them once
        return
    p = sub.add_parser("train", help="train a decoder on a task, evaluate on its test bins")
    p.add_argument("--task", required=True, help="task or language id (see `list`)")
    p.add_argument("--pe", choices=("ape", "nope"), default="ape", help="positional scheme")
    p.add_argument("--layers", type=positive, default=1)
    p.add_argument("--heads", type=positive, default=1)
    p.add_argument("--dim", type=positive, default=64, help="model width d_model")
    p.add_argument("--mlp-ratio", type=positive_finite, default=4.0)
    p.add_argument("--log-length-scaling", action="store_true")
    p.add_argument("--steps", type=positive, default=1000, help="most optimizer steps")
    p.add_argument("--lr", type=positive_finite, default=1e-3)
    p.add_argument("--batch-size", type=positive, default=64)
    p.add_argument("--warmup", type=count, default=0, help="warmup steps")
    p.add_argument("--schedule", default="constant", help="constant, linear or cosine")
    p.add_argument("--min-len", type=count, default=None, help="shortest training Len "
                   "(default: the task's training range)")
    p.add_argument("--max-len", type=count, default=None,
                   help=f"longest training Len (at most {MAX_SAMPLE_LENGTH})")
    p.add_argument("--eval-every", type=positive, default=100)
    p.add_argument("--samples", type=positive, default=500, help="test examples per bin")
    p.add_argument("--generation", action="store_true",
                   help="also score free-running greedy generation (seq2seq tasks)")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: best available)")
    p.add_argument("--out", default="runs", help="folder for the record (default runs/)")
    p.add_argument("--checkpoint", default=None,
                   help="checkpoint file: saved as it trains, resumed from if it exists")
    p.add_argument("--checkpoint-every", type=positive, default=500,
                   help="steps between checkpoints (default 500)")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=_train)
    lst = sub.add_parser("list", help="list task, language and figure ids")
    lst.add_argument("what", nargs="?", default=None, help="tasks or figures (default both)")
    lst.set_defaults(func=_list)


def _out_dir(out: str, scale: str) -> Path:
    """The record folder, created and checked before training (not after an hour of it);
    results/ belongs to the figure runner alone."""
    path = Path(out).resolve()
    protected = results_dir().resolve()
    if path == protected or protected in path.parents:
        raise LengthgenError(f"--out {out!r} is inside {protected}: results/ holds only records "
                             f"written by `figure run`; choose another folder (default runs/)")
    check_writable(record_path("train", scale, "run", path).parent, f"the record of --out {out!r}")
    return path


def _check_checkpoint(checkpoint: str | None) -> None:
    if checkpoint is None:
        return
    path = Path(checkpoint)
    if path.is_dir():
        raise LengthgenError(f"--checkpoint {checkpoint!r} is a folder; give a file name")
    check_writable(path.parent.resolve(), f"--checkpoint {checkpoint!r}")


def _train(args):
    from lengthgen.tasks import get_task
    from lengthgen.train import TrainConfig, train_and_evaluate

    task = get_task(args.task)
    for option, value in (("--min-len", args.min_len), ("--max-len", args.max_len)):
        if value is not None:
            check_length(value, MAX_SAMPLE_LENGTH, option)
    scale, device = get_scale(), get_device(args.device)
    out = _out_dir(args.out, scale)
    _check_checkpoint(args.checkpoint)
    train_cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                            warmup_steps=args.warmup, schedule=args.schedule,
                            min_len=args.min_len, max_len=args.max_len,
                            eval_every=args.eval_every, seed=args.seed,
                            checkpoint_path=args.checkpoint,
                            checkpoint_every=args.checkpoint_every)
    model = dict(pe=args.pe, n_layers=args.layers, n_heads=args.heads, d_model=args.dim,
                 mlp_ratio=args.mlp_ratio, log_length_scaling=args.log_length_scaling)
    started = run_started(str(device))  # the commit of the code that runs, read now
    start = time.perf_counter()
    metrics = train_and_evaluate(task, train_cfg, device, samples_per_bin=args.samples,
                                 generation=args.generation, progress=args.progress, **model)
    name = (f"{task.id}-{args.pe}-L{args.layers}H{args.heads}D{args.dim}-lr{args.lr:g}"
            f"-s{args.seed}")
    params = {"name": name, "task": task.id, "seed": args.seed, "samples_per_bin": args.samples,
              "generation": args.generation, **model}
    record = {"figure_id": "train", "run_name": name, "task": task.id,
              "config": train_cfg.to_dict(), "params": params, "scale": scale,
              "seed": args.seed, "metrics": metrics,
              **run_finished(started, time.perf_counter() - start)}
    path = write_record(record, out)
    stop = "stopped early" if metrics["stopped_early"] else "ran all steps"
    print(f"{task.id} ({args.pe}, {metrics['n_params']} parameters): {metrics['steps']} steps, "
          f"{stop}, {metrics['train_wall_time_s']:.1f} s on {device}")
    for bin_name, score in metrics["bins"].items():
        line = f"  Len {bin_name:>9s}: accuracy {score['accuracy']:.3f}  loss {score['loss']:.4f}"
        if args.generation:
            line += f"  generation {metrics['generation'][bin_name]['accuracy']:.3f}"
        print(line)
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
    from lengthgen.experiments import EXPERIMENTS, experiment
    print("Figures (figure run ID):")
    for figure_id in sorted(EXPERIMENTS):
        print(f"  {figure_id:32s} {experiment(figure_id).TITLE}")
