"""Planned figures and the GPU queue (issues 52 and 53), at test scale on the CPU: the order of
the queue, a queue of two planned figures run to the end in one slice with every record a
figure's record, and a queue stopped midway that resumes without touching finished jobs."""
import json
import signal
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


def budget_queue(capsys, *args) -> tuple:
    """`python -m lengthgen budget queue ARGS`, through the entry point's main() in this process
    (the interpreter's start is not what these tests are about): (exit code, stdout, stderr).
    A queue that trains installs its SIGTERM/SIGINT handlers; this test process gets its own
    back afterwards."""
    from lengthgen.__main__ import main
    capsys.readouterr()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = main(["budget", "queue", *args])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_budget_queue_on_the_command_line(tmp_path, capsys, monkeypatch):
    """`budget queue --list` prints the order; a queue of one figure trains it to the end; an
    unknown or unplanned figure is one line."""
    monkeypatch.chdir(tmp_path)
    code, out, err = budget_queue(capsys, "--scale", "test", "--figures", ",".join(PAIR),
                                  "--list")
    assert code == 0, err
    assert [line.split("\t")[0] for line in out.splitlines()] == \
        ["huang-fig1-budget", "huang-ape-leads"]
    code, out, err = budget_queue(capsys, "--scale", "test", "--figures", "huang-ape-leads",
                                  "--device", "cpu", "--minutes", "5",
                                  "--root", str(tmp_path / "results"))
    assert code == 0, err
    counts = json.loads(out.strip().splitlines()[-1])["done"]["huang-ape-leads"]
    assert counts["recorded"] == len(load_records("huang-ape-leads", "test",
                                                  tmp_path / "results")) > 0
    code, out, err = budget_queue(capsys, "--scale", "test", "--figures",
                                  "huang-fig1-languages", "--list")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "not a planned figure" in err


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


# ---- Richard's Dyck figures and the inference procedure as planned figures (issue 53) -------
DYCK = ["richard-fig7-learned-pe", "richard-fig7-order-study", "richard-fig4-completions",
        "richard-fig5-spectrum", "richard-fig5-sign-study", "richard-table1-deepest",
        "richard-fig6-ablation", "richard-fig3-right-samples", "richard-fig3-left-capacity"]
STACKED = ["limit-inference-procedure"]   # decoders the engine stacks
NEWLY_PLANNED = DYCK + STACKED


@pytest.fixture
def dyck_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # run_one's weight cache


def test_the_gpu_queue_lists_the_new_planned_figures_in_cost_order_with_their_minutes(capsys):
    """`budget queue --scale gpu --list` names each new planned figure at its paper config,
    after the Fig. 1 sweep, in the order of their H200 minutes per id, which are `figure cost`'s
    (a Dyck model trained alone, at train()'s rate: engine and train() columns agree)."""
    from lengthgen.runs import cost
    rows = queue.order(queue.planned_figures(), "gpu")
    ids = [r["figure_id"] for r in rows]
    assert set(NEWLY_PLANNED) <= set(ids) and ids[0] == "huang-fig1-budget"
    for figure_id in NEWLY_PLANNED:
        row = rows[ids.index(figure_id)]
        module = experiment(figure_id)
        estimate = cost.estimate(figure_id, module.trainings(module.CONFIGS["paper"]))
        assert row["scale"] == "paper" and row["own_minutes"] == pytest.approx(
            estimate.minutes())
        # less where figures before it train some of its models (the shared ones, below)
        assert row["minutes"] <= row["own_minutes"] + 1e-9
        if not hasattr(module, "shared_key"):
            assert row["minutes"] == row["own_minutes"]
        alone = estimate.minutes() == pytest.approx(estimate.minutes(kind=cost.SINGLE_KIND))
        assert alone == (figure_id in DYCK)
    assert ids.index("richard-fig7-learned-pe") < ids.index("richard-fig7-order-study")
    code, out, err = budget_queue(capsys, "--scale", "gpu", "--list")
    assert code == 0, err
    lines = {line.split("\t")[0]: line.split("\t") for line in out.splitlines()}
    assert list(lines) == ids
    for figure_id in NEWLY_PLANNED:
        row = rows[ids.index(figure_id)]
        assert lines[figure_id][1] == "paper"
        assert lines[figure_id][2].startswith(f"{row['minutes']:.1f} H200 min")


