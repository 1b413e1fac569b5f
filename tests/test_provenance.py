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


def test_new_records_name_the_lock_they_ran_on(tmp_path):
    import hashlib

    from lengthgen.results import LOCK_FILE
    record = load_record(write_record(_record(), tmp_path))
    assert record["lock_digest"] == hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()
    assert isinstance(record["lock_differs"], list)
    text = caption([record])
    assert f"torch {torch.__version__}, lock {record['lock_digest'][:12]}" in text


def test_lock_state_lists_the_pins_this_environment_lacks(tmp_path):
    from lengthgen.results import lock_state
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"numpy=={numpy.__version__}\n    # via -r requirements.txt\n"
                    "Torch==0.0.1\nnot-installed-xyz==1.0\n")
    state = lock_state(lock)
    assert state["lock_differs"] == [f"torch {torch.__version__} (lock 0.0.1)",
                                     "not-installed-xyz missing (lock 1.0)"]
    assert lock_state(tmp_path / "absent.lock") == {}   # an installed copy without the repository
    differing = {**_record(), **state}
    assert "(2 package(s) differed from it)" in caption([differing])


def test_records_without_a_lock_still_load_and_caption(tmp_path):
    old = {k: v for k, v in _record().items() if k not in ("lock_digest", "lock_differs")}
    record = load_record(write_record(old, tmp_path))
    assert "lock_digest" not in record and "lock" not in caption([record])
