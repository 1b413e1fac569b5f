"""Your own language, a gallery: `try` (lengthgen.experiments.try_program) on programs that are
not Fig. 1 tasks, and on four of Fig. 1's languages to set the two tasks side by side.

Each run is one program, given here as C-RASP source text (a reader's program is text, not a
library entry) or as a library name. A run is what `python -m lengthgen try PROGRAM` does, at
try's own scales ("book" for the book config, "test" for the test one), through the same two
calls: `check_program` refuses what cannot be answered, `run_try` trains APE and NoPE (3 seeds
each, the engine's one loop) and scores them on Fig. 1's bins beside the constant baseline. No
training code lives here.

The gallery is chosen to show what the prediction can and cannot say:
  - C-RASP[] programs (counts compared): APE and NoPE are both predicted to generalize;
  - programs with a periodic (`i mod 2`) or local (`#[j = i - 1]`) relation: APE is predicted
    to generalize and NoPE gets no prediction;
  - one program whose verdict is almost always "no" on short strings (at least 40 a's), so a
    constant predictor is right on more than 90% of the training bin: why the baseline is
    printed beside every score.
The library runs are two C-RASP[] languages of Fig. 1 (Tomita 1 and 2) and two that need
positions (aa* with a periodic relation, Tomita 4 with a local one);
`try_rows.fig1_comparison` sets their verdicts beside Fig. 1's next-symbol cells for the same
language and encoding.

Feeds: book/try_your_own.ipynb, {numref}`fig-try-gallery`
"""
from lengthgen.experiments import try_program as trying
from lengthgen.experiments import try_rows

FIGURE_ID = "try-gallery"
TITLE = ("Try your own language: APE and NoPE on the per-prefix verdicts of C-RASP programs "
         "that are not Fig. 1 tasks, and on four of Fig. 1's languages")

CONFIGS = {
    # Tomita 2 accepts one string per even length: 300 strings (the test scale's check) find
    # too few of them, so the test config runs two of the four
    "test": {"try_scale": "test", "programs": try_rows.GALLERY,
             "library": ["tomita1", "aa_star"]},
    "book": {"try_scale": "book", "programs": try_rows.GALLERY, "library": try_rows.LIBRARY},
    # try has no paper budget of its own (the paper trains no reader's program): the book's
    "paper": {"try_scale": "book", "programs": try_rows.GALLERY, "library": try_rows.LIBRARY},
}
PAPER_SCALE = (
    "The paper trains no reader's program, so nothing here is taken from it but Fig. 1's "
    "protocol: training lengths 1-50, test bins 1-50, 51-100 and 101-150, a string counts only "
    "if every position is right. The paper config is the book's (try's 'book' scale: a 2-layer "
    "decoder of width 32, 1,000 steps, 3 seeds per encoding); `python -m lengthgen try` on a GPU "
    "is where a larger budget belongs.")
SPREAD_BY = ("program",)


def runs(config):
    """One run per gallery program (its text travels in the params, so the record holds it),
    then one per library language."""
    return ([{"name": name, "program": name, "kind": "gallery", "text": text}
             for name, text in config["programs"].items()]
            + [{"name": f"library-{name}", "program": name, "kind": "library"}
               for name in config["library"]])


def _program_of(params):
    """The parsed program of a run: its text, or the library's program of that name."""
    from lengthgen.crasp import parse_program
    from lengthgen.crasp.library import get_program
    if "text" in params:
        return parse_program(params["text"], filename=params["program"], name=params["program"])
    return get_program(params["program"])


def run_one(params, config, device):
    """`try` on one program: the same checks, training and scores as the command."""
    from lengthgen.crasp.task import program_task
    scale = config["try_scale"]
    program = _program_of(params)
    task = program_task(program)
    measured = trying.check_program(program, task, scale)
    metrics = trying.run_try(program, task, scale, device)
    # which constant is best, per bin, named in words in a list of its own (as the committed
    # records have it; `run_try` gives it as a number under each bin's name)
    accepts = metrics.pop("baseline_accepts")
    metrics["constant_verdicts"] = [{"bin": b, "verdict": "accepted" if v else "rejected"}
                                    for b, v in accepts.items()]
    return {"program": params["program"], "kind": params["kind"],
            "fragment": program.fragment(), "operations": len(program.ops),
            "prediction": trying.predictions(program), "sampler": task.sampler,
            "test_seed": trying.TEST_SEED, **measured, **metrics}


