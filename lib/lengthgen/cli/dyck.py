"""`python -m lengthgen dyck complete --train-word WORD PREFIX`: try the closed-form head."""
from collections import Counter

from lengthgen.cli.args import check_memory, check_seconds, finite, positive, seed
from lengthgen.errors import LengthgenError

# samples x (2N)^2: the head reads the whole prefix at each of the 2N steps of a completion,
# and the completions are held in memory to be counted
MAX_WORK = 250_000_000
MAX_SECONDS = 10   # the estimate below, on one core
# the cost model, measured on the 2-core development machine (2026-11-24): 400,000 completions
# of a 2-bracket word took 6 s (15 us each, whatever the word), 1,000 of a 400-bracket word 3.6
# s (22 ns per sample and squared length); each completion held costs about 425 bytes + its
# length
SECONDS_PER_SAMPLE = 15e-6
SECONDS_PER_WORK = 22e-9
BYTES_PER_SAMPLE = 425


def estimated_seconds(samples: int, length: int) -> float:
    return samples * (SECONDS_PER_SAMPLE + SECONDS_PER_WORK * length ** 2)


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
                        f"word's length: at most {MAX_WORK:,}, and about {MAX_SECONDS} s of "
                        f"work; default 1)")
    c.add_argument("--seed", type=seed, default=0, help="seed of the sampling (default 0)")
    c.set_defaults(func=_complete)


def _complete(args):
    from lengthgen.tasks.dyck import check_brackets, is_balanced, is_prefix
    word = check_brackets(args.train_word)
    if not is_balanced(word):
        raise LengthgenError(f"the training word {word!r} is not balanced")
    import numpy as np

    from lengthgen.models.dyck import ClosedFormHead
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
    check_seconds(estimated_seconds(args.samples, len(word)), MAX_SECONDS,
                  f"{args.samples:,} completions of a {len(word):,}-bracket word",
                  "ask for fewer --samples")
    check_memory(args.samples * (BYTES_PER_SAMPLE + len(word)),
                 f"{args.samples:,} completions of a {len(word):,}-bracket word")
    rng = np.random.default_rng(args.seed)
    completions, _ = head.complete([prefix] * args.samples, rng)
    print(f"closed-form head: N={head.n}, {head.n_weights} weights, gamma={head.gamma:g}, "
          f"v={head.v:g}")
    for completion, count in Counter(completions).most_common():
        full = prefix + completion
        verdict = "balanced" if is_balanced(full, head.n) else "NOT balanced"
        print(f"{count:5d} x  {prefix}|{completion}  {verdict}")
