"""The bad inputs of issue 39 (faults, round three) on the command line: one clear line and a
non-zero exit, never a traceback, a hang or silent nonsense (partial data without a word,
output lost to a full disk without a word)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lengthgen.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
FIGURE = "crasp-long-unary"   # cheap runs at test scale


def one_error_line(code, err, *words):
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


@pytest.fixture(scope="module")
def partial_results(tmp_path_factory):
    """A results folder where one registered run of FIGURE at test scale has no record."""
    from lengthgen.runs.runner import run_experiment
    from lengthgen.results import record_path
    root = tmp_path_factory.mktemp("results")
    records = run_experiment(FIGURE, "test", "cpu", root=root)
    assert len(records) > 1
    record_path(FIGURE, "test", records[0]["run_name"], root).unlink()
    return root, records[0]["run_name"]


def test_figure_data_warns_on_stderr_when_records_are_missing(partial_results, monkeypatch,
                                                              capsys):
    root, gone = partial_results
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(root))
    assert main(["figure", "data", FIGURE, "--scale", "test"]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") > 1, "the partial data is printed"
    assert err.startswith("warning: ") and err.count("\n") == 1, err
    assert "INCOMPLETE" in err and "1 of" in err and gone in err
    # the same without --scale (the largest scale with records)
    assert main(["figure", "data", FIGURE]) == 0
    assert "INCOMPLETE" in capsys.readouterr().err


def test_figure_data_complete_refuses_partial_data(partial_results, monkeypatch, capsys):
    root, gone = partial_results
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(root))
    code = main(["figure", "data", FIGURE, "--scale", "test", "--complete"])
    out, err = capsys.readouterr()
    one_error_line(code, err, "INCOMPLETE", "--complete")
    assert out == ""


def test_figure_data_of_complete_records_says_nothing_on_stderr(capsys):
    assert main(["figure", "data", "richard-fig3-left-capacity", "--complete"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.count("\n") > 1


STDOUT_CASES = [(["figure", "list"], ""),
                (["figure", "data", "richard-fig3-left-capacity"], ""),
                (["language", "sample", "d4", "--length", "6", "--count", "3"], ""),
                (["crasp", "run", "tomita1"], "11\n10\n")]


@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"])
def test_a_failing_stdout_is_one_line_and_a_nonzero_exit(redirect):
    """`> /dev/full` (a full disk) and a closed stdout: one line on stderr, exit 2, for every
    command that prints (handled once, in the entry point)."""
    script = "".join(f"printf {stdin!r} | {sys.executable} -m lengthgen {' '.join(argv)} "
                     f"2>&1 {redirect}; echo \"exit $?\"; echo ---\n"
                     for argv, stdin in STDOUT_CASES)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "OMP_NUM_THREADS": "1"}
    env.pop("LENGTHGEN_RESULTS", None)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    outputs = done.stdout.split("---\n")[:-1]
    assert len(outputs) == len(STDOUT_CASES), done.stdout + done.stderr
    for (argv, _), text in zip(STDOUT_CASES, outputs):
        lines = text.splitlines()
        assert lines[-1] == "exit 2", (argv, text)
        assert len(lines) == 2 and lines[0].startswith("error: ") and "stdout" in lines[0], \
            (argv, text)


def test_a_checkpoint_that_cannot_be_written_is_one_line(tmp_path, monkeypatch, capsys):
    """torch.save reports a full disk as a RuntimeError (PytorchStreamWriter failed writing
    file ...): one line naming the checkpoint, no temporary file left."""
    import torch

    def full(state, path, *args, **kwargs):
        Path(path).write_bytes(b"PK")
        raise RuntimeError("[enforce fail at inline_container.cc:778] . PytorchStreamWriter "
                           "failed writing file data/0: file write failed")
    monkeypatch.setattr(torch, "save", full)
    code = main(["train", "--task", "binary_majority", "--steps", "2", "--dim", "8",
                 "--samples", "2", "--eval-every", "1", "--out", str(tmp_path / "runs"),
                 "--checkpoint", str(tmp_path / "ckpt" / "c.pt"), "--checkpoint-every", "1"])
    one_error_line(code, capsys.readouterr().err, "cannot write the checkpoint", "c.pt",
                   "file write failed")
    assert not list((tmp_path / "ckpt").glob("*"))


def test_train_out_refuses_the_tracked_results_of_any_git_work_tree(tmp_path, monkeypatch,
                                                                    capsys):
    other = tmp_path / "other-checkout"
    (other / "results" / "fig" / "book").mkdir(parents=True)
    (other / "results" / "fig" / "book" / "run.json").write_text("{}\n")
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "add", "results"], check=True)
    train = ["train", "--task", "binary_majority", "--steps", "1", "--dim", "8"]
    for out in (other / "results", other / "results" / "fig" / "new"):
        code = main(train + ["--out", str(out)])
        one_error_line(code, capsys.readouterr().err, "whose records git tracks")
    assert not (other / "results" / "fig" / "new").exists()
    # a results/ that git does not track (or no git at all) is an ordinary folder
    untracked = tmp_path / "plain" / "results"
    code = main(train + ["--out", str(untracked), "--samples", "2", "--eval-every", "1"])
    assert code == 0, capsys.readouterr().err
    assert list(untracked.rglob("*.json"))


def crasp(argv, stdin, monkeypatch, capsys):
    import io
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(argv)
    return (code, *capsys.readouterr())


@pytest.mark.parametrize("make, words", [
    (lambda p: os.mkfifo(p), ["named pipe (FIFO)"]),
    (lambda p: p.symlink_to("/dev/zero"), ["a device", "symbolic link"]),
    (lambda p: (p.symlink_to(p.with_name("other.crasp")),
                p.with_name("other.crasp").symlink_to(p)), ["loop of symbolic links"])])
@pytest.mark.parametrize("command", [["crasp", "run"], ["crasp", "compile"]])
def test_a_program_file_that_is_no_regular_file_says_what_it_is(tmp_path, make, words, command,
                                                                monkeypatch, capsys):
    path = tmp_path / "prog.crasp"
    make(path)
    extra = ["--verify-up-to", "5"] if command[1] == "compile" else []
    code, out, err = crasp(command + [str(path)] + extra, b"ab\n", monkeypatch, capsys)
    one_error_line(code, err, *words)
    assert "no such program file" not in err and out == ""


def test_a_program_file_with_a_byte_order_mark_is_read(tmp_path, monkeypatch, capsys):
    path = tmp_path / "bom.crasp"
    path.write_bytes("\ufeffalphabet a b\naccept #Q(a) > #Q(b)\n".encode("utf-8"))
    code, out, err = crasp(["crasp", "run", str(path)], b"aab\nabb\n", monkeypatch, capsys)
    assert code == 0 and out.split() == ["1", "0"], err


def test_next_of_a_symbol_outside_the_alphabet_is_refused(tmp_path, monkeypatch, capsys):
    path = tmp_path / "nz.crasp"
    path.write_text("alphabet a b\nnext(z) := true\n")
    code, out, err = crasp(["crasp", "run", str(path)], b"ab\n", monkeypatch, capsys)
    one_error_line(code, err, f"{path}:2:1:", "next(z)", "neither in the alphabet a b nor <eos>")
    path.write_text("alphabet a b\nnext(<eos>) := #Q(a) > 1\n")   # the end token is allowed
    from lengthgen.crasp.library import resolve
    assert resolve(str(path)).token_outputs == {"<eos>": "next(<eos>)"}


def test_a_next_token_program_without_accept_gives_no_acceptance_verdicts(tmp_path, monkeypatch,
                                                                           capsys):
    """Its default output would be its last next(...): 1 for every input, which says nothing."""
    path = tmp_path / "na.crasp"
    path.write_text("alphabet a b\nnext(a) := true\n")
    code, out, err = crasp(["crasp", "run", str(path)], b"ab\nb\n", monkeypatch, capsys)
    one_error_line(code, err, "next-token program", "next(a)", "accept")
    assert out == ""
    path.write_text("alphabet a b\nnext(a) := true\naccept #Q(a) > 0\n")
    code, out, err = crasp(["crasp", "run", str(path)], b"ab\nb\n", monkeypatch, capsys)
    assert code == 0 and out.split() == ["1", "0"]


def test_a_verification_estimated_over_its_time_limit_is_refused_at_once(capsys):
    """dyck1 on 1,000 strings up to length 5,000 ran past two minutes: refused in one line."""
    import time
    from lengthgen.cli.crasp import MAX_VERIFY_SECONDS, verification_seconds
    from lengthgen.crasp.compile import compile_program
    from lengthgen.crasp.library import resolve
    start = time.perf_counter()
    code = main(["crasp", "compile", "dyck1", "--verify-up-to", "5000", "--samples", "1000"])
    one_error_line(code, capsys.readouterr().err, f"limit of {MAX_VERIFY_SECONDS} s",
                   "--samples")
    assert time.perf_counter() - start < 20
    # the documented example and the longest default verification stay allowed
    for name, n in (("dyck1", 1000), ("tomita1", 5000), ("majority_ab", 5000)):
        compiled = compile_program(resolve(name), n)
        assert verification_seconds(compiled, n, 20) < MAX_VERIFY_SECONDS, name
