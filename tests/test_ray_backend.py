"""`figure run --backend ray`: a local two-CPU Ray gives the records of the serial path, a killed
driver resumes to them, failures on workers (raised, or a worker that dies) are named while the
other runs are recorded, and bad input is one line in seconds.

Tests marked `ray` need Ray (`pip install -r requirements-cluster.txt`) and run only when asked
for: `pytest -m ray tests/test_ray_backend.py`, as `.ci/run` does after `make test` (without Ray
they are skipped). The others need no Ray and run with every test.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from lengthgen.errors import LengthgenError
from lengthgen.runs.ray_backend import INSTALL_HINT, probe
from lengthgen.runs.runner import run_experiment
from lengthgen.results import load_records
from records_compare import same

FIGURE = "huang-fig1-languages"  # six tiny trainings at test scale: a real sweep


@pytest.fixture(scope="module")
def ray_address():
    """A Ray of 2 CPUs on this machine for the whole module; its head's address. (Ray turns
    127.0.0.1 into this machine's address, so it is not bound to loopback; since Ray 2.59 a
    local Ray asks for a token it generated itself.)"""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The serial path's records: what every Ray run must reproduce."""
    return run_experiment(FIGURE, "test", "cpu", root=tmp_path_factory.mktemp("serial"))


def cli(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "lengthgen", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)


@pytest.mark.ray
def test_ray_writes_the_records_of_the_serial_path(ray_address, serial, tmp_path):
    on_ray = run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="ray")
    same(serial, on_ray)
    assert {r["workers"] for r in on_ray} == {2}  # runs the cluster can take at once
    # the command is the driver's (a worker's own would be Ray's default_worker.py)
    assert {r["command"] for r in on_ray} == {serial[0]["command"]}
    by_name = sorted(on_ray, key=lambda r: r["run_name"])  # load_records' order
    same(by_name, load_records(FIGURE, "test", tmp_path))  # written, sealed, valid on disk
    again = run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="ray")
    assert [r["date"] for r in again] == [r["date"] for r in on_ray]  # all skipped


@pytest.mark.ray
def test_raised_and_lost_runs_are_named_and_the_others_recorded(ray_address, serial, tmp_path):
    import ray
    from lengthgen.runs.ray_backend import MAX_RETRIES, Cluster

    def flaky(spec, write=True):  # defined here, so Ray ships it to the workers by value
        import os
        from lengthgen.runs.execute import execute
        from lengthgen.runs.registry import experiment
        name = spec.name
        if name == "tomita2/baseline":
            raise RuntimeError("crashed outside the run")   # execute's handler never sees it
        if name == "aa_star/baseline":
            os._exit(1)                                      # the worker process dies
        if name == "aa_star/nope":                           # the run itself raises
            module = experiment(spec.figure_id)
            real = module.run_one

            def boom(params, config, device):
                raise ValueError("boom")

            module.run_one = boom
            try:
                return execute(spec, write)
            finally:
                module.run_one = real
        return execute(spec, write)

    backend = Cluster(ray, "cpu", 1, execute=flaky)
    with pytest.raises(LengthgenError) as caught:
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend=backend)
    message = str(caught.value)
    assert "3 of 6 runs" in message and "\n" not in message
    assert "tomita2/baseline: raised on a Ray worker: RuntimeError: crashed outside the run" \
        in message
    assert "aa_star/nope: ValueError: boom" in message
    assert f"aa_star/baseline: Ray worker lost (WorkerCrashedError) after {MAX_RETRIES}" in message
    recorded = load_records(FIGURE, "test", tmp_path)
    assert sorted(r["run_name"] for r in recorded) == ["aa_star/ape", "tomita2/ape",
                                                       "tomita2/nope"]
    same(sorted((r for r in serial if r["run_name"] in {"tomita2/ape", "tomita2/nope",
                                                         "aa_star/ape"}),
                key=lambda r: r["run_name"]), recorded)
    assert {r["workers"] for r in recorded} == {2}


