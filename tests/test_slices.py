"""GPU slices that cannot lose, repeat or invent work (issues 50 and 47), at test scale on the
CPU: the lock per records folder, outputs checked first, write failures, states at their cap,
bad state files, signals to a slice of workers, planning with measured rates, chained states
and their packs, and the estimate of what is left."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.sweep import budget
from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID as RECORDS_ID
from lengthgen.runs import allotment, planned, rates, slices
from lengthgen.runs.planner import GROUP_OVERHEAD_S, MARGIN, Planner

CPU = torch.device("cpu")
CONFIG = budget.budget_configs()["test"]
QUIET = dict(log=lambda *a, **k: None)
ROOT = Path(__file__).resolve().parents[1]


def run_slice(root, scale, device, deadline, **options):
    """A slice of the paper-budget sweep (the planned figure's, `runs.planned.run_slice`)."""
    return planned.run_slice(RECORDS_ID, scale, root, device, deadline, **options)


def _folder(root) -> Path:
    return Path(root) / RECORDS_ID / "test"


def _records(root) -> dict:
    return budget.load_job_records(_folder(root))


def _files(root) -> dict:
    """{record file: (inode, mtime_ns)}: a record rewritten changes them."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in _folder(root).glob("*.json")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """The records of one uninterrupted slice."""
    root = tmp_path_factory.mktemp("reference")
    run_slice(root, "test", CPU, time.time() + 300, **QUIET)
    records = _records(root)
    assert budget.plan(CONFIG, records) == []
    return records


@pytest.fixture(scope="module")
def stopped_states(tmp_path_factory) -> Path:
    """The states a slice stopped at step 15 left (some jobs stop at step 10 already)."""
    root = tmp_path_factory.mktemp("stopped")
    counts = run_slice(root, "test", CPU, time.time() + 300, until_step=15,
                              states_out=root / "states", **QUIET)
    assert counts["states_kept"] > 0
    return root / "states"


def _same_as(reference: dict, records: dict) -> None:
    assert set(records) == set(reference)
    for name, record in records.items():
        a, b = reference[name]["metrics"], record["metrics"]
        assert a["bins"] == b["bins"], name
        assert [h.get("accuracy") for h in a["history"]] == \
            [h.get("accuracy") for h in b["history"]], name


# ---- 1. one slice per records folder ------------------------------------------------------------
def test_a_second_slice_on_a_folder_is_refused_in_one_line_and_keeps_the_first_ones_claims(
        tmp_path, capsys):
    from lengthgen.__main__ import main
    from lengthgen.runs.runner import sweep_lock
    folder = _folder(tmp_path)
    (folder / ".claims").mkdir(parents=True)
    (folder / ".claims" / "a_job_of_the_first_slice").touch()
    with sweep_lock(folder):   # the first slice
        with pytest.raises(LengthgenError, match="another sweep"):
            run_slice(tmp_path, "test", CPU, time.time() + 60, **QUIET)
        code = main(["budget", "slice", "--scale", "test", "--root", str(tmp_path),
                     "--minutes", "1", "--workers", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: another sweep")
    assert (folder / ".claims" / "a_job_of_the_first_slice").exists()
    assert not list(folder.glob("*.json"))   # nothing trained


# ---- 2. outputs checked first; write failures ---------------------------------------------------
def test_a_slice_that_cannot_write_its_states_is_refused_before_training(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder\n")
    for option in ("states", "states_out"):
        with pytest.raises(LengthgenError, match="cannot write"):
            run_slice(tmp_path, "test", CPU, time.time() + 60,
                             **{option: a_file / "states"}, **QUIET)
    with pytest.raises(LengthgenError, match="cannot write"):
        run_slice(a_file, "test", CPU, time.time() + 60, **QUIET)
    assert not _folder(tmp_path).exists() or not list(_folder(tmp_path).glob("*.json"))


def test_a_write_failure_stops_the_slice_after_the_groups_other_records(tmp_path, monkeypatch):
    import errno
    from lengthgen.runs import planned
    written = planned.write_job_record
    failing = budget.plan(CONFIG, {})[0].name

    def full_disk(figure_id, scale, root, spec, *args):
        if spec.name == failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        return written(figure_id, scale, root, spec, *args)
    monkeypatch.setattr(planned, "write_job_record", full_disk)
    with pytest.raises(LengthgenError, match="No space left on device.*stopped") as caught:
        run_slice(tmp_path, "test", CPU, time.time() + 300, **QUIET)
    assert "\n" not in str(caught.value)
    from lengthgen.engine.jobs import group_key
    key = group_key(budget.to_engine_job(budget.plan(CONFIG, {})[0], CONFIG))
    group = [j.name for j in budget.plan(CONFIG, {})   # the first group: one decoder shape
             if group_key(budget.to_engine_job(j, CONFIG)) == key]
    assert len(group) > 1 and set(_records(tmp_path)) == set(group) - {failing}


# ---- 3. a state at its cap ----------------------------------------------------------------------
def test_a_state_at_its_cap_is_scored_not_trained_again(tmp_path, stopped_states):
    states = budget.load_states(stopped_states)
    spec = next(j for j in budget.plan(CONFIG, {}) if j.name in states)
    name, state = spec.name, states[spec.name]
    cap = budget.to_engine_job(spec, CONFIG).train.steps
    slices.keep_state(tmp_path / "in", name, {**state, "step": cap})
    start = time.perf_counter()
    counts = run_slice(tmp_path, "test", CPU, time.time() + 90,
                              states_in=tmp_path / "in", **QUIET)
    assert time.perf_counter() - start < 80   # today: it spins until the deadline
    records = _records(tmp_path)
    assert budget.plan(CONFIG, records) == [] and counts["from_states"] == 1
    assert counts["groups"] <= 4
    assert records[name]["metrics"]["steps"] == cap
    assert records[name]["metrics"]["history"] == state["history"]


# ---- 4. bad state files -------------------------------------------------------------------------
def test_bad_state_files_are_named_and_their_jobs_start_fresh(tmp_path, stopped_states,
                                                              reference):
    states = budget.load_states(stopped_states)
    names = [j.name for j in budget.plan(CONFIG, {})]
    good = next(n for n in names if n in states)
    bad = [n for n in names if n != good][:4]
    folder = tmp_path / "in"
    slices.keep_state(folder, good, states[good])
    (folder / f"{bad[0]}.pt").write_bytes(b"PK\x03\x04 damaged")
    torch.save([1, 2, 3], folder / f"{bad[1]}.pt")
    torch.save({"model": {}}, folder / f"{bad[2]}.pt")
    wrong = {k: v for k, v in states[good].items() if k != "job"}
    wrong["model"] = {k: torch.zeros(3) for k in wrong["model"]}   # not this decoder's
    torch.save(wrong, folder / f"{bad[3]}.pt")
    (folder / ".tmp-abc.pt").write_bytes(b"half a state")
    os.mkfifo(folder / f"{names[-1]}.pt")
    (folder / "a_folder.pt").mkdir()
    notes = []
    counts = run_slice(tmp_path, "test", CPU, time.time() + 300, states_in=folder,
                              log=lambda line, **k: notes.append(line))
    said = [n for n in notes if '"note"' in n]
    for name in bad:
        assert sum(name in n for n in said) == 1, name
    assert not any(".tmp-abc" in n or names[-1] in n or "a_folder" in n for n in said)
    assert counts["resumed"] == 1
    _same_as(reference, _records(tmp_path))   # the bad ones' jobs trained from the start


def test_a_state_at_step_0_trains_with_the_fresh_jobs_of_its_shape(tmp_path, reference):
    """What a worker stopped before its first step keeps: today its group fails (a resumed
    first member, fresh others)."""
    from lengthgen.engine.jobs import train_jobs
    spec = budget.plan(CONFIG, {})[0]
    outcome, = train_jobs([budget.to_engine_job(spec, CONFIG)], CPU, sampler="device",
                          until_step=0)
    slices.keep_state(tmp_path / "s", spec.name, {**outcome.state, "job": spec.params()})
    counts = run_slice(tmp_path, "test", CPU, time.time() + 300, states=tmp_path / "s",
                              **QUIET)
    assert "failed_groups" not in counts
    _same_as(reference, _records(tmp_path))


def test_reading_states_never_opens_a_fifo_or_a_temp_file(tmp_path):
    os.mkfifo(tmp_path / "job.pt")
    (tmp_path / ".tmp-x.pt").write_bytes(b"junk")
    os.symlink("/dev/zero", tmp_path / "zero.pt")
    assert slices.read_states([tmp_path], lambda *a: pytest.fail(str(a))) == {}


# ---- 5. signals to a slice of workers -----------------------------------------------------------
def _start_slice(root: Path, *extra) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "lengthgen", "budget", "slice", "--scale",
                             "test", "--root", str(root), "--minutes", "4", "--workers", "2",
                             "--max-group", "1", *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _drill(root: Path, sig: int, total: int, *extra) -> tuple:
    """Start a slice of 2 workers, wait for its first of `total` records, send `sig` to the
    parent; return (its workers' pids, the time of the signal, its exit code, its stderr)."""
    proc = _start_slice(root, *extra)   # groups of one job: work is left after the first
    deadline = time.time() + 240
    workers = []
    while time.time() < deadline and not list(_folder(root).glob("*.json")):
        assert proc.poll() is None, proc.stderr.read()
        workers = workers if len(workers) == 2 else _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) == 2 and list(_folder(root).glob("*.json"))
    assert proc.poll() is None and len(list(_folder(root).glob("*.json"))) < total
    sent = time.time()
    os.kill(proc.pid, sig)
    code = proc.wait(timeout=120)
    end = time.time() + 60
    while time.time() < end and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), "a worker outlived its parent"
    return workers, sent, code, proc.stderr.read()


