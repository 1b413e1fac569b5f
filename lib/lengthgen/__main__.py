"""`python -m lengthgen COMMAND ...`: one entry point, one module per command group.

Errors meant for the user (LengthgenError) print one line on stderr and exit 2.
"""
import argparse
import importlib
import sys

from lengthgen.errors import LengthgenError

# command -> module in lengthgen.cli exposing add_parser(subparsers) (add a line per group)
COMMANDS = {
    "dyck": "dyck",
    "figure": "figure",
    "crasp": "crasp",
    "train": "train",
    "list": "train",
    "language": "language",
    "task": "task",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lengthgen",
                                     description="Length generalization in transformers: "
                                                 "tasks, models, C-RASP, experiments.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        importlib.import_module(f"lengthgen.cli.{module}").add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except LengthgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
