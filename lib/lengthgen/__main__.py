"""`python -m lengthgen COMMAND ...`: one entry point, one module per command group.

Every user error prints one line on stderr and exits 2: a bad option (argparse, after the
usage of the command is checked) as well as a LengthgenError raised by the library. Output cut
short by the reader (`| head`) ends quietly.
"""
import argparse
import importlib
import os
import re
import sys

from lengthgen.errors import LengthgenError

PROG = "python -m lengthgen"


# what argparse takes for a value rather than an option: -1, -.5, -1e-3, -2.5E+4, -inf, -nan
# (its own test misses exponents, so `--lr -1e-3` read as an option); the value is then checked
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$",
                             re.IGNORECASE)


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, like every other user error, and that reads
    a negative number (also with an exponent) as a value, so its option can refuse it clearly."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message):
        command = self.prog.removeprefix(PROG).strip()
        self.exit(2, f"error: {command + ': ' if command else ''}{message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG,
                           description="Length generalization in transformers: "
                                       "tasks, models, C-RASP, experiments.")
    from lengthgen import __version__   # no torch: --help and --version start in a fraction of a s
    parser.add_argument("--version", action="version", version=f"lengthgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in command_modules():
        module.add_parser(sub)
    return parser


def command_modules() -> list:
    """The modules of lengthgen.cli that add command groups (each has add_parser; one module
    may add several commands): derived from the package, so a new group needs no list."""
    import pkgutil

    import lengthgen.cli as cli
    modules = [importlib.import_module(f"lengthgen.cli.{m.name}")
               for m in pkgutil.iter_modules(cli.__path__) if not m.name.startswith("_")]
    return [m for m in modules if hasattr(m, "add_parser")]


OUT_OF_MEMORY = "out of memory; ask for fewer or shorter samples, or a smaller model"


def _out_of_memory(e: RuntimeError) -> bool:
    text = str(e).lower()
    return "out of memory" in text or "can't allocate memory" in text \
        or "cannot allocate memory" in text or "not enough memory" in text


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:   # --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    try:
        return args.func(args) or 0
    except LengthgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"error: {OUT_OF_MEMORY}", file=sys.stderr)
        return 2
    except OverflowError as e:   # a number too large for a float or a C integer somewhere
        print(f"error: a number is too large for this computation ({e}); use smaller values",
              file=sys.stderr)
        return 2
    except RuntimeError as e:   # torch reports running out of memory as a RuntimeError
        if not _out_of_memory(e):
            raise
        print(f"error: {OUT_OF_MEMORY} ({str(e).splitlines()[0][:200]})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader stopped reading (`| head`): point stdout at /dev/null so that the final
        # flush at exit does not fail again
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):   # stdout is not a file (a test's buffer): nothing to do
            pass
        return 0


if __name__ == "__main__":
    sys.exit(main())
