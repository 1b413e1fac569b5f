"""The bad inputs of issue 50 (faults, round four) outside the budget slice loop: one device check
for every command, a record loader that refuses what no evaluation writes, the budget records
in the committed-records check, the figure contract, damaged `train --checkpoint` files and the
mode of what the library writes. Each ends in one clear line (exit 2) or in correct work."""
import json
import os
from pathlib import Path

import pytest

from lengthgen.__main__ import main
from lengthgen.errors import LengthgenError

ROOT = Path(__file__).resolve().parents[1]


def one_error_line(code, err, *words):
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


# ---- one device check for every command ---------------------------------------------------
DEVICE_COMMANDS = {
    "budget slice": ["budget", "slice", "--scale", "test", "--minutes", "1"],
    "figure run": ["figure", "run", "crasp-long-unary", "--scale", "test"],
    "train": ["train", "--task", "tomita2", "--steps", "1"],
}


def _device_command(name, tmp_path):
    where = {"budget slice": ["--root", str(tmp_path / "r")],
             "train": ["--out", str(tmp_path / "r")]}.get(name, [])
    return DEVICE_COMMANDS[name] + where


@pytest.mark.parametrize("command", sorted(DEVICE_COMMANDS))
@pytest.mark.parametrize("bad, words", [("bogus", ("unknown device 'bogus'",)),
                                        ("cuda:x", ("after ':' comes a device number",)),
                                        ("", ())])
def test_a_device_name_no_machine_has_is_refused_by_every_command_alike(
        command, bad, words, tmp_path, monkeypatch, capsys):
    """Budget slice gave a RuntimeError traceback for these, where `figure run` refused them;
    now every --device is checked by one function at parse time, with one message."""
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(tmp_path / "r"))
    if not bad:   # an empty name is "auto": nothing to refuse (checked through the others)
        from lengthgen.cli.args import device
        assert device("") == "" and device("CPU") == "CPU" and device("cuda:1") == "cuda:1"
        return
    code = main(_device_command(command, tmp_path) + ["--device", bad])
    err = capsys.readouterr().err
    one_error_line(code, err, f"error: {command}: argument --device:", *words)
    assert not (tmp_path / "r").exists(), "nothing written"


@pytest.mark.parametrize("command", sorted(DEVICE_COMMANDS))
def test_cuda_on_a_machine_without_it_is_refused_by_every_command_alike(
        command, tmp_path, monkeypatch, capsys):
    """Budget slice ran `--device cuda` without a GPU and exited 0 with no record."""
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(tmp_path / "r"))
    code = main(_device_command(command, tmp_path) + ["--device", "cuda"])
    one_error_line(code, capsys.readouterr().err,
                   "device 'cuda' was asked for but no CUDA GPU is available here")


def test_budget_slice_resolves_its_device_as_figure_run_does(tmp_path, monkeypatch, capsys):
    """`--device CPU` is the CPU for `figure run` and `train` (names are read in any case);
    budget slice gave a RuntimeError traceback. It now trains on the same device."""
    import torch

    from lengthgen.experiments.huang.sweep import budget
    seen = []

    def fake_slice(root, scale, device, deadline, **kwargs):
        seen.append(device)
        return {"recorded": 0}
    monkeypatch.setattr(budget, "run_slice", fake_slice)
    assert main(["budget", "slice", "--scale", "test", "--root", str(tmp_path), "--minutes",
                 "1", "--device", "CPU"]) == 0
    assert seen == [torch.device("cpu")]


# ---- what the library writes is readable by the group --------------------------------------
@pytest.fixture
def usual_umask():
    before = os.umask(0o022)
    yield
    os.umask(before)


def test_records_markers_and_states_are_written_0644_not_0600(tmp_path, usual_umask):
    """mkstemp makes 0600 files; a record or a state renamed from one stayed unreadable to the
    group (and to the copy that packs a GPU session's results)."""
    import stat

    import torch

    from lengthgen.engine.checkpoints import save_checkpoint
    from lengthgen.results import write_text_atomic
    text = tmp_path / "record.json"
    write_text_atomic(text, "{}\n", ".json")
    state = tmp_path / "states" / "job.pt"
    save_checkpoint(state, {"step": 1, "weights": torch.zeros(2)})
    for path in (text, state):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, oct(path.stat().st_mode)
    os.umask(0o077)   # a user who wants their files private keeps them private
    write_text_atomic(text, "{}\n", ".json")
    assert stat.S_IMODE(text.stat().st_mode) == 0o600


def test_a_record_the_runner_writes_is_0644(tmp_path, usual_umask):
    import stat

    from lengthgen.results import record_files
    from lengthgen.runs.runner import run_experiment
    run_experiment("crasp-long-unary", "test", "cpu", root=tmp_path)
    files = record_files(tmp_path / "crasp-long-unary" / "test")
    assert files and {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}