def trainings(config):
    """For `figure cost`: per program, the seeds of each encoding at try's scale (the program's
    alphabet sets the vocabulary, so the shape is counted per program)."""
    from lengthgen.crasp.task import program_task
    from lengthgen.models.decoder import Decoder
    from lengthgen.runs.cost import decoder_training, shape_label
    from lengthgen.tasks.program import TRAIN_RANGE
    scale = trying.SCALES[config["try_scale"]]
    train = scale["train"]
    out = []
    for params in runs(config):
        task = program_task(_program_of(params))
        for job in trying.jobs(task, config["try_scale"])[:len(trying.ENCODINGS)]:
            cfg = job.decoder_config()
            out.append(decoder_training(
                lambda cfg=cfg: Decoder(cfg),
                shape=shape_label(cfg.n_layers, cfg.n_heads, cfg.d_model),
                layers=cfg.n_layers, d_model=cfg.d_model, batch=train["batch_size"],
                tokens=task.max_tokens(TRAIN_RANGE[1]), steps=train["steps"],
                count=scale["seeds"]))
    return out


def data(records):
    """One row per program, encoding and bin: the mean over the seeds read (those at 100% on
    Len 1-50, else all), the seeds' range, the baseline, the prediction and the agreement."""
    rows = []
    for r in try_rows.ordered(records):
        m = r["metrics"]
        for encoding in trying.ENCODINGS:
            enc = m["encodings"][encoding]
            for b in try_rows.BINS:
                cell = enc["bins"][b]
                rows.append({"program": m["program"], "kind": m["kind"],
                             "fragment": m["fragment"], "encoding": encoding, "bin": b,
                             "accuracy": cell["mean_accuracy"], "min": cell["min"],
                             "max": cell["max"], "baseline": m["baseline"][b],
                             "accepted_share": m["accepted_share"][b],
                             "predicted": enc["predicted"], "seeds_fit": enc["fit"],
                             "generalizes": cell["generalizes"], "agrees": cell["agrees"]})
    return rows


def check_record(record):
    m = record.get("metrics", {})
    missing = [k for k in ("program", "fragment", "encodings", "baseline", "accepted_share")
               if k not in m]
    return f"no {', '.join(missing)}" if missing else None


def figure(records):
    """Fig. 1's bars per program: for each, APE's three bins then NoPE's, the seeds' range, the
    constant baseline (dotted) and C-RASP's prediction above each encoding."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from lengthgen.experiments.huang.sweep.drawing import BIN_COLORS, MARK
    records = try_rows.ordered(records)
    cols = 4
    rows = -(-len(records) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.7 * rows), sharey=True, squeeze=False)
    width = 0.27
    for ax, r in zip(axes.flat, records):
        m = r["metrics"]
        for g, encoding in enumerate(trying.ENCODINGS):
            enc = m["encodings"][encoding]
            for k, b in enumerate(try_rows.BINS):
                cell = enc["bins"][b]
                x = g + (k - 1) * width
                ax.bar(x, cell["mean_accuracy"], width, color=BIN_COLORS[k],
                       hatch=None if enc["fit"] else "//", edgecolor="white",
                       label=f"Len {b}" if g == 0 else None)
                ax.plot([x, x], [cell["min"], cell["max"]], color="#d95f02",
                        lw=1.2, label="seeds: min to max" if g == k == 0 else None)
                ax.plot([x - width / 2, x + width / 2], [m["baseline"][b]] * 2,
                        color="black", ls=":", lw=1.3,
                        label="constant baseline" if g == k == 0 else None)
            symbol, color = MARK[enc["predicted"]]
            ax.text(g, 1.04, symbol, ha="center", va="bottom", color=color, fontsize=11)
        ax.set_xticks([0, 1], [trying.label(encoding) for encoding in trying.ENCODINGS], fontsize=8)
        ax.set_ylim(0, 1.18)   # fractions, as data() gives them, read as percentages
        ax.set_yticks([0, 0.5, 1])
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(axis="y", alpha=0.3)
        where = "" if m["kind"] == "gallery" else "Fig. 1 language: "
        ax.set_title(f"{where}{m['program']}\n{m['fragment']}", fontsize=8.5)
    for ax in list(axes.flat)[len(records):]:
        ax.axis("off")
    for row in axes:
        row[0].set_ylabel("accuracy", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle("Your own language: per-prefix verdicts, APE vs NoPE (✓ predicted to "
                 "generalize, ? no prediction; hatched: no seed fit Len 1-50)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return fig


