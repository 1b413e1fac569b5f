"""Trained weights that planned figures share: a store, so that a model one figure's slice
trained is scored, not trained again, by a later slice of another figure that calls for the
same training (Richard's Fig. 4, Fig. 5 and Table 1 study the same two Dyck models).

A planned figure says which of its jobs are such trainings with the contract's optional
`shared_key(job, config) -> str | None` (`lengthgen.runs.contract`): a string naming everything
about the job that the figure chooses (for a Dyck model, its spec), equal for two figures' jobs
exactly when they are the same training, or None for a job of its own. The slice loop
(`runs.slices.run_slice`) looks a job with a key up here before it plans or trains it, scores
it from the stored weights where they are found, and stores every such job it trains to its
end.

The key (`weights_key`) adds what the figure cannot know and what changes the weights: how the
job trained (the engine's `train_jobs`, the job alone: TRAINER; a slice's model is never passed
off as one of `train()`'s, whose cache is `richard.protocol`'s, nor the reverse), the job's
model and training settings as the engine has them, the device type (and the card's name on
CUDA), the torch version, the torch thread count (the CPU's float rounding) and the library's
code (`results.lib_digest`, so a record scored on stored weights has the provenance of the
code that trained them). Only a job the engine trains alone is stored: a stacked job's rounding
depends on the group it trained in, which no key known before training names.

Where: the folder `trained` a slice is given, by default `$XDG_CACHE_HOME/lengthgen/
trained-jobs` (`lengthgen.config.cache_dir`; ~/.cache without XDG_CACHE_HOME). The prepared GPU
script (benchmarks/gpu_engine_session.sh) sets XDG_CACHE_HOME to its session folder on the
machine's local disk ($LOCAL/cache), which its chained call reads again, as it does the
unfinished states. One file a training, `<digest of the key>.pt` (the weights, the training's
result, the key and who trained it), written atomically; a file that is corrupt, foreign, of
another key or of another model is named in one line and ignored (the job trains, and its
weights replace the file); a store that cannot be written is one warning line, and training
goes on. While a process trains a stored job it holds a lock on `.<digest>.lock` (released when
it ends or dies), so that another worker of the same queue does not train it at the same time:
that worker leaves the job, and whichever worker reaches its figure once the weights are stored
scores it (the one training it does: every worker runs the queue's figures in one order). A
save that is killed leaves a temp file; the first save of a later slice removes those older
than STALE_TEMP_S.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import asdict
from pathlib import Path

from lengthgen.errors import LengthgenError

STORE_VERSION = 1
TRAINER = "engine, alone"   # lengthgen.engine.jobs.train_jobs, a job alone (its kind's)
FORMAT_KEY = "lengthgen_trained_weights"
MAX_FILE = 8 * 2 ** 30      # no stored model is larger; a larger file is not one
# a temp file of a save that was killed (`.tmp-*`, engine.checkpoints.save_checkpoint) is
# removed by the next slice that stores a training, once it is this old: a save renames its
# temp file within seconds, and the store has no one lock under which to remove younger ones
STALE_TEMP_S = 6 * 3600


def default_folder() -> Path:
    from lengthgen.config import cache_dir
    return cache_dir("trained-jobs")


def weights_key(shared: str, job, device, code: str) -> dict:
    """Everything that changes the weights of a job the engine trains alone (the module
    docstring), as plain JSON values. code: the library's digest (`results.lib_digest`)."""
    import torch
    where = torch.device(device)
    key = {"shared": shared, "store": STORE_VERSION, "trainer": TRAINER, "kind": job.kind,
           "model": job.model, "train": asdict(job.train), "device": where.type,
           "torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
           "lib_digest": code}
    if where.type == "cuda":
        key["card"] = torch.cuda.get_device_name(where)
    return json.loads(json.dumps(key, sort_keys=True, default=str))


