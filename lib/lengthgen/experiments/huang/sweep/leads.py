"""What the studies of the APE cells that fit and then fail share: the variants of their
training (each changes one thing of the book sweep's training of a cell), one training, the
rows, the verdicts (a change counts only where the seeds' ranges separate), the table and
the figure. The figure modules `huang_ape_leads` (the authors' offsets, full-depth D_n words)
and `huang_ape_data_lead` (the authors' finite training set by epochs) define what they run.
"""
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np

from lengthgen.experiments.huang.sweep import protocol
from lengthgen.experiments.prose import for_reader, mean_span, separate
from lengthgen.experiments.spread import group_by
from lengthgen.tasks import get_task
from lengthgen.tasks.metadata import info


VARIANTS = ("book", "half_offsets", "full_depth")
# and the third lead's change (huang_ape_data_lead): the authors' finite training set by epochs
ALL_VARIANTS = VARIANTS + ("fixed_data",)
LABELS = {"book": "the book's protocol", "half_offsets": "the authors' offsets",
          "full_depth": "only words reaching depth n",
          "fixed_data": "a fixed training set, by epochs"}


def applies(task_id: str, variant: str) -> bool:
    """full_depth only means something for D_n."""
    return variant != "full_depth" or _depth(task_id) is not None


def _depth(task_id: str) -> int | None:
    return int(task_id[1:]) if task_id[:1] == "d" and task_id[1:].isdigit() else None


def sweep_config(scale: str) -> dict:
    """The book sweep's config at a scale, without its tasks: the training every lead changes
    one thing of (the "sweep" entry of both studies' configs)."""
    return {k: v for k, v in protocol.configs([], [])[scale].items() if k != "tasks"}


def job(params: dict, config: dict):
    """One run as the engine's typed Job: the sweep's job for the cell's setting and seed
    (`protocol.job_for`), with the authors' offsets in a position table twice the longest test
    input where the variant is "half_offsets". The decoder is sized for the cell's own task;
    what it trains on is `trained_on`'s."""
    from lengthgen.engine.jobs import Job
    sweep = protocol.job_for(params["task"], "ape", params["setting"], params["seed"],
                             config["sweep"], name=params.get("name", ""))
    if params["variant"] != "half_offsets":
        return sweep
    task = sweep.get_task()
    return Job(sweep.task, {**sweep.model,
                            "n_positions": 2 * task.max_tokens(task.test_bins[-1][1])},
               replace(sweep.train, ape_offsets="half"), name=sweep.name)


def trained_on(task, params: dict, config: dict):
    """What a run trains on: the cell's task, or full-depth words ("full_depth"), or a fixed
    set drawn once per seed and served by epochs ("fixed_data")."""
    from lengthgen.tasks.fixed import FixedTrainingSet
    from lengthgen.tasks.languages import FullDepthDyck
    if params["variant"] == "full_depth":
        return FullDepthDyck(_depth(task.id))
    if params["variant"] == "fixed_data":
        return FixedTrainingSet(task, config["fixed_size"], data_seed=params["seed"])
    return task


def engine_job(params: dict, config: dict):
    """The Job the slices train (`runs.planned`): `job`, trained on `trained_on`."""
    from lengthgen.engine.jobs import Job
    run = job(params, config)
    return Job(trained_on(run.get_task(), params, config), run.model, run.train, name=run.name)


def training(params: dict, config: dict):
    """(the task trained on, the decoder, its TrainConfig) of one run: `job`'s decoder and
    settings, trained on `trained_on`."""
    run = job(params, config)
    task, model = run.build()
    return trained_on(task, params, config), model, run.train


def trainings(runs: list[dict], config: dict) -> list:
    """The runs' trainings for the cost estimate (`lengthgen.runs.cost`): each run's `job`."""
    from lengthgen.runs.cost import job_training
    out = []
    for params in runs:
        run = job(params, config)
        out.append(job_training(run, key=f"huang-leads/{params['name']}/{run.train.steps}"))
    return out


def run_one(params, config, device):
    from lengthgen.train import train
    trained_on, model, train_cfg = training(params, config)
    result = train(model, trained_on, train_cfg, device)
    return _scores(params, model, result, config, device)


