"""The four Izzo figures are planned figures (issue 53, item 2): their runs train in GPU slices
as the engine's stacked limit-style jobs, and every record a slice writes is a figure's record
with the metrics `run_one` gives.

At test scale on the CPU, per figure: a planned run to the end of its plan writes one record per
registered run, each a registered run of the figure, whose metrics have `run_one`'s keys, values
of the same kinds (numbers, dicts of the test lengths, lists of the attention's length) and the
same step count; and `budget queue --scale gpu --list` names the four at their paper config,
with `figure cost`'s minutes.
"""
import signal

import pytest
import torch

from lengthgen.runs import planned, queue
from lengthgen.runs.records import check_records
from lengthgen.runs.registry import experiment

CPU = torch.device("cpu")
IZZO = ["izzo-fig3-hardmax", "izzo-fig2-modp", "izzo-fig1-simpletask", "izzo-kgram"]


def _same_kind(a, b, where: str) -> None:
    """a and b are values of the same kind: both numbers (bools apart), or dicts with the same
    keys and values of the same kinds, or lists of one length of the same kinds."""
    if isinstance(b, bool) or b is None:
        assert a == b if b is None else isinstance(a, bool), where
    elif isinstance(b, (int, float)):
        assert isinstance(a, (int, float)) and not isinstance(a, bool), where
        assert (a is None) == (b is None), where
    elif isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), where
        for key in b:
            _same_kind(a[key], b[key], f"{where}.{key}")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same_kind(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b), where


@pytest.mark.parametrize("figure_id", IZZO)
def test_a_planned_izzo_figure_writes_run_ones_records(figure_id, tmp_path):
    module = experiment(figure_id)
    assert planned.is_planned(module)
    config = module.CONFIGS["test"]
    records = planned.run_to_end(figure_id, "test", CPU, root=tmp_path, log=lambda *a, **k: None)
    assert sorted(r["run_name"] for r in records) == sorted(p["name"]
                                                            for p in module.runs(config))
    check_records(figure_id, records)
    assert not planned.pending(figure_id, "test", tmp_path)
    first = records[0]
    assert first["config"] == config and first["git_commit"] and first["lib_digest"]
    alone = module.run_one(first["params"], config, CPU)
    metrics = {k: v for k, v in first["metrics"].items() if k != "cuda_graphs"}
    assert set(metrics) == set(alone)
    _same_kind(metrics, alone, first["run_name"])
    assert metrics["steps"] == alone["steps"]
    for n, loss in alone["test_loss"].items():   # the same model to float rounding
        assert metrics["test_loss"][n] == pytest.approx(loss, rel=1e-2, abs=1e-4), n
    module.data(records)   # the figure reads what the slice wrote


def test_a_slice_trains_a_figures_runs_in_one_stacked_group(tmp_path):
    """The fig1 SimpleTask runs (two omegas, two train lengths, two seeds) share one shape:
    a slice trains them as one group of the engine, not one at a time."""
    import json
    lines = []
    planned.run_slice("izzo-fig1-simpletask", "test", tmp_path, CPU, float("inf"),
                      log=lambda line, **k: lines.append(line))
    groups = [json.loads(line) for line in lines if '"shape"' in line]
    runs = experiment("izzo-fig1-simpletask").runs(
        experiment("izzo-fig1-simpletask").CONFIGS["test"])
    assert [g["jobs"] for g in groups] == [len(runs)], groups


def test_the_gpu_queue_lists_the_izzo_figures_with_their_cost(capsys):
    from lengthgen.__main__ import main
    from lengthgen.runs import cost
    rows = queue.order(queue.planned_figures(), "gpu")
    ids = [r["figure_id"] for r in rows]
    assert set(IZZO) <= set(ids) and ids[0] == "huang-fig1-budget"
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    capsys.readouterr()
    try:
        code = main(["budget", "queue", "--scale", "gpu", "--list"])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split("\t")[0]: line.split("\t") for line in out.splitlines()}
    for figure_id in IZZO:
        module = experiment(figure_id)
        estimate = cost.estimate(figure_id, module.trainings(module.CONFIGS["paper"]))
        row = rows[ids.index(figure_id)]
        assert row["scale"] == "paper" and row["own_minutes"] == pytest.approx(
            estimate.minutes())
        assert lines[figure_id][1] == "paper"
        assert lines[figure_id][2].startswith(f"{row['minutes']:.1f} H200 min")