class Store:
    """The folder of trained weights a slice reads and writes (the module docstring). say: one
    line to the slice's log."""

    def __init__(self, folder=None, say=print):
        from lengthgen.results import lib_digest
        self.folder = Path(folder) if folder is not None else default_folder()
        self.say = say
        self.code = lib_digest()
        self.warned = False
        self.swept = False          # stale temp files looked for (once, at the first save)
        self.ignored: set = set()   # (digest, mtime_ns) of files found wanting: said once
        self.locks: dict = {}       # digest -> the descriptor this process holds locked

    def key(self, shared: str, job, device) -> tuple[str, dict]:
        """(digest, key) of a job's training: the digest names its file."""
        full = weights_key(shared, job, device, self.code)
        return hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()[:24], full

    def path(self, digest: str) -> Path:
        return self.folder / f"{digest}.pt"

    def load(self, digest: str, full: dict, job):
        """(model, TrainResult, who trained it) of a stored training, or None: not stored, or
        stored in a file found wanting (named in one line, once)."""
        path = self.path(digest)
        try:
            info = os.stat(path)
        except OSError:
            return None
        if (digest, info.st_mtime_ns) in self.ignored:
            return None
        problem, loaded = None, None
        if not stat.S_ISREG(info.st_mode):
            problem = "is not a regular file"   # a FIFO would block the reader: never opened
        elif info.st_size > MAX_FILE:
            problem = f"is {info.st_size:,} bytes, not a stored training"
        else:
            try:
                loaded = _entry(path, full, job)
            except LengthgenError as e:
                problem = str(e)
        if problem:
            self.ignored.add((digest, info.st_mtime_ns))
            self.say(f"trained weights: {path} {problem[:300]}; ignored, the job trains again")
            return None
        return loaded

    def save(self, digest: str, full: dict, model, result, trained_by: str) -> bool:
        """Keep a finished job's weights; a store that cannot take them is one warning line
        (for the slice: later failures are not said again) and False."""
        from lengthgen.engine.checkpoints import save_checkpoint
        entry = {FORMAT_KEY: STORE_VERSION, "key": full, "trained_by": trained_by,
                 "model": {n: t.detach().cpu().clone() for n, t in model.state_dict().items()},
                 "result": result.to_dict()}
        try:
            self._sweep()
            save_checkpoint(self.path(digest), entry)   # atomic: a temp file, then a rename
            return True
        except OSError as e:
            self._warn(e)
            return False

    def _sweep(self) -> None:
        """Remove the temp files killed saves left, once a store (STALE_TEMP_S)."""
        from lengthgen.results import remove_stale_temp_files
        if self.swept or not self.folder.is_dir():
            return
        self.swept = True
        removed = remove_stale_temp_files(self.folder, STALE_TEMP_S)
        if removed:
            self.say(f"trained weights: removed {removed} temp file(s) that killed saves had "
                     f"left in {self.folder}")

    def lock(self, digest: str) -> bool:
        """Take the lock of a training this process is about to train: False where another
        process holds it (it trains the job now). A store whose folder cannot be written has
        no locks (one warning line): True."""
        import fcntl
        if digest in self.locks:
            return True
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / f".{digest}.lock", os.O_CREAT | os.O_RDWR, 0o664)
        except OSError as e:
            self._warn(e)
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            self._warn(e)
            return True
        self.locks[digest] = fd
        return True

    def unlock(self, digest: str) -> None:
        fd = self.locks.pop(digest, None)
        if fd is not None:
            os.close(fd)   # closing the descriptor releases its lock

    def _warn(self, error: OSError) -> None:
        if not self.warned:
            self.warned = True
            self.say(f"warning: the store of trained weights {self.folder} cannot be written "
                     f"({error.strerror or error.__class__.__name__}); training goes on, and "
                     f"a later figure that studies the same model trains it again")


def _entry(path: Path, full: dict, job):
    """(model, result, who trained it) from a stored file, or LengthgenError saying what is
    wrong with it: not one this library wrote, another training's, or not its model's."""
    from lengthgen.engine.checkpoints import load_checkpoint
    from lengthgen.engine.settings import TrainResult
    try:
        entry = load_checkpoint(path)
    except LengthgenError:
        raise LengthgenError("cannot be loaded: not one this library wrote, or a damaged "
                             "one") from None
    if not isinstance(entry, dict) or entry.get(FORMAT_KEY) != STORE_VERSION:
        raise LengthgenError("is not a stored training of this library's store format")
    if entry.get("key") != full:
        raise LengthgenError("holds another training (its key differs)")
    if not isinstance(entry.get("trained_by"), str):
        raise LengthgenError("does not say who trained it")
    model = job.build_model()
    weights, want = entry.get("model"), model.state_dict()
    if not isinstance(weights, dict) or set(weights) != set(want) or any(
            getattr(weights[n], "shape", None) != t.shape or weights[n].dtype != t.dtype
            for n, t in want.items()):
        raise LengthgenError("does not hold its model's weights")
    try:
        model.load_state_dict(weights)
        result = TrainResult(**entry["result"])
    except (KeyError, TypeError, RuntimeError) as e:
        raise LengthgenError(f"cannot be read back ({e.__class__.__name__})") from None
    if not isinstance(result.steps, int) or result.steps < 1:
        raise LengthgenError("holds no finished training")
    return model, result, entry["trained_by"]