def test_a_dyck_job_trains_alone_as_train_does_and_resumes_to_the_same_weights(tmp_path):
    """A Dyck model (frozen tokens, dropout) is a job the stacked forward cannot hold: the
    engine trains it alone, to `train()`'s very weights, and one stopped at step 3 and resumed
    from its state (generators included) ends with the weights of one trained at once."""
    from lengthgen.engine.jobs import train_jobs
    from lengthgen.experiments.richard import protocol
    from lengthgen.tasks.dyck import DyckTask
    from lengthgen.train import train
    spec = {**protocol.learned_pe_models("test")["uniform-pm1"], "steps": 6, "dropout": 0.1,
            "seed": 3}
    reference = protocol.build_model(spec)
    alone = train(reference, DyckTask(spec["n"], protocol.training_words(spec)),
                  protocol.train_config(spec), CPU)
    job = protocol.job(spec, "j")
    assert job.alone
    (whole,) = train_jobs([job], CPU)
    assert whole.result.steps == alone.steps == 6
    for name, value in reference.state_dict().items():
        assert torch.equal(whole.model.state_dict()[name], value), name
    (cut,) = train_jobs([protocol.job(spec, "j")], CPU, until_step=3)
    assert cut.result is None and cut.state["step"] == 3 and "rng" not in cut.state
    assert set(cut.state["feed"]) >= {"numpy", "task", "torch"}   # one home for its generators
    from lengthgen.engine.checkpoints import state_problem
    older = {**cut.state, "rng": {"numpy": cut.state["feed"]["numpy"]}}   # resume format 2's
    assert state_problem(older, protocol.build_model(spec)).startswith("is of an older format")
    (resumed,) = train_jobs([protocol.job(spec, "j")], CPU, resume={0: cut.state})
    for name, value in reference.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], value), name
    frozen = whole.model.token_embeddings.weight
    assert torch.equal(frozen, protocol.build_model(spec).token_embeddings.weight)


def test_the_new_planned_figures_records_are_run_ones_and_a_queue_resumes(tmp_path, dyck_cache):
    """The queue at test scale trains the new planned figures to the end: stopped after its
    first group it keeps what it finished; run again, it trains only the rest; every record is
    a registered run of its figure, with `run_one`'s own metrics where the engine trains the
    model alone as train() does (the Dyck figures; the stacked decoders' numbers may round
    differently: their keys and step counts), and the provenance of any record."""
    from lengthgen.runs.slices import Stop
    rows = queue.order(NEWLY_PLANNED, "test")
    stop = Stop()

    def stop_after_a_group(line, **kwargs):
        if '"shape"' in line:
            stop.signal = signal.SIGTERM
    first = queue.run_queue(rows, tmp_path, CPU, time.time() + 300, stop=stop,
                            states=tmp_path / "states", log=stop_after_a_group)
    head = rows[0]["figure_id"]
    assert list(first) == [head] and first[head]["recorded"] > 0
    kept = _files(tmp_path)
    assert len(kept) == first[head]["recorded"]
    assert (in_progress(tmp_path / head / "test") is None) \
        == (not planned.pending(head, "test", tmp_path))   # in progress while jobs are left
    again = queue.run_queue(rows, tmp_path, CPU, time.time() + 300,
                            states=tmp_path / "states", log=lambda *a, **k: None)
    assert set(again) == set(NEWLY_PLANNED)
    now = _files(tmp_path)
    assert {name: now[name] for name in kept} == kept   # the finished job was not trained again
    for figure_id in NEWLY_PLANNED:
        module = experiment(figure_id)
        config = module.CONFIGS["test"]
        records = load_records(figure_id, "test", tmp_path)
        assert sorted(r["run_name"] for r in records) == sorted(p["name"]
                                                                for p in module.runs(config))
        assert not (tmp_path / figure_id / "test" / IN_PROGRESS).exists()
        check_records(figure_id, records)
        for r in records:
            assert r["config"] == config and r["git_commit"] and r["lib_digest"]
            metrics = {k: v for k, v in r["metrics"].items()
                       if k not in ("cuda_graphs", "shared_weights")}
            alone = module.run_one(r["params"], config, CPU)
            if figure_id in DYCK:
                assert metrics == alone, r["run_name"]
            else:
                assert set(metrics) == set(alone) and metrics["steps"] == alone["steps"]
        forged = {**records[0], "params": {**records[0]["params"], "seed": 7}}
        with pytest.raises(Exception, match="not a registered run"):
            check_records(figure_id, [forged])


