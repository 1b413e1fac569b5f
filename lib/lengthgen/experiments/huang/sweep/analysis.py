"""The APE vs NoPE sweep's analysis: records to per-cell rows (fit, mean over the seeds that
fit, spread), agreement with C-RASP's prediction, the cells that differ from the paper, and
what giving up on hopeless runs saved."""
from lengthgen.experiments.huang.sweep.protocol import (ENCODINGS, LONGEST_BIN, Setting, predicted,
                                                        reference)
from lengthgen.experiments.spread import wilson_interval
from lengthgen.tasks import get_task
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.metadata import YES, info, language_ids


SUCCESS_ACCURACY = 0.8    # a cell length-generalizes if its [101,150] accuracy is at least this
SUCCESS_MARGIN = 0.2      # ... and this far above the random baseline
PERFECT = 0.99            # ... or this accurate (see succeeded())


def succeeded(accuracy: float, baseline: float, line: float | None = None) -> bool:
    """The rule the headline count uses: accuracy on [101,150] at least the success line (80%;
    `line` moves it), and either at least 20 points above the random baseline or essentially
    perfect (99%). The second clause matters where the current token alone determines the
    answer (Tomita 1 and 2: the baseline MLP is perfect too); the first keeps a 50% chance
    level from passing for success."""
    line = SUCCESS_ACCURACY if line is None else line
    return accuracy >= line and (accuracy - baseline >= SUCCESS_MARGIN or accuracy >= PERFECT)


LINES = (0.75, 0.8, 0.85)   # the success lines the chapter compares (the paper states none)


def agreement_by_line(rows: list[dict], lines=LINES) -> list[dict]:
    """The headline counts with the success line moved: per line, how many cells agree with
    the prediction (ours, all cells and those that fit; the paper's, on the same cells)."""
    out = []
    for line in lines:
        def ours(r):
            return succeeded(r["accuracy"][LONGEST_BIN], r["baseline"].get(LONGEST_BIN, 0.0),
                             line)

        def paper(r):
            return succeeded(r["paper"]["bins"][-1], r["paper"]["baseline"], line)
        with_paper = [r for r in rows if r.get("paper") is not None]
        fit = [r for r in rows if r["fit"]]
        out.append({"line": line, "cells": len(rows),
                    "ours": sum((r["predicted"] == YES) == ours(r) for r in rows),
                    "fit": len(fit),
                    "fit_agree": sum((r["predicted"] == YES) == ours(r) for r in fit),
                    "paper_cells": len(with_paper),
                    "paper": sum((r["predicted"] == YES) == paper(r) for r in with_paper)})
    return out


def _spread(seeds: list[dict], names: list[str]) -> dict:
    """Per bin: mean, min and max over all seeds."""
    out = {}
    for b in names:
        values = [s["bins"][b] for s in seeds]
        out[b] = {"mean": round(sum(values) / len(values), 5), "min": min(values),
                  "max": max(values)}
    return out


def bin_interval(accuracy: float, seeds: int, samples: int | None) -> tuple | None:
    """The 95% Wilson interval of a cell's mean accuracy on a bin, from its test strings alone:
    the mean is over `seeds` models, each tested on `samples` fresh strings of the bin (each
    seed draws its own), so it is k of seeds x samples. None where the record does not say how
    many strings a bin has. The spread over seeds is another uncertainty, shown beside it."""
    if not samples or not seeds:
        return None
    n = seeds * samples
    return wilson_interval(round(accuracy * n), n)


def uncertain(row: dict) -> bool:
    """Whether a fitting cell's verdict could flip within its interval on the longest bin: the
    success rule is monotone in accuracy, so it flips iff its ends disagree."""
    interval = row.get("interval")
    if not row["fit"] or interval is None:
        return False
    base = row["baseline"].get(LONGEST_BIN, 0.0)
    return succeeded(interval[0], base) != succeeded(interval[1], base)


def table(records: list[dict]) -> list[dict]:
    """One row per (task, encoding) with ours (mean over the seeds that fit, spread over all
    seeds), the paper's, the baselines, the prediction and whether the cell fits."""
    cells = {(r["metrics"]["task"], r["metrics"]["encoding"]): r["metrics"] for r in records}
    ref = reference()
    rows = []
    present = {r["metrics"]["task"] for r in records}
    order = records[0]["config"]["tasks"] if records else []  # the config's order, not A-Z
    samples = records[0]["config"].get("samples_per_bin") if records else None
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
            at_paper_level = sum(v >= paper["bins"][0] for v in first) \
                if paper is not None and _paper_short_of_fit(paper) else 0
            paper_level = at_paper_level > 0
            row = {"task": task_id, "encoding": encoding, "predicted": prediction,
                   "fit": seeds_fit > 0 or paper_level, "seeds_fit": seeds_fit,
                   "fit_at_paper_level": paper_level and seeds_fit == 0,
                   "seeds_at_paper_level": at_paper_level,
                   "selected": cell["selected"], "rule": cell.get("rule", ""),
                   "n_used": cell["n_used"], "n_seeds": len(seeds),
                   "seeds_pass": sum(succeeded(s["bins"][LONGEST_BIN], base_long)
                                     for s in seeds),
                   # the seeds the cell's mean is over: those that fit, or all when none did
                   "n_averaged": len(averaged(seeds)),
                   "accuracy": accuracy, "spread": _spread(seeds, names),
                   "per_seed": [{"seed": s["seed"], "fit": s["fit"], "steps": s.get("steps"),
                                 "bins": {k: s["bins"][k] for k in names}} for s in seeds],
                   "baseline": baseline,
                   "ours_success": succeeded(accuracy[LONGEST_BIN], base_long),
                   "interval": bin_interval(accuracy[LONGEST_BIN], cell["n_used"],
                                             samples),
                   "paper": paper}
            row["uncertain"] = uncertain(row)
            if paper is not None:
                row["paper_success"] = succeeded(paper["bins"][-1], paper["baseline"])
                row["paper_fit"] = paper["bins"][0] >= 1.0
            rows.append(row)
    return rows


