"""The APE vs NoPE sweep's protocol (Huang et al. 2025, Fig. 1, 2, 4 and Tables 6-7): configs,
the ladder of settings, training, selection and seeds.

Not a figure itself. One run of the sweep is one (task, encoding) cell: a search over decoder
settings, then several seeds of the selected setting, each trained on Len in the task's
training range and tested on the three bins. One more run per task trains the random baseline
(a 2-layer MLP over the current token).

The training follows the authors' code (lacoco-lab/length_generalization,
algorithmic/language_modeling_train.py, read for this book), including what only the code says:
  - an evaluation every 3,000 steps on a fixed in-distribution set of 2,000 inputs, and an early
    stop at 100% there (so no model stops before step 3,000);
  - AdamW (weight decay 0.01), a learning rate decaying linearly to 0 over the whole budget
    (30,000 steps; 60,000 with 3,000 warm-up steps for the 12-layer setting), gradients clipped
    to norm 1 (the Hugging Face Trainer's default), batch 64, no dropout;
  - input and output embeddings tied, as in GPT2LMHeadModel (for the languages, whose output
    classes are sets of next symbols, input and output symbols are disjoint, so tying shares no
    row: the authors code both in one joint vocabulary);
  - the selection of the main text: settings in order of complexity (layers, then heads, then
    width, then the larger learning rate first), stopping at the first that is at 100% both in
    distribution and on Len 51-100; when none is, the appendix's rule: among the settings at
    100% in distribution, the best on Len 51-100 (ties to the simplest).

"Fit" means 100% on the first test bin (the in-distribution bin, 2,000 inputs), for a seed.
A cell's accuracy is the mean over the seeds that fit (the paper averages successful runs);
when no seed fits, over all seeds, and the cell is marked as never fitting. Every seed's
numbers are kept, so the spread is drawn and `figure data` lists them.

The `paper` config runs the paper's whole 54-setting grid, 30k steps, 5 successful seeds (up to
20 tries) and the extra 12-layer setting (lr 1e-4, then 3e-5 if that does not fit) when nothing
fits. The `book` config keeps the authors' training and cadence but caps each training at 6,000
steps (two evaluations). It tries a short ladder in order of complexity: 1L1H d16, 2L2H d64,
and the cell's own Table 6-7 setting, no further than that setting. For the ten languages per
encoding whose names our copy of those tables lost, the ladder is instead the rows that lost a
name (their own setting is one of them; none is the 1L1H d16 row, which names only Tomita 1
and 2). A rung below the last gives up at the 3,000-step evaluation when the in-distribution
accuracy is below 90% (such a run rarely fits by 6,000 steps); the last rung, the cell's own
setting, never does. Then 3 seeds of the selected setting. Table 6-7 settings with layers x
width above 512 (4L d256, 6L d128 and d256, the 12-layer setting; 6L d64 stays) are replaced in
the book by 4 layers, 4 heads, width 128 at the paper's learning rate.
Every training checkpoints into the cache (`cache_dir()`), so an interrupted sweep resumes
mid-cell; a cell's checkpoints are removed once its record is computed.
"""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lengthgen.config import cache_dir as library_cache
from lengthgen.errors import LengthgenError
from lengthgen.models.positions import DECODER_ENCODINGS, PositionalEncoding, values
from lengthgen.runs.execute import cache_fresh_after, preflight
from lengthgen.tasks import get_task
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.metadata import NONE_FOUND, YES, info

if TYPE_CHECKING:   # annotations only: reading records (`figure data`) imports no torch
    from lengthgen.train import TrainConfig

ENCODINGS = values(DECODER_ENCODINGS)   # the config spellings, "ape" and "nope"
DATA = Path(__file__).resolve().parents[3] / "data"   # lengthgen/data, beside the packages
LONGEST_BIN = "101-150"
HELDOUT_BIN = "51-100"
SELECTION_RULES = ("main_text", "first_fit", "best_heldout")



