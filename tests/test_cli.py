"""The command line: help works, user errors are one line on stderr with exit code 2."""
import subprocess
import sys


def run(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "lengthgen", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_help_lists_every_command():
    """Every command group of lengthgen.cli is found without a list, and --help shows it."""
    from lengthgen.__main__ import build_parser, command_modules
    names = {m.__name__.rsplit(".", 1)[1] for m in command_modules()}
    assert {"crasp", "dyck", "figure", "language", "task", "train"} <= names
    commands = build_parser()._subparsers._group_actions[0].choices
    assert {"train", "list", "figure", "crasp", "dyck", "language", "task"} <= set(commands)
    result = run("--help")
    assert result.returncode == 0
    for command in commands:
        assert command in result.stdout


def test_unknown_figure_is_one_clean_line():
    result = run("figure", "run", "huang-fig5-6-positionl", "--scale", "test")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("error: unknown figure id")
    assert len(result.stderr.strip().splitlines()) == 1


def test_invalid_scale_lists_the_valid_ones():
    result = run("figure", "run", "anything", "--scale", "huge")
    assert result.returncode == 2
    assert "test, book, paper" in result.stderr and "Traceback" not in result.stderr
