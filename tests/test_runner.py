"""The sweep runner: parallel workers give the serial records, a killed sweep resumes to the
same records, a lock keeps two sweeps apart, failures are reported by name, stale temp files
and copied records are caught."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lengthgen.errors import LengthgenError
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import in_progress, run_experiment, sweep_lock
from lengthgen.viz.book import show
from lengthgen.results import load_record, load_records, write_record
from records_compare import same  # tests/records_compare.py, shared with test_ray_backend

FIGURE = "huang-fig1-languages"  # trains tiny decoders at test scale: a real sweep


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> tuple[Path, list[dict]]:
    """One uninterrupted serial sweep of FIGURE: (its results root, its records). The tests
    only read it, or change a copy (finished_sweep)."""
    root = tmp_path_factory.mktemp("serial")
    return root, run_experiment(FIGURE, "test", "cpu", root=root)


def finished_sweep(serial: tuple, root: Path) -> list[dict]:
    """The serial sweep's folder copied under `root`, as a sweep into `root` leaves it (its
    records, lock file and no marker), for a test that changes it: the records."""
    import shutil
    shutil.copytree(serial[0] / FIGURE / "test", root / FIGURE / "test")
    return load_records(FIGURE, "test", root)


def _kill_a_worker_once_a_record_lands(folder: Path, killed: list) -> None:
    """In a thread: kill -9 one spawned worker of this process once the first record exists."""
    import psutil
    deadline = time.time() + 240
    while time.time() < deadline:
        if list(folder.glob("[!.]*.json")):
            for child in psutil.Process().children(recursive=True):
                try:
                    if "spawn_main" in " ".join(child.cmdline()):
                        child.send_signal(signal.SIGKILL)
                        killed.append(child.pid)
                        return
                except psutil.Error:   # ended meanwhile
                    pass
        time.sleep(0.05)


def test_two_workers_write_the_records_of_one_even_when_a_worker_is_killed(tmp_path, capfd,
                                                                            serial):
    """kill -9 of a worker mid-sweep: a new pool takes the runs not done, nothing is lost, and
    the records are still those of the serial path (before: the rest of the sweep failed with
    BrokenProcessPool)."""
    import threading
    killed = []
    killer = threading.Thread(target=_kill_a_worker_once_a_record_lands,
                              args=(tmp_path / "parallel" / FIGURE / "test", killed))
    killer.start()
    parallel = run_experiment(FIGURE, "test", "cpu", root=tmp_path / "parallel", workers=2)
    killer.join()
    same(serial[1], parallel)
    assert killed, "a worker was killed mid-sweep"
    assert "restarting the pool" in capfd.readouterr().err
    assert {r["workers"] for r in parallel} == {2} and {r["torch_threads"] for r in parallel} == {1}
    assert all(r["started"] <= r["date"] for r in parallel)


def test_a_killed_workers_unit_keeps_the_runs_it_had_recorded(tmp_path, capfd):
    """Runs that share a set of words go to one worker as a unit (Fig. 6 at test scale: 5 runs
    of one set, split in two units for 2 workers). Both workers are killed -9 once the first
    record lands: every record written by then is kept as it was (not computed again: its
    file is byte for byte the same), a new pool computes only the rest, and the records are
    those of a serial sweep. (Before, the dead worker's whole unit was computed again.)"""
    import threading

    import psutil
    figure = "richard-fig6-ablation"
    folder = tmp_path / "parallel" / figure / "test"
    first, killed = {}, []

    def kill_both_once_a_record_lands():
        deadline = time.time() + 240
        while time.time() < deadline:
            landed = list(folder.glob("[!.]*.json"))
            if landed:
                first.update({p.name: p.read_bytes() for p in landed})
                for child in psutil.Process().children(recursive=True):
                    try:
                        if "spawn_main" in " ".join(child.cmdline()):
                            child.send_signal(signal.SIGKILL)
                            killed.append(child.pid)
                    except psutil.Error:   # ended meanwhile
                        pass
                return
            time.sleep(0.02)
    killer = threading.Thread(target=kill_both_once_a_record_lands)
    killer.start()
    parallel = run_experiment(figure, "test", "cpu", root=tmp_path / "parallel", workers=2)
    killer.join()
    assert killed and first, "workers were killed after a record landed"
    assert "restarting the pool" in capfd.readouterr().err
    for name, content in first.items():
        assert (folder / name).read_bytes() == content, f"{name} was computed again"
    same(run_experiment(figure, "test", "cpu", root=tmp_path / "serial"), parallel)


def test_sigkill_mid_sweep_then_resume_gives_the_uninterrupted_records(tmp_path, serial):
    reference = serial[1]
    root = tmp_path / "killed"
    env = {**os.environ, "LENGTHGEN_RESULTS": str(root), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "lengthgen", "figure", "run", FIGURE,
                             "--scale", "test", "--device", "cpu"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = root / FIGURE / "test"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(folder.glob("*.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (folder / ".tmp-leftover.json").write_text('{"half": ')  # as if killed mid-write
    written = {p.name for p in folder.glob("[!.]*.json")}
    assert 0 < len(written) < len(reference)
    assert len(load_records(FIGURE, "test", root)) == len(written)  # temp file ignored
    resumed = run_experiment(FIGURE, "test", "cpu", root=root)
    same(reference, resumed)
    assert not list(folder.glob(".tmp-*")), "stale temp files are cleaned under the lock"


def test_a_held_lock_is_a_clear_error(tmp_path):
    folder = tmp_path / FIGURE / "test"
    with sweep_lock(folder):
        with pytest.raises(LengthgenError, match="another sweep .*pid"):
            run_experiment(FIGURE, "test", "cpu", root=tmp_path)


@pytest.fixture(scope="module")
def failed_sweep(tmp_path_factory) -> tuple[Path, str]:
    """A sweep of FIGURE whose run aa_star/nope raised ValueError("boom"): (its results root,
    the error run_experiment raised). The tests change copies of its folder (failed_copy)."""
    module = experiment(FIGURE)
    real = module.run_one

    def flaky(params, config, device):
        if params["name"] == "aa_star/nope":
            raise ValueError("boom")
        return real(params, config, device)

    root = tmp_path_factory.mktemp("failed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "run_one", flaky)
        with pytest.raises(LengthgenError) as caught:
            run_experiment(FIGURE, "test", "cpu", root=root)
    return root, str(caught.value)


def failed_copy(failed_sweep: tuple, root: Path) -> Path:
    """The failed sweep's folder (its records and marker) copied under `root`."""
    import shutil
    return Path(shutil.copytree(failed_sweep[0] / FIGURE / "test", root / FIGURE / "test"))


def test_a_failing_run_is_named_and_the_others_are_recorded(tmp_path, failed_sweep):
    assert re.search(r"1 of 6 runs .* failed.*aa_star/nope: ValueError: boom", failed_sweep[1])
    folder = failed_copy(failed_sweep, tmp_path)
    assert len(load_records(FIGURE, "test", tmp_path)) == 5
    fig, cap = show(FIGURE, root=tmp_path)
    assert "INCOMPLETE: 1 registered run(s) have no record" in cap
    # the folder says a sweep is under way, from which commit; finishing it clears that
    marker = in_progress(folder)
    assert marker["runs"] == 6 and marker["figure_id"] == FIGURE
    assert {r["git_commit"] for r in load_records(FIGURE, "test", tmp_path)} == \
        {marker["git_commit"]}
    run_experiment(FIGURE, "test", "cpu", root=tmp_path)
    assert in_progress(folder) is None


def test_resuming_with_another_thread_count_is_refused(tmp_path, serial):
    finished_sweep(serial, tmp_path)   # as run_experiment(FIGURE, "test", "cpu") leaves it
    Path(tmp_path / FIGURE / "test" / "tomita2_ape.json").unlink()
    with pytest.raises(LengthgenError, match="computed with 1 torch thread.*--threads 1"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, threads=2)


def test_copied_record_and_unwritable_folder_are_clear_errors(tmp_path, serial):
    records = finished_sweep(serial, tmp_path)   # as run_experiment(FIGURE, ...) leaves it
    folder = tmp_path / FIGURE / "test"
    (folder / "copy.json").write_text((folder / "tomita2_ape.json").read_text())
    with pytest.raises(LengthgenError, match="copied or renamed record"):
        load_records(FIGURE, "test", tmp_path)
    (folder / "copy.json").unlink()
    garbage = folder / "garbage.json"
    garbage.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(LengthgenError, match="not UTF-8"):
        load_record(garbage)
    garbage.unlink()
    if os.geteuid() != 0:  # root ignores permissions
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o500)
        with pytest.raises(LengthgenError, match="cannot write results"):
            run_experiment(FIGURE, "test", "cpu", root=readonly)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(LengthgenError, match="cannot write results"):
        run_experiment(FIGURE, "test", "cpu", root=blocker)
    assert json.loads((folder / "tomita2_ape.json").read_text())["git_commit"] == \
        records[0]["git_commit"]


def test_bad_worker_counts_are_refused(tmp_path):
    for bad in (0, -1, 1.5):
        with pytest.raises(LengthgenError, match="workers must be a positive integer"):
            run_experiment(FIGURE, "test", "cpu", root=tmp_path, workers=bad)


def test_results_env_pointing_at_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    from lengthgen.__main__ import main
    target = tmp_path / "not-a-folder"
    target.write_text("")
    monkeypatch.setenv("LENGTHGEN_RESULTS", str(target))
    assert main(["figure", "run", FIGURE, "--scale", "test", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "is not a folder" in err and "Traceback" not in err and err.count("\n") == 1


def test_a_worker_that_cannot_start_says_why(tmp_path, monkeypatch):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text("raise ImportError('broken on purpose')\n")
    import torch  # noqa: F401  (this process keeps the real one)
    # spawned workers take this process's sys.path, so they find the broken torch
    monkeypatch.syspath_prepend(str(fake))
    with pytest.raises(LengthgenError, match=r"could not start \(ImportError: broken on purpose"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path / "r", workers=2)


def test_a_lock_file_that_cannot_be_opened_is_one_error(tmp_path):
    folder = tmp_path / FIGURE / "test"
    (folder / ".lock").mkdir(parents=True)   # a folder where the lock file should be
    with pytest.raises(LengthgenError, match="cannot open the sweep's lock file"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path)


def test_thread_counts_are_bounded(tmp_path, capsys):
    from lengthgen.__main__ import main
    with pytest.raises(LengthgenError, match="per core of this machine"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, threads=4 * (os.cpu_count() or 1) + 1)
    assert main(["figure", "run", FIGURE, "--threads", "2147483648"]) == 2
    assert "--threads: must be in 1..1024" in capsys.readouterr().err


def test_a_file_size_limit_below_a_record_is_refused_before_computing(tmp_path):
    def small_files():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    env = {**os.environ, "LENGTHGEN_RESULTS": str(tmp_path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "lengthgen", "figure", "run", "crasp-long-unary",
                           "--scale", "test"], env=env, preexec_fn=small_files,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "ulimit -f" in done.stderr
    assert done.stderr.count("\n") == 1 and not list(tmp_path.rglob("*.json"))


def test_worker_processes_that_cannot_be_created_are_one_error(tmp_path, monkeypatch):
    import concurrent.futures

    def no_semaphores(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_semaphores)
    import lengthgen.runs.pool as pool
    monkeypatch.setattr(pool, "ProcessPoolExecutor", no_semaphores)
    with pytest.raises(LengthgenError, match=r"cannot start worker processes .*--workers 1"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, workers=2)


def test_a_full_disk_mid_sweep_stops_at_the_first_unwritten_record(tmp_path, monkeypatch):
    """A folder that stops taking records (full, or turned read-only) stops the sweep at
    once, with one line; what was written is kept and the marker lists it; the same command
    later computes the rest."""
    import lengthgen.results as results
    module = experiment(FIGURE)
    real_run, real_write = module.run_one, results.write_record
    ran, written = [], []

    def counting(params, config, device):
        ran.append(params["name"])
        return real_run(params, config, device)

    def full_after_two(record, root=None):
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(record["run_name"])
        return real_write(record, root)
    monkeypatch.setattr(module, "run_one", counting)
    monkeypatch.setattr(results, "write_record", full_after_two)
    with pytest.raises(LengthgenError) as caught:
        run_experiment(FIGURE, "test", "cpu", root=tmp_path)
    message = str(caught.value)
    assert "No space left on device" in message and "stopped there: 2 of 6 runs" in message
    assert "\n" not in message
    assert len(ran) == 3, f"trained {len(ran)} runs, only 3 needed to find the full disk"
    folder = tmp_path / FIGURE / "test"
    assert sorted(r["run_name"] for r in load_records(FIGURE, "test", tmp_path)) == \
        sorted(written)
    assert set(in_progress(folder)["done"]) == set(written)
    assert not list(folder.glob(".tmp-*"))
    monkeypatch.setattr(results, "write_record", real_write)
    ran.clear()
    run_experiment(FIGURE, "test", "cpu", root=tmp_path)   # resumes: the 4 others only
    assert len(ran) == 4 and in_progress(folder) is None


def test_the_marker_lists_the_done_runs_so_a_deleted_record_is_caught(tmp_path, failed_sweep):
    from lengthgen.runs.runner import marker_problems, refresh_marker
    assert "1 of 6 runs" in failed_sweep[1]
    folder = failed_copy(failed_sweep, tmp_path)
    records = load_records(FIGURE, "test", tmp_path)
    marker = in_progress(folder)
    assert marker["done"] == {r["run_name"]: r["digest"] for r in records}
    assert marker_problems(folder, records) == []
    deleted = folder / "tomita2_ape.json"
    deleted.unlink()
    assert marker_problems(folder, load_records(FIGURE, "test", tmp_path)) == \
        ["tomita2/ape: the marker lists it as done but it has no record"]
    # a marker from before markers listed their runs is a problem until refreshed
    old = {k: v for k, v in marker.items() if k != "done"}
    (folder / "SWEEP_IN_PROGRESS").write_text(json.dumps(old))
    assert "does not list the runs" in marker_problems(folder, records)[0]
    assert refresh_marker(folder)["done"] == {r["run_name"]: r["digest"]
                                              for r in load_records(FIGURE, "test", tmp_path)}
    assert marker_problems(folder, load_records(FIGURE, "test", tmp_path)) == []


def test_a_committed_unfinished_sweep_with_a_deleted_record_fails_the_completeness_check(
        tmp_path):
    """The check that tests/test_experiments.py makes of committed folders with a marker."""
    import shutil
    from lengthgen.results import REPO_ROOT, record_files
    from lengthgen.runs.runner import marker_problems
    markers = sorted((REPO_ROOT / "results").glob("*/*/SWEEP_IN_PROGRESS"))
    if not markers:
        pytest.skip("no committed sweep in progress")
    source = markers[0].parent
    copy = tmp_path / source.parent.name / source.name
    shutil.copytree(source, copy)
    records = load_records(copy.parent.name, copy.name, tmp_path)
    assert marker_problems(copy, records) == []
    victim = record_files(copy)[0]
    victim.unlink()
    problems = marker_problems(copy, load_records(copy.parent.name, copy.name, tmp_path))
    assert len(problems) == 1 and "has no record" in problems[0]


def test_a_full_disk_before_the_start_is_one_line_and_leaves_no_temp_file(tmp_path, monkeypatch):
    import lengthgen.results as results
    folder = tmp_path / FIGURE / "test"
    folder.mkdir(parents=True)
    (folder / ".lock").symlink_to("/dev/full")   # the lock file takes no byte
    with pytest.raises(LengthgenError, match="cannot write the sweep's lock file"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path)
    (folder / ".lock").unlink()

    def full(path, text, suffix=""):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(results, "write_text_atomic", full)
    with pytest.raises(LengthgenError, match="cannot write the sweep's marker .*No space"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path)
    assert not list(folder.glob(".tmp-*")) and not list(folder.glob("*.json"))


def test_a_refused_sweep_leaves_no_folder_behind(tmp_path):
    root = tmp_path / "results"
    with pytest.raises(LengthgenError, match="MPS is not available"):
        run_experiment(FIGURE, "test", "mps", root=root)
    assert not root.exists()


def test_worker_counts_are_bounded(tmp_path, capsys):
    from lengthgen.__main__ import main
    cores = os.cpu_count() or 1
    with pytest.raises(LengthgenError, match="threads per core of this machine"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, workers=4 * cores + 1)
    assert main(["figure", "run", FIGURE, "--workers", "99999999999999999999"]) == 2
    assert "--workers: must be in 1..1024" in capsys.readouterr().err
    assert not tmp_path.joinpath(FIGURE).exists()


def test_a_cluster_driver_that_cannot_write_a_record_says_so_for_the_sweep_to_stop(
        tmp_path, monkeypatch):
    """save() (the Ray driver's writer) marks the outcome unwritten, as execute() does."""
    import lengthgen.results as results
    from lengthgen.runs.execute import execute, plan, save
    spec = plan(FIGURE, "test", root=tmp_path)[0]
    computed = execute(spec, write=False)
    assert computed.records and not computed.unwritten

    def read_only(record, root=None):
        raise OSError(30, "Read-only file system")
    monkeypatch.setattr(results, "write_record", read_only)
    saved = save(computed, spec)
    assert "Read-only file system" in saved.unwritten and not saved.records
    assert [name for name, _ in saved.errors] == [spec.name]


def test_worker_processes_stop_when_the_folder_stops_taking_records(tmp_path):
    """With --workers, the folder replaced by a file once the first record lands: the sweep
    stops with one line instead of computing the other runs."""
    import threading
    folder = tmp_path / FIGURE / "test"

    def break_folder():
        deadline = time.time() + 240
        while time.time() < deadline and not list(folder.glob("[!.]*.json")):
            time.sleep(0.02)
        os.rename(folder, tmp_path / "moved")
        folder.write_text("not a folder any more")
    threading.Thread(target=break_folder, daemon=True).start()
    stopped = r"(Not a directory|File exists).*the sweep stopped there"
    with pytest.raises(LengthgenError, match=stopped) as e:
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, workers=2)
    assert "\n" not in str(e.value)
    kept = list((tmp_path / "moved").glob("[!.]*.json"))
    assert 1 <= len(kept) < 6
