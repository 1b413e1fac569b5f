"""`python -m lengthgen budget ...`: the APE vs NoPE sweep at the paper's budget, in slices.

    budget plan   [--scale gpu] [--root DIR]      what the records call for next
    budget slice  [--scale gpu] [--root DIR] --minutes M [--workers N] [--max-group G]

A slice trains planned jobs (lengthgen.experiments.huang.sweep.budget) with the engine until
its time is up, writing each finished job's record at once; run it again (a later slice, a
later session) and it plans what is left from the records. With --workers N it starts N
processes that share the records folder and take different decoder shapes (a GPU runs several
small groups side by side better than one).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

from lengthgen.cli.args import device as device_name, positive
from lengthgen.errors import LengthgenError

MAX_WORKERS = 8
MAX_MINUTES = 600.0


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LengthgenError(f"--minutes must be a number, got {text!r}") from None
    if not 0 < value <= MAX_MINUTES:
        raise LengthgenError(f"--minutes must be in (0, {MAX_MINUTES:g}], got {text}")
    return value


def add_parser(sub):
    p = sub.add_parser("budget", help="the APE vs NoPE sweep at the paper's budget, in slices")
    bsub = p.add_subparsers(dest="budget_command", required=True)
    for name, helptext in (("plan", "list the jobs the records call for next"),
                           ("slice", "train planned jobs until the time is up")):
        q = bsub.add_parser(name, help=helptext)
        q.add_argument("--scale", choices=("test", "gpu"), default="gpu")
        q.add_argument("--root", default=None,
                       help="results folder (default: the library's results folder)")
        if name == "slice":
            q.add_argument("--minutes", required=True)
            q.add_argument("--workers", type=positive, default=1)
            q.add_argument("--worker", type=int, default=None, help=argparse_suppress())
            q.add_argument("--max-group", type=positive, default=256)
            q.add_argument("--device", type=device_name, default=None)
            q.add_argument("--graphs", action="store_true",
                           help="replay each training step as a CUDA graph (GPU only)")
            q.add_argument("--states-in", default=None,
                           help="folder of the states an earlier slice left (jobs resume)")
            q.add_argument("--states-out", default=None,
                           help="folder for the states of jobs this slice cannot finish "
                                f"({budget_state_mib()} MiB in all, shared by the workers)")
        q.set_defaults(func=_plan if name == "plan" else _slice)


def budget_state_mib() -> int:
    from lengthgen.experiments.huang.sweep.budget import STATE_BYTES
    return STATE_BYTES // 2 ** 20


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


def _root(args) -> Path:
    from lengthgen.results import results_dir
    return Path(args.root) if args.root else results_dir()


def _states(args) -> dict:
    """The state hand-off of run_slice: each worker keeps its share of the budget."""
    from lengthgen.experiments.huang.sweep.budget import STATE_BYTES
    return {"states_in": Path(args.states_in) if args.states_in else None,
            "states_out": Path(args.states_out) if args.states_out else None,
            "state_bytes": STATE_BYTES // args.workers}


def _plan(args):
    from lengthgen.experiments.huang.sweep import budget
    config = budget.budget_configs()[args.scale]
    folder = _root(args) / budget.RECORDS_ID / args.scale
    records = budget.load_job_records(folder)
    pending = [j for j in budget.plan(config, records) if j.name not in records]
    for job in pending:
        print(job.name)
    print(f"{len(records)} job(s) recorded, {len(pending)} planned next", file=sys.stderr)


def _slice(args):
    import torch

    from lengthgen.config import get_device
    from lengthgen.experiments.huang.sweep import budget
    minutes = _minutes(args.minutes)
    if args.workers > MAX_WORKERS:
        raise LengthgenError(f"--workers must be at most {MAX_WORKERS}, got {args.workers}")
    device = get_device(args.device)   # the check every --device goes through
    root = _root(args)
    folder = root / budget.RECORDS_ID / args.scale
    deadline = time.time() + 60 * minutes
    if args.worker is not None:   # one worker process of a slice
        counts = budget.run_slice(root, args.scale, device, deadline, worker=args.worker,
                                  workers=args.workers, max_group=args.max_group,
                                  graphs=args.graphs, **_states(args))
        print(json.dumps({"worker": args.worker, "done": counts}), flush=True)
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    claims = folder / ".claims"
    if claims.is_dir():   # claims of an earlier slice: its workers are gone
        for path in claims.iterdir():
            path.unlink()
    if args.workers == 1:
        counts = budget.run_slice(root, args.scale, device, deadline,
                                  max_group=args.max_group, graphs=args.graphs, **_states(args))
        print(json.dumps({"done": counts}), flush=True)
        return 0
    base = [sys.executable, "-m", "lengthgen", "budget", "slice", "--scale", args.scale,
            "--root", str(root), "--minutes", str(minutes), "--workers", str(args.workers),
            "--max-group", str(args.max_group), "--device", str(device)] \
        + (["--graphs"] if args.graphs else []) \
        + (["--states-in", args.states_in] if args.states_in else []) \
        + (["--states-out", args.states_out] if args.states_out else [])
    procs = [subprocess.Popen(base + ["--worker", str(w)]) for w in range(args.workers)]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise LengthgenError(f"slice workers exited with {codes}")
    return 0
