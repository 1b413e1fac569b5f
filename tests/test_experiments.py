"""Every registered figure runs at test scale, and every committed record matches its figure's
registered config (stale or hand-edited results fail here)."""
import matplotlib
import pytest
from matplotlib.figure import Figure

from lengthgen.errors import LengthgenError
from lengthgen.runs.records import caption, figure_data
from lengthgen.runs.registry import (EXPERIMENTS, SCALE_ORDER, expected_runs, experiment,
                                     module_runs, planned_only, run_matcher, source_ids)
from lengthgen.runs.runner import in_progress, marker_problems, run_experiment
from lengthgen.viz.book import show
from lengthgen.results import load_records, record_files, results_dir

matplotlib.use("Agg")
FIGURE_IDS = sorted(EXPERIMENTS)


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
def test_module_declares_the_interface(figure_id):
    """A figure with runs of its own: at every scale, unique run names and params that survive
    the JSON of a record unchanged (the stale-record check compares them as read back); a
    figure that draws others' records names registered figures with runs, and has none."""
    import json
    module = experiment(figure_id)
    assert module.FIGURE_ID == figure_id and callable(module.figure)
    if hasattr(module, "SOURCE"):
        assert not {"CONFIGS", "runs", "run_one"} & set(vars(module))
        assert all(hasattr(experiment(s), "run_one") for s in source_ids(figure_id))
        return
    if planned_only(module):   # its runs are what its plan calls for (runs.planned)
        assert "test" in module.CONFIGS and set(module.CONFIGS) <= {"test", "book", "paper",
                                                                     "gpu"}
    else:
        assert set(module.CONFIGS) == {"test", "book", "paper"}
    for scale, config in module.CONFIGS.items():
        assert json.loads(json.dumps(config)) == config, f"{scale} config is not plain JSON"
        params = module_runs(module, scale)
        names = [p["name"] for p in params]
        assert params and len(names) == len(set(names)), f"{scale}: run names must be unique"
        assert json.loads(json.dumps(params)) == params, f"{scale}: params are not plain JSON"


