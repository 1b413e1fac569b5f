"""`python -m lengthgen crasp run|check|list|show|compile ...`: C-RASP programs on the command line.

A program is a .crasp file or the name of a library program (e.g. `majority_ab`). Errors in a
program file print as `file:line:col: message` and exit 2; a failed check exits 1. `run` reads
one input per line; a bad line gets `error: line N: ...` and an empty output line, and the rest
goes on (exit 2 at the end). Each subcommand is one `add_*` function below, in SUBCOMMANDS.
"""
from lengthgen.cli.args import check_memory, check_seconds, count, each_line, positive, seed
from lengthgen.crasp.limits import MAX_VERIFY_LENGTH, MAX_VERIFY_SAMPLES, MLP_MODES
from lengthgen.errors import LengthgenError

# (the interpreter, the checker and the compiler are imported by the subcommands that use them:
# `--help` needs neither numpy's nor torch's start-up time)

# check: the random part costs about --random x --random-length symbols through the interpreter
MAX_RANDOM_SYMBOLS = 20_000_000
MAX_CHECK_LENGTH = 1_000   # the exhaustive part is capped by count anyway; tasks: input length
MAX_TRACE_LENGTH = 1_000   # run --trace: a table meant for reading
RANDOM_GROUP = 12          # check_language draws its random strings 12 of one length at a time


def interpreter_bytes(program, symbols: int) -> float:
    """Memory of the interpreter on `symbols` input symbols at once: per position, 8 bytes for
    each count operation and 1 for each Boolean one, plus the input and temporaries (24 bytes).
    Measured: majority_ab took 42 bytes per symbol (estimate 43) on 12 strings of 1,000,000;
    sort, 1,203 operations, 45 MB above start-up on 20,000 symbols (estimate 45 MB)."""
    from lengthgen.crasp import ir
    counts = sum(ir.sort_of(op) is ir.Sort.COUNT for op in program.ops.values())
    return float(symbols) * (8 * counts + (len(program.ops) - counts) + 24)


def add_run(csub):
    p = csub.add_parser("run", help="read strings on stdin, print 1 (accepted) or 0 per line")
    p.add_argument("program", help="a .crasp file or a library program name")
    p.add_argument("--trace", action="store_true",
                   help="print the value of every operation at every position instead (inputs "
                        f"of at most {MAX_TRACE_LENGTH} symbols)")
    p.set_defaults(func=_run)


def accepting(program):
    """A program whose verdicts mean acceptance: not a next-token program whose 'output' is one
    of its next(...) definitions only because it has no 'accept' line (its verdict would be
    whether that token comes next after the last symbol, not whether the string is in a
    language)."""
    if program.output in program.token_outputs.values():
        symbol = next(s for s, name in program.token_outputs.items() if name == program.output)
        raise LengthgenError(f"{program.name or 'the program'} is a next-token program (its "
                             f"last Boolean definition is next({symbol})) with no 'accept' "
                             f"line, so it accepts nothing in particular; add 'accept EXPR', "
                             f"or check its next tokens with `crasp check`")
    return program


def _run(args):
    from lengthgen.crasp.interpret import accepts, tokens_of
    from lengthgen.crasp.library import resolve
    program = resolve(args.program)
    if not args.trace:
        accepting(program)

    def verdict(text):
        n = len(tokens_of(program, text))
        check_memory(interpreter_bytes(program, n),
                     f"an input of {n:,} symbols through the {len(program.ops):,} "
                     f"operations of {program.name or 'the program'}")
        return "1" if accepts(program, text) else "0"
    if args.trace:
        return each_line(lambda text: _trace(program, text))
    return each_line(verdict)


def _trace(program, text):
    from lengthgen.crasp.interpret import tokens_of
    from lengthgen.crasp.trace import trace_text
    if len(text) > 2 * MAX_TRACE_LENGTH * max(1, max(map(len, program.alphabet), default=1)):
        raise LengthgenError(f"--trace shows inputs of at most {MAX_TRACE_LENGTH} symbols (a "
                             f"row per operation, a column per position), got {len(text):,} "
                             f"characters")
    n = len(tokens_of(program, text))
    if n > MAX_TRACE_LENGTH:
        raise LengthgenError(f"--trace shows inputs of at most {MAX_TRACE_LENGTH} symbols (a "
                             f"row per operation, a column per position), got {n}")
    return trace_text(program, text)


