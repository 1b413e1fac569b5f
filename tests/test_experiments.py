"""Every registered figure runs at test scale, and every committed record matches its figure's
registered config (stale or hand-edited results fail here)."""
import matplotlib
import pytest
from matplotlib.figure import Figure

from lengthgen.errors import LengthgenError
from lengthgen.experiments import EXPERIMENTS, caption, experiment, run_experiment, show
from lengthgen.results import load_records, results_dir

matplotlib.use("Agg")
FIGURE_IDS = sorted(EXPERIMENTS)


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
def test_module_declares_the_interface(figure_id):
    module = experiment(figure_id)
    assert module.FIGURE_ID == figure_id
    assert set(module.CONFIGS) == {"test", "book", "paper"}
    names = [p["name"] for p in module.runs(module.CONFIGS["paper"])]
    assert len(names) == len(set(names)), "run names must be unique within a figure"


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
def test_runs_at_test_scale_and_draws(figure_id, tmp_path):
    records = run_experiment(figure_id, "test", "cpu", root=tmp_path)
    assert records and all(r["figure_id"] == figure_id and r["scale"] == "test" for r in records)
    assert len(load_records(figure_id, "test", tmp_path)) == len(records)
    again = run_experiment(figure_id, "test", "cpu", root=tmp_path)  # resumes: nothing re-run
    assert [r["date"] for r in again] == [r["date"] for r in records]
    fig, cap = show(figure_id, root=tmp_path)
    assert isinstance(fig, Figure) and fig.axes
    assert "Scale: test" in cap and "device: cpu" in cap
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("figure_id", FIGURE_IDS)
@pytest.mark.parametrize("scale", ["book", "paper"])
def test_committed_records_match_the_registered_config(figure_id, scale):
    module = experiment(figure_id)
    records = load_records(figure_id, scale, results_dir())  # validates fields and digests
    expected = {p["name"]: p for p in module.runs(module.CONFIGS[scale])}
    for record in records:
        assert record["config"] == module.CONFIGS[scale], f"{record['run_name']}: stale config"
        assert record["params"] == expected.get(record["run_name"]), \
            f"{record['run_name']}: not a run of the registered {scale} config"


def test_unknown_figure_id_names_the_closest():
    if not FIGURE_IDS:
        pytest.skip("no experiments registered yet")
    with pytest.raises(LengthgenError, match="unknown figure id"):
        experiment(FIGURE_IDS[0] + "x")


def test_caption_refuses_an_empty_list():
    with pytest.raises(LengthgenError):
        caption([])
