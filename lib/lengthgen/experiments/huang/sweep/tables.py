"""The APE vs NoPE sweep's chapter tables and sentences: the protocol side by side, the cells,
the headline."""
from lengthgen.errors import LengthgenError
from lengthgen.experiments.huang.sweep.analysis import (PERFECT, agreement, agreement_by_line,
                                                        compute_s,
                                                        decided_by_mean, paper_disagreements,
                                                        paper_unfit)
from lengthgen.experiments.huang.sweep.protocol import (ENCODINGS, LONGEST_BIN, Setting, ladder,
                                                        THEOREM, prediction_basis, reference,
                                                        unnamed_rows)
from lengthgen.experiments.prose import cell_pct
from lengthgen.models.positions import PositionalEncoding
from lengthgen.tasks.metadata import YES, info


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
        ["APE offsets", "algorithmic code: uniform in [0, table - length], so every position "
         "row is trained; languages' code: a shift uniform in [0, n/2) with a table of n = twice "
         "the longest sequence; 0 at test",
         "the algorithmic code's scheme for every task, 0 at test", "the same"],
        ["data", "the languages' own code trains on datasets of 10,000 strings, batch 16-32, "
         "by epochs (Tomita on Len 1-100); the paper's text states the protocol above",
         "the paper's text: fresh batches, Len 1-50", "the same as the paper config"],
        ["D_n words", "Bhattamishra et al.'s nested generator (each level about 3/4 of the "
         "remaining length, so nearly every word reaches depth n), in sets of distinct words; "
         "the released D_3, D_4 and D_12 sets span Len 2-100",
         "uniform among the members of a uniform Len, as for every language (drawn fresh, the "
         "nested generator repeats a few dozen words at Len <= 50)", "the same"],
        ["baseline MLP steps", "30,000 (trained like the transformers)",
         f"{paper['baseline']['steps']:,}", f"{book['baseline']['steps']:,}"],
    ]


def protocol_numbers(books: list[dict], paper: dict) -> dict[str, str]:
    """The protocol's numbers that the chapter's prose states, as glue-able strings, from the
    configs themselves (so the prose cannot drift from what ran): the book's step cap and the
    paper's, when and below what a lower rung gives up, the longest ladder of any cell of the
    `books` panels against the paper's grid, the CPU limit's shape, the seeds, and the cells
    where the paper's own models stayed below 100% in distribution.

    Feeds: book/ape_vs_nope.ipynb, {numref}`tab-huang-protocol` (and the prose that states the
    protocol)"""
    book = books[0]
    for other in books[1:]:
        shared = ("steps", "eval_every", "abandon_below", "cpu_limit", "seeds")
        if any(other[k] != book[k] for k in shared):
            raise LengthgenError("the panels' book configs differ in a protocol value the "
                                 "prose states once")
    layers, _, d = book["cpu_limit"]["instead"]
    longest = max(len(ladder(task_id, encoding, config)) for config in books
                  for task_id in config["tasks"] for encoding in ENCODINGS)
    return {"huang-p-cap": f"{book['steps']:,}", "huang-p-paper-cap": f"{paper['steps']:,}",
            "huang-p-give-up-at": f"{book['eval_every']:,}",
            "huang-p-give-up-below": f"{book['abandon_below']:.0%}",
            "huang-p-ladder": str(longest), "huang-p-paper-grid": str(len(paper["search"])),
            "huang-p-cpu-limit": f"{layers} layers of width {d}",
            "huang-p-seeds": str(book["seeds"]), "huang-p-paper-seeds": str(paper["seeds"]),
            "huang-p-paper-unfit": cell_names(paper_unfit())}


PROTOCOL_HEADER = ["", "the authors (paper, App. E.3, and their code)", "this book's paper "
                   "config", "this book's book config (what the figures show)"]


