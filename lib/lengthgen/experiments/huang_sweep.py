"""Shared by Huang et al. (2025) Fig. 1, 2, 4 and Tables 6-7: the APE vs NoPE sweep.

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
width above 512 (4L d256, 6 and 12 layers) are replaced in the book by 4 layers, 4 heads,
width 128 at the paper's learning rate.
Every training checkpoints into the cache (`cache_dir()`), so an interrupted sweep resumes
mid-cell; a cell's checkpoints are removed once its record is computed.
"""
import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from lengthgen.config import cache_dir as library_cache
from lengthgen.errors import LengthgenError
from lengthgen.evaluate import bin_name, evaluate
from lengthgen.experiments.runner import cache_fresh_after, preflight
from lengthgen.models.token_mlp import TokenMLP, TokenMLPConfig
from lengthgen.tasks import get_task
from lengthgen.tasks.metadata import YES, info
from lengthgen.train import EVAL_SEED_OFFSET, TrainConfig, decoder_for_task, train

ENCODINGS = ("ape", "nope")
DATA = Path(__file__).resolve().parents[1] / "data"
SUCCESS_ACCURACY = 0.8    # a cell length-generalizes if its [101,150] accuracy is at least this
SUCCESS_MARGIN = 0.2      # ... and this far above the random baseline
PERFECT = 0.99            # ... or this accurate (see succeeded())
LONGEST_BIN = "101-150"
HELDOUT_BIN = "51-100"
SELECTION_RULES = ("main_text", "first_fit", "best_heldout")


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
    with open(DATA / "huang_table6_7_unnamed.csv") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                if r["encoding"] == encoding]
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


def _train_config(config: dict, setting: Setting, seed: int, checkpoint: str | None,
                  may_abandon: bool = False) -> TrainConfig:
    steps = setting.max_steps or config["steps"]
    horizon = config.get("schedule_steps")
    return TrainConfig(steps=steps, batch_size=config["batch_size"], lr=setting.lr,
                       weight_decay=config["weight_decay"], warmup_steps=setting.warmup,
                       schedule=config["schedule"], eval_every=config["eval_every"],
                       eval_samples=config["eval_samples"], stop_accuracy=1.0, seed=seed,
                       grad_clip=config.get("grad_clip", 1.0),
                       schedule_steps=None if horizon is None else max(horizon, steps),
                       abandon_below=config.get("abandon_below") if may_abandon else None,
                       length_chunks=chunks_for(setting.d_model), checkpoint_path=checkpoint)


def cache_dir() -> Path:
    """Checkpoints of unfinished trainings (never committed)."""
    return library_cache("huang-sweep")


@preflight
def check_cache_writable() -> None:
    """Before any run of a Fig. 1 panel: the checkpoint folder takes files (not hours later)."""
    from lengthgen.results import check_writable
    check_writable(cache_dir(), "the sweep's checkpoints (XDG_CACHE_HOME)")


def _checkpoint(task_id, encoding, setting, seed, config, model, may_abandon) -> Path | None:
    """Where a training checkpoints: keyed by everything that changes its result."""
    if not config.get("checkpoints"):
        return None
    key = json.dumps({"task": task_id, "encoding": encoding, "setting": setting.as_list(),
                      "seed": seed, "may_abandon": may_abandon,
                      "config": {k: v for k, v in config.items() if k != "tasks"},
                      "model": model.cfg.to_dict(), "threads": torch.get_num_threads(),
                      "torch": torch.__version__}, sort_keys=True)
    return cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.pt"


