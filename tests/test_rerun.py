"""Re-running a figure from a notebook at a chosen scale (lengthgen.viz.rerun)."""
import json
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from lengthgen.errors import LengthgenError
from lengthgen.runs.records import committed_records
from lengthgen.runs.registry import expected_runs
from lengthgen.results import load_records
from lengthgen.viz.rerun import colab_cell, estimate, repository_url, rerun_figure

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
FIGURE = "richard-fig2-closed-form-paths"  # one closed-form run: seconds at every scale


def test_the_repository_url_is_read_from_config(tmp_path):
    import yaml
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert repository_url() == config["repository"]["url"]
    other = tmp_path / "_config.yml"
    other.write_text("title: x\nrepository:\n  path_to_book: ''\n  url: https://example.org/r\n")
    assert repository_url(other) == "https://example.org/r"
    assert "git clone -q --depth 1 https://example.org/r " in colab_cell(other)
    other.write_text("title: x\n")
    with pytest.raises(LengthgenError, match="repository.url"):
        repository_url(other)


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_chapter_opens_with_the_generated_colab_cell(path):
    cells = json.loads(path.read_text())["cells"]
    first = next(c for c in cells if c["cell_type"] == "code")
    assert "".join(first["source"]).strip() == colab_cell().strip()


def test_citation_names_the_same_repository():
    assert f'repository-code: "{repository_url()}"' in (ROOT / "CITATION.cff").read_text()


def test_estimate_scales_the_committed_wall_time_by_the_run_count():
    scale, records = committed_records("richard-fig6-ablation")
    wall = sum(r["wall_time_s"] for r in records)
    same = estimate("richard-fig6-ablation", scale)
    assert same["seconds"] == pytest.approx(wall) and same["runs"] == len(records)
    paper = estimate("richard-fig6-ablation", "paper")
    runs = len(expected_runs("richard-fig6-ablation", "paper"))
    assert paper["runs"] == runs > len(records)
    assert paper["seconds"] == pytest.approx(wall / len(records) * runs)
    assert paper["bound"] == "at least" and "at least" in paper["basis"]
    assert estimate("richard-fig6-ablation", "test")["bound"] == "at most"
    assert same["bound"] == "same"


def test_rerun_prints_the_estimate_first_and_draws_from_the_new_records(tmp_path, capsys):
    assert rerun_figure(FIGURE, "test", "cpu", run=False) is None
    printed = capsys.readouterr().out
    assert printed.startswith(f"{FIGURE} at test scale: 1 run(s), expected")
    assert not load_records(FIGURE, "test", tmp_path)
    fig = rerun_figure(FIGURE, "test", "cpu", root=tmp_path, show_figure=False)
    assert isinstance(fig, Figure) and fig.axes
    records = load_records(FIGURE, "test", tmp_path)
    assert [r["scale"] for r in records] == ["test"] and records[0]["device"] == "cpu"
    matplotlib.pyplot.close(fig)


def test_rerun_refuses_a_bad_scale_or_id_before_running(tmp_path):
    with pytest.raises(LengthgenError):
        rerun_figure(FIGURE, "huge", "cpu", root=tmp_path)
    with pytest.raises(LengthgenError):
        rerun_figure("no-such-figure", "test", "cpu", root=tmp_path)
    assert not list(tmp_path.iterdir())
