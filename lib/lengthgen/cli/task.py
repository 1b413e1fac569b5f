"""`python -m lengthgen task sample ID`: full sequences of an algorithmic task, one per line,
printed as they are drawn (so `| head` returns at once whatever the count)."""
import numpy as np

from lengthgen.cli.args import check_length, chunked, print_chunks, sample_options
from lengthgen.tasks.algorithmic import get_algorithmic
from lengthgen.tasks.base import MAX_SAMPLE_LENGTH


def add_parser(sub):
    p = sub.add_parser("task", help="sample the algorithmic tasks")
    tsub = p.add_subparsers(dest="task_command", required=True)
    sample = tsub.add_parser("sample", help="print K sequences <bos> input <sep> answer <eos> "
                                            "with input length N, tokens separated by spaces")
    sample_options(sample, "task_id", MAX_SAMPLE_LENGTH)
    sample.set_defaults(func=_sample)


def _sample(args):
    task = get_algorithmic(args.task_id)
    check_length(args.length, MAX_SAMPLE_LENGTH)
    task.feasible_lengths(args.length, args.length)   # an error naming the task's own range
    rng = np.random.default_rng(args.seed)
    draw = lambda k: task.sample_instances(rng, args.length, k)  # noqa: E731
    print_chunks(chunked(args.count, args.length, draw), lambda x: " ".join(task.format(x)))