def cell_rows(rows: list[dict]) -> list[list[str]]:
    """Per cell: prediction, ours per bin (mean), its 95% Wilson interval on the longest bin
    (`analysis.bin_interval`), the lowest-highest seed there, the paper's per bin, baseline,
    seeds that fit and pass, and the outcome by the rule ("uncertain" where the interval's ends
    give different outcomes)."""
    out = []
    for r in rows:
        ours = " / ".join(cell_pct(v) for v in r["accuracy"].values())
        spread = r["spread"][LONGEST_BIN]
        paper = "" if r["paper"] is None else " / ".join(cell_pct(v) for v in r["paper"]["bins"])
        verdict = verdict_text(r)
        interval = r.get("interval")
        interval = "" if interval is None else f"{cell_pct(interval[0])}-{cell_pct(interval[1])}"
        fit = f"{r['seeds_fit']} of {r['n_seeds']}"
        if r.get("seeds_at_paper_level"):   # the paper's own model stayed below 100% here
            fit += f" ({r['seeds_at_paper_level']} at the paper's level)"
        out.append([info(r["task"]).name, PositionalEncoding(r["encoding"]).label, r["predicted"],
                    prediction_basis(r["task"], r["encoding"]),
                    Setting.of(r["selected"]).label(), ours, interval,
                    f"{cell_pct(spread['min'])}-{cell_pct(spread['max'])}", paper,
                    cell_pct(r["baseline"].get(LONGEST_BIN)), fit,
                    f"{r['seeds_pass']} of {r['n_seeds']}", verdict])
    return out


def verdict_text(r: dict) -> str:
    """A cell's outcome against the prediction, flagged where its mean decides against most of
    its seeds (`analysis.decided_by_mean`, one rule for both directions), and where its 95%
    Wilson interval on Len 101-150 straddles the success line."""
    if not r["fit"]:
        return "never fit (not a test)"
    verdict = "agrees" if (r["predicted"] == YES) == r["ours_success"] else "DISAGREES"
    flag = decided_by_mean(r)
    verdict = verdict if flag is None else f"{verdict} ({flag} by the mean)"
    return verdict + (" (uncertain at 95%)" if r.get("uncertain") else "")


CELL_HEADER = ["task", "PE", "C-RASP predicts", "prediction rests on", "selected setting",
               "ours % (3 bins, mean)", "ours 95% Wilson interval (101-150)",
               "seeds % (101-150)", "paper % (3 bins)", "baseline % (101-150)", "seeds fit",
               "seeds pass", "ours vs prediction"]


def cell_names(cells: list[str]) -> str:
    """"tomita4/ape" -> "Tomita 4 (APE)", joined; "none" for an empty list."""
    if not cells:
        return "none"
    names = []
    for cell in cells:
        task_id, encoding = cell.split("/")
        names.append(f"{info(task_id).name} ({PositionalEncoding(encoding).label})")
    return ", ".join(names)


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


def cell_text(rows: list[dict], task_id: str, encoding: str) -> str:
    """A cell's longest-bin accuracy as prose: mean over the seeds that fit, the lowest and
    highest seed, and "never fit" where no seed fit; "not run yet" without a record."""
    row = next((r for r in rows if r["task"] == task_id and r["encoding"] == encoding), None)
    if row is None:
        return "not run yet"
    spread = row["spread"][LONGEST_BIN]
    text = (f"{cell_pct(row['accuracy'][LONGEST_BIN])}% (seeds {cell_pct(spread['min'])}-"
            f"{cell_pct(spread['max'])}%)")
    return text if row["fit"] else text + ", never fitting its training range"


