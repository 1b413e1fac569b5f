"""The APE vs NoPE sweep at the paper's budget (huang.sweep.budget): planning from job records,
slices that record and resume, and the committed GPU records."""
import time
from pathlib import Path

import pytest

from lengthgen.experiments.huang.sweep import budget
from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID as RECORDS_ID
from lengthgen.experiments.huang.sweep.protocol import Setting
from lengthgen.results import results_dir
from lengthgen.runs import planned

GPU = budget.budget_configs()["gpu"]


def run_slice(root, scale, device, deadline, **options):
    """A slice of the paper-budget sweep (the planned figure's, `runs.planned.run_slice`)."""
    return planned.run_slice(RECORDS_ID, scale, root, device, deadline, **options)


def _record(spec, fit, heldout=1.0, longest=1.0):
    bins = {"1-50": 1.0 if fit else 0.5, "51-100": heldout, "101-150": longest}
    return {"run_name": spec.name, "metrics": {"fit": fit, "bins": bins}}


def _seed0(task, encoding):
    return [j for j in budget.cell_state(task, encoding, GPU, {})["needed"] if j.seed == 0]


def test_the_main_text_rule_stops_the_search_at_the_first_rung_that_generalizes():
    rungs = _seed0("tomita7", "ape")   # 1L1H16, 2L2H64, its own 4L2H64 (30k steps)
    assert [r.setting.as_list()[:3] for r in rungs] == [[1, 1, 16], [2, 2, 64], [4, 2, 64]]
    assert rungs[-1].setting.max_steps == 30000 and rungs[0].may_abandon
    records = {r.name: _record(r, fit) for r, fit in zip(rungs[:2], (False, True))}
    state = budget.cell_state("tomita7", "ape", GPU, records)
    assert state["selected"].setting == rungs[1].setting
    # the own setting is no longer needed; seeds 1 and 2 of the selected rung are
    assert sorted(j.name for j in state["needed"]) == sorted(
        budget.JobSpec("tomita7", "ape", rungs[1].setting, s, False).name for s in (1, 2))


def test_before_a_decision_the_own_settings_seeds_are_planned_beside_the_search():
    needed = budget.cell_state("tomita7", "ape", GPU, {})["needed"]
    own = Setting(4, 2, 64, 1e-3, 30000, 0)
    assert {(j.setting, j.seed) for j in needed} >= {(own, 1), (own, 2)}
    # a language whose name our copy of the tables lost has no own setting to guess
    assert all(j.seed == 0 for j in budget.cell_state("d3", "ape", GPU, {})["needed"])


def test_the_appendix_rule_and_never_fitting_cells():
    rungs = _seed0("majority", "nope")   # 1L1H16, its own 1L1H64
    records = {rungs[0].name: _record(rungs[0], True, heldout=0.9),
               rungs[1].name: _record(rungs[1], True, heldout=0.97)}
    assert budget.cell_state("majority", "nope", GPU, records)["selected"] == rungs[1]
    records = {rungs[0].name: _record(rungs[0], False), rungs[1].name: _record(rungs[1], False)}
    records[rungs[1].name]["metrics"]["bins"]["1-50"] = 0.7
    assert budget.cell_state("majority", "nope", GPU, records)["selected"] == rungs[1]


def test_five_seeds_where_the_three_straddle_the_success_line():
    rungs = _seed0("tomita7", "ape")
    setting = rungs[1].setting
    records = {rungs[0].name: _record(rungs[0], False)}
    for seed, longest in ((0, 0.95), (1, 0.5), (2, 0.99)):
        spec = budget.JobSpec("tomita7", "ape", setting, seed, False)
        records[spec.name] = _record(spec, True, longest=longest)
    needed = budget.cell_state("tomita7", "ape", GPU, records)["needed"]
    assert sorted(j.seed for j in needed) == [3, 4]
    for spec_seed in (1,):   # all three above the line: three seeds are enough
        spec = budget.JobSpec("tomita7", "ape", setting, spec_seed, False)
        records[spec.name] = _record(spec, True, longest=0.9)
    assert budget.cell_state("tomita7", "ape", GPU, records)["needed"] == []


