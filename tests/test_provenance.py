"""Records say where they ran: the processor, its instruction set, the numeric libraries and the
thread count; captions show the CPU capability, and older records without it still load."""
import numpy
import torch

from lengthgen.runs.records import caption
from lengthgen.results import cpu_description, load_record, provenance, write_record


def _record(**extra):
    return {"figure_id": "fig", "run_name": "r0", "task": None, "config": {}, "params": {},
            "scale": "test", "seed": 0, "metrics": {"accuracy": 1.0},
            **provenance("cpu", 1.0), **extra}


def test_new_records_name_the_processor_and_libraries(tmp_path):
    record = load_record(write_record(_record(), tmp_path))
    assert record["numpy_version"] == numpy.__version__
    assert record["torch_version"] == torch.__version__
    assert record["torch_threads"] >= 1
    assert record["cpu_capability"] == str(torch.backends.cpu.get_cpu_capability())
    assert isinstance(record["cpu_model"], str) and record["cpu_model"]
    assert (record["cpu_model"], record["cpu_capability"]) == cpu_description()


def test_caption_shows_the_cpu_capability_and_tolerates_old_records():
    new = _record()
    old = {k: v for k, v in _record().items()
           if k not in ("cpu_model", "cpu_capability", "numpy_version")}
    assert f"CPU: {new['cpu_capability']}" in caption([new])
    assert "CPU:" not in caption([old])
    assert f"CPU: {new['cpu_capability']}" in caption([old, new])