def averaged(seeds: list[dict]) -> list[dict]:
    """The seeds a cell's mean is taken over: those that fit (the paper averages successful
    runs), or every seed when none fit (a cell that never fits is not a test, but its bars are
    still drawn)."""
    return [s for s in seeds if s["fit"]] or list(seeds)


def decided_by_mean(row: dict) -> str | None:
    """One rule for both flags, on the seeds the tables count ("seeds pass", all of them):
    "carried" where the cell passes the success rule by its mean while at most half of its
    seeds pass, "held down" where it fails by its mean while more than half of them pass; None
    where the mean and most seeds say the same."""
    most_pass = 2 * row["seeds_pass"] > row["n_seeds"]
    if row["ours_success"] and not most_pass:
        return "carried"
    if not row["ours_success"] and most_pass:
        return "held down"
    return None


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
            "never_fit_agree": sum(agrees(r, "ours_success") for r in rows if not r["fit"]),
            # fitting cells whose verdict the 95% interval of the longest bin leaves open
            "uncertain": [f"{r['task']}/{r['encoding']}" for r in rows if r.get("uncertain")],
            "predicted_yes": len(yes),
            # each cell in exactly one of: fit and succeeded, fit and failed, never fit
            "yes_succeeded": sum(r["ours_success"] for r in yes if r["fit"]),
            "yes_failed_fit": sum(not r["ours_success"] for r in yes if r["fit"]),
            "yes_never_fit": sum(not r["fit"] for r in yes),
            # an outcome the mean decides against most of the seeds it averages
            "mean_only": [f"{r['task']}/{r['encoding']}" for r in rows if r["fit"]
                          and decided_by_mean(r) == "carried"],
            "mean_held_down": [f"{r['task']}/{r['encoding']}" for r in rows if r["fit"]
                               and decided_by_mean(r) == "held down"],
            # cells that never fit and still "agree": predicted failures, and predicted
            # successes whose mean (over all seeds, none having fit) passes the rule
            "never_fit_agree_no": sum(not r["ours_success"] for r in no if not r["fit"]),
            "never_fit_agree_yes": [f"{r['task']}/{r['encoding']}" for r in yes
                                    if not r["fit"] and r["ours_success"]],
            "predicted_no": len(no),
            "no_failed_fit": sum(not r["ours_success"] for r in no if r["fit"]),
            "no_never_fit": sum(not r["fit"] for r in no),
            "no_failed": sum(not r["ours_success"] for r in no),
            "never_fit": [f"{r['task']}/{r['encoding']}" for r in rows if not r["fit"]],
            "disagree_ours": [f"{r['task']}/{r['encoding']}" for r in rows
                              if not agrees(r, "ours_success")],
            "disagree_paper": [f"{r['task']}/{r['encoding']}" for r in with_paper
                               if not agrees(r, "paper_success")]}


def paper_disagreements() -> list[dict]:
    """The cells, among all of the paper's published ones, where its own numbers disagree with
    C-RASP's prediction by the rule above (independent of this book's records)."""
    out = []
    for (task_id, encoding), ref in reference().items():
        success = succeeded(ref["bins"][-1], ref["baseline"])
        if (predicted(task_id, encoding) == YES) != success:
            out.append({"task": task_id, "encoding": encoding, "longest": ref["bins"][-1]})
    return out


def _paper_short_of_fit(ref: dict) -> bool:
    """The paper's own models stayed below 100% on Len 1-50 in this cell."""
    return ref["bins"][0] < 1.0


def paper_unfit() -> list[str]:
    """The cells ("task/encoding") where the paper's own models stayed below 100% on Len 1-50:
    there a seed "fits" when it reaches the paper's in-distribution number instead."""
    return [f"{task_id}/{encoding}" for (task_id, encoding), ref in reference().items()
            if _paper_short_of_fit(ref)]


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


