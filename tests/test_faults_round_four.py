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

    from lengthgen.runs import planned
    seen = []

    def fake_slice(figure_id, scale, root, device, deadline, **kwargs):
        seen.append(device)
        return {"recorded": 0}
    monkeypatch.setattr(planned, "run_slice", fake_slice)
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


# ---- the figure contract ------------------------------------------------------------------
@pytest.fixture(scope="module")
def library_copy(tmp_path_factory):
    """A copy of the library where a test plants a figure module (the real one stays as it
    is); returns (folder to put on PYTHONPATH, path of the planted module)."""
    import shutil

    import lengthgen
    root = tmp_path_factory.mktemp("lib")
    shutil.copytree(Path(lengthgen.__file__).parent, root / "lengthgen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root, root / "lengthgen" / "experiments" / "izzo" / "izzo_planted.py"


def _run_with(library_copy, source, *argv, results=None):
    import subprocess
    import sys
    root, planted = library_copy
    planted.write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root), "LENGTHGEN_RESULTS": str(results or root / "r")}
    return subprocess.run([sys.executable, "-m", "lengthgen", *argv], capture_output=True,
                          text=True, cwd=root, env=env, timeout=300)


PLANTED = ('FIGURE_ID = {id!r}\nTITLE = "t"\nCONFIGS = {{"test": {{}}, "book": {{}}, '
           '"paper": {{}}}}\n\n\ndef runs(config):\n    return {runs!r}\n\n\n'
           'def run_one(params, config, device):\n    return {{"value": 1.0}}\n\n\n'
           'def figure(records):\n    pass\n')


def test_a_figure_module_with_a_syntax_error_fails_only_the_commands_that_need_figures(
        library_copy):
    """It broke every command with a SyntaxError traceback, `language sample` included."""
    source = 'FIGURE_ID = "izzo-planted"\n\ndef (\n'
    done = _run_with(library_copy, source, "language", "sample", "tomita2", "--length", "4")
    assert done.returncode == 0 and len(done.stdout.split()) == 1, done.stderr
    for argv in (["figure", "list"], ["figure", "data", "izzo-fig2-modp"],
                 ["figure", "run", "izzo-thm41-bound", "--scale", "test"]):
        done = _run_with(library_copy, source, *argv)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.strip().splitlines() == [
            "error: figure module izzo.izzo_planted cannot be read: invalid syntax at line 3 of "
            "izzo_planted.py"], done.stderr


def test_a_figure_module_that_fails_on_import_is_one_line(library_copy):
    source = PLANTED.format(id="izzo-planted", runs=[{"name": "a"}]) + "\nundefined_name\n"
    done = _run_with(library_copy, source, "figure", "run", "izzo-planted", "--scale", "test")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: figure module izzo.izzo_planted cannot be imported (NameError: name "
        "'undefined_name' is not defined)"], done.stderr


@pytest.mark.parametrize("figure_id", ["../../escaped", "a/b", ".hidden", "", "x\ny"])
def test_a_figure_id_that_is_not_a_plain_name_is_refused_and_nothing_written(
        library_copy, figure_id, tmp_path):
    """`FIGURE_ID = "../../escaped"` wrote its records outside the results folder."""
    results = tmp_path / "deep" / "er" / "results"
    source = PLANTED.format(id=figure_id, runs=[{"name": "a"}])
    done = _run_with(library_copy, source, "figure", "run", figure_id, "--scale", "test",
                     results=results)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"FIGURE_ID {figure_id!r} is not a plain name" in done.stderr, done.stderr
    assert not any(p.is_file() for p in tmp_path.rglob("*")), "nothing written anywhere"


@pytest.mark.parametrize("names, words", [
    (["a/b", "a_b"], "runs 'a/b' and 'a_b' at scale test share one record file (a_b.json)"),
    (["x", "x"], "run 'x' is registered twice at scale test"),
    (["ok", ""], "a run at scale test has no name"),
])
def test_run_names_that_collide_on_disk_are_refused_before_any_run(library_copy, names, words,
                                                                    tmp_path):
    """`a/b` and `a_b` are both a_b.json: one record silently replaced the other."""
    source = PLANTED.format(id="izzo-planted", runs=[{"name": n} for n in names])
    done = _run_with(library_copy, source, "figure", "run", "izzo-planted", "--scale", "test",
                     results=tmp_path / "r")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert not list((tmp_path / "r").rglob("*.json")), "no record written"


def test_every_registered_figure_meets_the_checked_contract():
    """The checks above refuse none of the real figures (ids and every scale's run names)."""
    from lengthgen.runs.contract import PLAIN_ID
    from lengthgen.runs.registry import EXPERIMENTS, expected_runs, experiment, source_ids
    assert len(EXPERIMENTS) >= 25
    for figure_id in EXPERIMENTS:
        assert PLAIN_ID.fullmatch(figure_id)
        if source_ids(figure_id) == (figure_id,):   # every scale it has (a planned figure's
            for scale in experiment(figure_id).CONFIGS:   # may be test and gpu)
                assert expected_runs(figure_id, scale)


