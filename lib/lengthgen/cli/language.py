"""`python -m lengthgen language sample|accepts|next ID`: the regular languages from the shell.

accepts and next read one string per line from stdin (an empty line is the empty string); a bad
line gets `error: line N: ...` on stderr and an empty output line, and the rest goes on.
sample prints as it draws, so `| head` returns at once whatever the count.
"""
import numpy as np

from lengthgen.cli.args import check_length, chunked, each_line, print_chunks, sample_options
from lengthgen.tasks.base import MAX_SAMPLE_LENGTH
from lengthgen.tasks.dfa import END
from lengthgen.tasks.languages import get_language


def add_parser(sub):
    p = sub.add_parser("language", help="sample members, test membership, list legal next symbols")
    lsub = p.add_subparsers(dest="language_command", required=True)
    sample = lsub.add_parser("sample", help="print K members of length N (uniform), one per line")
    sample_options(sample, "language_id", MAX_SAMPLE_LENGTH)
    sample.set_defaults(func=_sample)
    accepts = lsub.add_parser("accepts", help="read strings from stdin, print 1 (member) or 0")
    accepts.add_argument("language_id")
    accepts.set_defaults(func=_accepts)
    nxt = lsub.add_parser("next", help=f"read prefixes from stdin, print the legal next symbols "
                                       f"({END} = end of string)")
    nxt.add_argument("language_id")
    nxt.set_defaults(func=_next)


def _sample(args):
    language = get_language(args.language_id)
    check_length(args.length, MAX_SAMPLE_LENGTH)
    rng = np.random.default_rng(args.seed)
    draw = lambda k: language.sample_members(rng, args.length, k)  # noqa: E731
    print_chunks(chunked(args.count, args.length, draw), str)


def _accepts(args):
    language = get_language(args.language_id)
    return each_line(lambda string: str(int(language.accepts(string))))


def _next(args):
    language = get_language(args.language_id)
    order = language.alphabet + (END,)

    def legal(prefix):
        found = language.legal_next(prefix)
        return " ".join(s for s in order if s in found)
    return each_line(legal)
