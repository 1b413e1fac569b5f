"""`python -m lengthgen language ...` and `task ...`: outputs, and one-line errors with exit 2."""
import io
import subprocess
import sys

import pytest

from lengthgen.__main__ import main
from test_languages_dfa import ORACLES


def run(argv, stdin="", monkeypatch=None, capsys=None):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_language_sample_prints_members(monkeypatch, capsys):
    code, out, _ = run(["language", "sample", "d3", "--length", "12", "--count", "7",
                        "--seed", "3"], monkeypatch=monkeypatch, capsys=capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 7
    assert all(len(w) == 12 and ORACLES["d3"](w) for w in lines)
    assert run(["language", "sample", "d3", "--length", "12", "--count", "7", "--seed", "3"],
               monkeypatch=monkeypatch, capsys=capsys)[1] == out


def test_language_accepts_and_next(monkeypatch, capsys):
    code, out, _ = run(["language", "accepts", "tomita3"], "100\n10\n\n1101000\n",
                       monkeypatch, capsys)
    assert code == 0 and out.split() == ["1", "0", "1", "0"]
    code, out, _ = run(["language", "next", "ab_d_bc"], "\nabd\nc\n", monkeypatch, capsys)
    assert code == 0 and out.split("\n") == ["a b d", "b c $", "", ""]


def test_task_sample_prints_formatted_sequences(monkeypatch, capsys):
    code, out, _ = run(["task", "sample", "sort", "--length", "5", "--count", "3"],
                       monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0
    for line in out.splitlines():
        tokens = line.split()
        assert tokens[0] == "<bos>" and tokens[6] == "<sep>" and tokens[-1] == "<eos>"
        assert tokens[7:12] == sorted(tokens[1:6], key=int)


@pytest.mark.parametrize("argv, stdin", [
    (["language", "accepts", "tomita1"], "11\n1a1\n"),
    (["language", "next", "nope"], ""),
    (["language", "sample", "aa_star", "--length", "3"], ""),
    (["language", "sample", "aa_star", "--length", "-1"], ""),
    (["task", "sample", "sort", "--length", "151"], ""),
    (["task", "sample", "tomita1", "--length", "5"], ""),
])
def test_errors_are_one_line_with_exit_2(argv, stdin, monkeypatch, capsys):
    code, _, err = run(argv, stdin, monkeypatch, capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_no_traceback_from_the_real_command():
    result = subprocess.run([sys.executable, "-m", "lengthgen", "language", "accepts", "d2"],
                            input="ab\nabc\n", capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == "1\n\n"   # the bad line: empty
    assert result.stderr.startswith("error: line 2:") and "Traceback" not in result.stderr