def trainings(metrics: dict) -> list[dict]:
    """A cell's trainings, each once (the selected setting's first seed is in both the search
    and the seeds)."""
    unique = {}
    for run in metrics["search"] + metrics["seeds"]:
        unique.setdefault((tuple(run["setting"]), run["seed"]), run)
    return list(unique.values())


def compute_s(record: dict) -> float:
    """The run time a record stands for. A cell resumed after an interruption records only the
    wall time after the resume, while each training carries its time across the interruption
    (kept in its checkpoint): the larger of the record's time and its trainings' sum."""
    if record["metrics"]["encoding"] == "baseline":
        return record["wall_time_s"]
    trained = sum(run["train_wall_time_s"] for run in trainings(record["metrics"]))
    return max(record["wall_time_s"], trained)


def abandon_savings(records: list[dict]) -> dict:
    """What giving up below the threshold saved: the trainings that gave up, their recorded
    time, and the time they would have taken to the step cap at the same speed."""
    given_up, spent, saved = 0, 0.0, 0.0
    for record in records:
        metrics = record["metrics"]
        if metrics["encoding"] == "baseline":
            continue
        for run in trainings(metrics):
            if not run.get("abandoned"):
                continue
            cap = Setting.of(run["setting"]).step_cap(record["config"]["steps"])
            given_up += 1
            spent += run["train_wall_time_s"]
            saved += run["train_wall_time_s"] * (cap / run["steps"] - 1)
    return {"trainings": given_up, "spent_s": round(spent), "saved_s": round(saved)}


def percent(value):
    """A fraction in percent, as the figures draw it (a missing value stays None)."""
    return None if value in (None, "") else 100 * value


# ---- D_n: how deep the training words go ------------------------------------------------------
def bounded_dyck_counts(length: int, depth: int) -> int:
    """The number of Dyck-1 words of this length whose depth never exceeds `depth` (exact)."""
    paths = [1] + [0] * depth   # paths[d]: prefixes at depth d
    for _ in range(length):
        paths = [(paths[d - 1] if d > 0 else 0) + (paths[d + 1] if d < depth else 0)
                 for d in range(depth + 1)]
    return paths[0]


def full_depth_share(depth: int, lo: int, hi: int) -> float:
    """The share of training words of D_depth that reach depth `depth`, under the book's law
    (Len uniform over the lengths in [lo, hi] that have members, then a uniform member): a
    word of D_n that never reaches n is a word of D_(n-1). The authors' nested generator makes
    nearly every word reach n (the protocol table); this says how far the book's law is from
    that."""
    lengths = [n for n in range(lo, hi + 1) if bounded_dyck_counts(n, depth) > 0]
    shares = [1 - bounded_dyck_counts(n, depth - 1) / bounded_dyck_counts(n, depth)
              for n in lengths]
    return sum(shares) / len(shares)


# Fig. 4 (huang-fig4-starfree): the two groups it compares, and its rows
STARFREE_GROUPS = ("star-free", "not star-free")


def starfree_points(records) -> list[dict]:
    """One row per (language, encoding, source): whether it is star-free, its accuracy on the
    longest bin in percent (ours: the mean over the seeds that fit, with the lowest and highest
    seed; the paper's: its number), whether the cell fit, and the mean accuracy of its group
    (star-free or not) for that encoding and source, which the figure draws as a red line."""
    rows = [{"task": p["task"], "language": info(p["task"]).name,
             "group": STARFREE_GROUPS[0] if info(p["task"]).star_free else STARFREE_GROUPS[1],
             "encoding": p["encoding"], "source": p["source"],
             "accuracy_percent": percent(p["accuracy"]),
             "seed_min_percent": percent(p["seed_min"]),
             "seed_max_percent": percent(p["seed_max"]), "fit": p["fit"]}
            for p in longest_bin_points(table(records))]
    for row in rows:
        same = [r["accuracy_percent"] for r in rows if (r["group"], r["encoding"], r["source"])
                == (row["group"], row["encoding"], row["source"])]
        row["group_mean_percent"] = sum(same) / len(same)
    return rows


def starfree_group_means(records) -> dict:
    """{(encoding, source, group): mean accuracy % on Len 101-150} over the cells drawn."""
    out = {}
    for row in starfree_points(records):
        out[(row["encoding"], row["source"], row["group"])] = row["group_mean_percent"]
    return out


def starfree_group_counts(records, encoding: str) -> str:
    """How many languages of each group the means are over, for one encoding: the cells this
    book's sweep has run out of the panel's (the paper's means are taken on the same cells),
    e.g. "11 of 11 star-free and 5 of 6 not star-free languages"."""
    drawn = {p["task"] for p in starfree_points(records)
             if p["encoding"] == encoding and p["source"] == "ours"}
    parts = []
    for group in STARFREE_GROUPS:
        every = [t for t in records[0]["config"]["tasks"] if t in language_ids()   # the panel's
                 and info(t).star_free == (group == STARFREE_GROUPS[0])]          # languages
        parts.append(f"{sum(t in drawn for t in every)} of {len(every)} {group}")
    return " and ".join(parts) + " languages"
