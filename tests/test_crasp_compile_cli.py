"""`python -m lengthgen crasp compile FILE --verify-up-to N`: size, verdict, exit codes."""
from lengthgen.__main__ import main


def test_compile_command_prints_size_and_agreement(tmp_path, capsys):
    path = tmp_path / "even_majority.crasp"
    path.write_text("alphabet a b\nM := #Q(b) <= #Q(a)\naccept M and i mod 2 = 0\n")
    assert main(["crasp", "compile", str(path), "--verify-up-to", "60", "--mlp", "relu",
                 "--samples", "6"]) == 0
    out = capsys.readouterr().out
    assert "layers" in out and "parameters" in out and "period 2" in out
    assert "AGREES" in out and "lengths 1..60" in out


def test_compile_command_errors_are_one_line(tmp_path, capsys):
    path = tmp_path / "bad.crasp"
    path.write_text("alphabet a b\nM := #Q(a) <= #Q(b)\n")
    assert main(["crasp", "compile", str(path), "--verify-up-to", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "max_length" in err and len(err.splitlines()) == 1