def _finish_and_compare(root: Path, reference: dict, **options) -> None:
    before = _files(root)
    counts = run_slice(root, "test", CPU, time.time() + 300, **options, **QUIET)
    after = _files(root)
    assert all(after[name] == seen for name, seen in before.items())   # none rewritten
    assert counts["recorded"] == len(reference) - len(before)          # none trained twice
    _same_as(reference, _records(root))


def test_sigterm_stops_a_slice_of_workers_which_keep_their_work(tmp_path, reference):
    _, _, code, err = _drill(tmp_path, signal.SIGTERM, len(reference), "--states",
                             str(tmp_path / "s"))
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("error: the slice was stopped by SIGTERM")
    _finish_and_compare(tmp_path, reference, states=tmp_path / "s")


def test_kill_9_of_a_slices_parent_stops_its_workers_without_records_after(tmp_path,
                                                                          reference):
    _, sent, code, _ = _drill(tmp_path, signal.SIGKILL, len(reference))
    assert code == -signal.SIGKILL
    late = [p.name for p in _folder(tmp_path).glob("*.json") if p.stat().st_mtime > sent + 2]
    assert late == []
    _finish_and_compare(tmp_path, reference)


def test_a_stop_passes_the_engines_deadline_at_once():
    stop = slices.Stop()
    deadline = slices.Deadline(time.perf_counter() + 3600, stop)
    assert time.perf_counter() < deadline
    stop.signal = signal.SIGTERM
    assert not time.perf_counter() < deadline
    assert slices.Stop(parent=os.getpid()).orphaned   # this process is not its own child


