"""The re-run check (benchmarks/bench_rerun.py) at test scale: against records this machine
just made, every re-run value falls inside the committed spread; a changed value does not."""
import importlib.util
from pathlib import Path

from lengthgen.runs.runner import run_experiment

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ["limit-inference-procedure", "richard-fig3-left-capacity"]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rerun", ROOT / "benchmarks" / "bench_rerun.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rerun_of_fresh_records_is_inside(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache0"))
    committed = tmp_path / "committed"
    for figure_id in FIGURES:
        run_experiment(figure_id, "test", root=committed)
    bench = _bench()
    assert bench.main(["--scale", "test", "--committed", str(committed),
                       "--figures", *FIGURES]) == 0
    out = capsys.readouterr().out
    total = out.strip().splitlines()[-1]
    counted = int(total.split(" of ")[1].split()[0])
    assert counted > 0 and total.startswith(f"total: {counted} of {counted} "), out


def test_compare_counts_values_outside_the_spread():
    bench = _bench()
    committed = [{"run_name": f"a-s{s}", "params": {"name": f"a-s{s}", "seed": s, "k": 1},
                  "metrics": {"acc": v, "inner": {"x": 1.0}, "wall_time_s": 3.0}}
                 for s, v in ((0, 0.5), (1, 0.7))]
    rerun = [{"run_name": "a-s0", "params": {"name": "a-s0", "seed": 0, "k": 1},
              "metrics": {"acc": 0.9, "inner": {"x": 1.0}, "wall_time_s": 9.0}}]
    result = bench.compare(rerun, committed)
    assert result["values"] == 2 and result["inside"] == 1
    assert result["outside"][0][1] == "acc"
    rerun[0]["metrics"]["acc"] = 0.6
    assert bench.compare(rerun, committed)["inside"] == 2


def test_unknown_figure_is_one_line_and_exit_2(capsys):
    assert _bench().main(["--figures", "no-such-figure"]) == 2
    assert "unknown figure id" in capsys.readouterr().err