# ---- a record loader that refuses what cannot be ------------------------------------------
BUDGET = ROOT / "results" / "huang-fig1-budget" / "gpu"
FIG1 = ROOT / "results" / "huang-fig1-languages" / "book"


def _forge(source: Path, root: Path, edit) -> Path:
    """A copy of a committed record under root, its metrics edited by edit(metrics) and its
    digest made again (anyone can: the digest is no key), so only the content is wrong."""
    from lengthgen.results import _digest
    record = json.loads(source.read_text())
    edit(record["metrics"])
    record.pop("digest")
    record["digest"] = _digest(record)
    path = root / source.parent.parent.name / source.parent.name / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


def _first_budget_record() -> Path:
    files = sorted(BUDGET.glob("*.json"))
    if not files:
        pytest.skip("no committed paper-budget records")
    return files[0]


@pytest.mark.parametrize("edit, words", [
    (lambda m: m["bins"].update({"101-150": 42}), "metrics.bins.101-150 is 42, not an accuracy"),
    (lambda m: m["bins"].update({"101-150": float("nan")}), "metrics.bins.101-150 is nan"),
    (lambda m: m["bins"].update({"101-150": -0.5}), "metrics.bins.101-150 is -0.5"),
    (lambda m: m["bins"].update({"101-150": "1.0"}), "metrics.bins.101-150 is '1.0'"),
    (lambda m: m["bins"].update({"101-150": None}), "metrics.bins.101-150 is None"),
    (lambda m: m.update({"bins": {}}), "metrics.bins is not a dict of accuracies per length bin"),
    (lambda m: m.pop("fit"), "metrics lacks fit"),
    (lambda m: m.update({"fit": "yes"}), "metrics.fit is 'yes', not true or false"),
    (lambda m: m["bins"].pop("101-150"), "metrics.bins names 1-50, 51-100, not the test bins"),
    (lambda m: m["bins"].update({"151-200": 0.5}), "not the test bins"),
])
def test_a_forged_budget_record_is_one_line_naming_its_file_in_plan_and_the_chapter(
        edit, words, tmp_path, monkeypatch, capsys):
    """A well-formed record with 42 or NaN on Len 101-150 reached the chapter's table; one
    without `fit` or a bin was a KeyError in plan, slice and the chapter's glue."""
    from lengthgen.experiments.huang.sweep import budget
    path = _forge(_first_budget_record(), tmp_path, edit)
    with pytest.raises(LengthgenError) as caught:
        budget.load_job_records(path.parent)
    assert str(caught.value).startswith(f"{path}: ") and words in str(caught.value)
    code = main(["budget", "plan", "--scale", "gpu", "--root", str(tmp_path)])
    one_error_line(code, capsys.readouterr().err, str(path), words)
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(tmp_path))
    from lengthgen.chapters import ape_vs_nope
    with pytest.raises(LengthgenError, match="not a"):
        ape_vs_nope._budget()


@pytest.mark.parametrize("edit, words", [
    (lambda m: m["seeds"][0]["bins"].update({"101-150": 42.0}),
     "metrics.seeds[0].bins.101-150 is 42.0, not an accuracy"),
    (lambda m: m["accuracy"].update({"101-150": float("nan")}),
     "metrics.accuracy.101-150 is nan, not an accuracy"),
    (lambda m: m["seeds"][0]["bins"].pop("51-100"), "metrics.seeds[0].bins lacks the length bin(s) 51-100"),
    (lambda m: m["seeds"][0].pop("fit"), "metrics.seeds[0] lacks fit"),
])
def test_a_forged_fig1_record_is_one_line_naming_its_file_in_figure_data(
        edit, words, tmp_path, monkeypatch, capsys):
    """`figure data` printed 4200.0 from a Fig. 1 record with 42 on a bin."""
    import shutil
    if not FIG1.is_dir():
        pytest.skip("no committed Fig. 1 records")
    copy = tmp_path / FIG1.parent.name / FIG1.name
    shutil.copytree(FIG1, copy)
    source = next(p for p in sorted(FIG1.glob("*.json"))
                  if json.loads(p.read_text())["metrics"].get("seeds"))
    path = _forge(source, tmp_path, edit)
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(tmp_path))
    code = main(["figure", "data", "huang-fig1-languages"])
    out, err = capsys.readouterr()
    one_error_line(code, err, str(path), words)
    assert "4200" not in out