# ---- 7. jobs that finish where they start -------------------------------------------------------
SLOW = rates.RateTable("test", "a made-up table", (rates.Rate((1, 1, 16), 1, False, 0.5),))


def test_a_slice_starts_no_job_it_cannot_finish(tmp_path):
    counts = run_slice(tmp_path, "test", CPU, time.time() + 60, rates=SLOW,
                              states_out=tmp_path / "out", **QUIET)
    assert counts["not_started"] == len(budget.plan(CONFIG, {}))
    assert counts["groups"] == 0 and not _records(tmp_path)
    assert not (tmp_path / "out").exists()


def test_a_chained_call_counts_when_the_states_stay_on_the_local_disk(tmp_path, reference):
    """30 steps at 2 s a step need 93 s by the planner: this call has 60, the chained one the
    rest. Without a local states folder nothing starts; with one, the jobs start and (stopped
    at step 15 here, as a deadline would) keep every state there; the next call resumes them
    and records what an uninterrupted slice records."""
    local, slow = tmp_path / "local", SLOW
    alone = run_slice(tmp_path / "alone", "test", CPU, time.time() + 60, rates=slow,
                             chain_s=600, **QUIET)
    assert alone["groups"] == 0 and alone["not_started"] > 0
    first = run_slice(tmp_path, "test", CPU, time.time() + 60, rates=slow, states=local,
                             chain_s=600, until_step=15, **QUIET)
    assert first["not_started"] == 0 and first["groups"] >= 1
    kept = {p.stem for p in local.glob("*.pt")}
    assert first["unfinished"] == len(kept) > 0
    second = run_slice(tmp_path, "test", CPU, time.time() + 300, states=local, **QUIET)
    assert second["resumed"] == len(kept)
    _same_as(reference, _records(tmp_path))
    assert not list(local.glob("*.pt"))   # finished jobs' states are not handed on


