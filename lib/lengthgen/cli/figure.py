"""`python -m lengthgen figure run|list ID`: run a figure's experiment at a scale."""
from lengthgen.experiments import EXPERIMENTS, experiment, run_experiment


def add_parser(sub):
    p = sub.add_parser("figure", help="run a figure's experiment and write its records")
    fsub = p.add_subparsers(dest="figure_command", required=True)
    run = fsub.add_parser("run", help="run every run of a figure id at a scale")
    run.add_argument("figure_id")
    run.add_argument("--scale", default=None, help="test, book or paper (default $LENGTHGEN_SCALE)")
    run.add_argument("--device", default=None, help="cuda, mps or cpu (default: best available)")
    run.add_argument("--force", action="store_true", help="re-run runs that already have records")
    run.set_defaults(func=_run)
    lst = fsub.add_parser("list", help="list figure ids")
    lst.set_defaults(func=_list)


def _run(args):
    records = run_experiment(args.figure_id, args.scale, args.device, args.force, progress=True)
    print(f"{args.figure_id}: {len(records)} record(s)")


def _list(args):
    for figure_id in sorted(EXPERIMENTS):
        print(f"{figure_id:32s} {experiment(figure_id).TITLE}")
