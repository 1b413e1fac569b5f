"""Your own language: the book's central experiment (Huang et al. 2025, Fig. 1) on any C-RASP
program a reader writes.

The program defines a task (lengthgen.crasp.task: its verdict on every prefix, strings drawn
balanced toward half accepted). Its fragment gives C-RASP's prediction per encoding: a program in
C-RASP[] predicts that APE and NoPE both generalize; one that needs periodic or local relations
predicts it for APE and says nothing about NoPE. The predictions are only ever positive: a
negative one needs a proof that *no* program exists, as the book's chapters give for PARITY.

Then APE and NoPE decoders train on Len 1..50, several seeds each, as the engine's typed Jobs
through its one loop (`lengthgen.engine.jobs.train_jobs`; the seeds of one encoding train as
one stacked group), and are scored on Fig. 1's bins with Fig. 1's rule (a string counts only if
every position is right), beside the best constant predictor on the same strings. The outcome
per bin "agrees" with a prediction by the sweep's success rule (`analysis.succeeded`: at least
80% and 20 points above the baseline, or 99%), on the mean over the seeds that fit the training
bin at 100% (over all seeds when none does), as Fig. 1's cells are read.

`check_program` refuses, before any training, what the experiment cannot answer (see its
docstring); `run_try` trains and returns the record's fields; `draw` draws it like Fig. 1.
"""
import time

import numpy as np

from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.sweep.analysis import succeeded
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.metadata import NONE_FOUND, YES
from lengthgen.tasks.program import FIG1_BINS, TRAIN_RANGE, constant_baseline

RECORD_ID = "try"            # not a figure of the book: records go under --out, never results/
ENCODINGS = ("ape", "nope")
MAX_ALPHABET = 64            # the vocabulary limit of `try`'s model (symbols of a program)
MAX_LABEL_SECONDS = 2e-3     # interpreter time per string of length 150 (a 30-operation
#                              program: 0.01 ms in batches of 256 on the busy 2-core machine,
#                              0.02 ms in the check's batch of 16; benchmarks/bench_try_labels.py)
CONSTANT_SHARE = 0.99        # refuse a program whose verdict is this constant on the sample
CHECK_STRINGS = 1_000        # the balanced sample the constant check reads
TEST_SEED = 4242             # every model is scored on the same strings (and the baseline too)
NOTE = ("C-RASP gives only positive predictions: a program shows that a transformer can "
        "generalize; a negative prediction needs a proof that no program exists (as the book "
        "gives for PARITY).")

# The scales. "book": a 3-to-30-operation program in at most 3 minutes on 2 CPU cores (measured
# in the report); "test": seconds, for tests. The model is small on purpose: 2 layers
# let a NoPE decoder read positions off its causal attention and count in one head.
SCALES = {
    "book": {"model": {"n_layers": 2, "n_heads": 2, "d_model": 32},
             "train": {"steps": 1000, "batch_size": 32, "lr": 3e-3, "eval_every": 100,
                       "eval_samples": 256, "schedule": "linear", "warmup_steps": 50},
             "seeds": 3, "samples_per_bin": 500},
    # "paper": the paper's budget on a GPU (App. E.3: 30,000 steps at batch 64, evaluation every
    # 3,000 steps on 2,000 inputs, stop at 100%, linear decay; 2,000 test strings a bin). The
    # paper searches a grid per task and has no row for a reader's program, so this takes one
    # setting: the top of the grid the paper states (4 layers, 4 heads, width 256) at lr 1e-4.
    "paper": {"model": {"n_layers": 4, "n_heads": 4, "d_model": 256},
              "train": {"steps": 30000, "batch_size": 64, "lr": 1e-4, "eval_every": 3000,
                        "eval_samples": 2000, "schedule": "linear", "warmup_steps": 0},
              "seeds": 3, "samples_per_bin": 2000},
    "test": {"model": {"n_layers": 1, "n_heads": 1, "d_model": 16},
             "train": {"steps": 6, "batch_size": 16, "lr": 3e-3, "eval_every": 3,
                       "eval_samples": 16, "schedule": "constant", "warmup_steps": 0},
             "seeds": 3, "samples_per_bin": 24},
}