def _bench(shape) -> dict:
    """The FLOPs per step of a shape at the benchmark's workload, as the planner takes them."""
    from lengthgen.runs import cost
    return {"flops": cost._bench_flops(shape)}


def test_the_planner_uses_the_table_then_what_the_slice_measured():
    planner = Planner(rates.H200, graphs=True)
    alone = planner.seconds((6, 4, 256), 1, 60000, **_bench((6, 4, 256)))
    assert alone == pytest.approx(60000 * 8 / 635.2 * MARGIN + GROUP_OVERHEAD_S)
    small, mid, big = _bench((1, 1, 16)), _bench((2, 2, 64)), _bench((6, 4, 256))
    n = planner.largest((1, 1, 16), [30000] * 300, 300, 256, **small)
    assert 0 < n < 256 and planner.seconds((1, 1, 16), n, 30000, **small) <= 300 \
        < planner.seconds((1, 1, 16), n + 1, 30000, **small)
    assert planner.largest((6, 4, 256), [60000] * 8, allotment.USABLE_S, 8, **big) == 0
    planner.measure((6, 4, 256), 8, 1000, 5.0)   # faster than the table: the table holds
    assert planner.largest((6, 4, 256), [60000] * 8, allotment.USABLE_S, 8, **big) == 0
    assert planner.largest((2, 2, 64), [30000] * 64, 400, 64, **mid) == 64
    planner.measure((2, 2, 64), 64, 1000, 20.0)   # slower (other workers on the card)
    assert planner.seconds((2, 2, 64), 64, 30000, **mid) == pytest.approx(600)
    assert planner.largest((2, 2, 64), [30000] * 64, 400, 64, **mid) == 0
    assert planner.largest((2, 2, 64), [30000] * 64, 700, 64, **mid) == 64
    assert Planner().seconds((1, 1, 16), 4, 100) is None   # nothing known: it starts
    measured = Planner()   # no table (a CPU): the slice's own rate
    measured.measure((1, 1, 16), 8, 30, 3.0)
    assert measured.largest((1, 1, 16), [30] * 16, 4.0, 16) == 10   # 3.75 s for 10
    # a job that must finish in this allotment counts the other workers on the card
    shared = Planner(rates.H200, graphs=True, share=3, careful=lambda shape: True)
    mine = _bench((4, 4, 256))
    assert shared.seconds((4, 4, 256), 1, 30000, **mine) - GROUP_OVERHEAD_S == \
        pytest.approx(3 * (planner.seconds((4, 4, 256), 1, 30000, **mine)
                           - GROUP_OVERHEAD_S))
    with pytest.raises(LengthgenError, match="FLOPs of its step"):
        planner.seconds((4, 4, 256), 1, 30000)
    assert rates.state_bytes((6, 4, 256)) > slices.HANDOFF_FILE_BYTES \
        > rates.state_bytes((1, 2, 256))


def test_a_job_alone_is_planned_at_one_models_rate_plus_its_host_work():
    """A job the engine trains alone (a Dyck model) steps one model at a time, eagerly: the
    planner times it by the table's train() rows, not by a stacked group's (which, launch-bound,
    step a lone decoder about twice as fast, three times as a graph), adds its host work, and
    puts it in a group of one."""
    planner = Planner(rates.H200, graphs=True)
    shape = (4, 4, 1024)   # the paper's Dyck decoders: covered by the 12-layer row
    single = [r.model_steps_per_s for r in rates.H200.rates
              if r.single and r.shape == (12, 12, 768)]
    assert single == [25.4]
    from lengthgen.runs import cost
    flops = 1.7e12   # about the 12-layer row's step, which went at 25.4 steps/s
    alone = planner.seconds(shape, 1, 10000, alone=True, host_s=78.0, flops=flops)
    rate = cost.one_model_steps_per_s(flops, shape)
    assert rate < 30 and alone == pytest.approx(
        10000 / rate * MARGIN + GROUP_OVERHEAD_S + 78)
    # the stacked rate (the old estimate)
    assert planner.seconds(shape, 1, 10000, flops=flops) < alone / 2
    assert planner.largest(shape, [10000] * 4, 3600, 4, alone=True, flops=flops) == 1
    assert planner.largest(shape, [10000] * 4, 3600, 4, flops=flops) == 4
    planner.measure(shape, 4, 1000, 1.0)   # a stacked group's rate says nothing of one alone
    assert planner.seconds(shape, 1, 10000, alone=True, host_s=78.0,
                           flops=flops) == pytest.approx(alone)