@pytest.mark.ray
def test_a_killed_driver_loses_nothing_that_finished(ray_address, serial, tmp_path):
    """A second driver (the CLI, connecting by address) is SIGKILLed mid-sweep; what it wrote
    stays, and a resumed sweep completes the serial records."""
    folder = tmp_path / FIGURE / "test"
    proc = subprocess.Popen([sys.executable, "-m", "lengthgen", "figure", "run", FIGURE,
                             "--scale", "test", "--device", "cpu", "--backend", "ray",
                             "--address", ray_address],
                            env={**os.environ, "LENGTHGEN_RESULTS": str(tmp_path)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    while time.time() < deadline and len(list(folder.glob("[!.]*.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = {p.name for p in folder.glob("[!.]*.json")}
    assert 0 < len(written) < len(serial)
    before = {r["run_name"]: r["date"] for r in load_records(FIGURE, "test", tmp_path)}
    resumed = run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="ray")
    same(serial, resumed)
    assert all(r["date"] == before[r["run_name"]] for r in resumed if r["run_name"] in before)


@pytest.mark.ray
def test_unreachable_address_is_one_line_in_seconds(tmp_path):
    pytest.importorskip("ray")
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.time()
    done = cli("figure", "run", FIGURE, "--scale", "test", "--device", "cpu", "--backend", "ray",
               "--address", f"127.0.0.1:{port}", env={"LENGTHGEN_RESULTS": str(tmp_path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"error: cannot reach a Ray cluster at 127.0.0.1:{port}")
    assert time.time() - start < 60  # not Ray's minutes of retries (the imports take seconds)


@pytest.mark.ray
def test_a_device_the_cluster_lacks_is_refused(ray_address, tmp_path):
    with pytest.raises(LengthgenError, match=r"device cuda .* Ray cluster has 0 GPU"):
        run_experiment(FIGURE, "test", "cuda", root=tmp_path, backend="ray")
    with pytest.raises(LengthgenError, match="--workers is for the local backend"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="ray", workers=2)


# Without Ray: bad input that never reaches it.

def test_unknown_backend_and_address_without_ray_backend_are_one_line(tmp_path):
    with pytest.raises(LengthgenError, match=r"unknown backend 'slurm'; valid: local, ray"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="slurm")
    with pytest.raises(LengthgenError, match="an address is for --backend ray"):
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, address="10.0.0.1:6379")
    assert not (tmp_path / FIGURE).exists() or not list((tmp_path / FIGURE).rglob("*.json"))


def test_without_ray_installed_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(LengthgenError) as caught:
        run_experiment(FIGURE, "test", "cpu", root=tmp_path, backend="ray")
    assert str(caught.value) == INSTALL_HINT and "lengthgen[cluster]" in INSTALL_HINT


def serve_once(reply: bytes | None):
    """A TCP server on loopback that answers one connection with `reply` (None: never)."""
    server = socket.create_server(("127.0.0.1", 0))
    hold = threading.Event()

    def answer():
        conn, _ = server.accept()
        with conn:
            conn.recv(64)
            if reply is None:
                hold.wait(5)
            else:
                conn.sendall(reply)

    threading.Thread(target=answer, daemon=True).start()
    return server, hold


def test_probe_tells_refused_silent_and_foreign_addresses_apart():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LengthgenError, match="cannot reach a Ray cluster .*ray start --head"):
        probe(f"127.0.0.1:{port}")
    server, hold = serve_once(b"HTTP/1.0 200 OK\r\n\r\nhello")  # a web server, not Ray
    with server, pytest.raises(LengthgenError, match="answers but is not a Ray head"):
        probe(f"127.0.0.1:{server.getsockname()[1]}")
    server, hold = serve_once(None)  # accepts, then says nothing
    start = time.time()
    with server, pytest.raises(LengthgenError, match="no Ray cluster answered .* within 0.5 s"):
        probe(f"127.0.0.1:{server.getsockname()[1]}", timeout=0.5)
    hold.set()
    assert time.time() - start < 5
    server, hold = serve_once(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))  # an HTTP/2 SETTINGS frame
    with server:
        probe(f"127.0.0.1:{server.getsockname()[1]}")  # passes: gRPC speaks first like this
    for bad in ("nohost", "host:port", ":6379"):
        with pytest.raises(LengthgenError, match="bad Ray address"):
            probe(bad)