def train_setting(task, encoding: str, setting, seed: int, config: dict, device,
                  used: list | None = None, may_abandon: bool = False) -> dict:
    """Train one decoder of a setting and score it on the task's three bins. `used` collects
    the checkpoint paths, for the cell to remove once its record is computed. With
    `may_abandon` (a rung below the ladder's last), the config's "abandon_below" applies."""
    setting = Setting.of(setting)
    tie = bool(config.get("tie_embeddings")) and task.n_classes == len(task.vocab)
    model = decoder_for_task(task, seed=seed, n_layers=setting.layers, n_heads=setting.heads,
                             d_model=setting.d_model, pe=encoding, tied_embeddings=tie)
    checkpoint = _checkpoint(task.id, encoding, setting, seed, config, model, may_abandon)
    if checkpoint is not None:
        fresh_after = cache_fresh_after()  # `figure run --force`: train again, resume nothing
        if fresh_after is not None and checkpoint.exists() \
                and checkpoint.stat().st_mtime < fresh_after:
            checkpoint.unlink()
        if used is not None:
            used.append(checkpoint)
    cfg = _train_config(config, setting, seed, None if checkpoint is None else str(checkpoint),
                        may_abandon)
    result = train(model, task, cfg, device)
    bins = {name: round(v["accuracy"], 5) for name, v in evaluate(
        model, task, None, config["samples_per_bin"], seed + 2 * EVAL_SEED_OFFSET,
        device).items()}
    first = bin_name(*task.test_bins[0])
    return {"setting": setting.as_list(), "seed": seed, "fit": bins[first] >= 1.0,
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


def run_baseline(task_id: str, config: dict, device) -> dict:
    """The 2-layer MLP over the current token, trained like the transformers (lr 1e-3)."""
    task = get_task(task_id)
    base = config["baseline"]
    cfg = TrainConfig(steps=base["steps"], batch_size=config["batch_size"], lr=base["lr"],
                      weight_decay=config["weight_decay"], schedule=config["schedule"],
                      eval_every=min(config["eval_every"], base["steps"]),
                      eval_samples=config["eval_samples"], stop_accuracy=1.0, seed=0)
    torch.manual_seed(0)  # the baseline's initial weights
    model = TokenMLP(TokenMLPConfig(len(task.vocab), task.n_classes, base["d_model"],
                                    base["hidden"]))
    result = train(model, task, cfg, device)
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
        total += trainings * per_token * tokens * (s.max_steps or config["steps"])
    return total


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
    with open(DATA / "huang_fig1_reference.csv") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            out[(row["task"], row["encoding"])] = {
                "bins": [float(row[k]) / 100 for k in ("1-50", "51-100", "101-150")],
                "baseline": float(row["baseline"]) / 100}
    return out


def reference_hparams() -> list[dict]:
    with open(DATA / "huang_table6_7_reference.csv") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def predicted(task_id: str, encoding: str) -> str:
    """The C-RASP prediction: "yes", "no" or "none found" (APE: C-RASP[periodic,local];
    NoPE: C-RASP[])."""
    row = info(task_id)
    return row.crasp_periodic_local if encoding == "ape" else row.crasp


def succeeded(accuracy: float, baseline: float) -> bool:
    """The rule the headline count uses: accuracy on [101,150] at least 80%, and either at
    least 20 points above the random baseline or essentially perfect (99%). The second clause
    matters where the current token alone determines the answer (Tomita 1 and 2: the baseline
    MLP is perfect too); the first keeps a 50% chance level from passing for success."""
    return accuracy >= SUCCESS_ACCURACY and (accuracy - baseline >= SUCCESS_MARGIN
                                             or accuracy >= PERFECT)


def _spread(seeds: list[dict], names: list[str]) -> dict:
    """Per bin: mean, min and max over all seeds."""
    out = {}
    for b in names:
        values = [s["bins"][b] for s in seeds]
        out[b] = {"mean": round(sum(values) / len(values), 5), "min": min(values),
                  "max": max(values)}
    return out


def table(records: list[dict]) -> list[dict]:
    """One row per (task, encoding) with ours (mean over the seeds that fit, spread over all
    seeds), the paper's, the baselines, the prediction and whether the cell fits."""
    cells = {(r["metrics"]["task"], r["metrics"]["encoding"]): r["metrics"] for r in records}
    ref = reference()
    rows = []
    present = {r["metrics"]["task"] for r in records}
    order = records[0]["config"]["tasks"] if records else []  # the config's order, not A-Z
    tasks = [t for t in order if t in present] + sorted(present - set(order))
    for task_id in tasks:
        # records store dicts with sorted keys: put the bins back in length order
        names = [bin_name(lo, hi) for lo, hi in get_task(task_id).test_bins]
        baseline = cells.get((task_id, "baseline"), {}).get("accuracy", {})
        baseline = {k: baseline[k] for k in names if k in baseline}
        for encoding in ENCODINGS:
            cell = cells.get((task_id, encoding))
            if cell is None:
                continue
            paper = ref.get((task_id, encoding))
            prediction = predicted(task_id, encoding)
            seeds = cell["seeds"]
            base_long = baseline.get(LONGEST_BIN, 0.0)
            accuracy = {k: cell["accuracy"][k] for k in names}
            first = [s["bins"][names[0]] for s in seeds]
            seeds_fit = sum(v >= 1.0 for v in first)
            # the done-when of the book's issue: a seed at 100% in distribution, or at the
            # paper's own in-distribution accuracy where the paper did not reach 100% either
            paper_level = paper is not None and paper["bins"][0] < 1.0 \
                and max(first) >= paper["bins"][0]
            row = {"task": task_id, "encoding": encoding, "predicted": prediction,
                   "fit": seeds_fit > 0 or paper_level, "seeds_fit": seeds_fit,
                   "fit_at_paper_level": paper_level and seeds_fit == 0,
                   "selected": cell["selected"], "rule": cell.get("rule", ""),
                   "n_used": cell["n_used"], "n_seeds": len(seeds),
                   "seeds_pass": sum(succeeded(s["bins"][LONGEST_BIN], base_long)
                                     for s in seeds),
                   "accuracy": accuracy, "spread": _spread(seeds, names),
                   "per_seed": [{"seed": s["seed"], "fit": s["fit"],
                                 "bins": {k: s["bins"][k] for k in names}} for s in seeds],
                   "baseline": baseline,
                   "ours_success": succeeded(accuracy[LONGEST_BIN], base_long),
                   "paper": paper}
            if paper is not None:
                row["paper_success"] = succeeded(paper["bins"][-1], paper["baseline"])
                row["paper_fit"] = paper["bins"][0] >= 1.0
            rows.append(row)
    return rows


def agreement(rows: list[dict]) -> dict:
    """How many cells the C-RASP prediction gets right, for our numbers and the paper's, over
    all cells and over the cells that fit their training range (a cell that never fits tests
    nothing about length generalization). "none found" counts as a prediction of failure."""
    def agrees(row, key):
        return (row["predicted"] == YES) == row[key]
    with_paper = [r for r in rows if r.get("paper") is not None]
    fit = [r for r in rows if r["fit"]]
    paper_fit = [r for r in with_paper if r["paper_fit"]]
    yes = [r for r in rows if r["predicted"] == YES]
    no = [r for r in rows if r["predicted"] != YES]
    return {"cells": len(rows), "ours": sum(agrees(r, "ours_success") for r in rows),
            "paper": sum(agrees(r, "paper_success") for r in with_paper),
            "paper_cells": len(with_paper),
            "ours_fit": len(fit), "ours_fit_agree": sum(agrees(r, "ours_success") for r in fit),
            "paper_fit": len(paper_fit),
            "paper_fit_agree": sum(agrees(r, "paper_success") for r in paper_fit),
            "predicted_yes": len(yes), "yes_succeeded": sum(r["ours_success"] for r in yes),
            "yes_never_fit": sum(not r["fit"] for r in yes),
            "predicted_no": len(no),
            "no_failed_fit": sum(not r["ours_success"] for r in no if r["fit"]),
            "no_never_fit": sum(not r["fit"] for r in no),
            "no_failed": sum(not r["ours_success"] for r in no),
            "never_fit": [f"{r['task']}/{r['encoding']}" for r in rows if not r["fit"]],
            "disagree_ours": [f"{r['task']}/{r['encoding']}" for r in rows
                              if not agrees(r, "ours_success")],
            "disagree_paper": [f"{r['task']}/{r['encoding']}" for r in with_paper
                               if not agrees(r, "paper_success")]}


def tidy(rows: list[dict]) -> list[dict]:
    """`figure data` rows, in percent as the figure draws them: one per (cell, seed, bin) with
    the seed's accuracy, whether it fit, the cell's mean (over the seeds that fit), the
    baseline and the paper's number."""
    def pc(value):
        return "" if value in ("", None) else round(100 * value, 3)
    out = []
    for row in rows:
        for i, name in enumerate(row["accuracy"]):
            for seed in row["per_seed"]:
                out.append({"task": row["task"], "encoding": row["encoding"], "bin": name,
                            "seed": seed["seed"], "accuracy_pct": pc(seed["bins"][name]),
                            "seed_fit": seed["fit"], "cell_mean_pct": pc(row["accuracy"][name]),
                            "cell_fit": row["fit"], "predicted": row["predicted"],
                            "setting": " ".join(map(str, row["selected"])),
                            "baseline_pct": pc(row["baseline"].get(name, "")),
                            "paper_pct": "" if row["paper"] is None
                            else pc(row["paper"]["bins"][i])})
    return out


# ---- drawing -------------------------------------------------------------------------------
BIN_COLORS = ("#9ecae1", "#4292c6", "#08306b")
MARK = {"yes": ("✓", "#1a9850"), "no": ("✗", "#d73027"), "none found": ("?", "#777777")}


def draw_fig1(rows: list[dict], title: str):
    """Bars: our accuracy per test bin (mean over the seeds that fit), with a line from the
    lowest to the highest seed; black ticks: the paper's; grey dashes: the random baseline;
    above each task the C-RASP prediction (✓ program, ✗ proven impossible, ? none found).
    Hatched bars: no seed fit the training range. One panel per encoding."""
    import matplotlib.pyplot as plt
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    fig, axes = plt.subplots(2, 1, figsize=(max(7.0, 0.55 * len(tasks) + 2), 6.4), sharex=True)
    width = 0.26
    for ax, encoding in zip(axes, ENCODINGS):
        for i, task_id in enumerate(tasks):
            row = next((r for r in rows if r["task"] == task_id and r["encoding"] == encoding),
                       None)
            if row is None:
                continue
            for k, (name, value) in enumerate(row["accuracy"].items()):
                x = i + (k - 1) * width
                ax.bar(x, 100 * value, width, color=BIN_COLORS[k],
                       hatch=None if row["fit"] else "//", edgecolor="white",
                       label=f"Len {name}" if i == 0 else None)
                lo, hi = row["spread"][name]["min"], row["spread"][name]["max"]
                ax.plot([x, x], [100 * lo, 100 * hi], color="#d95f02", lw=1.3,
                        label="seeds: min to max" if i == 0 and k == 0 else None)
                if row["paper"] is not None:
                    ax.plot([x - width / 2, x + width / 2], [100 * row["paper"]["bins"][k]] * 2,
                            color="black", lw=1.6,
                            label="paper" if i == 0 and k == 0 else None)
            base = row["baseline"].get(LONGEST_BIN)
            if base is not None:
                ax.plot([i - 1.5 * width, i + 1.5 * width], [100 * base] * 2, color="grey",
                        ls=":", lw=1.4, label="random baseline" if i == 0 else None)
            symbol, color = MARK[row["predicted"]]
            ax.text(i, 104, symbol, ha="center", va="bottom", color=color, fontsize=11)
        ax.set_ylim(0, 115)
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_ylabel(f"{encoding.upper()}: accuracy %")
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(range(len(tasks)))
    axes[-1].set_xticklabels([info(t).name for t in tasks], rotation=40, ha="right")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    axes[0].set_title(title, fontsize=10)
    fig.text(0.01, 0.005, "Above each task, C-RASP's prediction: ✓ a program exists, ✗ proven "
             "impossible, ? none found. Hatched bars: no seed fit the training range.",
             fontsize=7.5, color="#444444")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def longest_bin_points(rows: list[dict]) -> list[dict]:
    """One point per (task, encoding, source): [101,150] accuracy, ours and the paper's; ours
    with the lowest and highest seed and whether the cell fit."""
    points = []
    for row in rows:
        spread = row["spread"][LONGEST_BIN]
        points.append({"task": row["task"], "encoding": row["encoding"], "source": "ours",
                       "accuracy": row["accuracy"][LONGEST_BIN], "seed_min": spread["min"],
                       "seed_max": spread["max"], "fit": row["fit"]})
        if row["paper"] is not None:
            points.append({"task": row["task"], "encoding": row["encoding"],
                           "source": "paper", "accuracy": row["paper"]["bins"][-1],
                           "seed_min": "", "seed_max": "", "fit": row["paper_fit"]})
    return points


# ---- for the chapter -----------------------------------------------------------------------
def pct(value) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def protocol_rows(book: dict, paper: dict) -> list[list[str]]:
    """The authors' protocol (from the paper and their code), this book's `paper` config and
    its `book` config, setting by setting: every difference is a row."""
    def shapes(config):
        grid = config["search"]
        if len(grid) > 6:
            return f"{len(grid)} settings: layers {{1,2,4}} x heads {{1,2,4}} x d {{16,64,256}} " \
                   f"x lr {{1e-3,1e-4}}"
        text = "; ".join(Setting.of(s).label() for s in grid)
        if config.get("paper_setting"):
            limit = config["cpu_limit"]
            layers, heads, d = limit["instead"]
            text += (f"; then the cell's own Table 6-7 setting (nothing more complex); a "
                     f"language whose name our copy lost tries instead the rows that lost a "
                     f"name ({len(unnamed_rows('ape'))} for APE, {len(unnamed_rows('nope'))} "
                     f"for NoPE); a setting with layers x width above "
                     f"{limit['layers_x_width']} becomes {layers}L {heads}H d={d} at the "
                     f"paper's lr")
        return text
    extra = paper["extra"]["setting"]
    return [
        ["settings searched", "the 54-setting grid (code: the same loop)", shapes(paper),
         shapes(book)],
        ["selection", "first in order of complexity at 100% in distribution and on Len 51-100; "
         "else the best on Len 51-100 among those at 100% in distribution",
         "the same", "the same, over the ladder"],
        ["steps (at most)", "30,000 (60,000 for 12 layers)", f"{paper['steps']:,} (60,000 for "
         f"12 layers)", f"{book['steps']:,}"],
        ["evaluation, early stop", "every 3,000 steps on 2,000 in-distribution inputs; stop at "
         "100%", f"every {paper['eval_every']:,} steps on {paper['eval_samples']:,}; stop at "
         f"100%", f"every {book['eval_every']:,} steps on {book['eval_samples']:,}; stop at "
         f"100%; a rung below the ladder's last gives up below {book['abandon_below']:.0%} "
         f"before the cap"],
        ["learning-rate schedule", "linear to 0 over the whole budget (30k; 60k with 3k warm-up "
         "for 12 layers)", f"linear to 0 over {paper['schedule_steps']:,} (60k with 3k warm-up "
         f"for 12 layers)", f"linear to 0 over {book['schedule_steps']:,}: at the cap the rate "
         f"is still {1 - book['steps'] / book['schedule_steps']:.0%} of its peak"],
        ["optimizer", "AdamW, wd 0.01, batch 64, gradient norm clipped to 1 (the Trainer's "
         "default), no dropout",
         f"AdamW, wd {paper['weight_decay']}, batch {paper['batch_size']}, clip "
         f"{paper['grad_clip']:g}, no dropout", f"AdamW, wd {book['weight_decay']}, batch "
         f"{book['batch_size']}, clip {book['grad_clip']:g}, no dropout"],
        ["embeddings", "GPT-2's: input and output tied", "tied (languages: disjoint symbols)",
         "tied (languages: disjoint symbols)"],
        ["seeds averaged", "5 successful (none selected for 12 layers)",
         f"{paper['seeds']} successful of up to {paper['max_seed_attempts']}",
         f"all {book['seeds']} seeds shown; the mean is over those that fit"],
        ["nothing fits", "12L 12H d=768, lr 1e-4 (3e-5 if that fails), 60k steps",
         f"{extra[0]}L {extra[1]}H d={extra[2]}, lr {extra[3]:g} then "
         f"{', '.join(f'{v:g}' for v in paper['extra']['fallback_lrs'])}",
         "the setting closest to fitting, 3 seeds, drawn hatched and counted apart"],
        ["test samples per bin", "2,000", f"{paper['samples_per_bin']:,}",
         f"{book['samples_per_bin']:,}"],
        ["APE offsets", "uniform, so every position row is trained; 0 at test", "the same",
         "the same"],
        ["data", "the languages' own code trains on datasets of 10,000 strings, batch 16-32, "
         "by epochs (Tomita on Len 1-100); the paper's text states the protocol above",
         "the paper's text: fresh batches, Len 1-50", "the same as the paper config"],
        ["baseline MLP steps", "30,000 (trained like the transformers)",
         f"{paper['baseline']['steps']:,}", f"{book['baseline']['steps']:,}"],
    ]


PROTOCOL_HEADER = ["", "the authors (paper, App. E.3, and their code)", "this book's paper "
                   "config", "this book's book config (what the figures show)"]


def cell_rows(rows: list[dict]) -> list[list[str]]:
    """Per cell: prediction, ours per bin (mean), the lowest-highest seed on the longest bin,
    the paper's per bin, baseline, seeds that fit and pass, and the outcome by the rule."""
    out = []
    for r in rows:
        ours = " / ".join(pct(v) for v in r["accuracy"].values())
        spread = r["spread"][LONGEST_BIN]
        paper = "" if r["paper"] is None else " / ".join(pct(v) for v in r["paper"]["bins"])
        if not r["fit"]:
            verdict = "never fit (not a test)"
        else:
            verdict = "agrees" if (r["predicted"] == YES) == r["ours_success"] else "DISAGREES"
        fit = f"{r['seeds_fit']} of {r['n_seeds']}"
        if r["fit_at_paper_level"]:
            fit += " (at the paper's level)"
        out.append([info(r["task"]).name, r["encoding"].upper(), r["predicted"],
                    Setting.of(r["selected"]).label(), ours,
                    f"{pct(spread['min'])}-{pct(spread['max'])}", paper,
                    pct(r["baseline"].get(LONGEST_BIN)), fit,
                    f"{r['seeds_pass']} of {r['n_seeds']}", verdict])
    return out


CELL_HEADER = ["task", "PE", "C-RASP predicts", "selected setting", "ours % (3 bins, mean)",
               "seeds % (101-150)", "paper % (3 bins)", "baseline % (101-150)", "seeds fit",
               "seeds pass", "ours vs prediction"]


def differences(rows: list[dict], threshold: float = 0.2) -> list[dict]:
    """Cells where our longest-bin accuracy differs from the paper's by more than threshold."""
    out = []
    for r in rows:
        if r["paper"] is None:
            continue
        delta = r["accuracy"][LONGEST_BIN] - r["paper"]["bins"][-1]
        if abs(delta) > threshold:
            out.append({"task": r["task"], "encoding": r["encoding"],
                        "ours": r["accuracy"][LONGEST_BIN], "paper": r["paper"]["bins"][-1],
                        "fit": r["fit"], "selected": r["selected"]})
    return out


# ---- sentences for the chapter (numbers computed from the records, never typed) ------------
def cell_names(cells: list[str]) -> str:
    """"tomita4/ape" -> "Tomita 4 (APE)", joined; "none" for an empty list."""
    if not cells:
        return "none"
    names = []
    for cell in cells:
        task_id, encoding = cell.split("/")
        names.append(f"{info(task_id).name} ({encoding.upper()})")
    return ", ".join(names)


def headline(rows: list[dict]) -> dict[str, str]:
    """The chapter's headline as glue-able strings: agreement, cells that fit and agreement
    among them, ours and the paper's on the same cells, and the cells behind the counts."""
    a = agreement(rows)
    fit_disagree = [f"{r['task']}/{r['encoding']}" for r in rows
                    if r["fit"] and (r["predicted"] == YES) != r["ours_success"]]
    return {
        "cells": str(a["cells"]), "agree": str(a["ours"]), "paper-agree": str(a["paper"]),
        "paper-cells": str(a["paper_cells"]), "fit": str(a["ours_fit"]),
        "fit-agree": str(a["ours_fit_agree"]), "paper-fit": str(a["paper_fit"]),
        "paper-fit-agree": str(a["paper_fit_agree"]),
        "yes": str(a["predicted_yes"]), "yes-succeeded": str(a["yes_succeeded"]),
        "yes-never-fit": str(a["yes_never_fit"]), "no": str(a["predicted_no"]),
        "no-failed-fit": str(a["no_failed_fit"]), "no-never-fit": str(a["no_never_fit"]),
        "never-fit": cell_names(a["never_fit"]),
        "fit-disagree": cell_names(fit_disagree),
        "paper-disagree": cell_names(a["disagree_paper"]),
    }


def headline_rows(rows: list[dict]) -> list[list[str]]:
    """The three headline numbers side by side, ours and the paper's, on the same cells."""
    a = agreement(rows)
    return [["prediction agrees with the outcome (all cells)", f"{a['ours']} of {a['cells']}",
             f"{a['paper']} of {a['paper_cells']}"],
            ["cells that fit their training range", f"{a['ours_fit']} of {a['cells']}",
             f"{a['paper_fit']} of {a['paper_cells']}"],
            ["prediction agrees, among the cells that fit",
             f"{a['ours_fit_agree']} of {a['ours_fit']}",
             f"{a['paper_fit_agree']} of {a['paper_fit']}"]]


def sweep_status(records: list[dict], configs_by_figure: dict[str, dict]) -> str:
    """One sentence on how much of the sweep the page draws: cells with records out of the
    registered ones, and the recorded compute."""
    cells = [r for r in records if r["metrics"]["encoding"] != "baseline"]
    registered = sum(2 * len(c["tasks"]) for c in configs_by_figure.values())
    hours = sum(r["wall_time_s"] for r in records) / 3600
    text = (f"{len(cells)} of the {registered} cells have records ({hours:.1f} hours of "
            f"recorded run time, one torch thread per run, baselines included; on a machine "
            f"shared with other work that is more than the CPU time)")
    if len(cells) < registered:
        text += ("; the sweep is run in batches over several sessions and this page shows the "
                 "cells done so far, cheapest first, so the missing ones are the costliest")
    return text


def cell_text(rows: list[dict], task_id: str, encoding: str) -> str:
    """A cell's longest-bin accuracy as prose: mean over the seeds that fit, the lowest and
    highest seed, and "never fit" where no seed fit; "not run yet" without a record."""
    row = next((r for r in rows if r["task"] == task_id and r["encoding"] == encoding), None)
    if row is None:
        return "not run yet"
    spread = row["spread"][LONGEST_BIN]
    text = (f"{pct(row['accuracy'][LONGEST_BIN])}% (seeds {pct(spread['min'])}-"
            f"{pct(spread['max'])}%)")
    return text if row["fit"] else text + ", never fitting its training range"


def abandon_savings(records: list[dict]) -> dict:
    """What giving up below the threshold saved: the trainings that gave up, their recorded
    time, and the time they would have taken to the step cap at the same speed."""
    given_up, spent, saved = 0, 0.0, 0.0
    for record in records:
        metrics = record["metrics"]
        if metrics["encoding"] == "baseline":
            continue
        seen = set()
        for run in metrics["search"] + metrics["seeds"]:
            key = (tuple(run["setting"]), run["seed"])
            if key in seen or not run.get("abandoned"):
                continue
            seen.add(key)
            cap = Setting.of(run["setting"]).max_steps or record["config"]["steps"]
            given_up += 1
            spent += run["train_wall_time_s"]
            saved += run["train_wall_time_s"] * (cap / run["steps"] - 1)
    return {"trainings": given_up, "spent_s": round(spent), "saved_s": round(saved)}
