"""`python -m lengthgen budget ...`: the APE vs NoPE sweep at the paper's budget, in slices.

    budget plan   [--scale gpu] [--root DIR] [--estimate [--rates FILE] [--no-graphs]]
    budget slice  [--scale gpu] [--root DIR] --minutes M [--then-minutes C] [--workers N]
                  [--max-group G] [--states DIR] [--states-in DIR] [--states-out DIR]
                  [--rates FILE] [--graphs]
    budget pack   [--scale gpu] [--root DIR] --states DIR [--states DIR ...] --out DIR [--queue]
    budget queue  [--scale gpu] [--root DIR] [--figures ID,ID] --minutes M [the slice's options]
    budget queue  [--scale gpu] [--figures ID,ID] --list

A slice trains the jobs of the planned figure huang-fig1-budget (its protocol:
lengthgen.experiments.huang.sweep.budget; the loop: lengthgen.runs.planned and runs.slices)
until its time is up, writing each finished job's record at once; run
it again (a later slice, a later session) and it plans what is left from the records. With
--workers N it starts N processes that share the records folder and take different decoder
shapes. One slice per records folder at a time (a lock). It starts a job only if the job can
finish in the time left at the measured rates (--rates: a benchmark's bench.jsonl; by default
the built-in H200 table on that card), counting --then-minutes of a chained call that resumes
from the local --states folder. `pack` puts the unfinished states into the few files a GPU
machine hands back, smallest first.

`queue` runs the planned figures (lengthgen.runs.planned) one after another in one slice,
the Fig. 1 sweep first, then the others cheapest per reproduced id first (lengthgen.runs.queue),
each figure's jobs filling the time the ones before it left; `--list` prints that order with
the estimate it comes from. Its unfinished states live in one folder per figure under
--states (and --states-out); `pack --queue` packs those of every queued figure.
"""
import json
import signal
import sys
import time
from pathlib import Path

from lengthgen.cli.args import device as device_name, positive
from lengthgen.errors import LengthgenError

FIG1 = "huang-fig1-budget"   # the planned figure of the APE vs NoPE sweep at the paper's budget
MAX_WORKERS = 8
MAX_MINUTES = 600.0