def test_a_job_trained_alone_claims_no_compiled_step_and_no_graphs(tmp_path, dyck_cache):
    """A slice asked for torch.compile and CUDA graphs trains a Dyck job alone, eagerly, as
    train() does: its record must not say it ran a compiled (or captured) step."""
    counts = planned.run_slice("richard-fig7-learned-pe", "test", tmp_path, CPU,
                               time.time() + 300, graphs=True, compile=True,
                               log=lambda *a, **k: None)
    records = load_records("richard-fig7-learned-pe", "test", tmp_path)
    assert counts["recorded"] == len(records) > 0
    assert all("compiled" not in r["metrics"] and r["metrics"]["cuda_graphs"] is False
               for r in records)


def test_a_record_asks_the_job_the_slice_trained_and_builds_none_again(tmp_path, dyck_cache,
                                                                        monkeypatch):
    """Whether a job trained alone (its record's `cuda_graphs`, `compiled`) is asked of the
    engine Job the slice trained, not of one the figure builds again for each record."""
    module = experiment("richard-fig7-learned-pe")
    recording, rebuilt = [False], []
    score, engine_job, write = module.score, module.engine_job, planned.write_job_record

    def scoring(*args, **kwargs):
        recording[0] = True
        return score(*args, **kwargs)

    def building(job, config):
        if recording[0]:
            rebuilt.append(job.name)
        return engine_job(job, config)

    def writing(*args, **kwargs):
        recording[0] = False
        return write(*args, **kwargs)
    monkeypatch.setattr(module, "score", scoring)
    monkeypatch.setattr(module, "engine_job", building)
    monkeypatch.setattr(planned, "write_job_record", writing)
    counts = planned.run_slice("richard-fig7-learned-pe", "test", tmp_path, CPU,
                               time.time() + 300, graphs=True, log=lambda *a, **k: None)
    records = load_records("richard-fig7-learned-pe", "test", tmp_path)
    assert counts["recorded"] == len(records) > 0 and rebuilt == []
    assert all(r["metrics"]["cuda_graphs"] is False for r in records)


# ---- trainings that planned figures share (runs.trained): Fig. 4, Fig. 5, Table 1 ----------
SHARING = ["richard-fig4-completions", "richard-fig5-spectrum", "richard-table1-deepest"]


def _count_trainings(monkeypatch) -> list:
    """The names of the engine jobs the slices train from now on (every call of train_jobs)."""
    from lengthgen.engine import jobs
    trained, train_jobs = [], jobs.train_jobs

    def counting(group, *args, **kwargs):
        trained.extend(job.name for job in group)
        return train_jobs(group, *args, **kwargs)
    monkeypatch.setattr(jobs, "train_jobs", counting)
    return trained