def _scores(params, model, result, config, device) -> dict:
    """A finished run's metrics, however it trained (`run_one` on the CPU, `score` in a GPU
    slice): the sweep's scores, and on a fixed training set the epochs its batches started."""
    from lengthgen.tasks.fixed import epochs_started
    scores = protocol.score_training(model, get_task(params["task"]), params["setting"],
                                     params["seed"], result, config["sweep"], device)
    seen = {"epochs": epochs_started(result.steps, job(params, config).train.batch_size,
                                     config["fixed_size"])} \
        if params["variant"] == "fixed_data" else {}
    return {"task": params["task"], "variant": params["variant"],
            "n_positions": model.cfg.n_positions, **scores, **seen}


def score(model, job, result, config, device, group_size):
    """A run trained in a GPU slice, scored as `run_one` scores it (the planned figure's
    `score`)."""
    return _scores(job.params(), model, result, config, device)


def data(records):
    """One row per training: cell, variant, seed, whether it fit, steps, and accuracy (%) per
    test bin."""
    rows = []
    for r in sorted(records, key=lambda r: (r["metrics"]["task"],
                                            ALL_VARIANTS.index(r["metrics"]["variant"]),
                                            r["metrics"]["seed"])):
        m = r["metrics"]
        rows.append({"task": m["task"], "variant": m["variant"], "seed": m["seed"],
                     "fit": m["fit"], "steps": m["steps"], "n_positions": m["n_positions"],
                     **{f"accuracy_{b}": round(100 * v, 2) for b, v in m["bins"].items()}})
    return rows


def _cells(records) -> dict:
    """{(task, variant): its rows of data()}, in data()'s order."""
    return group_by(data(records), lambda row: (row["task"], row["variant"]))


def _counted(rows) -> list[float]:
    """Len 101-150 accuracy (%) of the seeds that fit, or of all seeds when none did: the
    seeds Fig. 1 counts for a cell."""
    return [r["accuracy_101-150"] for r in ([r for r in rows if r["fit"]] or rows)]


def summary(records) -> dict:
    """{(task, variant): {"seeds", "fit", "mean", "low", "high"}}: Len 101-150 accuracy (%) over
    the seeds `_counted` keeps."""
    table = {}
    for key, rows in _cells(records).items():
        values = _counted(rows)
        table[key] = {"seeds": len(rows), "fit": sum(r["fit"] for r in rows),
                      "mean": float(np.mean(values)), "low": min(values), "high": max(values)}
    return table


def figure(records):
    rows = data(records)
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.6), sharey=True,
                             squeeze=False)
    colors = {"book": "#555555", "half_offsets": "#1f77b4", "full_depth": "#d62728",
              "fixed_data": "#2ca02c"}
    for ax, task in zip(axes[0], tasks):
        shown = [v for v in ALL_VARIANTS if any(r["task"] == task and r["variant"] == v
                                            for r in rows)]
        for x, variant in enumerate(shown):
            mine = [r for r in rows if r["task"] == task and r["variant"] == variant]
            values = [r["accuracy_101-150"] for r in mine]
            ax.scatter([x] * len(values), values, s=28, edgecolors=colors[variant], zorder=3,
                       facecolors=[colors[variant] if r["fit"] else "none" for r in mine])
            ax.hlines(np.mean(values), x - 0.25, x + 0.25, color=colors[variant], lw=2)
        ax.set_xticks(range(len(shown)), [LABELS[v].replace(" ", "\n", 2) for v in shown],
                      fontsize=8)
        ax.set_xlim(-0.6, len(shown) - 0.4)
        ax.set_title(f"{info(task).name} (APE)")
        ax.set_ylim(-3, 103)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("accuracy on Len 101-150 (%)")
    fig.suptitle("Each dot one seed (hollow: did not fit Len 1-50); bar: mean over seeds",
                 fontsize=9)
    fig.tight_layout()
    return fig


MIN_SEEDS = 3   # seeds each side needs before a change is judged (fewer: "too few seeds")


