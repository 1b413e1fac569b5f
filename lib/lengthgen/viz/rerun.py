"""Re-run one figure from a chapter, at a scale chosen in the running notebook.

The committed results were computed at book scale on a CPU. A reader on a GPU runtime (Colab)
can re-run a figure's experiment at another scale without restarting Jupyter: the scale is an
argument here, not an environment variable read at start-up. Before anything runs, the
expected time is printed, estimated from the committed records' wall times and the number of
runs the chosen scale has:

    from lengthgen.viz.rerun import rerun_figure
    rerun_figure("richard-fig6-ablation", "paper")            # prints the estimate, then runs
    rerun_figure("richard-fig6-ablation", "paper", run=False) # only the estimate

The repository address (for the Colab cell of every chapter and the launch buttons) is the one
setting `repository.url` of `_config.yml`; `repository_url()` reads it and `colab_cell()` writes
the Colab cell from it (a notebook opened alone in Colab has no repository to read from, so the
cell holds a copy, which tests/test_rerun.py checks against this function).
"""
import re
from pathlib import Path

from lengthgen.config import get_device, get_scale
from lengthgen.errors import LengthgenError

ROOT = Path(__file__).resolve().parents[3]  # the repository: lib/lengthgen/viz/rerun.py
CONFIG = ROOT / "_config.yml"
COLAB_DIR = "/content/book"


def repository_url(config: Path = CONFIG) -> str:
    """The book's repository address: `repository.url` in _config.yml."""
    try:
        text = config.read_text()
    except OSError as error:
        raise LengthgenError(f"cannot read {config}: {error.strerror}") from None
    block = re.search(r"^repository:\s*\n((?:[ \t]+.*\n?)*)", text, re.MULTILINE)
    url = block and re.search(r"^[ \t]+url:\s*(\S+)", block.group(1), re.MULTILINE)
    if not url:
        raise LengthgenError(f"{config}: no repository.url setting")
    return url.group(1).strip("'\"")


def colab_cell(config: Path = CONFIG) -> str:
    """The first cell of every chapter: on Colab, clone the repository and install the library."""
    return (
        "import sys\n"
        'if "google.colab" in sys.modules:  # on Colab: fetch the book\'s code and results once\n'
        f"    !git clone -q --depth 1 {repository_url(config)} {COLAB_DIR} && "
        f"pip install -q -e {COLAB_DIR}\n"
        f'    sys.path.insert(0, "{COLAB_DIR}/lib")  # a running kernel misses a new editable '
        "install\n"
        f"    %cd {COLAB_DIR}/book")


def estimate(figure_id: str, scale: str, root=None) -> dict:
    """What re-running a figure at `scale` costs, judged from its committed records: how many
    runs the scale has, how long the committed runs took, and the expected time."""
    from lengthgen.runs.records import committed_records
    from lengthgen.runs.registry import SCALE_ORDER, expected_runs
    scale = get_scale(scale)
    runs = len(expected_runs(figure_id, scale))
    found = committed_records(figure_id, root, missing_ok=True)
    if found is None:
        return {"figure_id": figure_id, "scale": scale, "runs": runs, "seconds": None,
                "basis": "no committed records to estimate from"}
    basis_scale, records = found
    wall = sum(r["wall_time_s"] for r in records)
    devices = ", ".join(sorted({r["device"] for r in records}))
    per_run = wall / len(records)
    seconds = wall if scale == basis_scale else per_run * runs
    rank = SCALE_ORDER.index  # paper < book < test: a smaller index is a larger scale
    if scale == basis_scale:
        bound, why = "", "the committed runs' own time"
    elif rank(scale) < rank(basis_scale):
        bound, why = "at least ", (f"each {scale}-scale run is larger than a {basis_scale}-scale "
                                   "one: more steps, widths or seeds")
    else:
        bound, why = "at most ", f"each {scale}-scale run is smaller than a {basis_scale}-scale one"
    return {"figure_id": figure_id, "scale": scale, "runs": runs, "seconds": seconds,
            "bound": bound.strip() or "same",
            "basis": f"{len(records)} {basis_scale}-scale run(s) took {wall:.0f} s on {devices}, "
                     f"{per_run:.1f} s per run; {bound}since {why}" if bound else
                     f"{len(records)} {basis_scale}-scale run(s) took {wall:.0f} s on {devices}, "
                     f"{why}"}


def describe(plan: dict) -> str:
    if plan["seconds"] is None:
        return (f"{plan['figure_id']} at {plan['scale']} scale: {plan['runs']} run(s); "
                f"{plan['basis']}.")
    bound = "" if plan["bound"] == "same" else plan["bound"] + " "
    return (f"{plan['figure_id']} at {plan['scale']} scale: {plan['runs']} run(s), expected "
            f"{bound}{_duration(plan['seconds'])} ({plan['basis']}).")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def rerun_figure(figure_id: str, scale: str, device=None, run: bool = True, root=None,
                 show_figure: bool = True):
    """Print the expected time of re-running a figure at `scale`, then (run=True) run its
    experiment at that scale on `device` (default: CUDA, then MPS, then CPU), writing records
    under `root` (default results/), and return the figure drawn from them with its caption.
    Records already there for this scale are reused (an interrupted run resumes)."""
    from lengthgen.runs.records import caption
    from lengthgen.runs.registry import experiment, source_ids
    from lengthgen.runs.runner import run_experiment
    module = experiment(figure_id)  # an unknown id fails here, before anything is printed
    plan = estimate(figure_id, scale)
    print(describe(plan) + f" Device here: {get_device(device)}.", flush=True)
    if not run:
        return None
    records = [r for source in source_ids(figure_id)
               for r in run_experiment(source, plan["scale"], device, root=root)]
    if not records:
        raise LengthgenError(f"{figure_id}: the experiment has no runs at {plan['scale']} scale")
    fig = module.figure(records)
    if show_figure:
        from IPython.display import display
        display(fig)
        print(caption(records))
    return fig
