"""Re-run one figure from a chapter, at a scale chosen in the running notebook.

The committed results were computed at book scale on a CPU. A reader on a GPU runtime (Colab)
can re-run a figure's experiment at another scale without restarting Jupyter: the scale is an
argument here, not an environment variable read at start-up. Before anything runs, the
expected time is printed: the runs of the chosen scale that have no record yet where the re-run
writes (those that have one are reused, as `figure run` reuses them), times the committed
records' mean wall time per run:

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
    url = _setting(text, "repository", "url")
    if not url:
        raise LengthgenError(f"{config}: no repository.url setting")
    return url


def _setting(text: str, block: str, key: str):
    """`key` inside the top-level `block:` of _config.yml's text (None when absent)."""
    found = re.search(rf"^{block}:\s*\n((?:[ \t]+.*\n?)*)", text, re.MULTILINE)
    value = found and re.search(rf"^[ \t]+{key}:\s*(\S+)", found.group(1), re.MULTILINE)
    return value.group(1).strip("'\"") if value else None


def launch_links(notebook: str, config: Path = CONFIG) -> dict:
    """{"colab": URL, "binder": URL} opening `notebook` (a path in the repository, e.g.
    book/try_your_own.ipynb) from the repository's branch, built as the theme's launch buttons
    build theirs from `repository` and `launch_buttons` in _config.yml."""
    url = repository_url(config)
    text = config.read_text()
    branch = _setting(text, "repository", "branch") or "main"
    owner_repo = re.fullmatch(r"https://github\.com/([^/\s]+/[^/\s]+?)(?:\.git)?/?", url)
    if not owner_repo:
        raise LengthgenError(f"{config}: repository.url {url} is not a GitHub repository, which "
                             "Colab and Binder links need")
    colab = _setting(text, "launch_buttons", "colab_url") or "https://colab.research.google.com"
    binder = _setting(text, "launch_buttons", "binderhub_url") or "https://mybinder.org"
    ui = {"classic": "tree", "jupyterlab": "lab/tree"}.get(
        _setting(text, "launch_buttons", "notebook_interface") or "classic", "tree")
    return {"colab": f"{colab.rstrip('/')}/github/{owner_repo.group(1)}/blob/{branch}/{notebook}",
            "binder": f"{binder.rstrip('/')}/v2/gh/{owner_repo.group(1)}/{branch}"
                      f"?urlpath={ui}/{notebook}"}


def colab_cell(config: Path = CONFIG) -> str:
    """The first cell of every chapter: on Colab, clone the repository and install the library."""
    return (
        "import os\n"
        "import sys\n"
        'if "google.colab" in sys.modules:  # on Colab: fetch the book\'s code and results once\n'
        f'    if not os.path.isdir("{COLAB_DIR}/.git"):  # run again, the cell keeps the first '
        "clone\n"
        f"        !git clone -q --depth 1 {repository_url(config)} {COLAB_DIR} && "
        f"pip install -q -e {COLAB_DIR}\n"
        f'    if "{COLAB_DIR}/lib" not in sys.path:  # a running kernel misses a new editable '
        "install\n"
        f'        sys.path.insert(0, "{COLAB_DIR}/lib")\n'
        f"    %cd {COLAB_DIR}/book")


def estimate(figure_id: str, scale: str, root=None, target=None) -> dict:
    """What re-running a figure at `scale` costs, judged from its committed records (under
    `root`): how many runs the scale has, how many of them already have a record where the
    re-run writes (`target`, default results/; those are reused, not trained again), and the
    expected time of the others."""
    from lengthgen.runs.records import committed_records
    from lengthgen.runs.registry import SCALE_ORDER, expected_runs, source_ids
    from lengthgen.runs.runner import pending_runs
    scale = get_scale(scale)
    runs = len(expected_runs(figure_id, scale))
    todo = sum(len(pending_runs(source, scale, target)) for source in source_ids(figure_id))
    plan = {"figure_id": figure_id, "scale": scale, "runs": runs, "recorded": runs - todo}
    if todo == 0:
        return {**plan, "seconds": 0.0, "bound": "same",
                "basis": "every run has a record already, so the figure is drawn from them"}
    found = committed_records(figure_id, root, missing_ok=True)
    if found is None:
        return {**plan, "seconds": None, "basis": "no committed records to estimate from"}
    basis_scale, records = found
    wall = sum(r["wall_time_s"] for r in records)
    devices = ", ".join(sorted({r["device"] for r in records}))
    per_run = wall / len(records)
    rank = SCALE_ORDER.index  # paper < book < test: a smaller index is a larger scale
    if scale == basis_scale:
        # the runs still missing at the committed scale are not a random sample: the APE vs NoPE
        # sweep runs its cheapest cells first, so one cut short leaves the costliest for last
        bound, why = "about", ("the missing ones may take longer (a sweep cut short may have run "
                               "its cheapest first, as the APE vs NoPE sweep does)")
    elif rank(scale) < rank(basis_scale):
        bound, why = "at least", (f"at least that per run, since each {scale}-scale run is "
                                  f"larger than a {basis_scale}-scale one: more steps, widths or "
                                  f"seeds")
    else:
        bound, why = "at most", (f"at most that per run, since each {scale}-scale run is smaller "
                                 f"than a {basis_scale}-scale one")
    return {**plan, "seconds": per_run * todo, "bound": bound,
            "basis": f"{len(records)} committed {basis_scale}-scale run(s) took {wall:.0f} s on "
                     f"{devices}, {per_run:.1f} s per run; {why}"}


def describe(plan: dict) -> str:
    head = f"{plan['figure_id']} at {plan['scale']} scale: {plan['runs']} run(s)"
    if plan["recorded"]:
        head += f", {plan['recorded']} with a record here (reused, not trained again)"
    if plan["seconds"] is None:
        return f"{head}; {plan['basis']}."
    if plan["recorded"] == plan["runs"]:
        return f"{head}: nothing to train ({plan['basis']})."
    todo = plan["runs"] - plan["recorded"]
    return (f"{head}, expected {plan['bound']} {_duration(plan['seconds'])} for the "
            f"{todo} to train ({plan['basis']}).")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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
    plan = estimate(figure_id, scale, target=root)
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