def headline(rows: list[dict]) -> dict[str, str]:
    """The chapter's headline as glue-able strings: agreement, cells that fit and agreement
    among them, ours and the paper's on the same cells, and the cells behind the counts.

    Feeds: book/ape_vs_nope.ipynb, {numref}`tab-huang-headline` (and the prose around it)"""
    a = agreement(rows)
    fit_disagree = [f"{r['task']}/{r['encoding']}" for r in rows
                    if r["fit"] and (r["predicted"] == YES) != r["ours_success"]]
    return {
        "huang-h-cells": str(a["cells"]), "huang-h-agree": str(a["ours"]),
        "huang-h-paper-agree": str(a["paper"]), "huang-h-paper-cells": str(a["paper_cells"]),
        "huang-h-fit": str(a["ours_fit"]), "huang-h-fit-agree": str(a["ours_fit_agree"]),
        "huang-h-paper-fit": str(a["paper_fit"]),
        "huang-h-paper-fit-agree": str(a["paper_fit_agree"]),
        "huang-h-yes": str(a["predicted_yes"]), "huang-h-yes-succeeded": str(a["yes_succeeded"]),
        "huang-h-yes-failed-fit": str(a["yes_failed_fit"]),
        "huang-h-never-fit-agree": str(a["never_fit_agree"]),
        "huang-h-mean-only": cell_names(a["mean_only"]),
        "huang-h-mean-held-down": cell_names(a["mean_held_down"]),
        "huang-h-never-fit-agree-no": str(a["never_fit_agree_no"]),
        "huang-h-never-fit-agree-yes-n": str(len(a["never_fit_agree_yes"])),
        "huang-h-never-fit-agree-yes": cell_names(a["never_fit_agree_yes"]),
        "huang-h-yes-never-fit": str(a["yes_never_fit"]), "huang-h-no": str(a["predicted_no"]),
        "huang-h-no-failed-fit": str(a["no_failed_fit"]),
        "huang-h-no-never-fit": str(a["no_never_fit"]),
        "huang-h-no-theorem": str(sum(prediction_basis(r["task"], r["encoding"]).startswith(
            THEOREM) for r in rows if r["predicted"] != YES)),
        "huang-h-never-fit": cell_names(a["never_fit"]),
        "huang-h-fit-disagree": cell_names(fit_disagree),
        "huang-h-paper-disagree": cell_names(a["disagree_paper"]),
    }


def perfect_baseline(rows: list[dict]) -> str:
    """The tasks whose random baseline (the MLP over the current token) is essentially perfect
    on Len 101-150 in this book's records, by name: where the rule's second clause matters."""
    names = list(dict.fromkeys(info(r["task"]).name for r in rows
                               if r["baseline"].get(LONGEST_BIN, 0.0) >= PERFECT))
    return ", ".join(names) or "none"


def paper_overall() -> dict[str, str]:
    """The paper's own numbers against the prediction over all its cells, as glue-able
    strings: how many cells, and each disagreement with its accuracy on Len 101-150.

    Feeds: book/ape_vs_nope.ipynb, {numref}`tab-huang-headline` (the prose after it)"""
    wrong = paper_disagreements()
    text = "; ".join(f"{cell_names([d['task'] + '/' + d['encoding']])}, at "
                     f"{cell_pct(d['longest'])}% on Len 101-150" for d in wrong)
    return {"huang-h-paper-all-cells": str(len(reference())),
            "huang-h-paper-all-disagree-n": str(len(wrong)),
            "huang-h-paper-all-disagree": text or "none"}


def sweep_status(records: list[dict], configs_by_figure: dict[str, dict]) -> str:
    """One sentence on how much of the sweep the page draws: cells with records out of the
    registered ones, the recorded compute, and the cells still missing, by name."""
    cells = [r for r in records if r["metrics"]["encoding"] != "baseline"]
    done = {(r["metrics"]["task"], r["metrics"]["encoding"]) for r in cells}
    missing = [f"{task_id}/{encoding}" for c in configs_by_figure.values()
               for task_id in c["tasks"] for encoding in ENCODINGS
               if (task_id, encoding) not in done]
    registered = sum(len(c["tasks"]) * len(ENCODINGS) for c in configs_by_figure.values())
    hours = sum(compute_s(r) for r in records) / 3600
    wall = sum(r["wall_time_s"] for r in records) / 3600
    text = (f"{len(cells)} of the {registered} cells have records ({hours:.1f} hours of run "
            f"time, one torch thread per run, baselines included, counting each training's "
            f"time before an interruption; the figures' captions sum only the records' own "
            f"wall time, {wall:.1f} hours, which leaves out the time before a cell was "
            f"interrupted and resumed; on a machine shared with other work that is more "
            f"than the CPU time)")
    if missing:
        text += ("; the sweep is run in batches over several sessions and this page shows the "
                 "cells done so far, cheapest first, so the missing ones are the costliest: "
                 + cell_names(missing))
    return text


