"""A figure's runs on a Ray cluster: `figure run ID --backend ray [--address HOST:PORT|auto]`.

Ray (https://docs.ray.io) schedules the work; this module only describes it. Each run (a
`RunSpec` of `execute.plan`) becomes one Ray task that calls `execute.execute` on a worker, with the resources it needs: `num_cpus` = the run's torch
threads, and `num_gpus` = GPUS_PER_RUN (one whole GPU) when the device is CUDA, so that Ray
gives each run its own GPU through CUDA_VISIBLE_DEVICES.

Who writes the records: the driver. A worker computes the run and returns its record
(`execute(spec, write=False)`); the driver (the process running `figure run`, which holds the
sweep's lock) writes each one with `execute.save` as soon as it arrives, with the same code,
digest and atomic rename as the local path. So the nodes need no shared filesystem (only the
library, at the same commit, on every node), and:
- a worker or node that dies loses only the run it was computing: Ray runs it again elsewhere
  (MAX_RETRIES times), then it is reported as failed by run name; the other runs go on;
- a driver that dies loses the runs in flight (Ray cancels the tasks of a dead driver); every
  record written before survives, and the next `figure run` skips it.

Provenance is read on the worker (its host, the commit of its checkout, the torch thread count),
so records say where they were computed; `command` is the driver's command line, and `workers`
is the number of runs the cluster can compute at once.

Ray is an optional dependency (`pip install 'lengthgen[cluster]'`), imported only here.
"""
import os
import socket
import sys
from contextlib import contextmanager

from lengthgen.config import requested_device
from lengthgen.errors import LengthgenError
from lengthgen.runs.execute import Outcome, execute, save

GPUS_PER_RUN = 1      # a whole GPU per run: simplest, and no run slows another down
MAX_RETRIES = 2       # re-runs of a run whose worker died (Ray's own retry; not for exceptions)
PROBE_TIMEOUT_S = 5   # how long an address may take to answer before we say it does not
# Ray tries to reach a head once a second, 20 times by default; this variable (read when
# connecting) sets the number of tries
GCS_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"
INSTALL_HINT = ("--backend ray needs Ray, which is not installed: pip install 'lengthgen[cluster]' "
                "(or pip install -r requirements-cluster.txt)")


def import_ray():
    """The ray module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise LengthgenError(INSTALL_HINT) from None
    return ray


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Fail in seconds, not minutes: ray.init retries a dead or foreign address for a long time.

    A TCP connection, then the HTTP/2 client preface: a Ray head (its GCS) speaks gRPC, which
    answers with a SETTINGS frame (frame type 4 in the fourth byte of the 9-byte frame header).
    """
    target = address[len("ray://"):] if address.startswith("ray://") else address
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise LengthgenError(f"bad Ray address {address!r}: expected HOST:PORT (the head's "
                             f"address, e.g. 10.0.0.1:6379) or auto")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
            reply = sock.recv(9)
    except socket.timeout:
        raise LengthgenError(f"no Ray cluster answered at {address} within {timeout:g} s; check "
                             f"the head's address and that its port is open") from None
    except OSError as e:
        raise LengthgenError(f"cannot reach a Ray cluster at {address} "
                             f"({e.strerror or e.__class__.__name__}); start one there with "
                             f"`ray start --head`, or check the host and port") from None
    if len(reply) < 4 or reply[3] != 4:
        raise LengthgenError(f"{address} answers but is not a Ray head (it does not speak gRPC); "
                             f"`ray start --head` prints the head's address (port 6379 by "
                             f"default)")