class Shared:
    """A slice's use of the store: the key of each job it may share (the work's `shared_key`
    of its spec; None for a job of its own or one trained in a stacked group), the weights
    stored for it, the locks of the trainings it starts, and the weights of those it finishes
    kept. Each of `stored` and `keep` gives the metric a record of the job carries
    (`shared_weights`: the key, the figure's run that trained the weights, and whether this
    record's were read from the store rather than trained for it)."""

    def __init__(self, shared_key, label: str, folder, device, say):
        self.shared_key, self.label, self.device = shared_key, label, device
        self.store = Store(folder, say) if shared_key is not None else None
        self.keys: dict = {}   # job name -> (digest, key) or None
        self.bad: set = set()  # digests whose stored file was found wanting (said once)

    def key(self, spec, job):
        if spec.name not in self.keys:
            shared = self.shared_key(spec) if self.store is not None and job.alone else None
            self.keys[spec.name] = None if shared is None else \
                self.store.key(shared, job, self.device)
        return self.keys[spec.name]

    def stored(self, spec, job):
        """(model, result, metric) of the stored training of a spec's job, or None."""
        key = self.key(spec, job)
        loaded = None if key is None else self.store.load(*key, job)
        if loaded is None:
            if key is not None and self.store.path(key[0]).is_file():
                self.bad.add(key[0])   # named once; the job trains and replaces it
            return None
        model, result, trained_by = loaded
        return model, result, {"key": key[0], "trained_by": trained_by, "from_store": True}

    def first(self, pending, jobs, claimed, take, fits=lambda job: True,
              kept=lambda job: False):
        """((spec, (model, result, metric)) or None, names): the first pending spec whose
        training is stored, taken by a claim (`take`), and the names of the pending specs
        whose training is stored but whose scoring cannot finish in the time left (`fits(job)`:
        its host work, a Dyck job's words that scoring may need too, may have to be drawn
        again): those are left for a later slice, never trained again. A spec claimed already
        (by another worker) is not read; specs whose host work the process keeps
        (`kept(job)`) are tried first. Every spec's key is found here, for the locks a slice
        takes as it trains."""
        for spec in pending:
            self.key(spec, jobs[spec.name])
        waiting = []
        for spec in sorted(pending, key=lambda s: not kept(jobs[s.name])):   # stable
            if claimed(spec.name) or self.keys[spec.name] is None:
                continue
            if not fits(jobs[spec.name]):
                if self.store.path(self.keys[spec.name][0]).is_file():
                    waiting.append(spec.name)
                continue
            loaded = self.stored(spec, jobs[spec.name])
            if loaded is not None and take(spec.name):
                return (spec, loaded), waiting
        return None, waiting

    def found(self, name: str, job) -> bool:
        """Whether a usable training of a job whose key `first` found is stored now (read
        whole: a file that is not one is named and ignored, as `stored` does)."""
        key = self.keys.get(name)
        if key is None or key[0] in self.bad or not self.store.path(key[0]).is_file():
            return False
        return self.store.load(*key, job) is not None

    def keep(self, spec, job, model, result) -> dict | None:
        """Store a finished job's weights (where it has a key); its record's metric."""
        key = self.key(spec, job)
        if key is None:
            return None
        trained_by = f"{self.label}/{spec.name}" if self.label else spec.name
        self.store.save(*key, model, result, trained_by)
        return {"key": key[0], "trained_by": trained_by, "from_store": False}

    def lock(self, name: str) -> bool:
        key = self.keys.get(name)
        return key is None or self.store.lock(key[0])

    def unlock(self, name: str) -> None:
        key = self.keys.get(name)
        if key is not None:
            self.store.unlock(key[0])

    def unlock_all(self, specs) -> None:
        for spec in specs:
            self.unlock(spec.name)
