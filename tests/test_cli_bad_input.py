"""The bad inputs of issue 13, one by one: each gives one clear line and exit 2, or a correct
result (the generated ones are in test_cli_properties.py)."""
import io
import sys

import pytest

from lengthgen.__main__ import main
from lengthgen.crasp import accepts, parse_program


def run(argv, monkeypatch, capsys, stdin: bytes = b"", env=None):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def one_error_line(code, err, *words):
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "binary.crasp").write_bytes(bytes(range(256)))
    (tmp_path / "latin1.crasp").write_bytes("alphabet \xe9 b\nX := #Q(\xe9) > 0\n"
                                            .encode("latin-1"))
    (tmp_path / "a_file").write_text("x\n")
    return tmp_path


TRAIN = ["train", "--task", "binary_majority", "--steps", "1", "--dim", "8"]


@pytest.mark.parametrize("argv, words", [
    (["crasp", "check", "tomita1", "--random-length", "0"], ["--random-length"]),
    (TRAIN + ["--device", "cpu:abc"], ["cpu:abc"]),
    (["language", "sample", "d4", "--length", "6", "--seed", "-1"], ["--seed"]),
    (["task", "sample", "addition", "--length", "5", "--seed", "-1"], ["--seed"]),
    (["crasp", "compile", "tomita1", "--verify-up-to", "5", "--seed", "-1"], ["--seed"]),
    (["dyck", "complete", "((", "--train-word", "(())", "--seed", "-1"], ["--seed"]),
    (TRAIN + ["--seed", "-1"], ["--seed"]),
    (TRAIN + ["--lr", "nan"], ["--lr"]),
    (TRAIN + ["--mlp-ratio", "nan"], ["--mlp-ratio"]),
    (["dyck", "complete", "((", "--train-word", "(())", "--gamma", "inf"], ["--gamma"]),
    (["dyck", "complete", "((", "--train-word", "(())", "--gamma", "nan"], ["--gamma"]),
    (["dyck", "complete", "((", "--train-word", "(())", "--v", "nan"], ["--v"]),
    # what cannot be streamed is capped, and the limit is stated
    (["task", "sample", "addition", "--length", "100000000"], ["10000"]),
    (["language", "sample", "d4", "--length", "100000000"], ["10000"]),
    (["crasp", "compile", "tomita1", "--verify-up-to", "10000000"], ["5000"]),
    (["dyck", "complete", "((", "--train-word", "(())", "--samples", "100000000"],
     ["250,000,000"]),
])
def test_issue_cases_are_one_line(argv, words, monkeypatch, capsys):
    code, _, err = run(argv, monkeypatch, capsys)
    one_error_line(code, err, *words)


def test_device_variable_and_out_file_fail_before_training(files, monkeypatch, capsys):
    code, _, err = run(TRAIN, monkeypatch, capsys, env={"LENGTHGEN_DEVICE": "cpu:abc"})
    one_error_line(code, err, "cpu:abc")
    monkeypatch.delenv("LENGTHGEN_DEVICE")
    code, _, err = run(TRAIN + ["--out", str(files / "a_file")], monkeypatch, capsys)
    one_error_line(code, err, "a_file", "Not a directory")


@pytest.mark.parametrize("command", [["crasp", "run"], ["crasp", "compile"]])
@pytest.mark.parametrize("name, place", [("binary.crasp", ":2:118:"), ("latin1.crasp", ":1:10:")])
def test_program_files_that_are_not_utf8(files, command, name, place, monkeypatch, capsys):
    argv = command + [str(files / name)] + (["--verify-up-to", "5"] if "compile" in command
                                            else [])
    code, _, err = run(argv, monkeypatch, capsys, stdin=b"ab\n")
    one_error_line(code, err, "not UTF-8", f"{name}{place}")


def reference(words):
    """"Some a" over {a, b}: what each program below computes."""
    return [int("a" in w) for w in words]


WORDS = ["", "a", "b", "ab", "bbb", "bba", "aaaa"]


@pytest.mark.parametrize("text", [
    "alphabet a b\nX := " + "(" * 150 + "#Q(a) > 0" + ")" * 150 + "\n",
    "alphabet a b\nX := " + " + ".join(["#Q(a)"] * 500) + " > 0\n",
    "alphabet a b\n" + "".join(f"B{k} := not not B{k + 1}\n" for k in range(300))
    + "B300 := #Q(a) > 0\naccept B0\n",
])
def test_deep_and_long_programs_parse_and_run(text):
    program = parse_program(text)
    assert [int(accepts(program, w)) for w in WORDS] == reference(WORDS)


def test_deep_programs_compile(tmp_path, monkeypatch, capsys):
    path = tmp_path / "chain.crasp"
    path.write_text("alphabet a b\nC0 := #Q(a)\n" + "".join(
        f"C{k + 1} := C{k} + 1\n" for k in range(1000)) + "X := C1000 > 1001\n")
    code, out, _ = run(["crasp", "compile", str(path), "--verify-up-to", "5"], monkeypatch, capsys)
    assert code == 0 and "AGREES" in out and "1001 layers" in out


@pytest.mark.parametrize("body, words", [
    (f"X := #Q(a) > {2 ** 64}", ["larger than", ":2:14:"]),
    ("X := " + "(" * 301 + "Q(a)" + ")" * 301, ["nest more than 300"]),
    ("X := i mod 2000000 = 5", ["period"]),
])
def test_program_limits_are_stated(body, words):
    with pytest.raises(Exception) as e:
        parse_program("alphabet a b\n" + body + "\n")
    assert type(e.value).__name__ == "LengthgenError"
    assert all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("body", ["X := i mod 100000 = 5", "X := #[i - j <= 1000000] Q(a) > 0"])
def test_huge_models_are_refused_before_allocating(body, tmp_path, monkeypatch, capsys):
    path = tmp_path / "big.crasp"
    path.write_text("alphabet a b\n" + body + "\n")
    code, _, err = run(["crasp", "compile", str(path), "--verify-up-to", "5"], monkeypatch, capsys)
    one_error_line(code, err, "parameters", "over the limit")
    code, out, _ = run(["crasp", "run", str(path)], monkeypatch, capsys, stdin=b"b\nab\n")
    assert code == 0 and out == ("0\n0\n" if "mod" in body else "0\n1\n")   # it runs


def test_parenthesis_symbols_and_comma_alphabet():
    program = parse_program("alphabet ( )\nX := #Q()) <= #Q(()\n")
    assert [accepts(program, w) for w in ["(", ")", "()", "())"]] == [True, False, True, False]
    with pytest.raises(Exception, match="comma"):
        parse_program("alphabet a,b\nX := #Q(a) > 0\n")


def test_a_bad_line_of_stdin_names_its_number_and_the_rest_goes_on(monkeypatch, capsys):
    code, out, err = run(["crasp", "run", "tomita1"], monkeypatch, capsys,
                         stdin=b"11\n121\n\xff\n1\n")
    assert code == 2 and out == "1\n\n\n1\n"
    lines = err.splitlines()
    assert lines[0].startswith("error: line 2: ") and "'2'" in lines[0]
    assert lines[1].startswith("error: line 3: not UTF-8") and len(lines) == 2


def test_unclosed_bracket_is_reported_where_it_opens():
    with pytest.raises(Exception, match=r"<string>:2:6: '\(' is not closed"):
        parse_program("alphabet a b\nX := (#Q(a) > 0\nY := X\n")
