"""What a figure's paper-scale trainings would cost on a GPU: an estimate, stated and checkable.

A figure module that trains offers `trainings(config) -> list[Training]`: one `Training` per
kind of training run of the config (model shape and parameter count, batch, tokens per sequence,
steps, how many such runs). `figure cost` reads them for the `paper` config and prints, per
figure id, the runs, the shapes, the model-steps (steps summed over runs) and the estimate
below. This module never imports a figure (the run layer names none): the command looks the
figures up and passes their trainings here.

How the estimate is made (`estimate`):

1. FLOPs per step of one run (`Training.flops_per_step`): 6 x parameters x tokens per batch
   (forward and backward through every weight), plus attention, 6 x layers x tokens per sequence
   x d_model per token (Kaplan et al. 2020, "Scaling laws for neural language models", Sec. 2.1:
   2 n_layer n_ctx d_attn forward per token, three times that with the backward pass).
   Parameters are counted on the library's own model, built on torch's meta device (no memory),
   embeddings included (a slight overcount: a lookup costs no multiply). Sequences count at the
   longest the training draws, as the device sampler pads them.
2. The H200's rate for that many FLOPs per step (`h200_steps_per_s`): the engine benchmark of
   2026-11-28 (data/h200_rates.json: model-steps per second of 5 decoder shapes at batch 64,
   Len <= 50, bf16) gives, per shape, the best rate measured in a stacked group and so the FLOP/s
   reached at that shape's FLOPs per step. Between measured shapes the FLOP/s is interpolated
   linearly in log(FLOPs per step); below the smallest shape a run goes no faster than the
   smallest shape's model-steps per second (small models are bound by kernel launches, not by
   arithmetic); above the largest it reaches the largest shape's FLOP/s. That is the rate of a
   full group. A figure's runs of one shape and batch are one group (`Cost.groups`, at
   most MAX_GROUP), and a group step goes no faster than the fastest group step measured at
   that size (`group_ceiling_points`, interpolated the same way): a lone run of a small model
   gets a few hundred steps a second, not thousands. The one home of this rule is
   `group_steps_per_s`, which the slices' planner calls too (for a shape not yet measured).
   One model at a time (as most figure modules train today) goes at `one_model_steps_per_s`,
   from the `train()` rows (the one home of that rate: the slices' planner uses it too), the
   second H200 column; runs that the engine trains alone (`Training.alone`: Richard's Dyck
   models, which the stacked forward cannot hold) get that rate in the engine column too.
3. The T4 (Colab's free card) has no bf16, so the library trains in fp32 there: a step takes
   the longer of the H200's time (the launch-bound floor) and its FLOPs at the T4's fp32 peak
   (8.1 TFLOPS) times the best fraction of its own peak the H200 reached in the benchmark
   (`_best_efficiency`, against its dense bf16 peak of 989.4 TFLOPS). Both peaks are the
   cards' datasheet numbers (data/h200_rates.json names them).
4. Minutes = sum over runs of steps / rate. "Fits" means the engine minutes on the H200 are at
   most ALLOTMENT_MIN, the usable part of one 15-minute GPU allotment (two chained commands of
   10 minutes at most, less starting the machine and moving files).

5. Host work before training that a job states (`Training.host_s`, from the engine Job's
   `host_seconds`) is added as it is, on any card: drawing a Dyck model's finite training set
   (up to 4^12 distinct words of D_32, about 78 s a set on one core:
   `lengthgen.tasks.dyck.drawing_seconds`, measured by benchmarks/bench_dyck_drawing.py),
   once per set of words a figure draws.

What it leaves out, so read it as an order of magnitude: evaluation and sampling time, making
other data on the host (a pool of 10^6 simplified Boolean expressions), early stops (a run
that stops at 100% costs less; step counts here are the configs' caps), and
that most figure modules do not train through the engine yet (the `train()` column is what they
would get today). `benchmarks/check_cost.py` sets the estimate against the wall time of the
paper-budget sweep's groups on the same H200: the measured time is longer, mostly by what the
estimate leaves out.
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from dataclasses import dataclass, field

from lengthgen.errors import LengthgenError
from lengthgen.runs.allotment import USABLE_MIN
# the one copy of the H200 benchmark's rates
from lengthgen.runs.rates import H200, RATES_FILE, RateTable

ALLOTMENT_MIN = USABLE_MIN  # usable minutes of one 15-minute allotment (runs.allotment)
# How many host_keys' work a process keeps (engine.jobs.Job.host_key; the least recently used
# is dropped, and a job of its key does that work again): richard.protocol's drawn Dyck words,
# and the slices' planner that counts them (runs.planner.Planner)
HOST_KEYS_KEPT = 8
ENGINE_KINDS = ("engine", "engine+graph")
MAX_GROUP = 1024            # the largest group the benchmark measured
SINGLE_KIND = "train()"


@dataclass(frozen=True)
class Training:
    """One kind of training run of a figure (count of them, all alike but for the seed/data)."""
    shape: str                # e.g. "4L4H d1024"
    n_params: int
    layers: int
    d_model: int
    batch: int                # sequences per step
    tokens: int               # tokens per sequence (the longest the training draws)
    steps: int                # steps per run (the config's cap)
    count: int = 1
    key: str = ""             # equal keys: the same runs, shared by figures (counted once)
    flops: float | None = None   # FLOPs per step where the model is not a decoder
    alone: bool = False       # the engine trains each run alone (engine.jobs: a model the
                              # stacked forward cannot hold), at train()'s rate
    host_s: float = 0.0       # host seconds before training, in all (drawing the training
                              # words: engine.jobs.Job.host_seconds), the same on any card
    deferred: bool = False    # no slice can train it (its figure's `deferred`): `figure cost`
                              # counts it, a GPU queue does not bill it (runs.queue)

    @property
    def dims(self) -> tuple | None:
        """(layers, heads, width) of a decoder's `shape_label`, None for another label."""
        match = re.fullmatch(r"(\d+)L(\d+)H d(\d+)", self.shape)
        return tuple(int(v) for v in match.groups()) if match else None

    def flops_per_step(self) -> float:
        if self.flops is not None:
            return float(self.flops)
        per_token = 6 * self.n_params + 6 * self.layers * self.tokens * self.d_model
        return per_token * self.batch * self.tokens

    @property
    def model_steps(self) -> int:
        return self.count * self.steps