def test_a_module_that_breaks_the_figure_contract_stops_the_registry_in_one_line(tmp_path):
    """A planted figure module that draws another's records but still stubs runs, and one that
    lacks run_one: `figure list` refuses each with one line naming the module and the gap."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    import lengthgen
    copy = tmp_path / "lengthgen"
    shutil.copytree(Path(lengthgen.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    planted = copy / "experiments" / "izzo" / "izzo_planted.py"
    cases = {
        'FIGURE_ID = "izzo-planted"\nTITLE = "t"\nSOURCE = "izzo-fig2-modp"\n\n\n'
        'def runs(config):\n    return []\n\n\ndef figure(records):\n    pass\n':
            "figure module izzo.izzo_planted breaks the figure contract: it draws SOURCE's "
            "records, so it defines no runs of its own",
        'FIGURE_ID = "izzo-planted"\nTITLE = "t"\nCONFIGS = {}\n\n\n'
        'def runs(config):\n    return []\n\n\ndef figure(records):\n    pass\n':
            "figure module izzo.izzo_planted breaks the figure contract: no run_one",
        'FIGURE_ID = "izzo-planted"\nTITLE = "t"\nCONFIGS = {}\n\n\n'
        'def plan(config, records):\n    return []\n\n\ndef figure(records):\n    pass\n':
            "figure module izzo.izzo_planted breaks the figure contract: no spec, engine_job, "
            "score",
    }
    for source, message in cases.items():
        planted.write_text(source, encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "lengthgen", "figure", "list"],
                              capture_output=True, text=True, cwd=tmp_path,
                              env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip().splitlines() == [f"error: {message} "
                                                     f"(see lengthgen.runs.contract)"]


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
def test_runs_at_test_scale_and_draws(figure_id, tmp_path):
    sources = source_ids(figure_id)
    if sources != (figure_id,):  # drawn from other figures' records: run those
        with pytest.raises(LengthgenError, match="draws the records of"):
            run_experiment(figure_id, "test", "cpu", root=tmp_path)
    for source in sources:
        records = run_experiment(source, "test", "cpu", root=tmp_path)
        assert records and all(r["figure_id"] == source and r["scale"] == "test"
                               for r in records)
        assert len(load_records(source, "test", tmp_path)) == len(records)
        again = run_experiment(source, "test", "cpu", root=tmp_path)  # resumes: nothing re-run
        assert [r["date"] for r in again] == [r["date"] for r in records]
    fig, cap = show(figure_id, root=tmp_path)
    assert isinstance(fig, Figure) and fig.axes
    assert "Scale: test" in cap and "device: cpu" in cap and "INCOMPLETE" not in cap
    rows = figure_data(figure_id, [r for s in sources for r in load_records(s, "test", tmp_path)])
    assert rows and all(set(row) == set(rows[0]) for row in rows), "tidy rows, same columns"
    matplotlib.pyplot.close("all")


def committed_cases() -> list:
    """(figure_id, scale) for the committed scales; a case with no records to check is skipped
    with the reason instead of passing on an empty loop."""
    cases = []
    for figure_id in FIGURE_IDS:
        configs = getattr(experiment(figure_id), "CONFIGS", None)   # none: drawn from others'
        scales = ("book", "paper") if configs is None else \
            [s for s in ("book", "paper", "gpu") if s in configs]
        for scale in scales:
            sources = source_ids(figure_id)
            folder = results_dir() / figure_id / scale
            if sources != (figure_id,):
                reason = f"{figure_id} draws the records of {', '.join(sources)}"
            elif not folder.is_dir() or not record_files(folder):
                reason = f"no committed records in results/{figure_id}/{scale}"
            else:
                reason = None
            marks = [] if reason is None else [pytest.mark.skip(reason=reason)]
            cases.append(pytest.param(figure_id, scale, id=f"{figure_id}-{scale}", marks=marks))
    return cases


COMMITTED = committed_cases()


@pytest.mark.parametrize("figure_id, scale", COMMITTED)
def test_committed_scales_have_exactly_one_record_per_registered_run(figure_id, scale):
    """A deleted, duplicated or renamed record file fails here (load_record checks names)."""
    folder = results_dir() / figure_id / scale
    records = load_records(figure_id, scale, results_dir())
    assert records, f"{figure_id}/{scale}: no records"
    names = [r["run_name"] for r in records]
    assert len(names) == len(set(names))
    expected = expected_runs(figure_id, scale, records)   # a planned figure's: its plan's too
    planned = _by_slices(figure_id, scale)
    marker = in_progress(folder)
    if marker is None:
        assert sorted(names) == sorted(expected), \
            f"{figure_id}/{scale}: records do not match the registered runs one to one"
    else:  # a sweep committed in batches: a subset, from the commit its marker names, and
        # exactly the runs the marker lists as done (a deleted record fails here)
        assert set(names) < set(expected), f"{figure_id}/{scale}: not registered runs"
        if not planned:   # (a planned figure's runs span GPU sessions and grow with its plan)
            assert marker["runs"] == len(expected), f"{figure_id}/{scale}: stale marker"
            assert {r["git_commit"] for r in records} <= {marker["git_commit"]}, \
                f"{figure_id}/{scale}: records of another commit than the marker's"
        problems = marker_problems(folder, records)
        assert not problems, f"{figure_id}/{scale}: {'; '.join(problems[:3])}"


@pytest.mark.parametrize("figure_id, scale", COMMITTED)
def test_committed_records_match_the_registered_config(figure_id, scale):
    module = experiment(figure_id)
    records = load_records(figure_id, scale, results_dir())  # validates fields and digests
    assert records, f"{figure_id}/{scale}: no records"
    registered = run_matcher(module, scale)
    for record in records:
        assert record["config"] == module.CONFIGS[scale], f"{record['run_name']}: stale config"
        assert registered(record["run_name"], record["params"]), \
            f"{record['run_name']}: not a run of the registered {scale} config"


@pytest.mark.parametrize("figure_id, scale", COMMITTED)
def test_committed_records_name_one_clean_commit(figure_id, scale):
    """A figure's caption names the commit its records came from: one commit, with no
    uncommitted change under lib/ (re-run the whole figure on a clean tree otherwise)."""
    records = load_records(figure_id, scale, results_dir())
    if _by_slices(figure_id, scale):   # slices on GPU machines, session by session
        _each_session_names_its_code(figure_id, records)
        return
    commits = {r["git_commit"] for r in records}
    assert len(commits) == 1, f"{figure_id}/{scale}: records from {len(commits)} commits"
    dirty = [r["run_name"] for r in records
             if r["git_commit"].endswith("+dirty") or r.get("git_dirty_files")]
    assert not dirty, f"{figure_id}/{scale}: made from a changed tree: {dirty[:3]}"


def _by_slices(figure_id: str, scale: str) -> bool:
    """Whether a figure's records at a scale are written by GPU slices: a planned figure's at
    the scale a GPU queue runs it at (runs.planned.gpu_scale)."""
    from lengthgen.runs.planned import gpu_scale, is_planned
    module = experiment(figure_id)
    return is_planned(module) and scale == gpu_scale(module)


def _each_session_names_its_code(figure_id: str, records: list[dict]) -> None:
    """A planned figure's records come from slices of several GPU sessions, each on a copy of
    the tree whose git saw the session's first commit "+dirty": each session's code must be a
    commit of this repository, the one whose lib/ changes are exactly those the records list
    (runs.provenance.code_commit; it needs the full history)."""
    import subprocess
    from lengthgen.runs.provenance import code_commits
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=results_dir(),
                             capture_output=True, text=True).stdout.strip()
    if shallow != "false":
        pytest.skip("no full git history to find the sessions' commits in")
    commits = code_commits({r["run_name"]: r for r in records})
    assert all(commits.values()), f"{figure_id}: no commit's lib/ matches: {commits}"


def test_unknown_figure_id_names_the_closest():
    if not FIGURE_IDS:
        pytest.skip("no experiments registered yet")
    with pytest.raises(LengthgenError, match="unknown figure id"):
        experiment(FIGURE_IDS[0] + "x")


def test_caption_refuses_an_empty_list():
    with pytest.raises(LengthgenError):
        caption([])


# Figures registered before their first book-scale run, and why: each is skipped by the check
# below while it has no records, and fails it once records exist (then its entry goes). Its
# chapter cell shows a "not yet run" note meanwhile, never a figure.
AWAITING_FIRST_RUN: dict[str, str] = {}   # figure id -> why it has no records yet (the command)


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
def test_every_figure_has_its_committed_record_folder(figure_id):
    """A deleted record folder fails here (the book cell would otherwise have nothing to draw
    and, before, silently recomputed a sweep of hours)."""
    from lengthgen.results import REPO_ROOT
    for source in source_ids(figure_id):
        folders = [REPO_ROOT / "results" / source / scale for scale in ("paper", "gpu", "book")]
        recorded = any(f.is_dir() and record_files(f) for f in folders)
        if source in AWAITING_FIRST_RUN:
            assert not recorded, f"{source} has records now: remove it from AWAITING_FIRST_RUN"
            pytest.skip(f"{source}: {AWAITING_FIRST_RUN[source]}")
        assert recorded, f"{source}: no committed records under results/{source}/book, paper or gpu"


def test_figures_awaiting_their_first_run_are_registered_and_run_their_own():
    assert set(AWAITING_FIRST_RUN) <= set(FIGURE_IDS)
    assert all(source_ids(f) == (f,) for f in AWAITING_FIRST_RUN)


def test_a_figure_without_records_says_what_is_missing_and_computes_nothing(tmp_path):
    from lengthgen.runs.records import committed_records
    empty = tmp_path / "empty"
    for figure_id, call in (("huang-fig1-languages", show),
                            ("huang-table2-languages", committed_records)):
        with pytest.raises(LengthgenError, match=rf"no records in .*figure run {figure_id} "
                                                 rf"--scale test.*rerun=True"):
            call(figure_id, root=empty)
    assert not empty.exists(), "nothing was computed or written"


def test_records_that_lack_what_the_figure_reads_are_one_error(tmp_path):
    from lengthgen.runs.records import check_records
    from lengthgen.results import write_record
    figure_id = "crasp-long-unary"
    records = run_experiment(figure_id, "test", "cpu", root=tmp_path)
    broken = {**records[0], "metrics": {}}
    broken.pop("digest", None)
    write_record(broken, tmp_path)   # a valid record of the store, without the figure's metrics
    records = load_records(figure_id, "test", tmp_path)
    with pytest.raises(LengthgenError, match="do not hold what the figure reads"):
        show(figure_id, root=tmp_path)
    foreign = {**records[1], "params": {**records[1]["params"], "extra": 1}}
    with pytest.raises(LengthgenError, match="not a registered run"):
        check_records(figure_id, [foreign])   # what `figure data` checks of records on disk


def test_the_registry_is_derived_from_the_modules():
    """A figure id reaches its module in one hop, and the list is the modules' own FIGURE_IDs,
    found in the paper packages too: protocol, analysis and tables modules (no FIGURE_ID) are
    not figures, and a new figure module needs no line elsewhere."""
    import lengthgen.experiments as package
    from pathlib import Path
    folder = Path(package.__file__).parent
    declared = {".".join(p.relative_to(folder).with_suffix("").parts)
                for p in folder.rglob("*.py") if "\nFIGURE_ID = " in p.read_text()}
    assert set(EXPERIMENTS.values()) == declared
    assert {"huang.sweep.protocol", "huang.sweep.budget", "izzo.protocol", "richard.protocol",
            "spread"}.isdisjoint(EXPERIMENTS.values())
    for figure_id, name in EXPERIMENTS.items():
        assert experiment(figure_id).__name__ == "lengthgen.experiments." + name
        # the id names its module: the module's file is the id with underscores
        assert name.rpartition(".")[2] == figure_id.replace("-", "_")