def _notes(lines: list) -> list[str]:
    return [json.loads(line)["note"] for line in lines if '"note"' in line]


def test_the_figures_that_study_one_pair_of_models_cost_it_once_and_run_adjacent(capsys):
    """Fig. 4, Fig. 5 and Table 1 train the same two paper models: the queue bills them once
    (5.8 H200 minutes for three ids, not 17.4), runs the three one after the other, and says
    that the second and third only score the models the first trains."""
    from lengthgen.runs import cost
    rows = queue.order(queue.planned_figures(), "gpu")
    ids = [r["figure_id"] for r in rows]
    at = ids.index(SHARING[0])
    assert ids[at: at + 3] == SHARING
    first, *scoring = rows[at: at + 3]
    own = first["own_minutes"]
    assert first["minutes"] == pytest.approx(own) and first["scores_for"] is None
    assert all(r["minutes"] == 0.0 and r["scores_for"] == SHARING[0]
               and r["own_minutes"] == pytest.approx(own) for r in scoring)
    assert all(r["per_id"] == pytest.approx(own / 3) for r in rows[at: at + 3])
    costs = [cost.estimate(f, experiment(f).trainings(experiment(f).CONFIGS["paper"]))
             for f in SHARING]
    together = cost.estimate("total", cost.unique_trainings(costs)).minutes()
    assert sum(r["minutes"] for r in rows[at: at + 3]) == pytest.approx(together)
    assert together == pytest.approx(own)   # `figure cost`'s total: shared runs once
    per_id = [r["per_id"] for r in rows if not r["first"] and r["per_id"] is not None]
    assert per_id == sorted(per_id)
    # every Dyck figure shares its models: the queue spends `figure cost`'s total on them
    # (shared runs once), and the sign study less than alone (Fig. 4's many-word model)
    dyck = [cost.estimate(f, experiment(f).trainings(experiment(f).CONFIGS["paper"]))
            for f in DYCK]
    assert sum(r["minutes"] for r in rows if r["figure_id"] in DYCK) == pytest.approx(
        cost.estimate("total", cost.unique_trainings(dyck)).minutes())
    sign = rows[ids.index("richard-fig5-sign-study")]
    assert sign["minutes"] < sign["own_minutes"] - 1 and sign["scores_for"] is None
    code, out, err = budget_queue(capsys, "--scale", "gpu", "--figures", ",".join(SHARING),
                                  "--list")
    assert code == 0, err
    lines = [line.split("\t") for line in out.splitlines()]
    assert [line[0] for line in lines] == SHARING
    assert lines[0][2] == f"{own:.1f} H200 min, {own / 3:.1f} per id"
    assert lines[1][2].startswith(f"0.0 H200 min, {own / 3:.1f} per id (scores the models "
                                  f"{SHARING[0]} trains")


def test_a_dyck_figures_shared_key_names_its_trainings_as_its_cost_does():
    """The store's key of each job (`shared_key`) is the key of its training in `figure cost`
    (`trainings`): what the queue counts once is what the slices share. Every Dyck figure
    shares its models so; a job that trains nothing (Fig. 3's closed form) has no key."""
    for figure_id in DYCK:
        module = experiment(figure_id)
        for scale in ("test", "paper"):
            config = module.CONFIGS[scale]
            jobs = module.plan(config, {})
            keys = {module.shared_key(job, config) for job in jobs}
            assert keys - {None} == {t.key for t in module.trainings(config)}, (figure_id, scale)
            assert all((module.shared_key(job, config) is None)
                       == (module.engine_job(job, config) is None) for job in jobs)