def predictions(program) -> dict:
    """C-RASP's prediction per encoding from the program's fragment: "yes" or "none found"."""
    plain = not (program.uses_periodic() or program.uses_local())
    return {"ape": YES, "nope": YES if plain else NONE_FOUND}


def prediction_lines(program) -> list[str]:
    fragment = program.fragment()
    said = {YES: "predicted to length-generalize",
            NONE_FOUND: "no prediction (the program needs positions NoPE does not see)"}
    pred = predictions(program)
    return [f"fragment: {fragment}",
            f"  APE : {said[pred['ape']]}  (C-RASP[periodic,local] -> APE)",
            f"  NoPE: {said[pred['nope']]}  (C-RASP[] -> NoPE)",
            NOTE]


def check_program(program, task, scale: str = "book", rng_seed: int = 0) -> dict:
    """Refuse, with the reason, what cannot be trained or read: an alphabet over the model's
    vocabulary limit, an interpreter slower than MAX_LABEL_SECONDS per string of length 150,
    and a verdict that is the same on CONSTANT_SHARE or more of a balanced sample (nothing to
    learn, or nothing to tell apart from the constant baseline). Returns what it measured."""
    if len(program.alphabet) > MAX_ALPHABET:
        raise LengthgenError(f"the alphabet has {len(program.alphabet)} symbols, over the "
                             f"{MAX_ALPHABET} of try's model vocabulary; use fewer symbols")
    rng = np.random.default_rng(rng_seed)
    longest = FIG1_BINS[-1][1]
    probe = rng.integers(0, len(program.alphabet), size=(16, longest))
    start = time.perf_counter()
    task.labels(probe)
    per_string = (time.perf_counter() - start) / len(probe)
    if per_string > MAX_LABEL_SECONDS:
        raise LengthgenError(f"the interpreter takes {1e3 * per_string:.2f} ms per string of "
                             f"length {longest} on this program ({len(program.ops):,} "
                             f"operations), over the limit of {1e3 * MAX_LABEL_SECONDS:g} ms; "
                             f"training would spend its time labelling: use a smaller program")
    lengths = rng.integers(1, longest + 1, size=CHECK_STRINGS if scale != "test" else 300)
    _, labels = task.draw(rng, lengths)
    accepted = float(labels[np.arange(len(lengths)), lengths].mean())
    if max(accepted, 1 - accepted) >= CONSTANT_SHARE:
        verdict = "accepts" if accepted >= 0.5 else "rejects"
        raise LengthgenError(f"the program {verdict} {100 * max(accepted, 1 - accepted):.1f}% of "
                             f"a balanced sample of {len(lengths):,} strings (lengths 1..{longest}, "
                             f"sampler {task.sampler}): its verdict is (nearly) constant, so a "
                             f"model would learn nothing a constant cannot say; refused before "
                             f"training")
    return {"label_seconds_per_string": per_string, "check_accepted_share": accepted}


def jobs(task, scale: str) -> list:
    """The engine's Jobs: every encoding x seed at this scale (early stop at 100% in
    distribution, the book's rule)."""
    from lengthgen.engine.jobs import Job
    from lengthgen.train import TrainConfig
    config = SCALES[scale]
    return [Job(task, {**config["model"], "pe": encoding},
                TrainConfig(**config["train"], seed=seed, stop_accuracy=1.0,
                            min_len=TRAIN_RANGE[0], max_len=TRAIN_RANGE[1]),
                name=f"{encoding}-s{seed}")
            for encoding in ENCODINGS for seed in range(config["seeds"])]


