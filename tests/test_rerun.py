"""Re-running a figure from a notebook at a chosen scale (lengthgen.viz.rerun)."""
import json
import shutil
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from lengthgen.errors import LengthgenError
from lengthgen.runs.records import committed_records
from lengthgen.runs.registry import expected_runs
from lengthgen.results import load_records, write_record
from lengthgen.viz.rerun import colab_cell, describe, estimate, repository_url, rerun_figure

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


def test_estimate_scales_the_committed_wall_time_by_the_runs_left_to_train(tmp_path):
    scale, records = committed_records("richard-fig6-ablation")
    wall = sum(r["wall_time_s"] for r in records)
    per_run = wall / len(records)
    # where the re-run writes, every run already has its record: nothing is trained again
    same = estimate("richard-fig6-ablation", scale)
    assert same["runs"] == same["recorded"] == len(records) and same["seconds"] == 0
    assert same["bound"] == "same"
    assert "nothing to train" in describe(same)
    # a folder holding a third of them: only the other two thirds count, at the mean per run
    folder = tmp_path / "richard-fig6-ablation" / scale
    folder.mkdir(parents=True)
    kept = sorted((ROOT / "results" / "richard-fig6-ablation" / scale).glob("*.json"))[::3]
    for path in kept:
        shutil.copy(path, folder / path.name)
    part = estimate("richard-fig6-ablation", scale, target=str(tmp_path))  # a str is a folder too
    assert part["recorded"] == len(kept) and part["bound"] == "about"
    assert part["seconds"] == pytest.approx(per_run * (len(records) - len(kept)))
    assert f"for the {len(records) - len(kept)} to train" in describe(part)
    # another scale, nothing recorded there: every run, bounded by the direction of the scale
    paper = estimate("richard-fig6-ablation", "paper", target=tmp_path)
    runs = len(expected_runs("richard-fig6-ablation", "paper"))
    assert paper["runs"] == runs > len(records) and paper["recorded"] == 0
    assert paper["seconds"] == pytest.approx(per_run * runs)
    assert paper["bound"] == "at least" and "at least" in paper["basis"]
    assert estimate("richard-fig6-ablation", "test", target=tmp_path)["bound"] == "at most"


def test_a_stale_record_is_not_counted_as_reused(tmp_path):
    """A record whose config no longer matches is trained again, so the estimate counts it."""
    scale, _ = committed_records("richard-fig6-ablation")
    source = sorted((ROOT / "results" / "richard-fig6-ablation" / scale).glob("*.json"))[0]
    record = json.loads(source.read_text())
    write_record(dict(record), tmp_path)  # sealed like a runner's record, so it loads
    assert estimate("richard-fig6-ablation", scale, target=tmp_path)["recorded"] == 1
    record["config"] = {**record["config"], "steps": -1}  # as if the registered config changed
    write_record(record, tmp_path)
    assert estimate("richard-fig6-ablation", scale, target=tmp_path)["recorded"] == 0


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
