"""`python -m lengthgen language sample|accepts|next ID`: the regular languages from the shell.

accepts and next read one string per line from stdin (an empty line is the empty string).
"""
import sys

import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.tasks.dfa import END
from lengthgen.tasks.languages import get_language

MAX_CLI_LENGTH = 10_000  # counting members costs time and memory that grow with the length


def add_parser(sub):
    p = sub.add_parser("language", help="sample members, test membership, list legal next symbols")
    lsub = p.add_subparsers(dest="language_command", required=True)
    sample = lsub.add_parser("sample", help="print K members of length N (uniform), one per line")
    sample.add_argument("language_id")
    sample.add_argument("--length", type=int, required=True)
    sample.add_argument("--count", type=int, default=1)
    sample.add_argument("--seed", type=int, default=0)
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
    if not 0 <= args.length <= MAX_CLI_LENGTH or args.count < 0:
        raise LengthgenError(f"--length must be in [0, {MAX_CLI_LENGTH}] and --count >= 0")
    for member in language.sample_members(np.random.default_rng(args.seed), args.length,
                                          args.count):
        print(member)


def _accepts(args):
    language = get_language(args.language_id)
    for line_number, string in _stdin_strings():
        print(int(_on_line(line_number, language.accepts, string)))


def _next(args):
    language = get_language(args.language_id)
    order = language.alphabet + (END,)
    for line_number, prefix in _stdin_strings():
        legal = _on_line(line_number, language.legal_next, prefix)
        print(" ".join(s for s in order if s in legal))


def _stdin_strings():
    for line_number, line in enumerate(sys.stdin, start=1):
        yield line_number, line.rstrip("\n").rstrip("\r")


def _on_line(line_number, function, string):
    try:
        return function(string)
    except LengthgenError as e:
        raise LengthgenError(f"line {line_number}: {e}") from None