def test_every_committed_record_passes_the_loader_and_its_readers_checks():
    """The checks refuse nothing the runner wrote: every record under results/ (the budget
    folder through the loader its readers use, each figure's through its check_record)."""
    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.results import load_record
    from lengthgen.runs.records import figure_records
    from lengthgen.runs.registry import EXPERIMENTS
    files = sorted((ROOT / "results").glob("*/*/*.json"))
    assert len(files) > 700
    for path in files:
        load_record(path)
    if BUDGET.is_dir():
        assert len(budget.load_job_records(BUDGET)) == len(list(BUDGET.glob("*.json")))
    checked = 0
    for figure_id in EXPERIMENTS:
        for scale in ("test", "book", "paper", "gpu"):
            checked += len(figure_records(figure_id, scale, ROOT / "results"))
    assert checked > 700


def test_the_score_keys_are_what_score_training_records():
    """protocol.SCORE_KEYS, which the check requires, is the score every sweep writes."""
    from lengthgen.experiments.huang.sweep.protocol import SCORE_KEYS
    source = _first_budget_record()
    metrics = json.loads(source.read_text())["metrics"]
    assert set(SCORE_KEYS) <= set(metrics)
    import inspect

    from lengthgen.experiments.huang.sweep import protocol
    body = inspect.getsource(protocol.score_training)
    assert all(f'"{key}"' in body for key in SCORE_KEYS)


# ---- the budget records in the committed-records check -------------------------------------
def test_the_committed_budget_records_are_exactly_the_ones_their_marker_lists():
    """The figure folders are checked against their registered runs (or their sweep marker);
    the budget folder, whose jobs no figure registers, is checked against its marker: a
    deleted, replaced or unlisted paper-budget record fails here. After unpacking a slice's
    records, `refresh_marker(folder)` lists them (README, the GPU session)."""
    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.runs.runner import IN_PROGRESS, in_progress, marker_problems
    if not BUDGET.is_dir():
        pytest.skip("no committed paper-budget records")
    marker = in_progress(BUDGET)
    assert marker is not None, f"{BUDGET / IN_PROGRESS} is missing"
    records = list(budget.load_job_records(BUDGET).values())
    problems = marker_problems(BUDGET, records)
    assert not problems, (f"{len(problems)} problem(s): {'; '.join(problems[:3])}; after "
                          f"committing new records on purpose, run lengthgen.runs.runner."
                          f"refresh_marker({str(BUDGET.relative_to(ROOT))!r})")
    assert len(marker["done"]) == len(records) > 0


@pytest.mark.parametrize("damage", ["delete", "replace", "add"])
def test_a_deleted_replaced_or_unlisted_budget_record_fails_the_check(damage, tmp_path):
    import shutil

    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.runs.runner import marker_problems, refresh_marker
    source = _first_budget_record()
    copy = tmp_path / BUDGET.parent.name / BUDGET.name
    shutil.copytree(BUDGET, copy)
    refresh_marker(copy, create=True)   # the copy's list is complete (the committed one is
    # checked above), whatever records were committed since
    assert marker_problems(copy, list(budget.load_job_records(copy).values())) == []
    victim = copy / source.name
    if damage == "delete":
        victim.unlink()
    elif damage == "replace":   # another, well-formed record of the same job
        _forge(source, tmp_path, lambda m: m.update({"steps": m["steps"] + 1}))
    else:   # a record of a job the marker does not list
        record = json.loads(victim.read_text())
        victim.unlink()
        marker = json.loads((copy / "SWEEP_IN_PROGRESS").read_text())
        marker["done"].pop(record["run_name"])
        (copy / "SWEEP_IN_PROGRESS").write_text(json.dumps(marker))
        shutil.copy(source, victim)
    problems = marker_problems(copy, list(budget.load_job_records(copy).values()))
    assert len(problems) == 1, problems
    assert {"delete": "has no record", "replace": "another digest",
            "add": "does not list"}[damage] in problems[0]


def test_refresh_marker_starts_the_list_of_a_folder_without_one(tmp_path):
    import shutil

    from lengthgen.runs.runner import in_progress, refresh_marker
    source = _first_budget_record()
    folder = tmp_path / BUDGET.parent.name / BUDGET.name
    folder.mkdir(parents=True)
    shutil.copy(source, folder)
    with pytest.raises(LengthgenError, match="no SWEEP_IN_PROGRESS marker"):
        refresh_marker(folder)
    marker = refresh_marker(folder, create=True)
    assert in_progress(folder) == marker
    assert list(marker["done"]) == [source.stem]