HEADLINE_HEADER = ["", "this book", "the paper's numbers, same cells"]
DIFFERENCES_HEADER = ["task", "PE", "ours % (101-150)", "paper % (101-150)", "fit", "setting"]


def differences_rows(diffs: list[dict]) -> list[list[str]]:
    """The cells that differ from the paper (`analysis.differences`), one table row each."""
    return [[info(d["task"]).name, PositionalEncoding(d["encoding"]).label, cell_pct(d["ours"]),
             cell_pct(d["paper"]), "yes" if d["fit"] else "never",
             Setting.of(d["selected"]).label()]
            for d in diffs] or [["none", "", "", "", "", ""]]


def abandoned_text(saved: dict) -> str:
    """One phrase on what giving up on hopeless runs saved (`analysis.abandon_savings`)."""
    return (f"{saved['trainings']} trainings gave up at their first evaluation, which saved "
            f"about {saved['saved_s'] / 3600:.1f} hours of run time of the "
            f"{(saved['spent_s'] + saved['saved_s']) / 3600:.1f} they would have taken")


# ---- the paper's budget on a GPU (huang.sweep.budget) ---------------------------------------
BUDGET_HEADER = ["task", "PE", "C-RASP predicts", "prediction rests on",
                 "selected setting (step budget; step each seed stopped at)",
                 "GPU, paper budget % (3 bins, mean)", "seeds % (101-150)", "seeds fit",
                 "CPU book % (101-150)", "paper % (3 bins)", "GPU outcome vs prediction"]


def budget_rows(rows: list[dict], book_rows: list[dict], steps: int) -> list[list[str]]:
    """Per complete paper-budget cell: the GPU run beside the CPU book run and the paper.
    `steps`: the budget of a setting that names none (the config's)."""
    book = {(r["task"], r["encoding"]): r for r in book_rows}
    out = []
    for r in rows:
        setting = Setting.of(r["selected"])
        ours = " / ".join(cell_pct(v) for v in r["accuracy"].values())
        spread = r["spread"][LONGEST_BIN]
        other = book.get((r["task"], r["encoding"]))
        if other is None:
            cpu = "not run"
        else:
            cpu = cell_pct(other["accuracy"][LONGEST_BIN]) + ("" if other["fit"] else " (never fit)")
        paper = "" if r["paper"] is None else " / ".join(cell_pct(v) for v in r["paper"]["bins"])
        stopped = ", ".join("?" if s.get("steps") is None else f"{s['steps']:,}"
                            for s in r["per_seed"])
        label = (f"{setting.label()} (budget {setting.step_cap(steps):,}; seeds stopped at "
                 f"{stopped})")
        out.append([info(r["task"]).name, PositionalEncoding(r["encoding"]).label,
                    r["predicted"], prediction_basis(r["task"], r["encoding"]), label, ours, f"{cell_pct(spread['min'])}-{cell_pct(spread['max'])}",
                    f"{r['seeds_fit']} of {r['n_seeds']}", cpu, paper, verdict_text(r)])
    return out


def budget_agreement(rows: list[dict], book_rows: list[dict]) -> str:
    """The paper-budget agreement with its scope, split by prediction: how many of the complete
    cells agree, of the predicted successes and of the predicted failures, how many of each
    fit (a cell that never fits tests nothing), and how many of them already agreed (and fit)
    in the CPU book runs."""
    a = agreement(rows)
    book = {(r["task"], r["encoding"]): r for r in book_rows}

    def agrees(r):
        return (r["predicted"] == YES) == r["ours_success"]

    def agreed_on_cpu(r):
        other = book.get((r["task"], r["encoding"]))
        return other is not None and other["fit"] and agrees(other)

    def side(cells, one, many):
        return (f"{sum(agrees(r) for r in cells)} of the {len(cells)} "
                f"{one if len(cells) == 1 else many} ({sum(r['fit'] for r in cells)} fit)")
    yes = [r for r in rows if r["predicted"] == YES]
    no = [r for r in rows if r["predicted"] != YES]
    cpu = sum(agreed_on_cpu(r) for r in rows)
    return (f"{a['ours']} of {a['cells']} complete cells: "
            f"{side(yes, 'predicted success', 'predicted successes')} and "
            f"{side(no, 'predicted failure', 'predicted failures')}; {cpu} of the "
            f"{a['cells']} already fit and agreed in the CPU runs")