def gpu_estimate(task, scale: str):
    """What training every job of a scale would take on a GPU, by the book's estimate
    (`lengthgen.runs.cost`: FLOPs per step against the H200 engine benchmark of 2026-11-28, and
    a Colab T4 in fp32), as a `Cost`: `.minutes()` on the H200, `.minutes("t4")` on a T4.
    Steps are the cap: early stops make a run shorter."""
    from lengthgen.runs.cost import estimate, job_training
    return estimate("try", [job_training(job) for job in jobs(task, scale)])


def baselines(task, samples: int) -> dict:
    """Per bin: the best constant predictor and the accepted share, on the strings every model
    is scored on (the same seed and batches as `evaluate`)."""
    from lengthgen.evaluate import EVAL_BATCH_SIZE, bin_batches
    return {bin_name(lo, hi): constant_baseline(
                b for _, b in bin_batches(task, lo, hi, samples, TEST_SEED, EVAL_BATCH_SIZE))
            for lo, hi in task.test_bins}


def run_try(program, task, scale: str = "book", device="cpu", bar=None) -> dict:
    """Train and score; the record's metrics. bar: a tqdm bar over every encoding's steps
    (`total_steps`), told each step and where each group ends (early stops skip ahead)."""
    from lengthgen.engine.jobs import train_jobs
    from lengthgen.evaluate import evaluate
    config = SCALES[scale]
    todo = jobs(task, scale)
    outcomes = []
    for k, encoding in enumerate(ENCODINGS):   # one stacked group per encoding, named on the bar
        group = [j for j in todo if j.model["pe"] == encoding]
        if bar is not None:
            bar.set_description(f"{label(encoding)}, {len(group)} seeds")
        outcomes += train_jobs(group, device, sampler="host", progress=bar)
        if bar is not None:
            bar.update((k + 1) * config["train"]["steps"] - bar.n)
    if bar is not None:
        bar.set_description("scoring")
    base = baselines(task, config["samples_per_bin"])
    bins = [bin_name(lo, hi) for lo, hi in task.test_bins]
    result = {"encodings": {}, "baseline": {b: base[b]["accuracy"] for b in bins},
              # which constant is best: 1.0 "accepted", 0.0 "rejected" (a number, as every
              # value under a bin's name in a record is: results.validate_record)
              "baseline_accepts": {b: float(base[b]["constant"] == "accepted") for b in bins},
              "accepted_share": {b: base[b]["accepted_share"] for b in bins}}
    pred = predictions(program)
    for encoding in ENCODINGS:
        seeds = []
        for outcome in (o for o in outcomes if o.job.model["pe"] == encoding):
            scores = evaluate(outcome.model, task, None, config["samples_per_bin"], TEST_SEED,
                              device)
            seeds.append({"seed": outcome.job.seed, "steps": outcome.result.steps,
                          "stopped_early": outcome.result.stopped_early,
                          "train_seconds": round(outcome.result.wall_time_s, 3),
                          "accuracy": {b: scores[b]["accuracy"] for b in bins}})
        result["encodings"][encoding] = summarize(seeds, bins, result["baseline"], pred[encoding])
    return result


def total_steps(scale: str) -> int:
    """The progress bar's length: every encoding's group at its step cap."""
    return len(ENCODINGS) * SCALES[scale]["train"]["steps"]


def summarize(seeds: list[dict], bins: list[str], baseline: dict, predicted: str) -> dict:
    """Per bin: the seeds' range, the mean the cell is read on (over the seeds that fit the
    training bin, 100% there, else all), and whether it agrees with the prediction ("n/a" without one)."""
    fit = [s for s in seeds if s["accuracy"][bins[0]] >= 1.0]   # Fig. 1's "fit": 100%
    read = fit or seeds
    out = {"predicted": predicted, "seeds": seeds, "fit": len(fit), "bins": {}}
    for b in bins:
        values = [s["accuracy"][b] for s in seeds]
        mean = float(np.mean([s["accuracy"][b] for s in read]))
        ok = succeeded(mean, baseline[b])
        out["bins"][b] = {"min": min(values), "max": max(values), "mean_accuracy": mean,
                          "generalizes": ok,
                          "agrees": ("yes" if ok else "no") if predicted == YES else "n/a"}
    return out