def test_a_bin_that_holds_a_dict_of_numbers_is_read_by_their_names():
    """`train` records hold {"1-50": {"accuracy", "n", "loss"}} under bins: n = 500 is a
    count, not an accuracy; the accuracy inside is still range-checked."""
    from lengthgen.results import _bins_problem, _metric_problem
    good = {"bins": {"1-50": {"accuracy": 1.0, "n": 500, "loss": 3.5},
                     "51-100": {"accuracy": 0.5, "n": 500, "loss": float("nan")}}}
    assert _metric_problem(good) is None and _bins_problem(good) is None
    bad = {"bins": {"1-50": {"accuracy": 42.0, "n": 500}}}
    assert "metrics.bins.1-50.accuracy is 42.0" in _metric_problem(bad)
    assert "metrics.scores[1].bins lacks the length bin(s) 51-100" in _bins_problem(
        {"scores": [{"bins": {"1-50": 0.1, "51-100": 0.2}}, {"bins": {"1-50": 0.3}}]})


def test_train_writes_a_record_the_loader_takes(tmp_path, capsys):
    from lengthgen.results import load_record
    assert main(["train", "--task", "tomita2", "--steps", "2", "--samples", "8",
                 "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.rglob("*.json")
    assert isinstance(load_record(path)["metrics"]["bins"]["1-50"], dict)


# ---- damaged `train --checkpoint` files ----------------------------------------------------
TRAIN = ["train", "--task", "tomita2", "--steps", "2", "--samples", "8"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A real checkpoint of a 2-step training of TRAIN, and its state."""
    import torch
    folder = tmp_path_factory.mktemp("checkpoint")
    path = folder / "ck.pt"
    assert main(TRAIN + ["--checkpoint", str(path), "--out", str(folder / "out")]) == 0
    return path, torch.load(path, weights_only=True)


def _damaged(state):
    import torch
    zeros = {k: torch.zeros(1) for k in state["model"]}
    return {
        "a tensor": (torch.zeros(3), "it holds a Tensor, not the state of a training"),
        "a list": ([1, 2], "it holds a list, not the state of a training"),
        "no rng": ({k: v for k, v in state.items() if k != "feed"}, "it lacks feed"),
        "older format": ({**state, "rng": {"numpy": {}, "torch": torch.zeros(2)}},
                         "it is of an older format (resume format 2"),
        "no weights": ({k: v for k, v in state.items() if k != "model"}, "it lacks model"),
        "wrong weights": ({**state, "model": zeros}, "size mismatch for"),
        "missing weights": ({**state, "model": {}}, "Missing key(s) in state_dict"),
        "foreign optimizer": ({**state, "adam": {"state": {}, "param_groups": []}},
                              "its optimizer state is not AdamW's moments by name"),
        "wrong moments": ({**state, "adam": {**state["adam"], "exp_avg": zeros}},
                          "a damaged checkpoint"),
        "bad rng": ({**state, "feed": {"numpy": 3, "torch": torch.zeros(2)}},
                    "random-generator states are not numpy's and torch's"),
        "bad numpy rng": ({**state, "feed": {**state["feed"], "numpy": {"state": 1}}},
                          "a damaged checkpoint"),
        "text step": ({**state, "step": "x"}, "its step is 'x', not a step of this run (0..2)"),
        "step past the run": ({**state, "step": 10 ** 9}, "its step is 1000000000"),
        "bad history": ({**state, "history": 5}, "its history is not a list of evaluations"),
        "NaN elapsed": ({**state, "elapsed": float("nan")}, "its elapsed time is nan"),
    }


@pytest.mark.parametrize("case", ["a tensor", "a list", "no rng", "no weights", "wrong weights",
                                  "missing weights", "foreign optimizer", "wrong moments",
                                  "bad rng", "older format",
                                  "bad numpy rng", "text step", "step past the run",
                                  "bad history", "NaN elapsed"])
def test_a_damaged_train_checkpoint_is_one_line_naming_it(checkpoint, case, tmp_path, capsys):
    """Each gave its own traceback (AttributeError, KeyError, RuntimeError of many lines,
    TypeError, ValueError); a step past the run's end was taken as done."""
    import torch
    path, state = checkpoint
    bad, words = _damaged(state)[case]
    target = tmp_path / "damaged.pt"
    torch.save(bad, target)
    before = target.read_bytes()
    capsys.readouterr()
    code = main(TRAIN + ["--checkpoint", str(target), "--out", str(tmp_path / "out")])
    one_error_line(code, capsys.readouterr().err, f"{target}: ", words)
    assert target.read_bytes() == before, "the damaged file is left as it was"
    assert not list(tmp_path.rglob("*.json")), "no record"


def test_a_good_checkpoint_still_resumes(checkpoint, tmp_path, capsys):
    import shutil
    path, _ = checkpoint
    shutil.copy(path, tmp_path / "ck.pt")
    assert main(TRAIN + ["--checkpoint", str(tmp_path / "ck.pt"), "--out",
                         str(tmp_path / "out")]) == 0
    assert len(list(tmp_path.rglob("*.json"))) == 1