LINE_HEADER = ["success line (Len 101-150)", "agrees, all cells", "agrees, cells that fit",
               "the paper agrees, same cells", "predicted failures among the cells"]


def line_rows(rows: list[dict]) -> list[list[str]]:
    """The headline counts at the success lines of analysis.LINES, each row saying how many of
    its cells are predicted failures (a count of predicted successes alone tests one side)."""
    no = sum(r["predicted"] != YES for r in rows)
    return [[f"{a['line']:.0%}", f"{a['ours']} of {a['cells']}",
             f"{a['fit_agree']} of {a['fit']}", f"{a['paper']} of {a['paper_cells']}",
             f"{no} of {a['cells']}"]
            for a in agreement_by_line(rows)]


def budget_status(status: dict) -> str:
    """One sentence: how far the paper-budget sweep is."""
    return (f"{status['jobs']} trainings recorded; {status['complete']} of {status['cells']} "
            f"cells complete (search decided and every seed recorded), {status['started']} "
            f"started; {status['planned']} trainings planned next, and {status['deferred']} "
            f"of the 12-layer setting that no slice of minutes can finish")


def budget_open(progress: list[dict]) -> str:
    """The cells of the paper-budget sweep not yet complete, named by stage (a caption's
    sentence: budget.cell_progress)."""
    stages: dict = {}
    for p in progress:
        if p["stage"] != "complete":
            by_task = stages.setdefault(p["stage"], {})
            by_task.setdefault(info(p["task"]).name, []).append(
                PositionalEncoding(p["encoding"]).label)
    left = sum(len(e) for by_task in stages.values() for e in by_task.values())
    if not progress:
        return ""
    if not left:
        return f"All {len(progress)} cells are complete."
    parts = [f"{stage}: " + ", ".join(f"{task} ({' and '.join(encodings)})"
                                      for task, encodings in by_task.items())
             for stage, by_task in stages.items()]
    return (f"Not yet complete, {left} of the {len(progress)} cells, by what they are at: "
            + "; ".join(parts) + ".")


PROGRESS_HEADER = ["task", "PE", "stage", "ladder rungs tried", "selected setting",
                   "its seeds recorded", "best % so far (in distribution)", "waits for"]


def progress_rows(progress: list[dict]) -> list[list[str]]:
    """Every cell of the paper-budget sweep and what it still needs (budget.cell_progress)."""
    rows = []
    for p in progress:
        selected = "" if p["selected"] is None else Setting.of(p["selected"]).label()
        best = "" if p["best_first_bin"] is None else cell_pct(p["best_first_bin"])
        rows.append([info(p["task"]).name, PositionalEncoding(p["encoding"]).label, p["stage"],
                     f"{p['tried']} of {p['rungs']}", selected,
                     str(p["seeds"]) if p["selected"] is not None else "", best,
                     "; ".join(p["waiting_for"])])
    return rows


# Tables 6-7 (huang-table6-7-hparams): the chapter's table, from that figure's data() rows
HPARAMS_LOST = "a row that lost its name"
HPARAMS_HEADER = ["task", "PE", "ours (book search)", "why", "mean steps",
                  "paper (its Tables 6-7)", "paper max steps"]


def hparams_rows(rows: list[dict]) -> list[list]:
    """The chapter's table: one row per cell (the task by the name the paper writes), ours
    beside the paper's setting; `rows` are huang-table6-7-hparams' data()."""
    return [[info(r["task"]).name, PositionalEncoding(r["encoding"]).label, r["ours"],
             r["ours_rule"], r["ours_steps_mean"], r["paper"] or HPARAMS_LOST,
             r["paper_max_steps"]]
            for r in rows]
