"""The results store: sealed records round-trip; broken, incomplete or edited ones are refused."""
import json

import pytest

from lengthgen.errors import LengthgenError
from lengthgen.results import load_record, load_records, provenance, write_record


def record(**changes):
    base = {"figure_id": "train", "run_name": "majority/seed 0", "task": "binary_majority",
            "config": {"steps": 10}, "params": {"seed": 0}, "scale": "test", "seed": 0,
            "metrics": {"bins": {"1-50": {"accuracy": 1.0}}}, **provenance("cpu", 1.5)}
    base.update(changes)
    return base


def test_written_record_loads_back_with_its_digest(tmp_path):
    path = write_record(record(), tmp_path)
    assert path == tmp_path / "train" / "test" / "majority_seed_0.json"
    loaded = load_record(path)
    assert loaded["metrics"] == {"bins": {"1-50": {"accuracy": 1.0}}}
    assert len(loaded["digest"]) == 64
    assert [r["run_name"] for r in load_records("train", "test", tmp_path)] == ["majority/seed 0"]
    assert load_records("train", "book", tmp_path) == []


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    for i in range(3):
        write_record(record(run_name=f"run{i}"), tmp_path)
    folder = tmp_path / "train" / "test"
    assert sorted(p.name for p in folder.iterdir()) == ["run0.json", "run1.json", "run2.json"]


def test_interrupted_write_leaves_neither_file_nor_temp(tmp_path, monkeypatch):
    def crash(src, dst):
        raise KeyboardInterrupt  # killed between writing the temp file and renaming it
    monkeypatch.setattr("lengthgen.results.os.replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_record(record(), tmp_path)
    assert list((tmp_path / "train" / "test").iterdir()) == []


def test_malformed_json_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"figure_id": "train",')
    with pytest.raises(LengthgenError, match=r"broken\.json: malformed JSON results record"):
        load_record(path)


def test_missing_field_is_named(tmp_path):
    path = write_record(record(), tmp_path)
    data = json.loads(path.read_text())
    del data["git_commit"]
    path.write_text(json.dumps(data))
    with pytest.raises(LengthgenError, match="missing the field 'git_commit'"):
        load_record(path)


def test_wrong_type_is_named(tmp_path):
    with pytest.raises(LengthgenError, match="field 'seed' has the wrong type"):
        write_record(record(seed="zero"), tmp_path)


def test_edited_record_fails_its_digest(tmp_path):
    path = write_record(record(), tmp_path)
    data = json.loads(path.read_text())
    data["metrics"]["bins"]["1-50"]["accuracy"] = 0.5
    path.write_text(json.dumps(data))
    with pytest.raises(LengthgenError, match="digest mismatch"):
        load_record(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(LengthgenError, match="cannot read results record"):
        load_record(tmp_path / "nowhere.json")


def test_a_record_that_is_a_device_or_a_pipe_is_refused_without_reading_it(tmp_path):
    import os
    folder = tmp_path / "train" / "test"
    folder.mkdir(parents=True)
    (folder / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(LengthgenError, match="not a regular file"):
        load_records("train", "test", tmp_path)
    (folder / "zero.json").unlink()
    os.mkfifo(folder / "fifo.json")   # opening it must not wait for a writer
    with pytest.raises(LengthgenError, match="not a regular file"):
        load_records("train", "test", tmp_path)


def test_an_oversized_record_is_refused(tmp_path, monkeypatch):
    import lengthgen.results as results
    path = write_record(record(), tmp_path)
    monkeypatch.setattr(results, "MAX_RECORD_BYTES", 100)
    with pytest.raises(LengthgenError, match="larger than"):
        load_record(path)


@pytest.mark.parametrize("wall", [float("nan"), float("inf"), -1.0])
def test_a_wall_time_that_is_not_a_duration_is_refused(tmp_path, wall):
    with pytest.raises(LengthgenError, match="wall_time_s"):
        write_record(record(wall_time_s=wall), tmp_path)


def test_a_results_folder_name_too_long_is_one_error(monkeypatch):
    from lengthgen.results import results_dir
    monkeypatch.setenv("LENGTHGEN_RESULTS", "/tmp/" + "x" * 300)
    with pytest.raises(LengthgenError, match="File name too long"):
        results_dir()


def _resealed(path, change) -> None:
    """Edit a written record and recompute its digest, as someone with the code can."""
    from lengthgen.results import _digest
    data = json.loads(path.read_text())
    change(data)
    data.pop("digest")
    data["digest"] = _digest(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.25, 1.5])
def test_a_resealed_record_with_an_impossible_accuracy_is_refused(tmp_path, value):
    """The digest is no key: an edit with a recomputed digest passes it, so accuracies are
    checked themselves (finite, in [0, 1])."""
    path = write_record(record(), tmp_path)

    def edit(data):
        data["metrics"]["bins"]["1-50"]["accuracy"] = value
    _resealed(path, edit)
    problem = r"metrics.bins.1-50.accuracy is .*not an accuracy \(a finite number in \[0, 1\]\)"
    with pytest.raises(LengthgenError, match=problem):
        load_record(path)
    with pytest.raises(LengthgenError, match="not an accuracy"):   # and none is ever written
        write_record(record(metrics={"bins": {"1-50": {"accuracy": value}}}), tmp_path)


def test_accuracies_are_checked_in_lists_and_other_numbers_may_be_infinite(tmp_path):
    """A gap over a zero second value is infinite on purpose (richard-fig5-sign-study): only
    accuracies are held to [0, 1]."""
    path = write_record(record(metrics={"loss": [0.5, float("nan")], "gap": float("inf"),
                                        "steps": 300, "train_accuracy": [1.0, 0.5]}), tmp_path)
    load_record(path)
    _resealed(path, lambda data: data["metrics"]["train_accuracy"].__setitem__(1, -1))
    with pytest.raises(LengthgenError, match=r"metrics.train_accuracy\[1\] is -1"):
        load_record(path)


@pytest.mark.parametrize("text, reason", [("[" * 200_000, "nested too deeply"),
                                          ('{"seed": ' + "7" * 5000 + "}", "digits")])
def test_a_record_that_breaks_the_json_reader_is_one_error(tmp_path, text, reason):
    path = tmp_path / "train" / "test" / "bad.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(LengthgenError, match=f"bad.json: not a results record .*{reason}"):
        load_record(path)


def test_the_writability_check_leaves_no_folder_behind(tmp_path):
    from lengthgen.results import check_writable
    check_writable(tmp_path / "a" / "b" / "c")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(LengthgenError, match="is not a folder"):
        check_writable(tmp_path / "file" / "sub")


def test_a_failed_atomic_write_leaves_no_temp_file(tmp_path, monkeypatch):
    from lengthgen.results import write_text_atomic

    def full(fd, data):
        import os
        os.close(fd)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("lengthgen.results.os.fdopen",
                        lambda fd, *a, **k: type("F", (), {
                            "__enter__": lambda self: self, "__exit__": lambda self, *e: False,
                            "write": lambda self, text: full(fd, text)})())
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(tmp_path / "x.json", "{}")
    assert list(tmp_path.iterdir()) == []