def test_a_slice_starts_no_dyck_job_that_cannot_finish_at_one_models_rate(tmp_path,
                                                                             monkeypatch):
    """Stacked rows fast and train() rows slow: a slice of Dyck jobs (each trained alone)
    starts none of them, where the stacked rate would have started them all; and a Dyck job
    of the paper's config says how long drawing its 4^12 words takes on the host."""
    from lengthgen.experiments.richard import protocol
    from lengthgen.tasks import dyck
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    table = rates.RateTable("X", "planted", tuple(
        rates.Rate(shape, 1, graphs, 1e6) for shape in ((1, 1, 16), (12, 12, 768))
        for graphs in (False, True)) + tuple(
        rates.Rate(shape, 1, False, 0.01, single=True) for shape in ((1, 1, 16), (12, 12, 768))))
    counts = planned.run_slice("richard-fig7-learned-pe", "test", tmp_path, CPU,
                               time.time() + 120, rates=table, **QUIET)
    assert counts["groups"] == 0 and counts["not_started"] > 0
    spec = protocol.learned_pe_models("paper")["eq1"]
    assert protocol.job(spec).host_seconds == pytest.approx(dyck.drawing_seconds(16, 4 ** 12))
    assert protocol.job({**spec, "train_size": None}).host_seconds == 0.0


def test_rates_from_a_benchmark_file(tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"header": {"card": "X"}}\n{"kind": "engine", "shape": [2, 2, 64], '
                     '"group": 32, "model_steps_per_s": 3200.0}\nnot json\n')
    table = rates.read_bench(bench)
    from lengthgen.runs import cost
    flops = cost._bench_flops((2, 2, 64))   # the benchmark's step at that shape
    assert table.card == "X" and cost.group_steps_per_s(flops, 32, table, False) == \
        pytest.approx(3200)
    # a smaller shape alone: no slower than the measured group's step (0.01 s)
    assert cost.group_steps_per_s(cost._bench_flops((1, 1, 16)), 1, table, False) == \
        pytest.approx(100)
    assert cost.one_model_steps_per_s(flops, (2, 2, 64), table) == pytest.approx(100)
    with bench.open("a") as out:   # a train() row: the rate of a job alone
        out.write('{"kind": "train()", "shape": [2, 2, 64], "group": 1, '
                  '"model_steps_per_s": 50.0}\n')
    table = rates.read_bench(bench)
    assert cost.one_model_steps_per_s(flops, (2, 2, 64), table) == 50.0
    assert cost.group_steps_per_s(flops, 32, table, False) == pytest.approx(3200)
    bench.write_text("{}\n")
    with pytest.raises(LengthgenError, match="no engine rates"):
        rates.read_bench(bench)


# ---- 8. chained states, bit for bit, and their packs --------------------------------------------
def test_a_job_stopped_packed_and_resumed_ends_with_the_same_weights(tmp_path):
    from lengthgen.engine.jobs import train_jobs
    specs = budget.plan(CONFIG, {})[:3]
    jobs = [budget.to_engine_job(s, CONFIG) for s in specs]
    straight = train_jobs(jobs, CPU, sampler="device")
    stopped = train_jobs(jobs, CPU, sampler="device", until_step=15)
    states = {s.name: o.state for s, o in zip(specs, stopped) if o.state is not None}
    assert states
    slices.pack_states(states, tmp_path)
    read = {n: s for n, (s, _) in slices.read_states([tmp_path]).items()}
    todo = [i for i, o in enumerate(stopped) if o.state is not None]   # not done at 15
    resumed = train_jobs([jobs[i] for i in todo], CPU, sampler="device",
                         resume={k: read[specs[i].name] for k, i in enumerate(todo)})
    for k, i in enumerate(todo):
        a, b = straight[i], resumed[k]
        assert [h["step"] for h in a.result.history] == [h["step"] for h in b.result.history]
        assert a.result.history == b.result.history
        for (name, x), (_, y) in zip(a.model.state_dict().items(),
                                     b.model.state_dict().items()):
            assert torch.equal(x, y), name