def add_check(csub):
    p = csub.add_parser("check", help="compare a program with a language's DFA or a task's "
                                      "solver; exit 1 on any disagreement")
    p.add_argument("program", help="a .crasp file or a library program name")
    p.add_argument("--language", default=None,
                   help="language or task id (default: the program's name)")
    p.add_argument("--max-length", type=count, default=10,
                   help="languages: check every string up to this length (default 10; the "
                        "exhaustive part stops at 300,000 strings); tasks: the longest input")
    p.add_argument("--random", type=count, default=2000, help="number of random strings")
    p.add_argument("--random-length", type=positive, default=300,
                   help="longest random string (languages); --random times the longer of "
                        f"the two lengths is at most {MAX_RANDOM_SYMBOLS:,}")
    p.set_defaults(func=_check)


def _check_estimate(program, target: str, args) -> None:
    """The memory of the largest batch the check holds at once, refused above the limit."""
    from lengthgen.crasp.library import NEXT_REFERENCES
    if target in NEXT_REFERENCES:
        return   # the reference's own lengths (at most 300), whatever the options
    if program.token_outputs:   # tasks: per length about --random / 40 instances and answers
        per_length = max(1, args.random // max(1, min(40, args.max_length)))
        symbols, what = per_length * (2 * args.max_length + 2), "--random x --max-length"
    else:   # languages: RANDOM_GROUP strings of each random length, up to --random-length
        symbols = RANDOM_GROUP * args.random_length if args.random else 0
        what = f"{RANDOM_GROUP} random strings of --random-length {args.random_length:,}"
    check_memory(interpreter_bytes(program, symbols),
                 f"crasp check ({what}, {len(program.ops):,} operations)",
                 "ask for shorter strings")


def _check(args):
    from lengthgen.crasp.check import check_language, check_next_reference, check_task
    from lengthgen.crasp.library import NEXT_REFERENCES, resolve
    symbols = args.random * max(args.random_length, args.max_length)
    if symbols > MAX_RANDOM_SYMBOLS:
        raise LengthgenError(f"--random x the longest length (--random-length, --max-length) "
                             f"must be at most {MAX_RANDOM_SYMBOLS:,}, got {symbols:,}")
    if args.max_length > MAX_CHECK_LENGTH:
        raise LengthgenError(f"--max-length must be at most {MAX_CHECK_LENGTH}")
    program = resolve(args.program)
    target = args.language or program.name
    _check_estimate(program, target, args)
    if target in NEXT_REFERENCES:
        report = check_next_reference(program, target, args.max_length, args.random)
    elif program.token_outputs:
        report = check_task(program, target, args.random, max(1, args.max_length))
    else:
        report = check_language(accepting(program), target, args.max_length, args.random,
                                args.random_length)
    for line in report.disagreements:
        print(f"disagree: {line}")
    scope = (f"every string up to length {report.exhaustive_length} and random strings"
             if report.exhaustive_length else "random instances")
    verdict = "ok" if report.ok else f"FAILED: {report.n_disagreements} disagreement(s)"
    print(f"{program.name} vs {target}: {verdict} ({report.checked} checked: {scope})")
    return 0 if report.ok else 1


def add_list(csub):
    p = csub.add_parser("list", help="list the library's programs and their fragments")
    p.set_defaults(func=_list)


def _list(args):
    from lengthgen.crasp.library import program_names, resolve
    for name in program_names():
        program = resolve(name)
        print(f"{name:28s} {program.fragment():24s} {len(program.ops):6d} operations")


def add_show(csub):
    p = csub.add_parser("show", help="print a library program's source")
    p.add_argument("name")
    p.set_defaults(func=_show)


def _show(args):
    from lengthgen.crasp.library import program_text
    print(program_text(args.name), end="")


def add_compile(csub):
    p = csub.add_parser("compile", help="compile a program into a Limit Transformer and check "
                                        "it against the interpreter; exit 1 on any disagreement")
    p.add_argument("program", help="a .crasp file or a library program name")
    p.add_argument("--verify-up-to", type=int, required=True, metavar="N",
                   help="compile for inputs up to length N, check random strings of lengths "
                        f"1..N (N at most {MAX_VERIFY_LENGTH})")
    p.add_argument("--mlp", choices=MLP_MODES, default="heaviside",
                   help="heaviside (exact at every length) or relu (exact up to N)")
    p.add_argument("--samples", type=int, default=20,
                   help=f"number of random strings (at most {MAX_VERIFY_SAMPLES}; default 20)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the random strings (default 0)")
    p.set_defaults(func=_compile)


def _compile(args):
    if not 1 <= args.verify_up_to <= MAX_VERIFY_LENGTH:
        raise LengthgenError(f"--verify-up-to (the compile's max_length) must be in "
                             f"1..{MAX_VERIFY_LENGTH}, got {args.verify_up_to}")
    if not 1 <= args.samples <= MAX_VERIFY_SAMPLES:
        raise LengthgenError(f"--samples must be in 1..{MAX_VERIFY_SAMPLES}, got {args.samples}")
    from lengthgen.crasp.compile import CompileReport, compile_program, verify_up_to
    from lengthgen.crasp.library import resolve
    program = resolve(args.program)
    compiled = compile_program(program, args.verify_up_to, args.mlp)   # refuses a huge model
    check_memory(verification_bytes(compiled, args.verify_up_to, args.samples),
                 f"verifying {program.name or 'the program'} up to length {args.verify_up_to:,} "
                 f"({heads_of(compiled):,} attention heads, each [n, n] at n = "
                 f"{args.verify_up_to + 1:,})", "ask for a smaller --verify-up-to")
    check_seconds(verification_seconds(compiled, args.verify_up_to, args.samples),
                  MAX_VERIFY_SECONDS, f"verifying {program.name or 'the program'} on "
                  f"{args.samples:,} strings up to length {args.verify_up_to:,} "
                  f"({heads_of(compiled):,} attention heads)",
                  "ask for fewer --samples or a smaller --verify-up-to")
    report = CompileReport(compiled, verify_up_to(program, compiled, args.verify_up_to,
                                                  args.samples, args.seed))
    print(report)
    return 0 if report.ok else 1


MAX_VERIFY_SECONDS = 120   # the estimate below, on one core
# The cost model of a verification, measured on the 2-core development machine (2026-11-26,
# load average 2 to 4): each head of each length's batch costs about 30 ns per entry of its
# [n+1, n+1] attention (tomita1 up to 5,000: 16 s for an estimate of 15 s), 3 ns per token and
# residual dimension (copy_unique up to 200, 1,530 heads of width 6,929: 68 s, estimate 83 s)
# and 0.4 ms of fixed work (sort up to 100, 152 heads: 1.4 s, estimate 1.9 s)
SECONDS_PER_ATTENTION = 3e-8
SECONDS_PER_READ = 3e-9
SECONDS_PER_HEAD_BATCH = 4e-4


def verification_seconds(compiled, n: int, samples: int) -> float:
    """Estimated seconds of verify_up_to(.., n, samples) on one core (its strings have the
    lengths below, one batch per length)."""
    import numpy as np
    lengths = np.linspace(1, n, samples).round().astype(int)
    tokens = lengths + 1.0
    width = compiled.model.token_embedding.shape[1]
    return heads_of(compiled) * (SECONDS_PER_ATTENTION * float((tokens ** 2).sum())
                                 + SECONDS_PER_READ * float(tokens.sum()) * width
                                 + SECONDS_PER_HEAD_BATCH * len(set(lengths.tolist())))


def heads_of(compiled) -> int:
    return sum(len(layer.heads) for layer in compiled.model.layers)


def verification_bytes(compiled, n: int, samples: int) -> float:
    """Memory of the compiled model's forward pass on the longest strings of a verification:
    every head's float64 [n+1, n+1] attention weights are kept (twice: per layer, then stacked
    for attention_weights), plus the residual stream and the widest MLP layer, for the strings
    of the longest length (samples spread over lengths 1..n, so about samples / n of them)."""
    batch = max(1, -(-samples // n))
    width = max((layer.mlp.w_in.shape[1] for layer in compiled.model.layers
                 if layer.mlp is not None), default=0)
    d = compiled.model.token_embedding.shape[1]
    tokens = batch * (n + 1)
    return 8.0 * (2 * heads_of(compiled) * tokens * (n + 1) + tokens * (4 * d + 2 * width))


SUBCOMMANDS = [add_run, add_check, add_list, add_show, add_compile]


def add_parser(sub):
    p = sub.add_parser("crasp", help="run, check and inspect C-RASP programs")
    csub = p.add_subparsers(dest="crasp_command", required=True)
    for add in SUBCOMMANDS:
        add(csub)