@contextmanager
def ray_cluster(address: str | None, device: str | None, threads: int):
    """Connect to Ray for one sweep and yield the Cluster; disconnect at the end.

    address: HOST:PORT of a running head, "auto" (the cluster `ray start` left on this
    machine), or None ($RAY_ADDRESS, else a Ray started here for this sweep and stopped after
    it). A process already connected (a notebook, a test) keeps its connection.
    """
    ray = import_ray()
    connected_here = not ray.is_initialized()
    if connected_here:
        address = address or os.environ.get("RAY_ADDRESS") or None
        options = {"configure_logging": False}
        if address in (None, "local"):
            options["include_dashboard"] = False  # a web server nobody asked for
        elif address != "auto":
            probe(address)
        try:
            if address in (None, "local"):
                ray.init(address=address, **options)
            else:  # bound the tries on an address that answers but is no working head
                with _environment(GCS_WAIT_ENV, str(PROBE_TIMEOUT_S)):
                    ray.init(address=address, **options)
        except ConnectionError as e:  # "auto" with no cluster on this machine, among others
            first = str(e).splitlines()[0] if str(e) else e.__class__.__name__
            raise LengthgenError(f"cannot connect to Ray (address {address}): {first}") from None
    try:
        yield Cluster(ray, device, threads)
    finally:
        if connected_here:
            ray.shutdown()


@contextmanager
def _environment(name: str, value: str):
    """Set an environment variable for a block, unless the user set it already."""
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


class Cluster:
    """The backend for runner.run_experiment: a callable(list of RunSpecs) -> iterator of written
    Outcomes."""

    def __init__(self, ray, device: str | None, threads: int, gpus_per_run: float = GPUS_PER_RUN,
                 execute=execute):
        self.ray, self.execute = ray, execute
        resources = ray.cluster_resources()
        cpus, gpus = resources.get("CPU", 0), resources.get("GPU", 0)
        wanted = requested_device(device)
        if wanted is None:
            wanted = "cuda" if gpus >= gpus_per_run else "cpu"
        if wanted.startswith("cuda"):
            # Ray hands each task its GPU as CUDA_VISIBLE_DEVICES; inside the task it is "cuda"
            wanted = "cuda"
            if gpus < gpus_per_run:
                raise LengthgenError(f"device cuda was asked for, but the Ray cluster has "
                                     f"{gpus:g} GPU(s); use --device cpu or add GPU nodes")
            self.options = {"num_cpus": threads, "num_gpus": gpus_per_run}
            self.slots = int(min(gpus // gpus_per_run, cpus // threads))
        else:
            self.options = {"num_cpus": threads}
            self.slots = int(cpus // threads)
        if self.slots < 1:
            raise LengthgenError(f"the Ray cluster has {cpus:g} CPU(s), fewer than the "
                                 f"{threads} thread(s) one run asks for; use --threads {int(cpus)}")
        self.device = wanted

    def __call__(self, specs):
        ray = self.ray
        task = ray.remote(_execute_remote).options(max_retries=MAX_RETRIES,
                                                   retry_exceptions=False, **self.options)
        argv = list(sys.argv)
        pending = {task.remote(spec, argv, self.execute): spec for spec in specs}
        warned = False
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                spec = pending.pop(ready[0])
                outcome = self._result(ready[0], spec)
                if not warned:
                    warned = _warn_if_other_commit(outcome)
                yield save(outcome, spec)
        finally:  # the driver was interrupted: stop what it started
            for ref in pending:
                ray.cancel(ref, force=True)

    def _result(self, ref, spec) -> Outcome:
        """The run's Outcome, or its error when the task itself failed on the worker."""
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:  # raised outside execute's own error handling
            cause = e.cause if e.cause is not None else e
            first = str(cause).splitlines()[0] if str(cause) else ""
            reason = f"raised on a Ray worker: {cause.__class__.__name__}: {first}"
        except ray.exceptions.RayError as e:  # worker or node lost after MAX_RETRIES retries
            reason = f"Ray worker lost ({e.__class__.__name__}) after {MAX_RETRIES} retries"
        return Outcome(errors=[(spec.name, reason)])


def _execute_remote(spec, argv, execute):
    """On a worker: compute the run, return its record unwritten (the driver writes it)."""
    saved, sys.argv = sys.argv, argv  # the record's `command` is the driver's command line
    try:
        return execute(spec, write=False)
    finally:
        sys.argv = saved


def _warn_if_other_commit(outcome: Outcome) -> bool:
    """Say once when workers run another commit of the library than the driver."""
    if not outcome.records:
        return False
    from lengthgen.results import git_commit
    here, there = git_commit(), outcome.records[0]["git_commit"]
    if here != there:
        print(f"warning: Ray workers run lengthgen {there}, this driver {here}; the records "
              f"name the workers' commit", file=sys.stderr, flush=True)
    return True

