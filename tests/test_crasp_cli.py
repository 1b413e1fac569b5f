"""`python -m lengthgen crasp ...`: outputs and exit codes."""
import io

from lengthgen.__main__ import main


def run(argv, stdin="", monkeypatch=None, capsys=None):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_prints_one_verdict_per_line(monkeypatch, capsys):
    code, out, _ = run(["crasp", "run", "dyck1"], "aabb\nabba\n\nab\n", monkeypatch, capsys)
    assert code == 0 and out.split() == ["1", "0", "1", "1"]


def test_run_a_file_and_trace(tmp_path, monkeypatch, capsys):
    path = tmp_path / "even.crasp"
    path.write_text("alphabet a\naccept i mod 2 = 0\n")
    code, out, _ = run(["crasp", "run", str(path)], "aa\naaa\n", monkeypatch, capsys)
    assert out.split() == ["1", "0"]
    code, out, _ = run(["crasp", "run", str(path), "--trace"], "aa\n", monkeypatch, capsys)
    assert code == 0 and "accept" in out and "^" in out


def test_syntax_error_is_one_line_with_position_and_exit_2(tmp_path, monkeypatch, capsys):
    path = tmp_path / "bad.crasp"
    path.write_text("alphabet a b\nC := #Q(a)\nP := C and Q(b)\n")
    code, out, err = run(["crasp", "run", str(path)], "ab\n", monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and f"{path}:3:6:" in err and "Traceback" not in err


def test_unknown_program_and_missing_file_exit_2(monkeypatch, capsys):
    code, _, err = run(["crasp", "run", "dyck_one"], "", monkeypatch, capsys)
    assert code == 2 and "dyck1" in err
    code, _, err = run(["crasp", "check", "/nonexistent/x.crasp"], "", monkeypatch, capsys)
    assert code == 2 and "no such program file" in err


def test_check_passes_and_fails_with_exit_codes(monkeypatch, capsys):
    code, out, _ = run(["crasp", "check", "tomita1", "--max-length", "8", "--random", "100"],
                       "", monkeypatch, capsys)
    assert code == 0 and "ok" in out
    code, out, _ = run(["crasp", "check", "tomita1", "--language", "tomita7", "--max-length", "6",
                        "--random", "50"], "", monkeypatch, capsys)
    assert code == 1 and "disagree:" in out and "FAILED" in out


def test_check_a_task_program(monkeypatch, capsys):
    code, out, _ = run(["crasp", "check", "binary_majority", "--max-length", "30",
                        "--random", "100"], "", monkeypatch, capsys)
    assert code == 0 and "ok" in out


def test_unknown_language_exit_2(monkeypatch, capsys):
    code, _, err = run(["crasp", "check", "tomita1", "--language", "tomita99"], "",
                       monkeypatch, capsys)
    assert code == 2 and "tomita1" in err


def test_list_and_show(monkeypatch, capsys):
    code, out, _ = run(["crasp", "list"], "", monkeypatch, capsys)
    assert code == 0 and "tomita4" in out and "C-RASP[local]" in out
    code, out, _ = run(["crasp", "show", "majority_ab"], "", monkeypatch, capsys)
    assert code == 0 and out.startswith("//") and "alphabet a b" in out