def count_parameters(build) -> int:
    """Parameters of the module `build()` returns, built on the meta device (no memory) and
    without initializing its weights (`_no_init`)."""
    import torch
    with torch.device("meta"), _no_init():
        model = build()
    return sum(p.numel() for p in model.parameters())


@contextlib.contextmanager
def _no_init():
    """torch.nn.init's in-place initializers as no-ops while a model is built to be counted.
    On the meta device they draw nothing, yet each call costs about a millisecond through the
    meta kernels: the APE vs NoPE sweep's 600-odd shapes took 15 s, most of the chapter's cost
    table (benchmarks/bench_chapter_costs.py). A count never reads a weight's value."""
    import torch.nn.init as init
    saved = {name: value for name, value in vars(init).items()
             if name.endswith("_") and not name.startswith("_") and callable(value)}
    try:
        for name in saved:
            setattr(init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, value in saved.items():
            setattr(init, name, value)


def decoder_training(build, *, shape: str, layers: int, d_model: int, batch: int, tokens: int,
                     steps: int, count: int = 1, key: str = "", alone: bool = False) -> Training:
    """A Training of the model `build()` returns (its parameters counted, see
    count_parameters)."""
    return Training(shape, count_parameters(build), layers, d_model, batch, tokens, steps,
                    count, key, alone=alone)


def job_training(job, count: int = 1, key: str = "") -> Training:
    """A Training of one of the engine's typed jobs (lengthgen.engine.jobs.Job): a model the
    engine stacks (a decoder, a limit-style model), or one it trains alone (a Dyck model:
    `alone`), its parameters counted on the model its kind builds. Its host work
    (`Job.host_seconds`) is counted for every run here; a caller whose runs share it
    (`Job.host_key`) counts it once (richard.protocol)."""
    from lengthgen.engine import kinds
    cfg = job.model_config()
    layers, heads, width = job_shape(job)
    kind = kinds.kind(job.kind)
    if kind.stacks:   # sized by its task: its sequences up to the longest it trains on
        task = job.get_task()   # a task id, or a Task object (a reader's program: `try`)
        tokens = task.max_tokens(job.train.length_range(task)[1])
    else:   # its sequences fill its position table (a Dyck word of D_2N: 2N), and its task is
        tokens = cfg.n_positions   # not made (a Dyck task draws its words when made)
    return Training(shape_label(layers, heads, width),
                    _decoder_parameters(f"{job.kind}:{cfg!r}", lambda: kind.build(cfg)),
                    layers, width, job.train.batch_size, tokens, job.train.steps, count, key,
                    alone=job.alone, host_s=count * job.host_seconds)


def job_shape(job) -> tuple:
    """(layers, heads, width) of a job's model, as the rate tables key them (a limit-style
    model has one head a layer)."""
    cfg = job.model_config()
    return getattr(cfg, "shape", None) or (cfg.n_layers, getattr(cfg, "n_heads", 1),
                                           cfg.d_model)


def job_flops(job) -> float:
    """FLOPs per step of one run of a job (`Training.flops_per_step`), by the rule of every
    estimate here."""
    return job_training(job).flops_per_step()


_counted: dict[str, int] = {}   # repr(DecoderConfig) -> parameters (a sweep has many alike)


def _decoder_parameters(config_repr: str, build) -> int:
    if config_repr not in _counted:
        _counted[config_repr] = count_parameters(build)
    return _counted[config_repr]


def shape_label(layers: int, heads: int, d_model: int) -> str:
    return f"{layers}L{heads}H d{d_model}"


# ---- the measured rates ------------------------------------------------------------------
@functools.cache
def rate_table() -> dict:
    """data/h200_rates.json: the benchmark's rows and the two cards' peaks, with sources."""
    try:
        return json.loads(RATES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LengthgenError(f"cannot read the GPU rate table {RATES_FILE}: {error}") from None


@functools.cache
def _bench_flops(shape: tuple) -> float:
    """FLOPs per step of a benchmarked shape, by the same rule as every estimate."""
    from lengthgen.engine.single import decoder_for_task
    from lengthgen.tasks import get_task
    workload = rate_table()["workload"]
    task = get_task(workload["task"])
    layers, heads, width = shape
    tokens = task.max_tokens(workload["max_len"])
    return decoder_training(
        lambda: decoder_for_task(task, n_layers=layers, n_heads=heads, d_model=width,
                                 pe=workload["pe"]),
        shape=shape_label(*shape), layers=layers, d_model=width,
        batch=workload["batch_size"], tokens=tokens, steps=1).flops_per_step()


def measured_points(kind: str = "engine") -> tuple:
    """((FLOPs per step, model-steps/s), ...) per benchmarked shape, smallest first: the best
    rate of the engine's stacked groups ("engine") or of `train()` ("train()"), in the built-in
    table."""
    if kind not in ("engine", SINGLE_KIND):
        raise LengthgenError(f"unknown trainer {kind!r}; valid: engine, {SINGLE_KIND}")
    if kind == SINGLE_KIND:
        return _one_model_points(H200)
    return _group_points(H200, True)[0]


@functools.cache
def _one_model_rows(table: RateTable) -> dict:
    """{shape: model-steps/s of one model alone} of a table: its train() rows, or where it has
    none its eager engine rows' fastest group step (a group of one, launch-bound)."""
    rows = [r for r in table.rates if r.single] or \
        [r for r in table.rates if not r.single and not r.graphs] or list(table.rates)
    best: dict = {}
    for r in rows:
        best[r.shape] = max(best.get(r.shape, 0.0), r.model_steps_per_s / r.group)
    return best


@functools.cache
def _one_model_points(table: RateTable) -> tuple:
    return tuple(sorted((_bench_flops(shape), rate)
                        for shape, rate in _one_model_rows(table).items()))


def one_model_steps_per_s(flops: float, shape: tuple | None = None,
                          table: RateTable | None = None) -> float:
    """How fast ONE model of `shape` (layers, heads, width) trains on a card, stepped alone and
    eagerly as `train()` steps it, for a run of `flops` FLOPs per step (`Training.flops_per_step`:
    its batch and sequence length are in it): model-steps per second on the card of `table` (a
    `runs.rates.RateTable`, the built-in H200 table by default). The one home of this rate:
    `figure cost`'s `train()` column and every run the engine trains alone there (`Cost.minutes`,
    Richard's Dyck models), and the slice planner's jobs alone (`runs.planner.Planner`) call it.

    Measured: the table's `train()` rows, one model at a time, group 1, at the benchmark's
    workload (batch 64, Len <= 50: its FLOPs per step by the rule of point 1, `_bench_flops`).
    For the built-in table: `benchmarks/bench_engine.py` on one H200 on 2026-11-28 (bench.jsonl
    of gpu-runs/2026-11-28-h200, copied into data/h200_rates.json): 65.8 steps/s at 1L1H d16,
    72.4 at 2L2H d64, 49.6 at 4L4H d256, 73.6 at 6L4H d256, 25.4 at 12L12H d768. A table with no
    `train()` rows (an older benchmark's file) gives its eager engine rows' fastest group step
    instead. A run of a measured shape goes at its row's rate; where its step does more FLOPs
    than the benchmark's at that shape (a larger batch), at the FLOP/s that row reached.

    Modelled, for a shape with no row: the FLOP/s the rows reached, interpolated linearly in
    (log FLOPs per step, log FLOP/s) between them and held at the end values outside, and no
    faster than the smallest measured shape's rate (a small step is bound by kernel launches,
    not by arithmetic). So the paper's Dyck decoders (4L4H d1024 and 1L1H d1024 at batch 8, 32
    tokens: 1.2e11 and 1.7e9 FLOPs a step, below the 12-layer row's 1.7e12 at batch 64) go at
    the launch-bound 65.8 steps/s, not at the 12-layer row's 25.4, which is as launch-bound
    (its eager engine step of one model takes 36.5 ms, 15.1 ms as a CUDA graph) but with three
    times the layers. Not modelled: that launches grow with depth (no measured shape is deep
    and cheap), and other cards than the table's (`t4_steps_per_s` scales this one)."""
    table = table if table is not None else H200
    rows = _one_model_rows(table)
    if shape is not None and tuple(shape) in rows:
        rate = rows[tuple(shape)]
        return min(rate, _bench_flops(tuple(shape)) * rate / flops)
    points = _one_model_points(table)
    throughput = _log_interpolate([(f, f * r) for f, r in points], flops)
    return min(points[0][1], throughput / flops)


def group_ceiling_points() -> tuple:
    """((FLOPs per step, group-steps/s), ...) per benchmarked shape: the fastest step of a whole
    stacked group measured at that shape (at its smallest group: launch-bound)."""
    return _group_points(H200, True)[1]


@functools.cache
def _group_points(table: RateTable, graphs: bool) -> tuple:
    """(best model-steps/s, fastest group step) per benchmarked shape of a table's stacked
    rows, each as ((FLOPs per step, rate), ...) smallest first. graphs: the rows replayed as
    CUDA graphs count too; else the eager rows alone (all, where a table has none)."""
    stacked = [r for r in table.rates if not r.single]
    rows = stacked if graphs else ([r for r in stacked if not r.graphs] or stacked)
    best: dict = {}
    step: dict = {}
    for r in rows:
        best[r.shape] = max(best.get(r.shape, 0.0), r.model_steps_per_s)
        step[r.shape] = max(step.get(r.shape, 0.0), r.model_steps_per_s / r.group)
    return (tuple(sorted((_bench_flops(shape), rate) for shape, rate in best.items())),
            tuple(sorted((_bench_flops(shape), rate) for shape, rate in step.items())))


def group_steps_per_s(flops: float, group: int | None = None, table: RateTable | None = None,
                      graphs: bool = True) -> float:
    """Model-steps per second of a stacked group of `group` runs of `flops` FLOPs per step
    each (`Training.flops_per_step`) on the card of `table` (a `runs.rates.RateTable`, the
    built-in H200 table by default): the one home of a stacked group's rate, which `figure
    cost` (its engine column, `h200_steps_per_s`) and the slices' planner (`runs.planner.Planner`,
    for a shape its slice has not measured yet) both call, so they cannot disagree.

    The rule (the module docstring, point 2): per benchmarked shape, its best model-steps/s
    and its fastest group step, placed at the benchmark workload's FLOPs per step
    (`_bench_flops`); the FLOP/s at `flops` interpolated linearly in (log FLOPs per step, log
    FLOP/s) between those shapes and held at the end values outside, no faster than the
    smallest shape's model-steps/s (launch-bound), and with a `group`, no more than `group`
    times the fastest group step there (interpolated the same way). graphs: the rows of steps
    replayed as CUDA graphs count (as `figure cost` and a slice with --graphs on CUDA step);
    else the eager rows alone."""
    points, ceiling = _group_points(table if table is not None else H200, graphs)
    throughput = _log_interpolate([(f, f * r) for f, r in points], flops)
    rate = min(points[0][1], throughput / flops)
    if group is not None:
        rate = min(rate, group * _log_interpolate(ceiling, flops))
    return rate


def _log_interpolate(points, x: float) -> float:
    """y at x, linear in (log x, log y) between the points, held at the end values outside."""
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    for (xa, ya), (xb, yb) in zip(points, points[1:]):
        if xa <= x <= xb:
            t = (math.log(x) - math.log(xa)) / (math.log(xb) - math.log(xa))
            return math.exp((1 - t) * math.log(ya) + t * math.log(yb))
    raise AssertionError("unreachable: the points cover the range")


def h200_steps_per_s(flops: float, kind: str = "engine", group: int | None = None,
                     shape: tuple | None = None) -> float:
    """Model-steps per second on the H200 for a run of `flops` FLOPs per step (the module
    docstring, point 2): kind "engine", in a stacked `group` of such runs (`group_steps_per_s`;
    None: a full group); kind "train()", one model at a time (`one_model_steps_per_s`, of
    `shape` where the caller knows it)."""
    if kind == SINGLE_KIND:
        return one_model_steps_per_s(flops, shape)
    if kind != "engine":
        raise LengthgenError(f"unknown trainer {kind!r}; valid: engine, {SINGLE_KIND}")
    return group_steps_per_s(flops, group)


def _best_efficiency() -> float:
    """The highest fraction of its dense bf16 peak the H200 reached in the benchmark."""
    peak = rate_table()["cards"]["h200"]["dense_tflops"] * 1e12
    return max(f * r for f, r in measured_points("engine")) / peak


def t4_steps_per_s(flops: float, group: int | None = None, kind: str = "engine",
                   shape: tuple | None = None) -> float:
    """Model-steps per second on a T4 in fp32 (the module docstring, point 3)."""
    t4 = rate_table()["cards"]["t4"]["dense_tflops"] * 1e12
    seconds = max(1 / h200_steps_per_s(flops, kind, group, shape),
                  flops / (t4 * _best_efficiency()))
    return 1 / seconds


def _group_key(t: Training) -> tuple:
    """The engine stacks models (decoders, limit-style models) of one shape and batch whatever
    their tasks (vocabularies, position tables and lengths are padded: lengthgen.engine.stacked,
    lengthgen.engine.stacked_limit)."""
    return (t.shape, t.batch)


# ---- one figure's estimate ---------------------------------------------------------------
@dataclass
class Cost:
    figure_id: str
    trainings: list = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(t.count for t in self.trainings)

    @property
    def shapes(self) -> list[str]:
        # by size, ties by name (a set's order changes from one process to the next)
        return sorted({t.shape for t in self.trainings},
                      key=lambda s: (max(t.n_params for t in self.trainings if t.shape == s), s))

    @property
    def model_steps(self) -> int:
        return sum(t.model_steps for t in self.trainings)

    def groups(self) -> dict:
        """Runs per (shape, batch): those the engine can step together as one group (tasks,
        seeds and lengths may differ)."""
        out: dict = {}
        for t in self.trainings:
            out[_group_key(t)] = out.get(_group_key(t), 0) + t.count
        return out

    def minutes(self, card: str = "h200", kind: str = "engine") -> float:
        groups = self.groups()

        def rate(t):
            group = min(groups[_group_key(t)], MAX_GROUP)
            trainer = SINGLE_KIND if t.alone else kind   # a run trained alone: train()'s rate
            if card == "t4":
                return t4_steps_per_s(t.flops_per_step(), group, trainer, t.dims)
            return h200_steps_per_s(t.flops_per_step(), trainer, group, t.dims)
        return sum(t.model_steps / rate(t) + t.host_s for t in self.trainings) / 60

    @property
    def flops(self) -> float:
        """Training FLOPs of every run, by Training.flops_per_step."""
        return sum(t.model_steps * t.flops_per_step() for t in self.trainings)

    @property
    def fits(self) -> bool:
        return self.minutes() <= ALLOTMENT_MIN


def estimate(figure_id: str, trainings: list[Training]) -> Cost:
    for t in trainings:
        if t.count < 0 or t.steps < 0 or t.batch < 1 or t.tokens < 1 or t.n_params < 1:
            raise LengthgenError(f"{figure_id}: a training with no size ({t})")
    return Cost(figure_id, list(trainings))


def unique_trainings(costs: list[Cost]) -> list[Training]:
    """Every figure's trainings, those with a key shared by figures counted once."""
    seen, out = set(), []
    for cost in costs:
        for t in cost.trainings:
            if t.key and t.key in seen:
                continue
            seen.add(t.key)
            out.append(t)
    return out


def _minutes(value: float) -> str:
    if value >= 600:
        return f"{value / 60:,.0f} h"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def table(costs: list[Cost]) -> str:
    """The cost table (markdown), one row per figure id and a total (shared runs once)."""
    lines = ["| figure id | runs | shapes | model-steps | H200 min (engine) | "
             f"H200 min (train(), one at a time) | T4 min (fp32) | fits {ALLOTMENT_MIN:g} min |",
             "|---|---|---|---|---|---|---|---|"]
    for c in costs:
        shapes = ", ".join(c.shapes) if len(c.shapes) <= 3 else \
            f"{c.shapes[0]} ... {c.shapes[-1]} ({len(c.shapes)} shapes)"
        lines.append(f"| {c.figure_id} | {c.runs:,} | {shapes} | {c.model_steps:,} | "
                     f"{_minutes(c.minutes())} | {_minutes(c.minutes(kind=SINGLE_KIND))} | "
                     f"{_minutes(c.minutes('t4'))} | {'yes' if c.fits else 'no'} |")
    total = Cost("total (shared runs once)", unique_trainings(costs))
    lines.append(f"| **{total.figure_id}** | {total.runs:,} | | {total.model_steps:,} | "
                 f"{_minutes(total.minutes())} | {_minutes(total.minutes(kind=SINGLE_KIND))} | "
                 f"{_minutes(total.minutes('t4'))} | "
                 f"{allotments(total.minutes())} |")
    return "\n".join(lines)


def compare_table(pairs: list[tuple[Cost, Cost]]) -> str:
    """Book scale against paper scale, per figure (markdown): runs, the largest model's
    parameters, steps and tokens per run (the largest), the training FLOPs of all runs and the
    H200 engine minutes, with the paper / book ratio of the FLOPs."""
    lines = ["| figure id | scale | runs | largest model | steps per run | tokens per run | "
             "training FLOPs | H200 min (engine) |", "|---|---|---|---|---|---|---|---|"]
    for book, paper in pairs:
        for scale, c in (("book", book), ("paper", paper)):
            big = max(c.trainings, key=lambda t: t.n_params)
            lines.append(
                f"| {c.figure_id} | {scale} | {c.runs:,} | {big.shape}, {big.n_params:.2g} "
                f"parameters | {max(t.steps for t in c.trainings):,} | "
                f"{max(t.batch * t.tokens * t.steps for t in c.trainings):.2g} | "
                f"{c.flops:.2g} | {_minutes(c.minutes())} |")
        lines.append(f"| {paper.figure_id} | paper / book | {paper.runs / book.runs:.2g}x | | | | "
                     f"{paper.flops / book.flops:,.0f}x | |")
    return "\n".join(lines)


def allotments(minutes: float) -> str:
    """How many 15-minute allotments the minutes fill, at ALLOTMENT_MIN usable each."""
    n = max(1, math.ceil(minutes / ALLOTMENT_MIN))
    return f"{n:,} allotment{'s' if n > 1 else ''}"


def method() -> str:
    """The estimate's method in a few lines, with the numbers it uses (printed under the
    table)."""
    cards = rate_table()["cards"]
    points = ", ".join(f"{f:.2g} FLOPs/step -> {r:,.0f}/s" for f, r in measured_points())
    return (
        "How: FLOPs per step = (6 x parameters + 6 x layers x tokens x d_model) x tokens per "
        "batch (Kaplan et al. 2020); H200 model-steps/s interpolated in log(FLOPs per step) "
        f"between the engine benchmark's shapes of 2026-11-28 ({points}; bf16, batch 64, "
        "Len <= 50; lengthgen/data/h200_rates.json), no faster than the smallest shape's rate "
        "below it; T4 = the longer of the H200's step and the step's FLOPs at "
        f"{cards['t4']['dense_tflops']} TFLOPS ({cards['t4']['precision'].split(' (')[0]}) x "
        f"{_best_efficiency():.3f} (the best fraction of its {cards['h200']['dense_tflops']} "
        "TFLOPS bf16 peak the H200 reached); steps are the configs' caps (early stops, "
        "evaluation and sampling not counted); a figure's runs of one shape are one group, whose "
        "step is no faster than the fastest measured at that size (runs the engine trains alone "
        "go at train()'s rate, plus the host's drawing of their training words). "
        "benchmarks/check_cost.py "
        "sets it against a GPU run's clock. Fits: H200 engine minutes <= "
        f"{ALLOTMENT_MIN:g}.")