# What the `paper` config of the Fig. 1 panels takes from the paper and what it chooses
# (`figure cost --notes`; the contract's PAPER_SCALE).
PAPER_SCALE = (
    "From the paper (App.) and the authors' code: the grid of 54 settings (1, 2, 4 layers and "
    "heads, width 16, 64, 256, lr 1e-3 and 1e-4), 30,000 steps (more with warm-up where Tables "
    "6-7 say so), batch 64, AdamW with decay 0.01, linear decay, clipping at 1, tied "
    "embeddings, evaluation every 3,000 steps and a stop at 100%, 5 successful seeds, and the "
    "12-layer width-768 setting where nothing fits. Chosen here: at most 20 seed attempts, and "
    "the baseline MLP's training (30,000 steps at 1e-3). The cost counts the grid up to the "
    "cell's Table 6-7 setting (where the authors' search stopped) and 5 seeds of it; a "
    "language whose name our copy of the tables lost counts up to its encoding's most complex "
    "unnamed row; every training at its step cap.")


# ---- the search space ----------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """One decoder setting of the search. Stored in records as a list
    [layers, heads, d_model, lr] (+ [max_steps, warmup] where they differ from the config's)."""
    layers: int
    heads: int
    d_model: int
    lr: float
    max_steps: int | None = None  # None: the config's step cap
    warmup: int = 0

    @classmethod
    def of(cls, values) -> "Setting":
        if isinstance(values, Setting):
            return values
        return cls(*values)

    def as_list(self) -> list:
        tail = [] if self.max_steps is None and not self.warmup else [self.max_steps, self.warmup]
        return [self.layers, self.heads, self.d_model, self.lr, *tail]

    @property
    def complexity(self) -> tuple:
        """The authors' order: layers, then heads, then width, then lr 1e-3 before 1e-4."""
        return (self.layers, self.heads, self.d_model, -self.lr)

    def step_cap(self, default: int) -> int:
        """Its training's step cap: its own (a Table 6-7 budget) where it names one, else
        `default`, the config's "steps" (the one home of this rule)."""
        return self.max_steps or default

    def size(self) -> int:
        """Layers times width: what the book's CPU limit bounds (a step's cost grows with
        both)."""
        return self.layers * self.d_model

    def label(self) -> str:
        return f"{self.layers}L {self.heads}H d={self.d_model}, lr {self.lr:g}"


def paper_grid() -> list[list]:
    """[layers, heads, d_model, lr] for the paper's 54 settings, simplest first."""
    return [[layers, heads, d, lr] for layers in (1, 2, 4) for heads in (1, 2, 4)
            for d in (16, 64, 256) for lr in (1e-3, 1e-4)]


def configs(tasks: list[str], test_tasks: list[str]) -> dict:
    """The three scales of a Fig. 1 panel (the two panels differ only in their tasks)."""
    authors = {"batch_size": 64, "weight_decay": 0.01, "schedule": "linear",
               "schedule_steps": 30000, "grad_clip": 1.0, "tie_embeddings": True,
               "eval_every": 3000, "eval_samples": 2000, "samples_per_bin": 2000,
               "selection": "main_text", "heldout_bin": HELDOUT_BIN}
    book = {"tasks": list(tasks), **authors,
            "search": [[1, 1, 16, 1e-3], [2, 2, 64, 1e-3]], "paper_setting": True,
            "cpu_limit": {"layers_x_width": 512, "instead": [4, 4, 128]},
            "abandon_below": 0.9, "steps": 6000, "seeds": 3, "max_seed_attempts": 3, "seed_selection": False,
            "extra": None, "checkpoints": True,
            "baseline": {"steps": 1000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
    paper = {**book, "search": paper_grid(), "paper_setting": False, "cpu_limit": None,
             "abandon_below": None, "steps": 30000,
             "seeds": 5, "max_seed_attempts": 20, "seed_selection": True,
             "extra": {"setting": [12, 12, 768, 1e-4, 60000, 3000], "fallback_lrs": [3e-5]},
             "baseline": {"steps": 30000, "lr": 1e-3, "d_model": 64, "hidden": 256}}
    test = {**book, "tasks": list(test_tasks), "search": [[1, 1, 16, 1e-2]],
            "paper_setting": False, "steps": 30, "schedule_steps": 60, "eval_every": 10,
            "eval_samples": 32, "seeds": 2, "max_seed_attempts": 2, "samples_per_bin": 32,
            "checkpoints": False,
            "baseline": {"steps": 10, "lr": 1e-3, "d_model": 16, "hidden": 32}}
    return {"test": test, "book": book, "paper": paper}


def chunks_for(d_model: int) -> int:
    """Length-trimmed chunks per batch: a gain from width 64 on, a loss for tiny models
    (measured in benchmarks/bench_sweep.py)."""
    return 1 if d_model < 64 else 4


def paper_setting(task_id: str, encoding: str) -> Setting | None:
    """The setting the paper's Tables 6-7 list for a cell (None where our copy lost the name)."""
    for row in reference_hparams():
        if row["task"] == task_id and row["encoding"] == encoding:
            steps, warmup = int(row["max_steps"]), int(row["warmup"])
            return Setting(int(row["layers"]), int(row["heads"]), int(row["d_model"]),
                           float(row["lr"]), steps, warmup)
    return None


def unnamed_rows(encoding: str) -> list[Setting]:
    """The regular-language settings of the paper's table for `encoding` whose language names
    our copy lost (data/huang_table6_7_unnamed.csv), in order of complexity."""
    rows = [r for r in _data_rows("huang_table6_7_unnamed.csv") if r["encoding"] == encoding]
    settings = [Setting(int(r["layers"]), int(r["heads"]), int(r["d_model"]), float(r["lr"]),
                        int(r["max_steps"]), int(r["warmup"])) for r in rows]
    return sorted(settings, key=lambda s: s.complexity)


def _within_cpu_limit(setting: Setting, config: dict) -> Setting:
    """The setting at the config's step cap; above the CPU limit (layers x width), the limit's
    shape at the setting's learning rate."""
    limit = config.get("cpu_limit")
    if limit and setting.size() > limit["layers_x_width"]:
        layers, heads, d = limit["instead"]
        return Setting(layers, heads, d, setting.lr)
    if config.get("table_budget"):   # the table's own step budget and warm-up (GPU protocol)
        return setting
    return Setting(setting.layers, setting.heads, setting.d_model, setting.lr)


def ladder(task_id: str, encoding: str, config: dict) -> list[Setting]:
    """The settings a cell tries, in order of complexity.

    The config's search list; with "paper_setting", the cell's Table 6-7 setting ends it, and
    nothing more complex than that setting is tried (the paper's search had stopped there). A
    language whose name our copy of the tables lost tries the rows that lost a name instead:
    its own setting is one of them, and none of them is the 1L 1H d=16 row, which names only
    Tomita 1 and 2 (so the paper's search had gone past that setting for these languages).
    Settings are at the config's step cap; those above the "cpu_limit" become its shape at the
    paper's learning rate."""
    rungs = [Setting.of(s) for s in config["search"]]
    if config.get("paper_setting"):
        own = paper_setting(task_id, encoding)
        if own is not None:
            own = _within_cpu_limit(own, config)
            rungs = [r for r in rungs if r.complexity < own.complexity] + [own]
        elif info(task_id).kind == "language":
            rungs = [_within_cpu_limit(r, config) for r in unnamed_rows(encoding)]
    unique = {r.complexity: r for r in rungs}
    return [unique[k] for k in sorted(unique)]


def _train_config(config: dict, setting: Setting, seed: int,
                  may_abandon: bool = False) -> TrainConfig:
    from lengthgen.train import TrainConfig   # training is imported where it runs
    steps = setting.step_cap(config["steps"])
    horizon = config.get("schedule_steps")
    return TrainConfig.from_config(
        config, steps=steps, lr=setting.lr, warmup_steps=setting.warmup, stop_accuracy=1.0,
        seed=seed, schedule_steps=None if horizon is None else max(horizon, steps),
        abandon_below=config.get("abandon_below") if may_abandon else None,
        length_chunks=config.get("length_chunks") or chunks_for(setting.d_model))


def cache_dir() -> Path:
    """Checkpoints of unfinished trainings (never committed)."""
    return library_cache("huang-sweep")


@preflight
def check_cache_writable() -> None:
    """Before any run of a Fig. 1 panel: the checkpoint folder takes files (not hours later)."""
    from lengthgen.results import check_writable
    check_writable(cache_dir(), "the sweep's checkpoints (XDG_CACHE_HOME)")


def job_for(task, encoding: str, setting, seed: int, config: dict, may_abandon: bool = False,
            name: str = ""):
    """The one training of a cell's search or seeds as the engine's typed Job, the sweep's one
    spelling of a model's size: the decoder of the setting (embeddings tied where inputs and
    outputs share one vocabulary, as the authors' GPT2LMHeadModel ties them) and its
    TrainConfig (`_train_config`). `task`: a task id, or its Task where the caller has it. The
    CPU book sweep trains it with `train` (checkpointed: `train_setting`), the paper-budget
    sweep in stacked groups, the APE leads with one change each (`leads.engine_job`)."""
    from lengthgen.engine.jobs import Job
    setting = Setting.of(setting)
    job = Job(task, {}, _train_config(config, setting, seed, may_abandon), name=name)
    task = job.get_task()   # resolved once, for the job's whole life
    tie = bool(config.get("tie_embeddings")) and task.n_classes == len(task.vocab)
    job.model = {"n_layers": setting.layers, "n_heads": setting.heads,
                 "d_model": setting.d_model, "pe": encoding, "tied_embeddings": tie}
    return job


def _checkpoint(task_id, encoding, setting, seed, config, model_cfg, may_abandon) -> Path | None:
    """Where a training checkpoints: keyed by everything that changes its result, and by the
    checkpoints' format (a file of an older one is not found, and the training starts afresh)."""
    import torch

    from lengthgen.engine.checkpoints import RESUME_FORMAT
    if not config.get("checkpoints"):
        return None
    key = json.dumps({"task": task_id, "encoding": encoding, "setting": setting.as_list(),
                      "seed": seed, "may_abandon": may_abandon,
                      "config": {k: v for k, v in config.items() if k != "tasks"},
                      "model": model_cfg.to_dict(), "threads": torch.get_num_threads(),
                      "torch": torch.__version__, "format": RESUME_FORMAT}, sort_keys=True)
    return cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.pt"


def train_setting(task, encoding: str, setting, seed: int, config: dict, device,
                  used: list | None = None, may_abandon: bool = False) -> dict:
    """Train one decoder of a setting and score it on the task's three bins. `used` collects
    the checkpoint paths, for the cell to remove once its record is computed. With
    `may_abandon` (a rung below the ladder's last), the config's "abandon_below" applies."""
    from dataclasses import replace

    from lengthgen.train import train
    setting = Setting.of(setting)
    job = job_for(task, encoding, setting, seed, config, may_abandon)
    checkpoint = _checkpoint(task.id, encoding, setting, seed, config, job.decoder_config(),
                             may_abandon)
    if checkpoint is not None:
        fresh_after = cache_fresh_after()  # `figure run --force`: train again, resume nothing
        if fresh_after is not None and checkpoint.exists() \
                and checkpoint.stat().st_mtime < fresh_after:
            checkpoint.unlink()
        if used is not None:
            used.append(checkpoint)
        job.train = replace(job.train, checkpoint_path=str(checkpoint))
    _, model = job.build()
    result = train(model, task, job.train, device)
    return score_training(model, task, setting, seed, result, config, device)


# what score_training records of one training (and the readers of both sweeps index)
SCORE_KEYS = ("setting", "seed", "fit", "train_accuracy", "steps", "stopped_early", "abandoned",
              "train_wall_time_s", "n_params", "bins")


def scores_problem(record: dict) -> str | None:
    """What a record of these sweeps lacks that their readers index, or None (for
    `results.load_record(check=...)`): every scored training in its metrics (a dict with
    'bins', as score_training writes it) has all of SCORE_KEYS, a bool 'fit', and accuracies
    on exactly the test bins of the record's task. Ranges are checked for every record by
    `results.validate_record`."""
    try:
        task = get_task(record["task"])
    except (LengthgenError, TypeError):
        return f"task {record.get('task')!r} is not a task of this library"
    bins = {bin_name(*b) for b in task.test_bins}
    todo = [("metrics", record["metrics"])]
    while todo:
        where, value = todo.pop()
        if isinstance(value, list):
            todo += [(f"{where}[{k}]", v) for k, v in enumerate(value)]
        if not isinstance(value, dict):
            continue
        if "bins" in value:
            missing = [k for k in SCORE_KEYS if k not in value]
            if missing:
                return f"{where} lacks {', '.join(missing)}"
            if not isinstance(value["fit"], bool):
                return f"{where}.fit is {value['fit']!r}, not true or false"
            if set(value["bins"]) != bins:
                return (f"{where}.bins names {', '.join(sorted(value['bins']))}, not the test "
                        f"bins of {task.id} ({', '.join(sorted(bins))})")
        todo += [(f"{where}.{k}", v) for k, v in value.items() if k != "bins"]
    return None


def score_training(model, task, setting, seed: int, result, config: dict, device) -> dict:
    """A trained decoder's metrics, as both sweeps record them: the three test bins (seed +
    2 x EVAL_SEED_OFFSET), whether it fit (100% on the first bin) and its training."""
    from lengthgen.evaluate import evaluate
    from lengthgen.train import EVAL_SEED_OFFSET
    model = model.to(device)
    bins = {name: round(v["accuracy"], 5) for name, v in evaluate(
        model, task, None, config["samples_per_bin"], seed + 2 * EVAL_SEED_OFFSET,
        device).items()}
    first = bin_name(*task.test_bins[0])
    return {"setting": Setting.of(setting).as_list(), "seed": seed, "fit": bins[first] >= 1.0,
            "train_accuracy": result.final_accuracy, "steps": result.steps,
            "stopped_early": result.stopped_early, "abandoned": result.abandoned,
            "train_wall_time_s": round(result.wall_time_s, 2), "n_params": model.num_parameters(),
            "bins": bins}


def _heldout(run: dict, config: dict) -> float:
    return run["bins"][config["heldout_bin"]]


def select(tried: list[dict], config: dict) -> tuple[dict | None, str]:
    """The selected seed-0 run among those tried so far and the rule that picked it; None
    while the search should go on (main text: nothing at 100% up to Len 100 yet)."""
    rule = config["selection"]
    if rule not in SELECTION_RULES:
        raise LengthgenError(f"unknown selection rule {rule!r}; valid: "
                             f"{', '.join(SELECTION_RULES)}")
    last = tried[-1]
    if rule == "first_fit" and last["fit"]:
        return last, "first setting that fits"
    if rule == "main_text" and last["fit"] and _heldout(last, config) >= 1.0:
        return last, "first setting at 100% up to Len 100"
    return None, ""


def settle(tried: list[dict], config: dict) -> tuple[dict | None, str]:
    """After the whole ladder: the best on Len 51-100 among the settings that fit (ties to the
    simplest), or None when none fits."""
    fitting = [r for r in tried if r["fit"]]
    if not fitting:
        return None, ""
    best = max(_heldout(r, config) for r in fitting)
    return (next(r for r in fitting if _heldout(r, config) == best),
            "best on Len 51-100 among the settings that fit")


def run_cell(task_id: str, encoding: str, config: dict, device) -> dict:
    """The metrics of one (task, encoding) cell: search, seeds, per-seed and mean accuracy."""
    if encoding not in ENCODINGS:
        raise LengthgenError(f"unknown encoding {encoding!r}; valid: {', '.join(ENCODINGS)}")
    task = get_task(task_id)
    used: list[Path] = []
    tried, selected, rule = [], None, ""
    rungs = ladder(task_id, encoding, config)
    for i, setting in enumerate(rungs):
        # a cheap rung far from fitting gives up early; the last rung (the cell's own setting)
        # and the seeds of the selected setting always train to the fit or the cap
        tried.append(train_setting(task, encoding, setting, 0, config, device, used,
                                   may_abandon=i < len(rungs) - 1))
        selected, rule = select(tried, config)
        if selected is not None:
            break
    if selected is None:
        selected, rule = settle(tried, config)
    extra = None
    if selected is None and config.get("extra"):
        # the paper's extra setting when nothing in the grid fits, at a smaller lr if needed
        base = Setting.of(config["extra"]["setting"])
        for lr in [base.lr] + list(config["extra"].get("fallback_lrs", [])):
            extra = Setting(base.layers, base.heads, base.d_model, lr, base.max_steps,
                            base.warmup)
            tried.append(train_setting(task, encoding, extra, 0, config, device, used))
            if tried[-1]["fit"]:
                break
        selected, rule = tried[-1], "the paper's extra setting (no seed selection)"
    if selected is None:  # never fit: the setting closest to fitting, seeds all the same
        best = max(r["bins"][bin_name(*task.test_bins[0])] for r in tried)
        selected = next(r for r in tried if r["bins"][bin_name(*task.test_bins[0])] == best)
        rule = "none fits: the highest in-distribution accuracy"
    seeds = [selected]
    select_seeds = config.get("seed_selection") and extra is None
    seed = 1
    while seed < config["max_seed_attempts"] and (
            sum(r["fit"] for r in seeds) < config["seeds"] if select_seeds
            else len(seeds) < config["seeds"]):
        seeds.append(train_setting(task, encoding, selected["setting"], seed, config, device,
                                   used))
        seed += 1
    for path in used:
        Path(path).unlink(missing_ok=True)
    fitting = [r for r in seeds if r["fit"]]
    counted = (fitting[: config["seeds"]] if fitting else seeds)
    bins = list(seeds[0]["bins"])
    return {"task": task_id, "encoding": encoding, "fit": bool(fitting),
            "selected": selected["setting"], "rule": rule,
            "extra": None if extra is None else extra.as_list(),
            "ladder": [s.as_list() for s in rungs],
            "search": tried, "seeds": seeds, "n_used": len(counted),
            "n_successful": len(fitting),
            "accuracy": {b: round(sum(r["bins"][b] for r in counted) / len(counted), 5)
                         for b in bins}}


def baseline_job(task, config: dict):
    """The baseline MLP's one training as the engine's typed Job (kind "token-mlp"): the one
    spelling of its size (the config's "baseline" block), its own steps and rate; batch,
    decay, schedule and evaluation as the transformers'; nothing else of theirs (no clipping
    horizon, no giving up); seed 0 (its initial weights and data)."""
    from lengthgen.engine.jobs import Job
    from lengthgen.train import TrainConfig
    base = config["baseline"]
    cfg = TrainConfig.from_config(base, batch_size=config["batch_size"],
                                  weight_decay=config["weight_decay"], schedule=config["schedule"],
                                  eval_every=min(config["eval_every"], base["steps"]),
                                  eval_samples=config["eval_samples"], stop_accuracy=1.0, seed=0)
    return Job(task, {"d_model": base["d_model"], "hidden": base["hidden"]}, cfg,
               kind="token-mlp")


def run_baseline(task_id: str, config: dict, device) -> dict:
    """The 2-layer MLP over the current token, trained like the transformers (lr 1e-3)."""
    from lengthgen.evaluate import evaluate
    from lengthgen.train import EVAL_SEED_OFFSET, train
    run = baseline_job(task_id, config)
    task, model = run.build()
    result = train(model, task, run.train, device)
    scores = evaluate(model, task, None, config["samples_per_bin"], 2 * EVAL_SEED_OFFSET, device)
    return {"task": task_id, "encoding": "baseline", "steps": result.steps,
            "n_params": model.num_parameters(),
            "accuracy": {name: round(v["accuracy"], 5) for name, v in scores.items()}}


# ---- one figure's runs ---------------------------------------------------------------------
def estimated_cost(task_id: str, encoding: str, config: dict) -> float:
    """A rough relative cost of a cell (the ladder's multiply-adds per step times steps, seeds
    included), to start cheap cells first: a sweep cut short then has the most cells done."""
    task = get_task(task_id)
    tokens = task.max_tokens(task.train_range[1]) / 2
    total = 0.0
    rungs = ladder(task_id, encoding, config)
    for i, s in enumerate(rungs):
        per_token = s.layers * (12 * s.d_model ** 2 + 2 * tokens * s.d_model) + 3e4
        trainings = 1 + (config["seeds"] - 1 if i == len(rungs) - 1 else 0)
        total += trainings * per_token * tokens * s.step_cap(config["steps"])
    return total


def planned_settings(task_id: str, encoding: str, config: dict) -> list[tuple[Setting, int]]:
    """(setting, trainings) a cell plans at a config, for the cost estimate (`trainings`).
    The paper's whole grid (`paper` config): the authors searched in order of complexity and
    stopped at the cell's Table 6-7 setting, so every grid setting simpler than it trains once
    and it trains config["seeds"] times (5: as if every seed fits; the paper allows up to 20
    tries). Where our copy of the tables lost the name, the most complex unnamed row of the
    encoding stands for it (an upper bound: the cell's own row is one of them). A ladder
    (book and test configs): every rung once, the last config["seeds"] times."""
    seeds = config["seeds"]
    if config["search"] != paper_grid() or config.get("paper_setting"):
        rungs = ladder(task_id, encoding, config)
        return [(r, 1) for r in rungs[:-1]] + [(rungs[-1], seeds)]
    own = paper_setting(task_id, encoding)
    if own is None and info(task_id).kind == "language":
        own = max(unnamed_rows(encoding), key=lambda s: s.complexity)
    grid = [Setting.of(s) for s in config["search"]]
    if own is None:   # no row at all: the whole grid, its last setting with the seeds
        return [(s, 1) for s in grid[:-1]] + [(grid[-1], seeds)]
    return [(s, 1) for s in grid if s.complexity < own.complexity] + [(own, seeds)]


def trainings(config: dict) -> list:
    """The sweep's trainings at a config (`lengthgen.runs.cost`): each cell's planned settings
    at their step caps, and the baseline MLP per task. Keys name the cell, setting and steps,
    so figures that draw the same cells count them once."""
    from lengthgen.runs.cost import Training, count_parameters, job_training
    out = []
    for task_id in config["tasks"]:
        task, base = get_task(task_id), config["baseline"]
        for encoding in ENCODINGS:
            for setting, count in planned_settings(task_id, encoding, config):
                job = job_for(task, encoding, setting, 0, config)
                out.append(job_training(job, count, key=f"huang-sweep/{task_id}/{encoding}/"
                                        f"{setting.as_list()}/{job.train.steps}x{count}"))
        mlp = baseline_job(task, config)
        out.append(Training("token MLP", count_parameters(mlp.build_model), 0,
                            mlp.model_config().d_model, config["batch_size"],
                            task.max_tokens(task.train_range[1]), base["steps"],
                            key=f"huang-sweep/{task_id}/baseline/{base['steps']}"))
    return out


def cell_runs(config: dict) -> list[dict]:
    """A baseline run per task, then a run per (task, encoding), cheapest first."""
    runs = [{"name": f"{t}/baseline", "task": t, "encoding": "baseline", "seed": 0}
            for t in config["tasks"]]
    cells = [(t, e) for t in config["tasks"] for e in ENCODINGS]
    cells.sort(key=lambda c: estimated_cost(c[0], c[1], config))
    runs += [{"name": f"{t}/{e}", "task": t, "encoding": e, "seed": 0} for t, e in cells]
    return runs


def run_one(params: dict, config: dict, device) -> dict:
    if params["encoding"] == "baseline":
        return run_baseline(params["task"], config, device)
    return run_cell(params["task"], params["encoding"], config, device)


# ---- what the records say ------------------------------------------------------------------
def reference() -> dict:
    """{(task, encoding): {"bins": [three accuracies, shortest bin first], "baseline": acc}}
    from the authors' published numbers, as fractions. (The first bin starts at the task's
    shortest length, e.g. 3-50 for the interleaved majority.)"""
    out = {}
    for row in _data_rows("huang_fig1_reference.csv"):
        out[(row["task"], row["encoding"])] = {
            "bins": [float(row[k]) / 100 for k in ("1-50", "51-100", "101-150")],
            "baseline": float(row["baseline"]) / 100}
    return out


def _data_rows(name: str) -> list[dict]:
    """The rows of one of the package's data files (CSV; lines starting with # are its
    source notes)."""
    with open(DATA / name) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def reference_hparams() -> list[dict]:
    return _data_rows("huang_table6_7_reference.csv")


def predicted(task_id: str, encoding: str) -> str:
    """The C-RASP prediction: "yes", "no" or "none found" (APE: C-RASP[periodic,local];
    NoPE: C-RASP[])."""
    row = info(task_id)
    sees = PositionalEncoding.parse(encoding, DECODER_ENCODINGS).sees_positions
    return row.crasp_periodic_local if sees else row.crasp


# What a prediction rests on (huang2025formal). A "yes" is a theorem's: a C-RASP program compiles
# into a periodic, local Limit Transformer (Theorem 9; without positional relations, into one
# without positions, Corollary 18) and Theorem 7 guarantees the idealized learner. A "no" is a
# theorem's only where no periodic, local Limit Transformer exists at all: copying with repeats
# and addition, by Corollary 13. Elsewhere only C-RASP inexpressibility is proven (or, for "none
# found", nothing), and the paper says it is open whether C-RASP[periodic,local] is strictly
# smaller than those Limit Transformers (its App. A, question 2), so the failure prediction is
# the paper's empirical heuristic (same answer: "experimental results suggest that such an
# implication might hold in many cases").
THEOREM, HEURISTIC = "theorem", "heuristic"
NO_LIMIT_TRANSFORMER = ("copy_repeat", "addition")   # Corollary 13 (App. B.3, Corollary 20)


def prediction_basis(task_id: str, encoding: str) -> str:
    """What the cell's prediction rests on, as a table cell: "theorem (...)" naming the results,
    or "heuristic (...)": no C-RASP program exists (proven), but whether a periodic, local Limit
    Transformer does is open; or no program is known at all."""
    prediction = predicted(task_id, encoding)
    sees = PositionalEncoding.parse(encoding, DECODER_ENCODINGS).sees_positions
    if prediction == YES:
        return f"{THEOREM} (Thms. 9, 7)" if sees else f"{THEOREM} (Thm. 9, Cor. 18)"
    if task_id in NO_LIMIT_TRANSFORMER:
        return f"{THEOREM} (Cor. 13, Thm. 7)"
    if prediction == NONE_FOUND:
        return f"{HEURISTIC} (no program known)"
    return f"{HEURISTIC} (not in C-RASP)"