def test_the_twelve_layer_setting_is_left_out_of_slices():
    plan = budget.plan(GPU, {})
    assert all(j.setting.layers <= 6 for j in plan)
    assert any(j.setting.layers == 12 for j in budget.plan(GPU, {}, slices=False))


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, dict]:
    """One slice of the test-scale sweep run through to the end: (its results root, its counts).
    The tests read it, or change a copy."""
    import torch
    root = tmp_path_factory.mktemp("whole")
    counts = run_slice(root, "test", torch.device("cpu"), time.time() + 120,
                       log=lambda *a, **k: None)
    return root, counts


def test_a_slice_records_its_jobs_and_the_next_one_plans_only_what_is_left(tmp_path, whole):
    import shutil

    import torch
    root, counts = whole
    folder = root / RECORDS_ID / "test"
    records = budget.load_job_records(folder)
    config = budget.budget_configs()["test"]
    assert counts["recorded"] == len(records) > 0
    assert budget.plan(config, records) == []
    for name, record in records.items():
        assert record["metrics"]["history"] and record["config"] == config
        assert set(record["metrics"]["bins"]) == {"1-50", "51-100", "101-150"}
    shutil.copytree(root, tmp_path, dirs_exist_ok=True)   # the next slice, on a copy
    again = run_slice(tmp_path, "test", torch.device("cpu"), time.time() + 60,
                             log=lambda *a, **k: None)
    assert again["recorded"] == 0


COMMITTED = results_dir() / RECORDS_ID / "gpu"


@pytest.mark.skipif(not COMMITTED.is_dir(), reason="no committed paper-budget records")
def test_committed_budget_records_are_jobs_of_the_protocol():
    records = budget.load_job_records(COMMITTED)   # digests and fields checked on load
    assert records
    for name, record in records.items():
        params = record["params"]
        spec = budget.JobSpec(params["task"], params["encoding"], Setting.of(params["setting"]),
                              params["seed"], params["may_abandon"])
        assert spec.name == name == Path(record["run_name"]).name
        assert spec.params() == params
        assert record["config"] == GPU, f"{name}: stale config"
        assert record["device"].startswith("cuda") or record["device"] == "cpu"   # a CPU slice ran the cheapest jobs once


def _full_history() -> bool:
    import subprocess
    try:
        out = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=results_dir(),
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return out == "false"


@pytest.mark.skipif(not COMMITTED.is_dir() or not _full_history(),
                    reason="no committed paper-budget records, or no full git history")
def test_the_code_that_made_the_committed_budget_records_is_a_commit_of_this_repository():
    """Each GPU run that wrote records names its code: a clean commit, or the session's first
    commit "+dirty" whose listed changed files are exactly the lib/ changes of one later
    commit, which is the code that ran. The caption names every run's commit and count."""
    records = budget.load_job_records(COMMITTED)
    commits = budget.code_commits(records)
    assert all(commits.values()), f"no commit's lib/ matches the changed files: {commits}"
    text = budget.caption(records)
    assert "+dirty" not in text
    for seen, commit in commits.items():
        count = sum(r["git_commit"] == seen for r in records.values())
        assert (f"{commit} ({count} trainings)" in text) or len(commits) == 1


def test_a_caption_over_two_runs_names_each_runs_commit_and_count():
    base = {"scale": "gpu", "device": "cuda", "wall_time_s": 1.0, "command": "c",
            "git_dirty_files": []}
    records = {"a": {**base, "git_commit": "aaaaaaaaaaaa", "date": "2026-11-20T00:00:00",
                     "started": 1},
               "b": {**base, "git_commit": "bbbbbbbbbbbb", "date": "2026-11-28T00:00:00",
                     "started": 2},
               "c": {**base, "git_commit": "bbbbbbbbbbbb", "date": "2026-11-28T00:00:01",
                     "started": 2}}
    text = budget.caption(records)
    assert "commit: aaaaaaaaaaaa (1 training); bbbbbbbbbbbb (2 trainings)" in text
    assert "3 trainings in 2 groups" in text


def test_code_commit_finds_the_commit_whose_changes_the_records_list():
    head = budget.code_commit({"a": {"git_commit": "abc+dirty", "git_dirty_files": ["x"]}})
    assert head is None   # an unknown base commit: git cannot tell, and nothing is claimed
    clean = {"a": {"git_commit": "0123456789ab", "git_dirty_files": []}}
    assert budget.code_commit(clean) == "0123456789ab"