def table_lines(result: dict) -> list[str]:
    """The per-bin table: seeds' range per encoding, the baseline, agreement."""
    bins = list(result["baseline"])
    head = (f"{'Len':>9s}  {'accepted':>8s}  {'baseline':>8s}  "
            + "  ".join(f"{label(encoding) + ' seeds':>15s}  {'mean':>5s}  {'agrees':>6s}"
                        for encoding in ENCODINGS))
    lines = [head]
    for b in bins:
        row = f"{b:>9s}  {100 * result['accepted_share'][b]:7.1f}%  " \
              f"{100 * result['baseline'][b]:7.1f}%  "
        cells = []
        for encoding in ENCODINGS:
            cell = result["encodings"][encoding]["bins"][b]
            cells.append(f"{100 * cell['min']:6.1f}-{100 * cell['max']:5.1f}%  "
                         f"{100 * cell['mean_accuracy']:4.0f}%  {cell['agrees']:>6s}")
        lines.append(row + "  ".join(cells))
    first = bins[0]
    if result["baseline"][first] > 0.9:
        lines.append(f"note: a constant verdict is right on {100 * result['baseline'][first]:.1f}%"
                     f" of the training bin's strings: a high score there says little")
    for encoding in ENCODINGS:
        enc = result["encodings"][encoding]
        if enc["fit"] == 0:
            lines.append(f"note: no {label(encoding)} seed fit Len {first} (100%): its row is the mean "
                         f"over all seeds, and says more about training than about "
                         f"generalization")
    lines.append("agrees: the mean over the seeds at 100% on Len 1-50 (all seeds if none is) at "
                 "least 80% and 20 points above the baseline, or 99%, as Fig. 1 reads a cell; "
                 "n/a: no prediction")
    return lines


def draw(result: dict, title: str):
    """Fig. 1's panels for one program: per encoding, bars per test bin (mean over the seeds
    read), the seeds' range, the constant baseline, and the prediction's mark."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen.experiments.huang.sweep.drawing import BIN_COLORS, MARK
    from lengthgen.models.positions import PositionalEncoding
    bins = list(result["baseline"])
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.4), sharey=True)
    width = 0.26
    for ax, encoding in zip(axes, ENCODINGS):
        enc = result["encodings"][encoding]
        for k, b in enumerate(bins):
            cell = enc["bins"][b]
            x = (k - 1) * width
            ax.bar(x, 100 * cell["mean_accuracy"], width, color=BIN_COLORS[k],
                   hatch=None if enc["fit"] else "//", edgecolor="white", label=f"Len {b}")
            ax.plot([x, x], [100 * cell["min"], 100 * cell["max"]], color="#d95f02", lw=1.3,
                    label="seeds: min to max" if k == 0 else None)
            ax.plot([x - width / 2, x + width / 2], [100 * result["baseline"][b]] * 2,
                    color="grey", ls=":", lw=1.4, label="constant baseline" if k == 0 else None)
        symbol, color = MARK[enc["predicted"]]
        ax.text(0, 104, symbol, ha="center", va="bottom", color=color, fontsize=12)
        ax.set_xticks([])
        ax.set_ylim(0, 115)
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_title(PositionalEncoding(encoding).label, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy % (every position right)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.text(0.01, 0.01, "Above each panel, C-RASP's prediction: ✓ a program exists, ? none "
             "(only positive predictions exist). Hatched: no seed fit Len 1-50.",
             fontsize=6.5, color="#444444")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def label(encoding: str) -> str:
    from lengthgen.models.positions import PositionalEncoding
    return PositionalEncoding(encoding).label