def _minutes(text: str, name: str = "--minutes", zero: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LengthgenError(f"{name} must be a number, got {text!r}") from None
    if not (0 <= value if zero else 0 < value) or not value <= MAX_MINUTES:
        raise LengthgenError(f"{name} must be in {'[' if zero else '('}0, {MAX_MINUTES:g}], "
                             f"got {text}")
    return value


def add_parser(sub):
    p = sub.add_parser("budget", help="the APE vs NoPE sweep at the paper's budget, in slices")
    bsub = p.add_subparsers(dest="budget_command", required=True)
    for name, helptext in (("plan", "list the jobs the records call for next"),
                           ("slice", "train planned jobs until the time is up"),
                           ("pack", "pack unfinished states into the files a GPU hands back"),
                           ("queue", "train the planned figures' jobs, one figure after "
                                     "another, until the time is up")):
        q = bsub.add_parser(name, help=helptext)
        q.add_argument("--scale", choices=("test", "gpu"), default="gpu")
        q.add_argument("--root", default=None,
                       help="results folder (default: the library's results folder)")
        if name in ("queue", "pack"):
            q.add_argument("--figures", default=None,
                           help="comma-separated planned figure ids (default: every one)")
        if name == "queue":
            q.add_argument("--list", action="store_true",
                           help="print the queue's order and its estimate, train nothing")
        if name in ("plan", "slice", "queue"):
            q.add_argument("--rates", default=None,
                           help="a benchmark's bench.jsonl (benchmarks/bench_engine.py --out) "
                                "to plan with; default: the built-in H200 rates")
        if name == "plan":
            q.add_argument("--estimate", action="store_true",
                           help="GPU minutes the rest of the sweep needs, per decoder shape")
            q.add_argument("--no-graphs", action="store_true",
                           help="estimate without CUDA graphs")
        if name in ("slice", "queue"):
            q.add_argument("--minutes", required=name == "slice")
            q.add_argument("--then-minutes", default="0",
                           help="minutes of a chained call after this one on the same machine "
                                "(it resumes from --states): jobs that finish by then start")
            q.add_argument("--workers", type=positive, default=1)
            q.add_argument("--worker", type=int, default=None, help=argparse_suppress())
            q.add_argument("--lock-fd", type=int, default=None, help=argparse_suppress())
            q.add_argument("--max-group", type=positive, default=256)
            q.add_argument("--device", type=device_name, default=None)
            q.add_argument("--graphs", action="store_true",
                           help="replay each training step as a CUDA graph (GPU only)")
            q.add_argument("--compile", action="store_true",
                           help="each training step through torch.compile (eager where "
                                "compiling fails)")
            q.add_argument("--states", default=None,
                           help="local folder of every unfinished state (read and written, "
                                "no size limit): the chained call's hand-off")
            q.add_argument("--states-in", default=None,
                           help="folder of the states an earlier allotment handed on")
            q.add_argument("--states-out", default=None,
                           help="folder for the states of jobs this slice cannot finish "
                                f"({budget_state_mib()} MiB in all, shared by the workers)")
        if name == "pack":
            q.add_argument("--queue", action="store_true",
                           help="the states of the queued figures (their folders under each "
                                "--states), not only the Fig. 1 sweep's")
            q.add_argument("--states", action="append", required=True,
                           help="a folder of states (repeatable; later ones win)")
            q.add_argument("--out", required=True,
                           help="where the packs go; files already there count against the "
                                "limits (8 files of at most 16 MiB, 64 MiB in all)")
        q.set_defaults(func={"plan": _plan, "slice": _slice, "pack": _pack,
                             "queue": _queue}[name])


def budget_state_mib() -> int:
    from lengthgen.runs.slices import STATE_BYTES
    return STATE_BYTES // 2 ** 20


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


def _root(args) -> Path:
    from lengthgen.results import results_dir
    return Path(args.root) if args.root else results_dir()


def _path(text):
    return Path(text) if text else None


def _plan(args):
    from lengthgen.experiments.huang.sweep import budget
    config = budget.budget_configs()[args.scale]
    folder = _root(args) / FIG1 / args.scale
    records = budget.load_job_records(folder)
    if args.estimate:
        return _estimate(args, config, records)
    pending = [j for j in budget.plan(config, records) if j.name not in records]
    for job in pending:
        print(job.name)
    left = budget.deferred(config, records)
    print(f"{len(records)} job(s) recorded, {len(pending)} planned next"
          + (f", {len(left)} deferred (too long for a slice): the sweep is not complete"
             if left else ""), file=sys.stderr)


def _estimate(args, config, records):
    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.runs import allotment, rates
    table = rates.read_bench(args.rates) if args.rates else rates.H200
    rows = budget.estimate(config, records, table, graphs=not args.no_graphs)
    print(f"rates: {table.source}{'' if args.no_graphs else ' (CUDA graphs)'}")
    print(f"{'shape':>12}  {'jobs':>4}  {'steps':>13}  {'group':>5}  {'GPU min':>7}")
    for row in rows:
        layers, heads, d = row["shape"]
        print(f"{f'{layers}L{heads}H d{d}':>12}  {row['jobs']:>4}  "
              f"{'/'.join(f'{s // 1000}k' for s in row['steps']):>13}  "
              f"{row['group'] or '-':>5}  {row['minutes']:>7.1f}")
    total = sum(r["minutes"] for r in rows)
    print(f"total: {total:.1f} GPU minutes for {sum(r['jobs'] for r in rows)} job(s) the "
          f"records call for now (later phases follow from their results)")
    too_long = [name for r in rows for name in r["too_long"]]
    print(f"cannot finish inside one allotment ({allotment.ALLOTMENT_S // 60} min of device "
          f"time, {allotment.COMMAND_S // 60} min a command, {allotment.USABLE_S // 60} min "
          f"for one "
          f"job with a chained call): {len(too_long)} job(s)")
    for name in too_long:
        print(f"  {name}")


def _slice(args):
    import torch

    from lengthgen.config import get_device
    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.runs import planned, rates, slices
    minutes = _minutes(args.minutes)
    then = _minutes(args.then_minutes, "--then-minutes", zero=True)
    if then > 0 and not args.states:
        raise LengthgenError("--then-minutes needs --states: the chained call resumes the "
                             "unfinished jobs from the states this slice keeps there")
    if args.workers > MAX_WORKERS:
        raise LengthgenError(f"--workers must be at most {MAX_WORKERS}, got {args.workers}")
    device = get_device(args.device)   # the check every --device goes through
    root = _root(args)
    folder = root / FIG1 / args.scale
    deadline = time.time() + 60 * minutes
    options = dict(max_group=args.max_group, graphs=args.graphs, compile=args.compile,
                   states=_path(args.states),
                   states_in=_path(args.states_in), states_out=_path(args.states_out),
                   state_bytes=slices.STATE_BYTES // args.workers, chain_s=60 * then,
                   rates=rates.table_for(device, args.rates))
    if args.worker is not None:   # one worker process of a slice
        counts = planned.run_slice(FIG1, args.scale, root, device, deadline,
                                   worker=args.worker, workers=args.workers,
                                   lock_fd=args.lock_fd, stop=slices.worker_stop(), **options)
        print(json.dumps({"worker": args.worker, "done": counts}), flush=True)
        return 0
    slices.check_outputs({"the slice's records": folder, "states": options["states"],
                          "the states to hand on": options["states_out"]})
    with planned.held(FIG1, args.scale, root) as lock_fd:
        if args.workers == 1:
            stop = slices.Stop().install()
            counts = planned.run_slice(FIG1, args.scale, root, device, deadline,
                                       lock_fd=lock_fd, stop=stop, **options)
            print(json.dumps({"done": counts}), flush=True)
            caught = stop.signal
            codes = [0]
        else:
            base = [sys.executable, "-m", "lengthgen", "budget", "slice", "--scale",
                    args.scale, "--root", str(root), "--minutes", str(minutes),
                    "--then-minutes", str(then), "--workers", str(args.workers),
                    "--max-group", str(args.max_group), "--device", str(device)] \
                + (["--graphs"] if args.graphs else []) \
                + (["--compile"] if args.compile else []) \
                + [a for option in ("states", "states_in", "states_out", "rates")
                   if getattr(args, option)
                   for a in (f"--{option.replace('_', '-')}", getattr(args, option))]
            codes, caught = slices.run_workers(base, args.workers, lock_fd)
    return _ended(caught, codes)


def _ended(caught, codes) -> int:
    if caught is not None:
        raise LengthgenError(f"the slice was stopped by {signal.Signals(caught).name}: every "
                             f"job it finished is recorded and the unfinished ones' states are "
                             f"kept where --states or --states-out says; run it again to go on")
    if any(codes):
        raise LengthgenError(f"slice workers exited with {codes}")
    return 0


def _queue_rows(args):
    from lengthgen.runs import queue
    ids = [f.strip() for f in args.figures.split(",") if f.strip()] if args.figures \
        else queue.planned_figures()
    return queue.order(ids, args.scale)


def _queue(args):
    from contextlib import ExitStack

    from lengthgen.config import get_device
    from lengthgen.runs import planned, queue, rates, slices
    rows = _queue_rows(args)
    if args.list:
        for row in rows:
            cost = "no estimate" if row["minutes"] is None else \
                f"{row['minutes']:.1f} H200 min, {row['per_id']:.1f} per id"
            if row["scores_for"]:   # its trainings are an earlier figure's (runs.queue)
                cost += (f" (scores the models {row['scores_for']} trains; "
                         f"{row['own_minutes']:.1f} alone)")
            elif row["minutes"] is not None and row["minutes"] < row["own_minutes"]:
                cost += (f" ({row['own_minutes']:.1f} alone: figures before it train some of "
                         f"its models)")
            if row["deferred"]:   # too long for any slice: left, and not billed
                cost += (f"; {row['deferred']} run(s) deferred, too long for a slice "
                         f"({row['deferred_minutes']:.1f} H200 min, not billed)")
            print(f"{row['figure_id']}\t{row['scale']}\t{'first' if row['first'] else cost}"
                  f"\treproduces {', '.join(row['reproduces'])}")
        return 0
    if args.minutes is None:
        raise LengthgenError("budget queue needs --minutes (or --list)")
    minutes = _minutes(args.minutes)
    then = _minutes(args.then_minutes, "--then-minutes", zero=True)
    if then > 0 and not args.states:
        raise LengthgenError("--then-minutes needs --states: the chained call resumes the "
                             "unfinished jobs from the states this queue keeps there")
    if args.workers > MAX_WORKERS:
        raise LengthgenError(f"--workers must be at most {MAX_WORKERS}, got {args.workers}")
    device = get_device(args.device)
    root = _root(args)
    deadline = time.time() + 60 * minutes
    options = dict(max_group=args.max_group, graphs=args.graphs, compile=args.compile,
                   states=_path(args.states), states_in=_path(args.states_in),
                   states_out=_path(args.states_out),
                   state_bytes=slices.STATE_BYTES // args.workers, chain_s=60 * then,
                   rates=rates.table_for(device, args.rates))
    if args.worker is not None:   # one worker process of a queue
        counts = queue.run_queue(rows, root, device, deadline, worker=args.worker,
                                 workers=args.workers, lock_fd=args.lock_fd,
                                 stop=slices.worker_stop(), **options)
        print(json.dumps({"worker": args.worker, "done": counts}), flush=True)
        return 0
    slices.check_outputs({**{f"the records of {r['figure_id']}":
                             planned.folder(r["figure_id"], r["scale"], root) for r in rows},
                          "states": options["states"],
                          "the states to hand on": options["states_out"]})
    with ExitStack() as held:
        fds = [held.enter_context(planned.held(r["figure_id"], r["scale"], root))
               for r in rows]
        if args.workers == 1 or not rows:
            stop = slices.Stop().install()
            counts = queue.run_queue(rows, root, device, deadline, lock_fd=fds[0] if fds
                                     else None, stop=stop, **options)
            print(json.dumps({"done": counts}), flush=True)
            caught, codes = stop.signal, [0]
        else:
            base = [sys.executable, "-m", "lengthgen", "budget", "queue", "--scale",
                    args.scale, "--root", str(root), "--figures",
                    ",".join(r["figure_id"] for r in rows), "--minutes", str(minutes),
                    "--then-minutes", str(then), "--workers", str(args.workers),
                    "--max-group", str(args.max_group), "--device", str(device)] \
                + (["--graphs"] if args.graphs else []) \
                + (["--compile"] if args.compile else []) \
                + [a for option in ("states", "states_in", "states_out", "rates")
                   if getattr(args, option)
                   for a in (f"--{option.replace('_', '-')}", getattr(args, option))]
            codes, caught = slices.run_workers(base, args.workers, fds[0])
    return _ended(caught, codes)


def _pack(args):
    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.results import check_writable
    from lengthgen.runs import slices
    out = Path(args.out)
    check_writable(out, "the packed states")
    say = lambda text: print(text, file=sys.stderr)   # noqa: E731
    if args.queue:   # each queued figure's states, in its folder under every --states
        from lengthgen.runs import planned, queue
        states = {}
        for row in _queue_rows(args):
            wanted = {j.name for j in planned.pending(row["figure_id"], row["scale"],
                                                      _root(args))}
            found = slices.read_states([folder for f in args.states   # packs, then its own
                                        for folder in (Path(f), queue.states_of(
                                            f, row["figure_id"]))], say)
            for name, (state, _) in found.items():
                if name in wanted and name in states:
                    say(f"states: two queued figures have a job {name}; the first's is packed")
                elif name in wanted:
                    states[name] = state
    else:
        records = budget.load_job_records(_root(args) / FIG1 / args.scale)
        wanted = {j.name for j in budget.plan(budget.budget_configs()[args.scale], records,
                                              slices=False)}
        states = {name: state for name, (state, _) in slices.read_states(
            [Path(f) for f in args.states], say).items()
            if name in wanted}   # a recorded or no longer planned job's state is of no use
    present = [p for p in out.iterdir() if p.is_file()] if out.is_dir() else []
    used = sum(p.stat().st_size for p in present)
    try:
        packs = slices.pack_states(states, out, files=slices.HANDOFF_FILES - len(present),
                                   total_bytes=slices.HANDOFF_BYTES - used)
    except OSError as e:
        raise LengthgenError(f"cannot write the packed states into {out} "
                             f"({e.strerror or e})") from None
    packed = sum(len(v) for v in packs.values())
    print(json.dumps({"packs": packs, "states": len(states), "packed": packed,
                      "left_out": sorted(set(states) - {n for v in packs.values()
                                                          for n in v})}))
    return 0
