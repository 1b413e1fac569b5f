"""`python -m lengthgen COMMAND ...`: one entry point, one module per command group.

Every user error prints one line on stderr and exits 2: a bad option (argparse, after the
usage of the command is checked) as well as a LengthgenError raised by the library. Output cut
short by the reader (`| head`) ends quietly.
"""
import argparse
import importlib
import io
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


class OutputFailed(Exception):
    """stdout takes no more output: a full disk (`> /dev/full`), a closed descriptor."""


class _Stdout:
    """sys.stdout while a command runs: a failure to write or flush it is an OutputFailed,
    whatever the command was printing (print, csv, chunks), so that the entry point says it in
    one line. A reader that stops reading (BrokenPipeError) is left as it is: that ends quietly."""

    def __init__(self, stream):
        self._stream = stream

    def _call(self, name, *args):
        if self._stream is None:
            raise OutputFailed("stdout is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as e:   # ValueError: a closed file, an encoding
            text = str(e).splitlines()[0][:120] if str(e) else e.__class__.__name__
            raise OutputFailed(getattr(e, "strerror", None) or text) from None

    def write(self, text):
        return self._call("write", text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        return self._call("flush")

    def __getattr__(self, name):
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def _stdout_closed() -> bool:
    """Whether the command was started with its stdout closed (`>&-`)."""
    if sys.stdout is None:
        return True
    try:
        os.fstat(sys.stdout.fileno())
    except (AttributeError, io.UnsupportedOperation):   # a test's buffer: no descriptor
        return False
    except (OSError, ValueError):   # a closed descriptor, or a closed file object
        return True
    return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass   # stdout is not a file (a test's buffer) or is gone: nothing to do


def main(argv=None) -> int:
    try:   # the command modules load the figure registry, which checks every figure module
        parser = build_parser()
    except LengthgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:   # --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    if _stdout_closed():
        print("error: stdout is closed; give the command somewhere to write (a file, a pipe, "
              "/dev/null)", file=sys.stderr)
        return 2
    real = sys.stdout
    sys.stdout = _Stdout(real)
    try:
        return _dispatch(args)
    finally:
        sys.stdout = real


def _dispatch(args) -> int:
    try:
        code = args.func(args) or 0
        sys.stdout.flush()   # a full disk is found here for short outputs, not at exit
        return code
    except OutputFailed as e:
        print(f"error: cannot write to stdout ({e}); send the output somewhere that takes "
              f"it", file=sys.stderr)
        _quiet_stdout()
        return 2
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
        _quiet_stdout()
        return 0


if __name__ == "__main__":
    sys.exit(main())
