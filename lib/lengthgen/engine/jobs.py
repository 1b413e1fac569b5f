"""Training runs described once, as typed jobs, and trained many at a time.

A `Job` is one training run: a task (a registered task id, a Task object for a task that
no registry holds, such as the one a reader's C-RASP program defines, or a function that makes
the Task when the run first needs it), its model (a kind, `lengthgen.engine.kinds`, and that
kind's options: for the default "decoder", DecoderConfig fields beyond the task's sizes) and a
TrainConfig, whose seed is the run's seed (it fixes the initial weights, the data stream and
the evaluation set). `train()` trains the model of any kind (`Job.build`); `train_jobs` trains
the jobs of the kinds that stack (decoders and Izzo et al.'s limit-style models:
`engine.kinds`) and Dyck models, each alone ("Alone" below), any list of them: jobs whose
models are of one kind and share its shape key (`engine.stacked.shape_key`,
`engine.stacked_limit.shape_key`), batch size, evaluation period and precision train together
in one stacked group, whatever their tasks, encodings, seeds, learning rates, schedules, step caps and
stop rules; groups run one after another.

`sampler` chooses where batches are made: "host" (each task's numpy sampler, the streams
`train` uses), "device" (on the device, `lengthgen.engine.device_data`), or "auto" (the device
on CUDA for tasks that have a device sampler, the host otherwise).

Slices: with a `deadline`, training stops at that time and the state of every unfinished job
(weights, AdamW moments, step, history: the resume format of `engine.checkpoints`, the one
`train()`'s checkpoint files hold) comes back in `JobOutcome.state`, small enough to keep
as a file for small models; passing it back as `resume` continues the job where it stopped. With
the device sampler a resumed job sees the batches it would have seen (they are keyed by seed
and step), and with the host's its state keeps where its generator and its task's data stood
(`engine.feeds.HostFeed.state`): either way a job trained in slices follows the trajectory of
a job trained at once, up to float rounding.

Alone: a job whose kind the stacked forward cannot hold (Richard's Dyck models: frozen
weights, dropout, a module no stack holds; `engine.kinds`, `alone`) trains in a group of
its own as `train` trains a model (`engine.groups.ModuleGroup`, the host's sampler, torch's
generator seeded by the run), so its trajectory is `train`'s. Its unfinished state holds
torch's generators too, beside its host generator under "feed" (`engine.checkpoints.feed_state`,
as `train`'s checkpoint does), so a resumed job sees the batches and dropout masks it would
have seen.
"""
from dataclasses import dataclass, field
from typing import Callable

import torch

from lengthgen.engine import kinds
from lengthgen.engine.checkpoints import member_state, restore_feed, restore_member
from lengthgen.engine.feeds import DeviceFeed, HostFeed
from lengthgen.engine.groups import StackedGroup
from lengthgen.engine.loop import MemberState, run
from lengthgen.errors import LengthgenError
from lengthgen.objectives import objective_of
from lengthgen.tasks import get_task
from lengthgen.tasks.base import Task
from lengthgen.engine.settings import TrainConfig, TrainResult
from lengthgen.engine.single import preamble

SAMPLERS = ("auto", "host", "device")


@dataclass
class Job:
    task: str | Task | Callable[[], Task]   # a task id, the Task, or a function making it
    model: dict                      # the kind's options, e.g. a decoder's n_layers, d_model, pe
    train: TrainConfig
    name: str = ""                   # the caller's name for it (records, state files)
    kind: str = "decoder"            # the model's kind (lengthgen.engine.kinds.KINDS)
    # about the host seconds the job spends before its first step, said by whoever makes it
    # (a Dyck job's training words, drawn at its first batch: richard.protocol.job), for the
    # planners (runs.slices, runs.cost); 0 for a task whose batches cost nothing up front.
    # Jobs of one non-empty host_key share that work in a process (done by the first of them:
    # a set of Dyck words is drawn once, richard.protocol.drawn_words, which keeps the last
    # runs.cost.HOST_KEYS_KEPT sets), so a planner counts it once per key while kept
    host_seconds: float = 0.0
    host_key: tuple = ()
    # does that host work now, where a caller times it apart from the training steps (a
    # slice measures the steps' rate without it: runs.slices.run_slice); None: nothing to do
    host_work: Callable[[], object] | None = field(default=None, repr=False, compare=False)
    # the Task of a task id (or of a function), resolved once however often grouping, sizing
    # and building ask
    _task: Task | None = field(default=None, init=False, repr=False, compare=False)
    _made: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def seed(self) -> int:
        return self.train.seed

    def get_task(self) -> Task:
        if isinstance(self.task, Task):
            return self.task
        if isinstance(self.task, str):
            if self._task is None or self._task.id != self.task:
                self._task = get_task(self.task)
        elif self._task is None or self._made is not self.task:
            self._task, self._made = self.task(), self.task
        return self._task

    def model_config(self):
        """The model's typed config (its kind's), without building its weights (cheap: for
        grouping and costs; a kind not sized by the task makes no task)."""
        return kinds.model_config(self.kind, self.get_task, self.model)

    def build_model(self) -> torch.nn.Module:
        """The freshly initialized model a run alone would start from (seeded by the job)."""
        return kinds.build(self.kind, self.model_config(), self.seed)

    def build(self):
        """(task, freshly initialized model): what a run alone would start from."""
        return self.get_task(), self.build_model()

    @property
    def alone(self) -> bool:
        """Whether train_jobs trains this job in a group of its own, as train() does (its kind
        is one the stacked forward cannot hold: the module docstring, "Alone")."""
        return kinds.kind(self.kind).alone

    def decoder_config(self):
        """A decoder job's DecoderConfig (model_config), refused for other kinds."""
        if self.kind != "decoder":
            raise LengthgenError(f"{self.name or 'this job'}: a {self.kind} model has no "
                                 f"decoder config (model_config gives its own)")
        return self.model_config()