def test_code_commit_is_the_oldest_later_commit_with_exactly_the_listed_lib_changes(tmp_path):
    """In a repository of its own: the machine saw `base` "+dirty" with lib/a.py changed and
    a new folder lib/new/. The commit that made those changes matches, and so do the commits
    after it that leave lib/ alone (the oldest is named); the commit that also changes
    lib/b.py matches only a list that names it too; a list without the new folder, none."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True,
                              check=True).stdout.strip()

    def commit(files: dict, message: str) -> str:
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        git("add", "-A")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
        return git("rev-parse", "HEAD")

    git("init", "-q")
    base = commit({"lib/a.py": "a = 1\n", "lib/b.py": "b = 1\n"}, "base")
    commit({"notes.md": "not lib\n"}, "before")
    ran = commit({"lib/a.py": "a = 2\n", "lib/new/x.py": "x\n", "lib/new/y.py": "y\n"}, "ran")
    for k in range(12):   # commits that leave lib/ alone
        commit({"notes.md": f"note {k}\n"}, f"note {k}")
    later = commit({"lib/b.py": "b = 2\n"}, "later")
    records = {"r": {"git_commit": base + "+dirty",
                     "git_dirty_files": ["lib/a.py", "lib/new/"]}}
    assert budget.code_commit(records, root=tmp_path) == ran[:12]
    records["r"]["git_dirty_files"] = ["lib/a.py", "lib/b.py", "lib/new/"]
    assert budget.code_commit(records, root=tmp_path) == later[:12]
    for files in (["lib/a.py"], ["lib/b.py"]):   # (the new folder's files are not listed)
        records["r"]["git_dirty_files"] = files
        assert budget.code_commit(records, root=tmp_path) is None


def test_a_slice_hands_unfinished_jobs_to_the_next_as_files(tmp_path, whole):
    """A slice stopped mid-training leaves its jobs' states; the next slice resumes them and
    their records equal those of a slice that ran them through."""
    import torch
    quiet = dict(log=lambda *a, **k: None)
    whole, parts = whole[0], tmp_path / "parts"
    first = run_slice(parts, "test", torch.device("cpu"), time.time() + 120,
                             states_out=tmp_path / "states", until_step=15, **quiet)
    assert first["states_kept"] == first["unfinished"] > 0   # some stop at step 10 already
    for claims in (parts / RECORDS_ID / "test" / ".claims").iterdir():
        claims.unlink()   # a new slice clears the claims of the last (`budget slice` does)
    second = run_slice(parts, "test", torch.device("cpu"), time.time() + 120,
                              states_in=tmp_path / "states", **quiet)
    assert second["resumed"] == first["states_kept"]
    a = budget.load_job_records(whole / RECORDS_ID / "test")
    b = budget.load_job_records(parts / RECORDS_ID / "test")
    assert set(a) == set(b)
    for name in a:
        ha, hb = a[name]["metrics"]["history"], b[name]["metrics"]["history"]
        assert [h["step"] for h in ha] == [h["step"] for h in hb], name
        assert [h["accuracy"] for h in ha] == [h["accuracy"] for h in hb], name
        assert a[name]["metrics"]["bins"] == b[name]["metrics"]["bins"], name


def test_states_beyond_the_budget_are_not_kept(tmp_path):
    import torch
    states = {"small": {"x": torch.zeros(10)}, "large": {"x": torch.zeros(100_000)}}
    kept = budget.save_states(tmp_path, states, budget_bytes=20_000)
    assert kept == ["small"] and [p.name for p in tmp_path.iterdir()] == ["small.pt"]
    assert set(budget.load_states(tmp_path)) == {"small"}


def test_the_share_of_dn_training_words_at_full_depth_is_counted_exactly():
    """bounded_dyck_counts against every word of small lengths, and full_depth_share against
    words drawn by the task's own sampler."""
    import itertools

    import numpy as np

    from lengthgen.experiments.huang.sweep.analysis import bounded_dyck_counts, full_depth_share
    from lengthgen.tasks import get_task

    def depth_of(word):
        depth, deepest = 0, 0
        for c in word:
            depth += 1 if c == "a" else -1
            if depth < 0:
                return None
            deepest = max(deepest, depth)
        return deepest if depth == 0 else None
    for length in range(0, 13):
        depths = [depth_of(w) for w in itertools.product("ab", repeat=length)]
        for bound in (1, 2, 3):
            assert bounded_dyck_counts(length, bound) == sum(
                d is not None and d <= bound for d in depths)
    task = get_task("d3")
    batch = task.sample(np.random.default_rng(0), 4000, 1, 50)
    words = ["".join(task.alphabet[i - 2] for i in row if i >= 2) for row in batch.inputs]
    share = np.mean([depth_of(w) == 3 for w in words])
    assert abs(share - full_depth_share(3, 1, 50)) < 0.03