def test_a_queue_of_the_three_figures_trains_each_model_once(tmp_path, dyck_cache, monkeypatch):
    """A queue of Fig. 4, Fig. 5 and Table 1 trains each of their four test models once (not
    three times): the first figure's slice trains and stores them, the others score them from
    the store. A record scored on stored weights says whose they are, and its numbers are
    those of a record of the same figure scored on a fresh training (a slice of Fig. 5 alone,
    with an empty store); a later queue in another process finds the store again."""
    trained = _count_trainings(monkeypatch)
    lines: list = []
    done = queue.run_queue(queue.order(SHARING, "test"), tmp_path / "results", CPU,
                           time.time() + 300, states=tmp_path / "states",
                           log=lambda line, **k: lines.append(line))
    models = experiment(SHARING[0]).runs(experiment(SHARING[0]).CONFIGS["test"])
    assert sorted(trained) == sorted(p["name"] for p in models) and len(trained) == 4
    assert done[SHARING[0]]["groups"] == 4 and "reused_weights" not in done[SHARING[0]]
    assert all(done[f]["reused_weights"] == done[f]["recorded"] == 4 and done[f]["groups"] == 0
               for f in SHARING[1:])
    assert not _notes(lines)
    by_figure = {f: {r["run_name"]: r for r in load_records(f, "test", tmp_path / "results")}
                 for f in SHARING}
    keys = {name: r["metrics"]["shared_weights"]["key"]
            for name, r in by_figure[SHARING[0]].items()}
    for figure_id, records in by_figure.items():
        check_records(figure_id, list(records.values()))
        for name, r in records.items():
            weights = r["metrics"]["shared_weights"]
            assert weights == {"key": keys[name], "trained_by": f"{SHARING[0]}/{name}",
                               "from_store": figure_id != SHARING[0]}
            assert r["git_commit"] and r["lib_digest"] and r["device"] == "cpu"
    # the numbers of Fig. 5 scored on stored weights are those of Fig. 5 trained afresh
    fresh = planned.run_slice("richard-fig5-spectrum", "test", tmp_path / "fresh", CPU,
                              time.time() + 300, trained=tmp_path / "another-store",
                              log=lambda *a, **k: None)
    assert fresh["groups"] == 4 and len(trained) == 8
    for r in load_records("richard-fig5-spectrum", "test", tmp_path / "fresh"):
        stored = by_figure["richard-fig5-spectrum"][r["run_name"]]["metrics"]
        assert r["metrics"]["shared_weights"]["from_store"] is False
        assert {k: v for k, v in r["metrics"].items() if k != "shared_weights"} == \
            {k: v for k, v in stored.items() if k != "shared_weights"}
    # a later process (a chained call) finds the store in the same place: Table 1 trains none
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "lengthgen", "budget", "queue", "--scale", "test",
                          "--figures", "richard-table1-deepest", "--minutes", "5", "--device",
                          "cpu", "--root", str(tmp_path / "later")],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "lib")})
    assert out.returncode == 0, out.stderr[-2000:]
    later = json.loads(out.stdout.strip().splitlines()[-1])["done"]["richard-table1-deepest"]
    assert later["reused_weights"] == later["recorded"] == 4 and later["groups"] == 0


def test_a_slice_scores_stored_models_in_time_it_could_not_train_them(tmp_path, dyck_cache):
    """The planner counts no time for a job whose weights are stored: with 20 s left, which
    at the H200 table's rates is too little to train any (a group's overhead alone is 30 s),
    Fig. 5 starts none of its jobs with an empty store, and records all four from a warm
    one."""
    from lengthgen.runs.rates import H200
    quiet = dict(log=lambda *a, **k: None, rates=H200)
    cold = planned.run_slice("richard-fig5-spectrum", "test", tmp_path / "cold", CPU,
                             time.time() + 20, **quiet)
    assert cold["recorded"] == 0 and cold["not_started"] == 4
    planned.run_slice(SHARING[0], "test", tmp_path / "results", CPU, time.time() + 300,
                      log=lambda *a, **k: None)
    warm = planned.run_slice("richard-fig5-spectrum", "test", tmp_path / "results", CPU,
                             time.time() + 20, **quiet)
    assert warm["recorded"] == warm["reused_weights"] == 4 and warm["not_started"] == 0