def verdicts(records) -> dict:
    """{(task, variant): "higher" | "lower" | "not separated" | "too few seeds"} for each
    changed variant against the book's protocol on Len 101-150: a variant moves a cell only
    where the seeds' ranges do not overlap (prose.separate; with 3 seeds, a mean alone is not
    a fact), and is judged only once both sides have MIN_SEEDS seeds (a sweep in progress)."""
    cells, out = _cells(records), {}
    for (task, variant), rows in cells.items():
        book = cells.get((task, "book"))
        if variant == "book" or book is None:
            continue
        if min(len(rows), len(book)) < MIN_SEEDS:
            out[(task, variant)] = "too few seeds"
            continue
        mine, theirs = _counted(rows), _counted(book)
        out[(task, variant)] = ("higher" if separate(mine, theirs) else
                                "lower" if separate(theirs, mine) else "not separated")
    return out


def lead_table(records, variants=VARIANTS, studied=None) -> str:
    """The chapter's table: per cell and variant (columns: `variants`), Len 101-150 accuracy
    as the mean over the seeds that fit with their range, how many fit, and the verdict
    against the book's protocol. studied: {cell: the variants a study trains for it}, where a
    study trains only some ("not in this study" for the others)."""
    rows_by, judged = _cells(records), verdicts(records)
    body = []
    for task in dict.fromkeys(t for t, _ in rows_by):
        cells = [f"{info(task).name} (APE)"]
        for variant in variants:
            rows = rows_by.get((task, variant))
            if studied is not None and variant not in studied.get(task, ()):
                cells.append("not in this study")
                continue
            if not rows:
                cells.append("not run" if not applies(task, variant) else "not yet")
                continue
            text = (f"{mean_span([v / 100 for v in _counted(rows)])}, "
                    f"{sum(r['fit'] for r in rows)} of {len(rows)} fit")
            if variant != "book" and (task, variant) in judged:
                text += f": {judged[(task, variant)]}"
            cells.append(text)
        body.append(cells)
    # the first column is this study's own training of the book's protocol, not the sweep's run
    # of the same cell (another CPU model: see the chapter), so it may differ from the sweep's
    header = ["cell"] + [LABELS[v] + (", trained again for this study" if v == "book" else "")
                         for v in variants]
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(map(for_reader, row)) + " |" for row in body])


def lead_summary(records) -> str:
    """One sentence on what the changes did so far, from the verdicts (glued in the chapter)."""
    judged = verdicts(records)
    if not judged:
        return "No changed training has finished beside its book protocol yet."
    count = lambda word: sum(v == word for v in judged.values())
    seeds = sorted({row["seed"] for row in data(records)})
    verb = lambda n, one, many: f"{n} {one if n == 1 else many}"  # noqa: E731
    early = count("too few seeds")
    judged_n = len(judged) - early
    wait = (f" {verb(early, 'change has', 'changes have')} fewer than {MIN_SEEDS} seeds on a "
            f"side so far and {'is' if early == 1 else 'are'} not judged yet.") if early else ""
    if not judged_n:
        return (f"No change tried ({len(judged)} so far) has {MIN_SEEDS} seeds beside the "
                f"book's protocol yet, so none is judged.")
    return (f"Of the {verb(judged_n, 'change', 'changes')} tried with at least {MIN_SEEDS} "
            f"seeds ({len(seeds)} seed"
            f"{'' if len(seeds) == 1 else 's'} each at most), "
            f"{verb(count('higher'), 'raises', 'raise')} a cell's Len 101-150 accuracy beyond "
            f"the spread of its seeds, {verb(count('lower'), 'lowers', 'lower')} it, and "
            f"{verb(count('not separated'), 'is', 'are')} not separated from the book's "
            f"protocol.{wait}")


# huang-ape-data-lead: its table (config["cells"]: task -> [setting, the variants it trains])
def _data_lead_variants(config) -> list[str]:
    """The variants of any cell, in the leads' order."""
    used = {v for _, names in config["cells"].values() for v in names}
    return [v for v in ALL_VARIANTS if v in used]


def data_lead_table(records, config) -> str:
    """Per cell and variant, Len 101-150 accuracy (mean over the seeds that fit, with their
    range), how many fit, and the verdict against the book's protocol; "not in this study"
    where a cell does not train that variant."""
    return lead_table(records, _data_lead_variants(config),
                      {task: names for task, (_, names) in config["cells"].items()})
