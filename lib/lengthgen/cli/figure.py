"""`python -m lengthgen figure run|data|cost|list ID`: run a figure's experiment, print its
numbers, estimate what its paper-scale trainings cost on a GPU."""
import csv
import sys
import textwrap

from lengthgen.cli.args import device, threads, workers
from lengthgen.errors import LengthgenError


def add_parser(sub):
    p = sub.add_parser("figure", help="run a figure's experiment and write its records")
    fsub = p.add_subparsers(dest="figure_command", required=True)
    run = fsub.add_parser("run", help="run every run of a figure id at a scale")
    run.add_argument("figure_id")
    run.add_argument("--scale", default=None, help="test, book or paper (default $LENGTHGEN_SCALE)")
    run.add_argument("--device", type=device, default=None, help="cuda, mps or cpu (default: best available)")
    run.add_argument("--force", action="store_true", help="re-run runs that already have records")
    run.add_argument("--workers", type=workers, default=1,
                     help="worker processes running runs in parallel, at most 4 threads per "
                          "core here over all of them (default 1: in process)")
    run.add_argument("--threads", type=threads, default=None,
                     help="torch threads per run, at most 4 per core here (default 1; recorded "
                          "in every record)")
    run.add_argument("--backend", default="local",
                     help="local (this machine, default) or ray (a Ray cluster; needs "
                          "pip install 'lengthgen[cluster]')")
    run.add_argument("--address", default=None,
                     help="with --backend ray: the head's HOST:PORT, or auto (the cluster "
                          "started on this machine); default: $RAY_ADDRESS, else a Ray "
                          "started here for this sweep")
    run.set_defaults(func=_run)
    data = fsub.add_parser("data", help="print the numbers behind a figure as CSV")
    data.add_argument("figure_id")
    data.add_argument("--scale", default=None,
                      help="the scale to read (default: the largest with committed records)")
    data.add_argument("--over-seeds", action="store_true",
                      help="one row per setting: the mean over seeds of each value, its min, "
                           "max and the number of seeds (trained figures)")
    data.add_argument("--complete", action="store_true",
                      help="refuse (exit 2) when registered runs have no record, instead of "
                           "printing the partial data with a warning on stderr")
    data.set_defaults(func=_data)
    cost = fsub.add_parser("cost", help="estimate the GPU minutes of figures' trainings at a "
                                         "scale (H200 and Colab T4; see lengthgen.runs.cost)")
    cost.add_argument("figure_ids", nargs="*",
                      help="figure ids (default: every figure that trains, or draws one that does)")
    cost.add_argument("--scale", default="paper", help="the config to estimate (default paper)")
    cost.add_argument("--notes", action="store_true",
                      help="also print each figure's PAPER_SCALE note (what its paper config "
                           "takes from the paper and what it chooses)")
    cost.add_argument("--compare", action="store_true",
                      help="print book scale against paper scale per figure (runs, model size, "
                           "steps, tokens, FLOPs, minutes) instead")
    cost.set_defaults(func=_cost)
    lst = fsub.add_parser("list", help="list figure ids")
    lst.set_defaults(func=_list)


def _run(args):
    from lengthgen.runs.runner import run_experiment
    records = run_experiment(args.figure_id, args.scale, args.device, args.force, progress=True,
                             workers=args.workers, threads=args.threads,
                             backend=args.backend, address=args.address)
    print(f"{args.figure_id}: {len(records)} record(s)")


def _data(args):
    from lengthgen.config import get_scale
    from lengthgen.runs.records import (check_records, committed_records, figure_data,
                                        figure_records, missing_runs)
    from lengthgen.runs.registry import expected_runs
    if args.scale is None:
        scale, records = committed_records(args.figure_id)   # none: says what is missing
    else:
        scale = get_scale(args.scale)
        records = figure_records(args.figure_id, scale)
        if not records:
            raise LengthgenError(f"{args.figure_id}: no records at scale {args.scale}")
    check_records(args.figure_id, records)   # read from disk: the registered runs, or one line
    missing = missing_runs(args.figure_id, scale, records)
    if missing:   # as the figure's caption says INCOMPLETE
        what = (f"{args.figure_id}: INCOMPLETE at scale {scale}: {len(missing)} of "
                f"{len(expected_runs(args.figure_id, scale))} registered run(s) have no "
                f"record (first: {missing[0]})")
        if args.complete:
            raise LengthgenError(f"{what}; --complete refuses partial data")
        print(f"warning: {what}; the rows below come from the others (--complete refuses "
              f"partial data)", file=sys.stderr, flush=True)
    rows = figure_data(args.figure_id, records)
    if not rows:
        raise LengthgenError(f"{args.figure_id}: the records hold no numbers to print")
    if args.over_seeds:
        from lengthgen.runs.registry import experiment
        from lengthgen.experiments.spread import over_seeds
        by = getattr(experiment(args.figure_id), "SPREAD_BY", None)
        if by is None:
            raise LengthgenError(f"{args.figure_id}: --over-seeds is for trained figures with "
                                 f"seeds per setting; this one has none to summarize")
        rows = over_seeds(rows, by)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _cost(args):
    from lengthgen.config import get_scale
    from lengthgen.runs import cost
    from lengthgen.runs.registry import EXPERIMENTS, experiment
    from lengthgen.viz.costs import figure_cost, trained_sources
    scale = get_scale(args.scale)
    ids = args.figure_ids or [f for f in sorted(EXPERIMENTS) if trained_sources(f)]
    costs, notes, pairs = [], [], []
    for figure_id in ids:
        costs.append(figure_cost(figure_id, scale))   # unknown ids, untrained ones: one line
        if args.compare:
            pairs.append((figure_cost(figure_id, "book"),
                          costs[-1] if scale == "paper" else figure_cost(figure_id, "paper")))
        notes += [f"{s}: {' '.join(experiment(s).PAPER_SCALE.split())}"
                  for s in trained_sources(figure_id)
                  if args.notes and s not in [n.split(":")[0] for n in notes]]
    if args.compare:
        print("Book scale against paper scale\n")
        print(cost.compare_table(pairs))
        print("\n" + textwrap.fill(cost.method(), 100))
        return
    print(f"GPU cost of the {scale}-scale trainings\n")
    print(cost.table(costs))
    print("\n" + textwrap.fill(cost.method(), 100))
    if notes:
        print("\nWhat each paper config takes from the paper, and what it chooses:\n")
        print("\n".join(f"- {n}" for n in notes))


def _list(args):
    from lengthgen.runs.registry import figure_listing
    print("\n".join(figure_listing()))