def test_a_stored_model_whose_words_cannot_be_drawn_in_time_is_left(tmp_path, dyck_cache,
                                                                   monkeypatch):
    """Scoring a stored model may need its training words too, drawn again by a process that no
    longer keeps them: with 20 s left and their drawing made to take 100 s, a slice scores
    none of Fig. 5's four stored models (every one has such words) and trains none of them
    again, even with a chained call's 600 s to come (or with no rates to plan by); a later
    slice scores them all from the store."""
    from lengthgen.experiments.richard import protocol
    from lengthgen.runs.rates import H200
    planned.run_slice(SHARING[0], "test", tmp_path, CPU, time.time() + 300,
                      log=lambda *a, **k: None)
    module = experiment("richard-fig5-spectrum")
    jobs = [module.engine_job(j, module.CONFIGS["test"])
            for j in planned.pending("richard-fig5-spectrum", "test", tmp_path)]
    assert len(jobs) == 4 and all(j.host_key for j in jobs)
    trained = _count_trainings(monkeypatch)
    with monkeypatch.context() as slow:
        slow.setattr(protocol, "drawing_seconds", lambda spec: 100.0)
        for options in ({"rates": H200}, {"rates": H200, "states": tmp_path / "s",
                                           "chain_s": 600}, {}):
            counts = planned.run_slice("richard-fig5-spectrum", "test", tmp_path, CPU,
                                       time.time() + 20, log=lambda *a, **k: None, **options)
            assert counts["recorded"] == counts["groups"] == 0, options
            assert counts["stored_left"] == 4, options
    assert trained == []
    later = planned.run_slice("richard-fig5-spectrum", "test", tmp_path, CPU,
                              time.time() + 20, log=lambda *a, **k: None, rates=H200)
    assert later["recorded"] == later["reused_weights"] == 4


def test_a_corrupt_or_foreign_stored_training_is_ignored_and_trained_again(tmp_path, dyck_cache,
                                                                           monkeypatch):
    """Three stored files found wanting: bytes that are no checkpoint, another model's file
    under this one's name, and this key with weights of the wrong shape. Each is named in one
    line, its job trains again (no traceback, no record scored on a wrong model) and its file
    is replaced; the fourth job is scored from the store."""
    import shutil

    from lengthgen.runs.trained import default_folder
    from lengthgen.engine.checkpoints import load_checkpoint, save_checkpoint
    planned.run_slice(SHARING[0], "test", tmp_path, CPU, time.time() + 300,
                      log=lambda *a, **k: None)
    first = {r["run_name"]: r["metrics"]["shared_weights"]["key"]
             for r in load_records(SHARING[0], "test", tmp_path)}
    store = default_folder()
    files = {name: store / f"{key}.pt" for name, key in first.items()}
    garbage, foreign, misshapen, kept = sorted(files)
    files[garbage].write_bytes(b"not a checkpoint at all")
    shutil.copyfile(files[kept], files[foreign])
    entry = load_checkpoint(files[misshapen])
    name = next(iter(entry["model"]))
    entry["model"][name] = entry["model"][name].flatten()[:1]
    save_checkpoint(files[misshapen], entry)
    trained = _count_trainings(monkeypatch)
    lines: list = []
    counts = planned.run_slice("richard-fig5-spectrum", "test", tmp_path, CPU,
                               time.time() + 300, log=lambda line, **k: lines.append(line))
    assert sorted(trained) == sorted([garbage, foreign, misshapen])
    assert counts["recorded"] == 4 and counts["reused_weights"] == 1
    notes = _notes(lines)
    assert len(notes) == 3 and all(n.endswith("ignored, the job trains again") for n in notes)
    assert any("cannot be loaded" in n for n in notes)
    assert any("holds another training" in n for n in notes)
    assert any("does not hold its model's weights" in n for n in notes)
    records = {r["run_name"]: r["metrics"] for r in load_records("richard-fig5-spectrum", "test",
                                                                tmp_path)}
    assert {n for n, m in records.items() if m["shared_weights"]["from_store"]} == {kept}
    assert all(records[n]["shared_weights"]["trained_by"] == f"richard-fig5-spectrum/{n}"
               for n in (garbage, foreign, misshapen))
    for n in (garbage, foreign, misshapen):   # replaced by the training just done
        assert load_checkpoint(files[n])["trained_by"] == f"richard-fig5-spectrum/{n}"


