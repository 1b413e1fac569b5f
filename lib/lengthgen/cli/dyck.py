"""`python -m lengthgen dyck complete --train-word WORD PREFIX`: try the closed-form head."""
from collections import Counter

import numpy as np

from lengthgen.cli.args import finite, positive, seed
from lengthgen.errors import LengthgenError
from lengthgen.models.dyck import ClosedFormHead
from lengthgen.tasks.dyck import check_brackets, is_balanced, is_prefix

# samples x (2N)^2: the head reads the whole prefix at each of the 2N steps of a completion,
# and the completions are held in memory to be counted (the limit is ~10 s on one core)
MAX_WORK = 250_000_000


def add_parser(sub):
    p = sub.add_parser("dyck", help="the closed-form Dyck head of Richard (2024)")
    dsub = p.add_subparsers(dest="dyck_command", required=True)
    c = dsub.add_parser("complete", help="complete a bracket prefix with the closed-form head "
                                         "built from one training word")
    c.add_argument("prefix", help="a prefix such as '((((' (quote it in the shell)")
    c.add_argument("--train-word", required=True, help="a balanced word s, e.g. '(()())()'")
    c.add_argument("--gamma", type=finite, default=-0.5,
                   help="free parameter of Eq. (4); -1/2 attracts, > 0 repels (default -0.5)")
    c.add_argument("--v", type=finite, default=None,
                   help="value scale (default: -(2N^2+1) for gamma < 0, (N^2+1)/gamma else)")
    c.add_argument("--samples", type=positive, default=1,
                   help="number of sampled completions (times the square of the training "
                        f"word's length: at most {MAX_WORK:,})")
    c.add_argument("--seed", type=seed, default=0)
    c.set_defaults(func=_complete)


def _complete(args):
    word = check_brackets(args.train_word)
    if not is_balanced(word):
        raise LengthgenError(f"the training word {word!r} is not balanced")
    head = ClosedFormHead(word, gamma=args.gamma, v=args.v)
    prefix = check_brackets(args.prefix)
    if not prefix:
        raise LengthgenError("the prefix is empty; give at least one bracket")
    if len(prefix) > len(word):
        raise LengthgenError(f"the prefix has {len(prefix)} brackets, more than the "
                             f"{len(word)} of the training word")
    if not is_prefix(prefix, head.n):
        raise LengthgenError(f"{prefix!r} is not a prefix of any balanced word of length "
                             f"{len(word)} (a ')' without its '(' or too many open brackets)")
    if args.samples * len(word) ** 2 > MAX_WORK:
        raise LengthgenError(f"--samples x (the training word's length)^2 must be at most "
                             f"{MAX_WORK:,} (each completion rereads its prefix at every "
                             f"step), got {args.samples:,} x {len(word):,}^2")
    rng = np.random.default_rng(args.seed)
    completions, _ = head.complete([prefix] * args.samples, rng)
    print(f"closed-form head: N={head.n}, {head.n_weights} weights, gamma={head.gamma:g}, "
          f"v={head.v:g}")
    for completion, count in Counter(completions).most_common():
        full = prefix + completion
        verdict = "balanced" if is_balanced(full, head.n) else "NOT balanced"
        print(f"{count:5d} x  {prefix}|{completion}  {verdict}")