def test_every_cell_says_how_far_it_is_and_what_it_waits_for():
    from lengthgen.experiments.huang.sweep import tables
    rungs = _seed0("tomita7", "ape")
    records = {r.name: dict(_record(r, fit), params=r.params())
               for r, fit in zip(rungs[:2], (False, True))}
    progress = {(p["task"], p["encoding"]): p for p in budget.cell_progress(records, GPU)}
    assert len(progress) == 50
    t7 = progress[("tomita7", "ape")]
    assert (t7["stage"], t7["tried"], t7["rungs"], t7["seeds"]) == \
        ("seeds of the selected setting", 2, 3, 1)
    assert t7["waiting_for"] == [rungs[1].setting.label()]
    assert progress[("tomita7", "nope")]["stage"] == "not started"
    assert progress[("addition", "nope")]["stage"] == "not started"
    rows = tables.progress_rows(list(progress.values()))
    assert len(rows) == 50 and all(len(r) == len(tables.PROGRESS_HEADER) for r in rows)


@pytest.mark.skipif(not COMMITTED.is_dir(), reason="no committed paper-budget records")
def test_the_caption_names_every_cell_not_yet_complete_once_by_its_stage():
    """The chapter's table of complete GPU cells lists in its caption the cells not yet
    complete (issue 48): each named once, under its stage, and no complete cell."""
    import re

    from lengthgen.experiments.huang.sweep import tables
    from lengthgen.models.positions import PositionalEncoding
    from lengthgen.tasks.metadata import info
    progress = budget.cell_progress(budget.load_job_records(COMMITTED), GPU)
    text = tables.budget_open(progress)
    open_cells = [p for p in progress if p["stage"] != "complete"]
    assert open_cells and f"{len(open_cells)} of the 50 cells" in text
    named = []
    for part in text.split(": ", 1)[1].rstrip(".").split("; "):
        stage, cells = part.split(": ", 1)
        for task, encodings in re.findall(r"(.+?) \(([^()]*)\)(?:, |$)", cells):
            named += [(stage, task, e) for e in encodings.split(" and ")]
    assert sorted(named) == sorted((p["stage"], info(p["task"]).name,
                                    PositionalEncoding(p["encoding"]).label)
                                   for p in open_cells)
    done = [{**p, "stage": "complete"} for p in progress]
    assert tables.budget_open(done) == "All 50 cells are complete."
    assert tables.budget_open([]) == ""


def test_a_plan_left_with_only_deferred_jobs_is_not_complete(tmp_path, monkeypatch):
    """Jobs no slice can train (here: every seed but 0, as if they were the 12-layer setting)
    are deferred, not done: once the slices have trained the rest, the plan is empty but the
    figure is not complete. The folder keeps its marker (listing the records), the slice's
    counts name the deferred jobs, and `figure run` says they are left."""
    import torch

    from lengthgen.runs.folders import IN_PROGRESS, marker_problems
    from lengthgen.results import load_records
    monkeypatch.setattr(budget, "in_a_slice", lambda job, config: job.seed == 0)
    counts = run_slice(tmp_path, "test", torch.device("cpu"), time.time() + 120,
                       log=lambda *a, **k: None)
    folder = tmp_path / RECORDS_ID / "test"
    records = budget.load_job_records(folder)
    config = budget.budget_configs()["test"]
    left = budget.deferred(config, records)
    assert counts["recorded"] == len(records) > 0 and budget.plan(config, records) == []
    assert left and all(j.seed > 0 for j in left) and counts["deferred"] == len(left)
    assert planned.refresh(RECORDS_ID, "test", tmp_path) is False
    assert (folder / IN_PROGRESS).is_file()
    assert not marker_problems(folder, load_records(RECORDS_ID, "test", tmp_path))
    assert budget.status(records, config)["complete"] == 0
    with pytest.raises(Exception, match="deferred"):
        planned.run_to_end(RECORDS_ID, "test", torch.device("cpu"), tmp_path)
    monkeypatch.undo()   # every job fits a slice again: the next slice completes the figure
    run_slice(tmp_path, "test", torch.device("cpu"), time.time() + 120, log=lambda *a, **k: None)
    assert planned.refresh(RECORDS_ID, "test", tmp_path) is True
    assert not (folder / IN_PROGRESS).exists()