def test_a_store_that_cannot_be_written_is_one_warning_and_training_goes_on(tmp_path,
                                                                             dyck_cache):
    """The store's folder is a file (read-only media fail the same way, root or not): one
    warning line for the whole slice, every job trained and recorded."""
    blocked = tmp_path / "store"
    blocked.write_text("a file, not a folder")
    lines: list = []
    counts = planned.run_slice(SHARING[0], "test", tmp_path / "results", CPU, time.time() + 300,
                               trained=blocked, log=lambda line, **k: lines.append(line))
    assert counts["recorded"] == counts["groups"] == 4
    notes = _notes(lines)
    assert len(notes) == 1 and notes[0].startswith("warning: the store of trained weights")
    assert "training goes on" in notes[0]


def test_a_training_another_worker_holds_is_left_to_it(tmp_path, dyck_cache):
    """While another process trains a stored job (it holds the training's lock), a slice
    neither trains nor records it: it is left pending, and scored once its weights are
    stored."""
    import fcntl
    import os

    from lengthgen.runs.trained import Store
    module = experiment("richard-fig5-spectrum")
    config = module.CONFIGS["test"]
    job = module.plan(config, {})[0]
    digest, _ = Store().key(module.shared_key(job, config), module.engine_job(job, config), CPU)
    store = Store().folder
    store.mkdir(parents=True, exist_ok=True)
    fd = os.open(store / f".{digest}.lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        counts = planned.run_slice("richard-fig5-spectrum", "test", tmp_path, CPU,
                                   time.time() + 300, log=lambda *a, **k: None)
    finally:
        os.close(fd)
    assert counts["recorded"] == 3
    assert [j.name for j in planned.pending("richard-fig5-spectrum", "test", tmp_path)] == \
        [job.name]


def test_temp_files_of_killed_saves_are_removed_from_the_store_once_old(tmp_path):
    """A save killed between its temp file and the rename leaves `.tmp-*.pt` in the store,
    which no one lock guards. The next save removes those older than STALE_TEMP_S (said in one
    line) and leaves a younger one, which a live writer may still be renaming."""
    import os

    import torch

    from lengthgen.engine.settings import TrainResult
    from lengthgen.runs.trained import STALE_TEMP_S, Store
    folder = tmp_path / "store"
    folder.mkdir()
    old, young = folder / ".tmp-killed.pt", folder / ".tmp-writing.pt"
    old.write_bytes(b"half a model")
    young.write_bytes(b"a model being written")
    then = time.time() - STALE_TEMP_S - 60
    os.utime(old, (then, then))
    lines: list = []
    store = Store(folder, say=lines.append)
    result = TrainResult(steps=3, stopped_early=False, final_accuracy=None, wall_time_s=0.1)
    assert store.save("d" * 24, {"k": 1}, torch.nn.Linear(2, 2), result, "fig/run")
    assert not old.exists() and young.exists()
    assert (folder / f"{'d' * 24}.pt").is_file()
    assert lines == [f"trained weights: removed 1 temp file(s) that killed saves had left in "
                     f"{folder}"]
    os.utime(young, (then, then))   # swept once a store: a later save of it leaves the rest
    assert store.save("e" * 24, {"k": 2}, torch.nn.Linear(2, 2), result, "fig/run")
    assert young.exists() and len(lines) == 1
