"""How the benchmarks time a step: torch.utils.benchmark's Timer, in one place.

`Timer` synchronises the accelerator before reading its clock (so a CUDA step is timed when
the card has finished it, not when its kernels were queued) and `blocked_autorange` times
blocks of calls, each block long enough that the clock's cost is negligible, until
`min_run_time` is spent. A measurement's rate is one over the median time of its blocks.

Repeated rounds of a measurement keep the round with the lowest median: load from other jobs
on a shared machine only ever slows a run down. The old hand-made loops reported the best of
their windows, each a mean over the window; the median of blocks moves less with one slow
block (a garbage collection, another process's burst), so on a loaded machine the two differ by
what those bursts cost (README, "The training engine").
"""
import torch
from torch.utils import benchmark


def timer(step, label: str, sub_label: str, description: str) -> benchmark.Timer:
    """A Timer of `step()` that keeps torch's thread count (Timer's default is one thread)."""
    return benchmark.Timer("step()", globals={"step": step}, label=label, sub_label=sub_label,
                           description=description, num_threads=torch.get_num_threads())


def once(step, label: str = "first step", sub_label: str = "", description: str = "") -> float:
    """Seconds of one call of `step` (its first: CUDA-graph capture, compiling), synchronised."""
    return timer(step, label, sub_label, description).timeit(1).median


def fastest(step, rounds: int, label: str = "", sub_label: str = "",
            description: str = "") -> float:
    """Seconds of the fastest of `rounds` single calls (for calls long enough that one call is
    a measurement: a batch of programs, a batch drawn, a whole short training)."""
    t = timer(step, label, sub_label, description)
    return min(t.timeit(1).median for _ in range(max(1, rounds)))


def steady(step, seconds: float, rounds: int = 1, warmup: int = 0, label: str = "",
           sub_label: str = "", description: str = "") -> benchmark.Measurement:
    """`warmup` untimed calls, then `rounds` blocked_autorange runs of at least `seconds`
    each; the round with the lowest median."""
    for _ in range(warmup):
        step()
    t = timer(step, label, sub_label, description)
    runs = [t.blocked_autorange(min_run_time=seconds) for _ in range(max(1, rounds))]
    return min(runs, key=lambda m: m.median)


def per_second(measurement: benchmark.Measurement) -> float:
    """Calls a second: one over the median."""
    return 1.0 / measurement.median


def as_json(measurement: benchmark.Measurement) -> dict:
    """A measurement's per-call times and labels, to rebuild it in another process."""
    spec = measurement.task_spec
    return {"times": list(measurement.times), "label": spec.label, "sub_label": spec.sub_label,
            "description": spec.description, "num_threads": spec.num_threads}


def from_json(data: dict) -> benchmark.Measurement:
    """The measurement `as_json` wrote (another process's)."""
    from torch.utils.benchmark.utils.common import TaskSpec
    spec = TaskSpec(stmt="step()", setup="pass", label=data["label"],
                    sub_label=data["sub_label"], description=data["description"],
                    num_threads=data["num_threads"])
    return benchmark.Measurement(number_per_run=1, raw_times=data["times"], task_spec=spec)


def compare(measurements) -> str:
    """torch.utils.benchmark's Compare table of `measurements` (times a call), or '' if none."""
    measurements = [m for m in measurements if m is not None]
    if not measurements:
        return ""
    table = benchmark.Compare(measurements)
    table.trim_significant_figures()
    return str(table)
