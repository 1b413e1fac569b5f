"""`python -m lengthgen train` writes one sealed record outside results/; `list` names the ids."""
from lengthgen.__main__ import main
from lengthgen.results import load_records, results_dir


def test_train_command_writes_one_record_and_prints_each_bin(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LENGTHGEN_SCALE", "test")
    code = main(["train", "--task", "binary_majority", "--pe", "nope", "--dim", "16",
                 "--steps", "4", "--eval-every", "2", "--samples", "8", "--device", "cpu",
                 "--max-len", "10", "--checkpoint", str(tmp_path / "ckpt.pt"),
                 "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    for bin_name in ("1-50", "51-100", "101-150"):
        assert f"Len {bin_name:>9s}: accuracy" in out
    (record,) = load_records("train", "test", tmp_path)
    assert record["task"] == "binary_majority" and record["params"]["pe"] == "nope"
    assert record["metrics"]["steps"] == 4 and record["config"]["steps"] == 4
    assert record["config"]["max_len"] == 10 and (tmp_path / "ckpt.pt").exists()
    assert set(record["metrics"]["bins"]) == {"1-50", "51-100", "101-150"}


def test_train_command_errors_are_one_line(capsys):
    assert main(["train", "--task", "binary_majorty"]) == 2
    assert "Did you mean 'binary_majority'" in capsys.readouterr().err
    assert main(["train", "--task", "majority", "--out", str(results_dir() / "x")]) == 2
    assert "results/ holds only records written by `figure run`" in capsys.readouterr().err


def test_list_names_tasks_languages_and_figures(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "binary_majority" in out and "tomita1" in out and "Figures" in out
    assert main(["list", "tsks"]) == 2
    assert "Did you mean 'tasks'" in capsys.readouterr().err


def test_checkpoint_interval_is_an_option(tmp_path, capsys):
    from lengthgen.train import load_checkpoint
    path = tmp_path / "run.pt"
    assert main(["train", "--task", "binary_majority", "--layers", "1", "--heads", "1",
                 "--dim", "16", "--steps", "7", "--max-len", "6", "--eval-every", "7",
                 "--checkpoint", str(path), "--checkpoint-every", "3",
                 "--out", str(tmp_path / "runs")]) == 0
    assert load_checkpoint(path)["step"] == 7
    assert main(["train", "--task", "binary_majority", "--checkpoint-every", "0",
                 "--out", str(tmp_path / "runs")]) == 2
    assert "Traceback" not in capsys.readouterr().err