@dataclass
class JobOutcome:
    job: Job
    result: TrainResult | None       # None: not finished (deadline); see state
    model: torch.nn.Module | None    # the trained decoder (CPU), when finished
    state: dict | None = None        # an unfinished job's state, to resume it
    group_size: int = 1              # how many jobs its group started with


def use_device_sampler(sampler: str, device, tasks) -> bool:
    if sampler not in SAMPLERS:
        raise LengthgenError(f"unknown sampler {sampler!r}; valid: {', '.join(SAMPLERS)}")
    if sampler == "host":
        return False
    from lengthgen.engine.device_data import device_sampler
    available = all(device_sampler(t) is not None for t in tasks)
    if sampler == "device":
        if not available:
            missing = next(t.id for t in tasks if device_sampler(t) is None)
            raise LengthgenError(f"{missing}: no device sampler for this task; use "
                                 f"sampler='host'")
        return True
    return available and torch.device(device).type == "cuda"


def group_key(job: Job, model_config=None) -> tuple:
    """Jobs with equal keys train in one group: same kind and shape (the kind's `shape_key`),
    batch size, evaluation period and size, length chunks, objective and precision (one
    autocast context holds a group's batched forward). A job that trains alone shares its key
    with no other."""
    if job.alone:
        return ("alone", id(job))
    cfg = job.train
    shape_key = kinds.kind(job.kind).shape_key
    if shape_key is None:
        raise LengthgenError(f"{job.name or 'a job'}: a {job.kind} model does not stack")
    model_config = model_config or job.model_config()
    return (job.kind, shape_key(model_config), cfg.batch_size, cfg.eval_every,
            cfg.eval_samples, cfg.length_chunks, objective_of(job.get_task()).name,
            cfg.precision)


def train_jobs(jobs: list[Job], device="cpu", *, sampler: str = "auto", deadline=None,
               until_step: int | None = None, resume: dict | None = None,
               max_group: int | None = None, diverged: str = "stop",
               graphs: bool = False, compile: bool | str = False,
               progress=None) -> list[JobOutcome]:
    """Train every job; see the module docstring. deadline (a time.perf_counter() value) or
    until_step ends a slice early; resume: {job index: state} for jobs that a slice left
    unfinished. max_group bounds a group's size (memory). graphs: on CUDA, replay each step
    as a captured CUDA graph (groups.GraphStep). compile: each step's loss and update through
    torch.compile (engine.compiled; eager where compiling fails). progress: a tqdm-like bar,
    updated once per step of every group. Returns one outcome per job, in order."""
    device = torch.device(device)
    resume = resume or {}
    odd = next((job for job in jobs if not (kinds.kind(job.kind).stacks or job.alone)), None)
    if odd is not None:
        raise LengthgenError(f"{odd.name or 'a job'}: train_jobs stacks decoders and "
                             f"limit-style models and trains Dyck models alone; a {odd.kind} "
                             f"model trains with train()")
    built = [job.build() for job in jobs]
    for job, (task, model) in zip(jobs, built):
        if job.train.checkpoint_path is not None:
            raise LengthgenError("train_jobs keeps unfinished jobs' state itself (deadline / "
                                 "resume); checkpoint_path is for train()")
        preamble(model, task, job.train)
    groups: dict = {}
    for index, (job, (task, model)) in enumerate(zip(jobs, built)):
        start = resume[index]["step"] if index in resume else 0
        # resumed and fresh jobs never share a group, not even at step 0: a group is loaded
        # from its members' states or from none of them
        groups.setdefault(group_key(job, model.cfg) + (start, index in resume), []).append(index)
    outcomes: list[JobOutcome | None] = [None] * len(jobs)
    for key, members in groups.items():
        size = max_group or len(members)
        for first in range(0, len(members), size):
            part = members[first: first + size]
            _train_group(jobs, built, part, device, sampler, deadline, until_step, resume,
                         diverged, outcomes, graphs, compile, progress)
    return outcomes


