"""Planned figures and the GPU queue (issues 52 and 53), at test scale on the CPU: the order of
the queue, a queue of two planned figures run to the end in one slice with every record a
figure's record, and a queue stopped midway that resumes without touching finished jobs."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from lengthgen.results import load_records
from lengthgen.runs import planned, queue
from lengthgen.runs.records import check_records, missing_runs
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import IN_PROGRESS, in_progress, marker_problems

CPU = torch.device("cpu")
PAIR = ["huang-ape-leads", "huang-fig1-budget"]
ROOT = Path(__file__).resolve().parents[1]


def _files(root: Path) -> dict:
    """{record file: (inode, mtime_ns)}: a record rewritten changes them."""
    return {str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in root.glob("*/test/*.json")}


def test_the_fig1_sweep_goes_first_then_the_cheapest_per_reproduced_id():
    rows = queue.order(queue.planned_figures(), "gpu")
    assert rows[0]["figure_id"] == "huang-fig1-budget" and rows[0]["scale"] == "gpu"
    assert set(PAIR) <= {r["figure_id"] for r in rows}
    rest = [r for r in rows if not r["first"]]
    costs = [r["per_id"] for r in rest if r["per_id"] is not None]
    assert costs == sorted(costs) and all(r["scale"] == "paper" for r in rest)
    assert queue.order(list(reversed(PAIR)), "gpu")[0]["figure_id"] == "huang-fig1-budget"
    leads = next(r for r in rows if r["figure_id"] == "huang-ape-leads")
    assert leads["per_id"] == pytest.approx(leads["minutes"] / len(leads["reproduces"]))
    with pytest.raises(Exception, match="not a planned figure"):
        queue.order(["huang-fig1-languages"], "gpu")


def test_a_queue_of_two_planned_figures_writes_figure_records_and_resumes(tmp_path):
    """Stopped after its first group (as a signal stops it), the queue keeps what it finished,
    marks the folder in progress and goes no further; run again, it trains only what is left,
    leaves the finished records untouched, and ends with each figure's plan empty, its records
    registered runs with provenance, and no marker."""
    from lengthgen.runs.slices import Stop
    rows = queue.order(PAIR, "test")
    assert [r["figure_id"] for r in rows] == ["huang-fig1-budget", "huang-ape-leads"]
    stop = Stop()

    def stop_after_a_group(line, **kwargs):
        if '"shape"' in line:
            stop.signal = signal.SIGTERM
    first = queue.run_queue(rows, tmp_path, CPU, time.time() + 300, stop=stop,
                            states=tmp_path / "states", log=stop_after_a_group)
    assert list(first) == ["huang-fig1-budget"] and first["huang-fig1-budget"]["recorded"] > 0
    kept = _files(tmp_path)
    budget_folder = tmp_path / "huang-fig1-budget" / "test"
    assert len(kept) == first["huang-fig1-budget"]["recorded"]
    assert in_progress(budget_folder) is not None
    records = load_records("huang-fig1-budget", "test", tmp_path)
    assert not marker_problems(budget_folder, records)   # the marker lists exactly these
    assert missing_runs("huang-fig1-budget", "test", records)   # the caption: INCOMPLETE

    again = queue.run_queue(rows, tmp_path, CPU, time.time() + 300,
                            states=tmp_path / "states", log=lambda *a, **k: None)
    assert set(again) == set(PAIR) and again["huang-ape-leads"]["recorded"] > 0
    now = _files(tmp_path)
    assert {name: now[name] for name in kept} == kept   # finished jobs never trained again
    for figure_id in PAIR:
        module = experiment(figure_id)
        folder = tmp_path / figure_id / "test"
        records = load_records(figure_id, "test", tmp_path)
        assert records and not planned.pending(figure_id, "test", tmp_path)
        assert not (folder / IN_PROGRESS).exists() and not missing_runs(figure_id, "test",
                                                                         records)
        check_records(figure_id, records)   # each a registered run of its figure
        for r in records:
            assert r["figure_id"] == figure_id and r["scale"] == "test"
            assert r["config"] == module.CONFIGS["test"] and r["device"] == "cpu"
            assert r["git_commit"] and r["lib_digest"] and r["date"] and r["wall_time_s"] >= 0
            assert r["params"]["name"] == r["run_name"]
    budget_record = load_records("huang-fig1-budget", "test", tmp_path)[0]
    forged = {**budget_record, "params": {**budget_record["params"], "seed": 7}}
    with pytest.raises(Exception, match="not a registered run"):   # the stale-record check
        check_records("huang-fig1-budget", [forged])
    leads = load_records("huang-ape-leads", "test", tmp_path)
    names = sorted(r["run_name"] for r in leads)
    assert names == sorted(p["name"] for p in experiment("huang-ape-leads").runs(
        experiment("huang-ape-leads").CONFIGS["test"]))


def test_a_planned_figure_without_runs_is_run_by_figure_run_to_its_plans_end(tmp_path):
    from lengthgen.runs.runner import run_experiment
    records = run_experiment("huang-fig1-budget", "test", "cpu", root=tmp_path)
    assert records and not planned.pending("huang-fig1-budget", "test", tmp_path)
    assert run_experiment("huang-fig1-budget", "test", "cpu", root=tmp_path) == records
    with pytest.raises(Exception, match="no book config"):
        run_experiment("huang-fig1-budget", "book", "cpu", root=tmp_path)


def test_budget_queue_on_the_command_line(tmp_path):
    """`budget queue --list` prints the order; a queue of one figure trains it to the end; an
    unknown or unplanned figure is one line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "OMP_NUM_THREADS": "1"}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "lengthgen", "budget", "queue", *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
    listed = run("--scale", "test", "--figures", ",".join(PAIR), "--list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == \
        ["huang-fig1-budget", "huang-ape-leads"]
    done = run("--scale", "test", "--figures", "huang-ape-leads", "--device", "cpu",
               "--minutes", "5", "--root", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.strip().splitlines()[-1])["done"]["huang-ape-leads"]
    assert counts["recorded"] == len(load_records("huang-ape-leads", "test",
                                                  tmp_path / "results")) > 0
    bad = run("--scale", "test", "--figures", "huang-fig1-languages", "--list")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "not a planned figure" in bad.stderr


def test_unfinished_jobs_of_every_queued_figure_are_packed_and_resumed(tmp_path):
    """A queue cut at step 15 keeps each figure's unfinished states in its own folder; `budget
    pack --queue` packs those of both figures into the files a GPU hands back, and the next
    queue resumes them from the packs."""
    from lengthgen.__main__ import main
    rows = queue.order(PAIR, "test")
    quiet = dict(log=lambda *a, **k: None)
    first = queue.run_queue(rows, tmp_path, CPU, time.time() + 300, states=tmp_path / "states",
                            until_step=15, **quiet)
    kept = {f: len(list((tmp_path / "states" / f).glob("*.pt"))) for f in PAIR}
    assert all(kept[f] == first[f]["unfinished"] > 0 for f in PAIR), (kept, first)
    assert main(["budget", "pack", "--queue", "--scale", "test", "--figures", ",".join(PAIR),
                 "--root", str(tmp_path), "--states", str(tmp_path / "states"),
                 "--out", str(tmp_path / "packs")]) == 0
    assert list((tmp_path / "packs").glob("slice-states-*.pt"))
    again = queue.run_queue(rows, tmp_path, CPU, time.time() + 300,
                            states_in=tmp_path / "packs", **quiet)
    assert all(again[f]["resumed"] == kept[f] for f in PAIR), again
    assert not any(planned.pending(f, "test", tmp_path) for f in PAIR)
