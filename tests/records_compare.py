"""Comparing records computed in different places (serial, worker processes, a Ray cluster):
everything must be equal except the fields that say where and when a run was computed."""

WHERE = ("host", "workers", "date", "started", "wall_time_s", "digest", "command")


def comparable(record: dict) -> dict:
    """A record without the fields that say where and when it ran."""
    return {k: v for k, v in record.items() if k not in WHERE}


def strip_timing(metrics):
    """Training wall times differ from run to run; everything else must not."""
    if isinstance(metrics, dict):
        return {k: strip_timing(v) for k, v in metrics.items() if "wall_time" not in k}
    if isinstance(metrics, list):
        return [strip_timing(v) for v in metrics]
    return metrics


def same(a: list[dict], b: list[dict]) -> None:
    """Assert that two sweeps' records agree run by run (metrics, params, config, provenance
    other than WHERE)."""
    assert [r["run_name"] for r in a] == [r["run_name"] for r in b]
    for x, y in zip(a, b):
        x, y = comparable(x), comparable(y)
        assert strip_timing(x.pop("metrics")) == strip_timing(y.pop("metrics")), x["run_name"]
        assert x == y