def make_group(tasks, models, configs, device, sampler: str = "auto", graphs: bool = False,
               compile: bool | str = False):
    """(StackedGroup, feed) of one group of built jobs, as train_jobs trains them (the
    benchmark times the sweep's groups through this too)."""
    n_positions = [m.cfg.n_positions for m in models]
    absolute = [m.cfg.pe.absolute for m in models]
    on_device = use_device_sampler(sampler, device, tasks)
    if on_device:
        width = max(t.max_tokens(c.length_range(t)[1]) for t, c in zip(tasks, configs))
        feed = DeviceFeed(tasks, configs, n_positions, absolute, device, width)
    else:
        feed = HostFeed(tasks, configs, n_positions, absolute, objective_of(tasks[0]).target_dtype,
                        device)
    # a captured step needs fixed shapes: only batches made on the device have a fixed width
    # (the host's batches are as wide as their longest sequence, a new capture every step)
    group = StackedGroup(models, tasks, configs, device, graphs=graphs and on_device,
                         compile=compile)
    return group, feed


def _train_group(jobs, built, part, device, sampler, deadline, until_step, resume, diverged,
                 outcomes, graphs=False, compile=False, progress=None):
    if jobs[part[0]].alone:
        _train_alone(jobs, built, part[0], device, deadline, until_step, resume, diverged,
                     outcomes, progress)
        return
    tasks = [built[i][0] for i in part]
    configs = [jobs[i].train for i in part]
    group, feed = make_group(tasks, [built[i][1] for i in part], configs, device, sampler,
                             graphs, compile)
    members = [MemberState() for _ in part]
    step, elapsed, recent = 0, 0.0, []
    if part[0] in resume:
        step = resume[part[0]]["step"]
        for j, i in enumerate(part):
            restore_member(group, j, resume[i], members[j])
            restore_feed(feed, j, resume[i])
        elapsed = max(resume[i]["elapsed"] for i in part)
        recent = [torch.tensor(column, device=device)
                  for column in zip(*(resume[i]["recent"] for i in part))]
    results, state = run(group, feed, tasks, configs, device, step=step, members=members,
                         recent=recent, elapsed=elapsed, deadline=deadline,
                         until_step=until_step, diverged=diverged, progress=progress)
    alive = state["alive"]
    for j, i in enumerate(part):
        if results[j] is not None:
            outcomes[i] = JobOutcome(jobs[i], results[j], None, group_size=len(part))
    # unfinished members: their state, to resume in a later slice (row `position` of the
    # group now, member j of the part)
    for position, j in enumerate(alive):
        i = part[j]
        outcomes[i] = JobOutcome(jobs[i], None, None, group_size=len(part),
                                 state=member_state(group, position, members[j], state,
                                                    feed))
    finished = group.finished_models()
    for j, i in enumerate(part):
        if outcomes[i].result is not None:
            outcomes[i].model = finished.get(j)


def _train_alone(jobs, built, i, device, deadline, until_step, resume, diverged, outcomes,
                 progress=None):
    """Job i in a group of its own, as `train` trains it (the module docstring, "Alone")."""
    from lengthgen.engine.groups import ModuleGroup
    task, model = built[i]
    cfg = jobs[i].train
    group = ModuleGroup(model, task, cfg, device)
    feed = HostFeed([task], [cfg], [model.cfg.n_positions], [model.cfg.pe.absolute],
                    objective_of(task).target_dtype, device)
    torch.manual_seed(cfg.seed)   # dropout, as train() seeds it
    member, step, elapsed, recent = MemberState(), 0, 0.0, []
    if i in resume:
        state = resume[i]
        restore_member(group, 0, state, member)
        step, elapsed = state["step"], state["elapsed"]
        recent = [torch.tensor([v], device=device) for v in state["recent"]]
        restore_feed(feed, 0, state, device)   # the batches and dropout masks it would have seen
    results, state = run(group, feed, [task], [cfg], device, step=step, members=[member],
                         recent=recent, elapsed=elapsed, deadline=deadline,
                         until_step=until_step, diverged=diverged, progress=progress)
    if results[0] is not None:
        outcomes[i] = JobOutcome(jobs[i], results[0], model.cpu())
        return
    kept = member_state(group, 0, member, state, feed, device)
    kept["model"] = {n: t.detach().cpu().clone() for n, t in kept["model"].items()}
    kept["adam"] = {**kept["adam"], **{k: {n: t.detach().cpu().clone()
                                            for n, t in kept["adam"][k].items()}
                                       for k in ("exp_avg", "exp_avg_sq")}}
    outcomes[i] = JobOutcome(jobs[i], None, None, state=kept)