def test_packs_hold_the_smallest_states_within_the_hand_off_limits(tmp_path):
    states = {f"job{k}": {"x": torch.zeros(k * 25_000)} for k in range(1, 7)}   # 0.1-0.6 MB
    packs = slices.pack_states(states, tmp_path, files=2, file_bytes=450_000,
                               total_bytes=900_000)
    packed = [n for names in packs.values() for n in names]
    assert packed == ["job1", "job2", "job3"] and len(packs) == 2
    assert all(p.stat().st_size <= 450_000 for p in tmp_path.iterdir())
    read = slices.read_states([tmp_path])
    assert sorted(read) == packed
    assert torch.equal(read["job3"][0]["x"], states["job3"]["x"])


def test_budget_pack_counts_the_files_already_in_the_output(tmp_path, stopped_states, capsys):
    import json

    from lengthgen.__main__ import main
    out = tmp_path / "out"
    out.mkdir()
    for k in range(7):
        (out / f"log{k}").write_text("x")
    root = stopped_states.parent   # the records of the slice that left these states
    recorded = sorted(_records(root))[0]
    extra = tmp_path / "extra"
    slices.keep_state(extra, recorded, next(iter(budget.load_states(stopped_states).values())))
    code = main(["budget", "pack", "--scale", "test", "--root", str(root), "--states",
                 str(stopped_states), "--states", str(extra), "--out", str(out)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and len(report["packs"]) == 1 and len(list(out.iterdir())) == 8
    assert report["packed"] == len(list(stopped_states.glob("*.pt")))   # not the recorded job
    assert recorded not in report["packs"]["slice-states-0.pt"]


# ---- 9. the estimate ----------------------------------------------------------------------------
def test_the_estimate_names_the_jobs_no_allotment_can_hold(capsys):
    from lengthgen.__main__ import main
    gpu = budget.budget_configs()["gpu"]
    rows = {tuple(r["shape"]): r for r in budget.estimate(gpu, {}, rates.H200)}
    assert sum(r["jobs"] for r in rows.values()) == len(budget.plan(gpu, {}, slices=False))
    big = rows[(12, 12, 768)]
    assert big["group"] == 0 and len(big["too_long"]) == big["jobs"] > 0
    assert rows[(1, 1, 16)]["too_long"] == [] and rows[(1, 1, 16)]["minutes"] > 0
    code = main(["budget", "plan", "--estimate", "--root", str(ROOT / "results")])
    out = capsys.readouterr().out
    assert code == 0 and "GPU minutes" in out and "cannot finish inside one allotment" in out


def test_compile_reaches_the_engine_and_the_records_say_so(tmp_path, monkeypatch):
    """`budget slice --compile` hands compile to train_jobs (engine.compiled), and each record
    it writes says the step was compiled; a slice without it says nothing of the kind."""
    import lengthgen.engine.jobs as jobs_module
    seen = []
    real = jobs_module.train_jobs

    def spy(*args, **kwargs):
        seen.append(kwargs.get("compile"))
        return real(*args, **{**kwargs, "compile": False})   # eager here: the test is the wiring
    monkeypatch.setattr(jobs_module, "train_jobs", spy)
    run_slice(tmp_path, "test", CPU, time.time() + 120, compile=True, **QUIET)
    assert seen and all(c is True for c in seen)
    records = _records(tmp_path)
    assert records and all(r["metrics"].get("compiled") is True for r in records.values())
    seen.clear()
    run_slice(tmp_path / "plain", "test", CPU, time.time() + 120, **QUIET)
    assert seen and not any(seen)
    assert all("compiled" not in r["metrics"] for r in _records(tmp_path / "plain").values())


# ---- one home for one model's rate, and the drawing counted once (issue 53) -------------------
def _fig7_paper_jobs():
    from lengthgen.experiments.richard import protocol
    return {v: protocol.job(spec) for v, spec in protocol.learned_pe_models("paper").items()}


def test_the_planner_and_figure_cost_time_a_dyck_job_at_one_rate():
    """One model of the paper's Dyck decoders (4L4H d1024, batch 8): the slice's planner and
    `figure cost` ask one function (`cost.one_model_steps_per_s`), so the planner's estimate is
    figure cost's minutes with the planner's margin and group overhead, nothing else (the old
    planner took the 12-layer train() row, 25.4 steps/s, where figure cost found about 65)."""
    from lengthgen.runs import cost
    job = _fig7_paper_jobs()["uniform-pm1"]
    training = cost.job_training(job)
    assert training.alone and training.dims == (4, 4, 1024)
    figure_s = cost.estimate("f", [training]).minutes() * 60
    planner = Planner(rates.H200, graphs=True)
    host = planner.host_seconds(job)
    assert host == pytest.approx(job.host_seconds) and host > 60
    planned_s = planner.seconds(cost.job_shape(job), 1, job.train.steps, True, host,
                                cost.job_flops(job))
    assert planned_s == pytest.approx(MARGIN * (figure_s - host)
                                      + GROUP_OVERHEAD_S + host)
    rate = cost.one_model_steps_per_s(training.flops_per_step(), training.dims)
    assert figure_s - host == pytest.approx(job.train.steps / rate)
    assert rate > 25.4 * 2   # launch-bound at batch 8, not the 12-layer row


def test_a_slices_planner_counts_a_set_of_words_once():
    """Fig. 7's three models share seed 0's 4^12 words, drawn once per process: once a job of
    that set started, the planner adds no drawing to the others; another seed's set it adds."""
    jobs = _fig7_paper_jobs()
    first, second = jobs["uniform-pm1"], jobs["eq1"]
    assert first.host_key and first.host_key == second.host_key
    from lengthgen.experiments.richard import protocol
    other = protocol.job({**protocol.learned_pe_models("paper")["eq1"], "seed": 1})
    planner = Planner(rates.H200)
    assert planner.host_seconds(second) == second.host_seconds and second.host_seconds > 60
    planner.started(first)
    assert planner.host_seconds(second) == 0.0
    assert planner.host_seconds(other) == other.host_seconds and other.host_seconds > 60


def test_a_planner_keeps_as_many_word_sets_as_a_process_does():
    """A process keeps the last HOST_KEYS_KEPT sets of drawn words (richard.protocol's cache of
    that size): the planner forgets the least recently used set as the process does, and
    counts its drawing again (it counted every set once for ever, where Fig. 6 cycles through
    12 sets a variant)."""
    from lengthgen.runs.cost import HOST_KEYS_KEPT
    from lengthgen.experiments.richard import protocol
    assert protocol._words.cache_info().maxsize == HOST_KEYS_KEPT
    spec = protocol.learned_pe_models("paper")["eq1"]
    jobs = [protocol.job({**spec, "seed": seed}) for seed in range(HOST_KEYS_KEPT + 1)]
    assert len({job.host_key for job in jobs}) == len(jobs)
    planner = Planner(rates.H200)
    for job in jobs[:-1]:
        planner.started(job)
    planner.started(jobs[0])   # used again: the most recent
    assert all(planner.host_seconds(job) == 0.0 for job in jobs[:-1])
    planner.started(jobs[-1])   # one set too many: the least recently used (seed 1) is dropped
    assert planner.host_seconds(jobs[1]) == jobs[1].host_seconds > 60
    assert planner.host_seconds(jobs[0]) == planner.host_seconds(jobs[-1]) == 0.0


def test_a_slice_takes_first_a_job_whose_words_are_drawn():
    """Of the fresh jobs, a worker takes first one whose set of words its process has drawn,
    so that a set is drawn once (as `figure cost` counts it), then the others in their order."""
    from types import SimpleNamespace

    from lengthgen.experiments.richard import protocol
    models = protocol.learned_pe_models("paper")
    jobs = {f"{variant}-{seed}": protocol.job({**spec, "seed": seed})
            for seed in (0, 1) for variant, spec in models.items()}
    pending = [SimpleNamespace(name=name) for name in jobs]
    planner = Planner(rates.H200)

    def choose():
        return slices._choose(pending, jobs, {}, 0, 10 * 3600.0, planner, 256, None,
                              lambda name: True)[0]
    assert [spec.name for spec in choose()] == ["uniform-pm1-0"]   # the order, with none drawn
    planner.started(jobs["eq1-1"])
    chosen = [spec.name for spec in choose()]
    assert len(chosen) == 1 and chosen[0].endswith("-1")
