"""`python -m lengthgen try PROGRAM`: one run at the test scale writes its record and PNG under
--out, and every bad input is refused in one line, before training, with nothing written to
results/."""
import io
import json
import sys

import pytest

from lengthgen.__main__ import main
from lengthgen.results import results_dir

PROGRAM = """// more than twice as many a's as b's, and some c
alphabet a b c
Ca := #Q(a)
Cb := #Q(b)
accept Ca > Cb + Cb and exists Q(c)
"""


def results_listing() -> list:
    root = results_dir()
    return sorted(str(p) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture
def untouched_results():
    before = results_listing()
    yield
    assert results_listing() == before


def write(tmp_path, text, name="mine.crasp"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_try(capsys, *args):
    code = main(["try", *args, "--scale", "test", "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def test_try_prints_prediction_and_table_and_writes_record_and_png(tmp_path, capsys,
                                                                    untouched_results):
    out_dir = tmp_path / "out"
    code, out, err = run_try(capsys, write(tmp_path, PROGRAM), "--out", str(out_dir))
    assert code == 0, err
    assert "fragment: C-RASP[]" in out and "only positive predictions" in out
    for b in ("1-50", "51-100", "101-150"):
        assert any(line.strip().startswith(b) for line in out.splitlines())
    (record_path,) = (out_dir / "try" / "test").glob("*.json")
    record = json.loads(record_path.read_text())
    metrics = record["metrics"]
    assert metrics["fragment"] == "C-RASP[]"
    assert metrics["prediction"] == {"ape": "yes", "nope": "yes"}
    assert metrics["sampler"] == "balanced-last-position"
    assert set(metrics["accepted_share"]) == set(metrics["baseline"]) == \
        {"1-50", "51-100", "101-150"}
    for pe in ("ape", "nope"):
        seeds = metrics["encodings"][pe]["seeds"]
        assert [s["seed"] for s in seeds] == [0, 1, 2]
        assert all(set(s["accuracy"]) == {"1-50", "51-100", "101-150"} for s in seeds)
    assert record["git_commit"] and record["params"]["text"] == PROGRAM
    assert (out_dir / "try" / "test" / "mine.png").stat().st_size > 1000


def test_a_program_on_stdin(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("alphabet a b\naccept #[j = i - 1] Q(a) "
                                                  ">= 1 and #Q(b) > 1\n"))
    code, out, err = run_try(capsys, "-", "--out", str(tmp_path))
    assert code == 0, err
    assert "C-RASP[local]" in out and "NoPE: no prediction" in out
    assert (tmp_path / "try" / "test" / "stdin.json").exists()


def test_a_syntax_error_is_file_line_col_and_exit_2(tmp_path, capsys, untouched_results):
    path = write(tmp_path, "alphabet a b\nCa := #Q(a)\naccept Ca >> 1\n", "bad.crasp")
    code, out, err = run_try(capsys, path, "--out", str(tmp_path / "out"))
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"error: {path}:3:")
    assert not (tmp_path / "out").exists()


def test_a_syntax_error_on_stdin(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("alphabet a b\naccept #Q(a) >\n"))
    code, _, err = run_try(capsys, "-", "--out", str(tmp_path))
    assert code == 2 and err.startswith("error: <stdin>:2:")


def test_a_constant_verdict_is_refused_before_training(tmp_path, capsys, untouched_results):
    path = write(tmp_path, "alphabet a b\naccept #Q(a) + #Q(b) >= 0\n")
    code, out, err = run_try(capsys, path, "--out", str(tmp_path / "out"))
    assert code == 2 and "accepts 100.0% of a balanced sample" in err
    assert "refused before training" in err
    assert not list((tmp_path / "out").rglob("*.json"))


def test_an_alphabet_over_the_vocabulary_limit_is_refused(tmp_path, capsys):
    symbols = " ".join(f"s{k}" for k in range(65))
    path = write(tmp_path, f"alphabet {symbols}\naccept #Q(s0) > #Q(s1)\n")
    code, _, err = run_try(capsys, path, "--out", str(tmp_path / "out"))
    assert code == 2 and "65 symbols, over the 64 of try's model vocabulary" in err


def test_a_slow_interpreter_is_refused(tmp_path, capsys, untouched_results):
    """A program of 15,004 operations takes about 20 ms per string of length 150 on the busy
    2-core machine (a 30-operation one: 0.02 ms), ten times the limit of 2 ms."""
    lines = ["alphabet a b", "P0 := Q(a)"]
    for k in range(1, 5001):
        lines += [f"C{k} := #(P{k - 1} or Q(b))", f"P{k} := C{k} > #Q(a)"]
    path = write(tmp_path, "\n".join(lines) + "\n", "big.crasp")
    code, _, err = run_try(capsys, path, "--out", str(tmp_path / "out"))
    assert code == 2 and "ms per string of length 150" in err and "15,004 operations" in err
    assert "use a smaller program" in err and not (tmp_path / "out").exists()


def test_the_memory_limit_is_applied_as_train_applies_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LENGTHGEN_MEMORY_LIMIT", "1K")
    code, _, err = run_try(capsys, write(tmp_path, PROGRAM), "--out", str(tmp_path / "out"))
    assert code == 2 and "needs about" in err and "over the limit of" in err
    assert "LENGTHGEN_MEMORY_LIMIT=1K" in err


def test_an_unwritable_out_is_refused_before_training(tmp_path, capsys, untouched_results):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code, out, err = run_try(capsys, write(tmp_path, PROGRAM), "--out", str(blocker / "sub"))
    assert code == 2 and "cannot write the record" in err and "fragment" not in out
    code, _, err = run_try(capsys, write(tmp_path, PROGRAM), "--out",
                           str(results_dir() / "mine"))
    assert code == 2 and "results/ holds only records written by `figure run`" in err


def test_a_next_token_program_is_refused(tmp_path, capsys):
    code, _, err = run_try(capsys, "induction_head", "--out", str(tmp_path))
    assert code == 2 and "next-token program" in err


def test_a_device_that_is_not_there_is_refused(tmp_path, capsys):
    code, _, err = run_try(capsys, write(tmp_path, PROGRAM), "--device", "warp-drive",
                           "--out", str(tmp_path / "out"))
    assert code == 2 and "warp-drive" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_paper_scale_prints_its_gpu_estimate_first_and_refuses_a_cpu(tmp_path, capsys,
                                                                        untouched_results):
    """`--scale paper` says what it would cost before anything trains, by the book's estimate
    (runs.cost on the jobs it would train), and on a CPU refuses in one line."""
    from lengthgen.crasp.syntax import parse_program
    from lengthgen.crasp.task import program_task
    from lengthgen.experiments import try_program
    from lengthgen.runs.cost import estimate, job_training
    code = main(["try", write(tmp_path, PROGRAM), "--scale", "paper", "--device", "cpu",
                 "--quiet", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "6 decoders (4L4H d256) for 30,000 steps each" in err and "--device cuda" in err
    assert not (tmp_path / "out" / "try").exists()
    task = program_task(parse_program(PROGRAM, name="mine"))
    cost = try_program.gpu_estimate(task, "paper")
    jobs = try_program.jobs(task, "paper")
    assert len(jobs) == 6 and {j.train.steps for j in jobs} == {30000}
    assert cost.minutes() == estimate("x", [job_training(j) for j in jobs]).minutes()
    assert f"about {cost.minutes():.0f} minutes on an H200" in err
    assert cost.minutes("t4") > cost.minutes() > 0
