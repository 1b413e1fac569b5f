"""`python -m lengthgen task sample ID`: full sequences of an algorithmic task, one per line."""
import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks.algorithmic import get_algorithmic


def add_parser(sub):
    p = sub.add_parser("task", help="sample the algorithmic tasks")
    tsub = p.add_subparsers(dest="task_command", required=True)
    sample = tsub.add_parser("sample", help="print K sequences <bos> input <sep> answer <eos> "
                                            "with input length N, tokens separated by spaces")
    sample.add_argument("task_id")
    sample.add_argument("--length", type=int, required=True)
    sample.add_argument("--count", type=int, default=1)
    sample.add_argument("--seed", type=int, default=0)
    sample.set_defaults(func=_sample)


def _sample(args):
    task = get_algorithmic(args.task_id)
    if args.count < 0:
        raise LengthgenError("--count must be >= 0")
    for x in task.sample_instances(np.random.default_rng(args.seed), args.length, args.count):
        print(" ".join(task.format(x)))
