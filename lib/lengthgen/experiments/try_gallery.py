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
positions (aa* with a periodic relation, Tomita 4 with a local one); `fig1_comparison` sets
their verdicts beside Fig. 1's next-symbol cells for the same language and encoding.

Feeds: book/try_your_own.ipynb, {numref}`fig-try-gallery`
"""
from lengthgen.experiments import try_program as trying
from lengthgen.tasks.base import bin_name
from lengthgen.tasks.program import FIG1_BINS

FIGURE_ID = "try-gallery"
TITLE = ("Try your own language: APE and NoPE on the per-prefix verdicts of C-RASP programs "
         "that are not Fig. 1 tasks, and on four of Fig. 1's languages")

# name -> C-RASP source. Each line of a program is one operation (lengthgen.crasp.syntax).
GALLERY = {
    "balanced_ab": "alphabet a b\nCa := #Q(a)\nCb := #Q(b)\naccept Ca = Cb\n",
    "b_lead_small": "alphabet a b\nCa := #Q(a)\nCb := #Q(b)\naccept Cb <= Ca + 3\n",
    "more_a_than_b_some_c": ("alphabet a b c\nCa := #Q(a)\nCb := #Q(b)\n"
                             "accept Cb + Cb < Ca and exists Q(c)\n"),
    "at_least_40_a": "alphabet a b\nCa := #Q(a)\naccept Ca >= 40\n",
    "even_len_majority": ("alphabet a b\nCa := #Q(a)\nCb := #Q(b)\n"
                          "accept i mod 2 = 0 and Cb < Ca\n"),
    "no_bb_majority": ("alphabet a b\nCa := #Q(a)\nCb := #Q(b)\n"
                       "BB := Q(b) and #[j = i - 1] Q(b) >= 1\n"
                       "accept not exists BB and Cb <= Ca\n"),
    "two_back_a": "alphabet a b\naccept #[j = i - 2] Q(a) >= 1\n",
}
# what each program says, in words (the page's table and the figure's panel titles)
DESCRIPTIONS = {
    "balanced_ab": "as many a's as b's",
    "b_lead_small": "b's lead a's by at most 3",
    "more_a_than_b_some_c": "more than twice as many a's as b's, and some c",
    "at_least_40_a": "at least 40 a's",
    "even_len_majority": "even length and more a's than b's",
    "no_bb_majority": "no bb anywhere, and no more b's than a's",
    "two_back_a": "the symbol two places back is a",
    "tomita1": "Tomita 1: 1*",
    "tomita2": "Tomita 2: (10)*",
    "aa_star": "(aa)*",
    "tomita4": "Tomita 4: no 000",
}
HIGH_BASELINE = "at_least_40_a"        # the gallery's high-baseline program
# Fig. 1's languages run through try: two C-RASP[] ones, one periodic, one local
LIBRARY = ["tomita1", "tomita2", "aa_star", "tomita4"]
FIG1_FIGURE = "huang-fig1-languages"   # whose next-symbol cells the library runs are set beside

CONFIGS = {
    # Tomita 2 accepts one string per even length: 300 strings (the test scale's check) find
    # too few of them, so the test config runs two of the four
    "test": {"try_scale": "test", "programs": GALLERY, "library": ["tomita1", "aa_star"]},
    "book": {"try_scale": "book", "programs": GALLERY, "library": LIBRARY},
    # try has no paper budget of its own (the paper trains no reader's program): the book's
    "paper": {"try_scale": "book", "programs": GALLERY, "library": LIBRARY},
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
    model, train = scale["model"], scale["train"]
    out = []
    for params in runs(config):
        task = program_task(_program_of(params))
        for job in trying.jobs(task, config["try_scale"])[:len(trying.ENCODINGS)]:
            cfg = job.decoder_config()
            out.append(decoder_training(
                lambda cfg=cfg: Decoder(cfg),
                shape=shape_label(model["n_layers"], model["n_heads"], model["d_model"]),
                layers=model["n_layers"], d_model=model["d_model"], batch=train["batch_size"],
                tokens=task.max_tokens(TRAIN_RANGE[1]), steps=train["steps"],
                count=scale["seeds"]))
    return out


BINS = [bin_name(lo, hi) for lo, hi in FIG1_BINS]
LONGEST = BINS[-1]


def ordered(records):
    """The records in the config's order: the gallery, then the library."""
    order = {name: k for k, name in enumerate([*GALLERY, *(f"library-{n}" for n in LIBRARY)])}
    return sorted(records, key=lambda r: (order.get(r["run_name"], len(order)), r["run_name"]))


def data(records):
    """One row per program, encoding and bin: the mean over the seeds read (those at 100% on
    Len 1-50, else all), the seeds' range, the baseline, the prediction and the agreement."""
    rows = []
    for r in ordered(records):
        m = r["metrics"]
        for encoding in trying.ENCODINGS:
            enc = m["encodings"][encoding]
            for b in BINS:
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
    records = ordered(records)
    cols = 4
    rows = -(-len(records) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.7 * rows), sharey=True, squeeze=False)
    width = 0.27
    for ax, r in zip(axes.flat, records):
        m = r["metrics"]
        for g, encoding in enumerate(trying.ENCODINGS):
            enc = m["encodings"][encoding]
            for k, b in enumerate(BINS):
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


def fig1_comparison(records, fig1_rows):
    """For each library run and encoding: try's verdict on Len 101-150 beside Fig. 1's
    next-symbol cell of the same language (`huang.sweep.analysis.table` rows; None where that
    cell has no record yet). "same": both generalize or both do not."""
    cells = {(row["task"], row["encoding"]): row for row in fig1_rows}
    out = []
    for r in ordered(records):
        m = r["metrics"]
        if m["kind"] != "library":
            continue
        for encoding in trying.ENCODINGS:
            cell = m["encodings"][encoding]["bins"][LONGEST]
            fig1 = cells.get((m["program"], encoding))
            out.append({"program": m["program"], "fragment": m["fragment"], "encoding": encoding,
                        "predicted": m["encodings"][encoding]["predicted"],
                        "try_accuracy": cell["mean_accuracy"],
                        "try_baseline": m["baseline"][LONGEST],
                        "try_generalizes": cell["generalizes"],
                        "fig1_accuracy": None if fig1 is None else fig1["accuracy"][LONGEST],
                        "fig1_generalizes": None if fig1 is None else fig1["ours_success"],
                        "same": None if fig1 is None
                        else bool(fig1["ours_success"]) == bool(cell["generalizes"])})
    return out


def summary(records) -> dict:
    """Per program: fragment, the APE and NoPE means on Len 101-150, the baseline on the
    training bin and on 101-150, and the agreement with the prediction per encoding."""
    out = {}
    for r in ordered(records):
        m = r["metrics"]
        out[m["program"]] = {
            "kind": m["kind"], "fragment": m["fragment"],
            "baseline_train": m["baseline"][BINS[0]], "baseline_long": m["baseline"][LONGEST],
            **{f"{encoding}_long": m["encodings"][encoding]["bins"][LONGEST]["mean_accuracy"]
               for encoding in trying.ENCODINGS},
            **{f"{encoding}_agrees": m["encodings"][encoding]["bins"][LONGEST]["agrees"]
               for encoding in trying.ENCODINGS},
            "fit": {encoding: m["encodings"][encoding]["fit"] for encoding in trying.ENCODINGS}}
    return out

