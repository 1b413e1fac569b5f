"""The try gallery (lengthgen.experiments.try_gallery): every program parses and has the fragment
the gallery claims, the runs are what the configs say, and a run at the test scale returns what
figure(), data(), summary() and the Fig. 1 comparison read."""
import functools
import re

import pytest

from lengthgen.crasp import parse_program
from lengthgen.experiments import try_rows
from lengthgen.runs.registry import EXPERIMENTS, experiment, module_runs
from lengthgen.tasks.metadata import NONE_FOUND, YES

FIGURE = "try-gallery"
# the fragment each gallery program is written to have (the page's prose relies on these)
CLAIMED = {"balanced_ab": "C-RASP[]", "b_lead_small": "C-RASP[]",
           "more_a_than_b_some_c": "C-RASP[]", "at_least_40_a": "C-RASP[]",
           "even_len_majority": "C-RASP[periodic]", "no_bb_majority": "C-RASP[local]",
           "two_back_a": "C-RASP[local]"}
FIG1_TASKS = {"tomita1", "tomita2", "tomita3", "tomita4", "tomita5", "tomita6", "tomita7",
              "aa_star", "aaaa_star", "abab_star", "d2", "d3", "d4", "d12", "ab_d_bc",
              "abcde_plus", "012_02"}


@functools.cache
def module():
    return experiment(FIGURE)


def test_the_gallery_is_registered_and_has_at_least_six_programs_that_are_not_fig1_tasks():
    assert FIGURE in EXPERIMENTS
    gallery = try_rows.GALLERY
    assert len(gallery) >= 6 and not set(gallery) & FIG1_TASKS
    assert set(gallery) == set(CLAIMED) and set(try_rows.DESCRIPTIONS) >= set(gallery)


@pytest.mark.parametrize("name", sorted(CLAIMED))
def test_every_program_parses_with_the_fragment_the_gallery_claims(name):
    program = parse_program(try_rows.GALLERY[name], filename=name, name=name)
    assert program.fragment() == CLAIMED[name]
    assert program.output not in program.token_outputs.values()   # an accepting program


def test_at_least_two_programs_use_periodic_or_local_relations_and_get_no_nope_prediction():
    from lengthgen.experiments.try_program import predictions
    positional = [n for n, text in try_rows.GALLERY.items()
                  if predictions(parse_program(text))["nope"] == NONE_FOUND]
    assert len(positional) >= 2
    assert {CLAIMED[n] for n in positional} == {"C-RASP[periodic]", "C-RASP[local]"}


def test_the_library_runs_are_two_plain_and_two_positional_fig1_languages():
    from lengthgen.crasp.library import get_program
    fragments = [get_program(n).fragment() for n in try_rows.LIBRARY]
    assert set(try_rows.LIBRARY) <= FIG1_TASKS
    assert fragments.count("C-RASP[]") == 2 and len(fragments) == 4


@pytest.mark.parametrize("scale", ["test", "book", "paper"])
def test_the_runs_are_what_the_config_says(scale):
    config = module().CONFIGS[scale]
    params = module_runs(module(), scale)
    assert [p["name"] for p in params] == \
        [*config["programs"], *(f"library-{n}" for n in config["library"])]
    for p in params:
        if p["kind"] == "gallery":
            assert p["text"] == config["programs"][p["program"]]   # the text, not a file
        else:
            assert "text" not in p and p["name"] == f"library-{p['program']}"
    assert config["try_scale"] == ("test" if scale == "test" else "book")


@functools.cache
def records_at_test_scale():
    """Every run of the test config, through the runner into a folder of its own (so each record
    passes the runner's checks of a results record, as the book's do)."""
    import tempfile

    from lengthgen.runs.runner import run_experiment
    root = tempfile.mkdtemp(prefix="try-gallery-")
    return run_experiment(FIGURE, "test", root=root)


def chosen(records, *names):
    by_name = {r["run_name"]: r for r in records}
    return [by_name[n] for n in names]


def test_run_one_at_test_scale_returns_what_the_readers_read():
    m = module()
    everything = records_at_test_scale()
    assert [r["run_name"] for r in try_rows.ordered(everything)] == \
        [p["name"] for p in module_runs(m, "test")]
    records = chosen(everything, "two_back_a", "library-tomita1")
    for r in records:
        assert m.check_record(r) is None
        metrics = r["metrics"]
        assert set(metrics["encodings"]) == {"ape", "nope"}
        assert [s["seed"] for s in metrics["encodings"]["ape"]["seeds"]] == [0, 1, 2]
        assert [c["bin"] for c in metrics["constant_verdicts"]] == try_rows.BINS
    two_back = records[0]["metrics"]
    assert two_back["fragment"] == "C-RASP[local]"
    assert two_back["prediction"] == {"ape": YES, "nope": NONE_FOUND}
    assert {c["agrees"] for c in two_back["encodings"]["nope"]["bins"].values()} == {"n/a"}
    rows = m.data(records)
    assert len(rows) == 2 * 2 * 3
    assert {r["program"] for r in rows} == {"two_back_a", "tomita1"}
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["min"] <= r["accuracy"] + 1e-12 for r in rows)
    summary = try_rows.summary(records)
    assert summary["two_back_a"]["nope_agrees"] == "n/a"
    assert summary["tomita1"]["fragment"] == "C-RASP[]"
    fig = m.figure(records)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert any("two_back_a" in t for t in titles) and any("tomita1" in t for t in titles)


def test_the_fig1_comparison_reads_the_same_cell_and_says_none_without_one():
    m = module()
    records = chosen(records_at_test_scale(), "two_back_a", "library-tomita1")
    planted = [{"task": "tomita1", "encoding": "ape", "accuracy": {"101-150": 1.0},
                "ours_success": True}]
    rows = try_rows.fig1_comparison(records, planted)
    assert [(r["program"], r["encoding"]) for r in rows] == [("tomita1", "ape"),
                                                             ("tomita1", "nope")]
    ape, nope = rows
    assert ape["fig1_accuracy"] == 1.0 and ape["same"] == bool(ape["try_generalizes"])
    assert nope["fig1_accuracy"] is None and nope["same"] is None


def test_the_paper_config_says_it_is_the_books():
    m = module()
    assert m.CONFIGS["paper"]["try_scale"] == "book"
    assert re.search(r"paper config is the book's", m.PAPER_SCALE)


# ------------------------------------------------------------ the page's live cell, without a kernel

def widget_parts(box):
    area = box.children[0]
    button, progress = box.children[1].children
    return area, button, progress, box.children[2]


def test_the_widget_callback_trains_the_text_at_test_scale_and_fills_the_bar():
    """The page's skip-execution cell: the button's callback trains what the text area holds
    (run_try at the test scale), moves the bar to its end and shows the prediction and the
    table per bin."""
    from lengthgen.chapters.try_your_own import try_widget
    from lengthgen.experiments.try_program import total_steps
    box = try_widget(scale="test", device="cpu")
    area, button, progress, answer = widget_parts(box)
    area.value = try_rows.GALLERY["no_bb_majority"]
    button.click()
    text = answer.value
    assert "fragment: C-RASP[local]" in text and "NoPE: no prediction" in text
    assert text.count("101-150") >= 1 and "baseline" in text and "refused" not in text
    assert progress.max == total_steps("test") and progress.value == progress.max
    assert not button.disabled


def test_the_widget_says_a_syntax_error_in_one_line_and_trains_nothing():
    from lengthgen.chapters.try_your_own import try_widget
    box = try_widget(scale="test", device="cpu")
    area, button, progress, answer = widget_parts(box)
    area.value = "alphabet a b\nCa := #Q(a\naccept Ca > 0\n"
    button.click()
    assert answer.value.startswith("<pre>refused: &lt;text area&gt;:2:")
    assert progress.value == 0 and not button.disabled


def test_the_page_glues_every_table_it_pastes():
    """Every program table and verdict the page pastes is glued by the facade from records."""
    import json
    from pathlib import Path
    from lengthgen.chapters import try_your_own as page
    nb = Path(__file__).resolve().parents[1] / "book" / "try_your_own.ipynb"
    text = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    pasted = set(re.findall(r"\{glue:md\} (try-table-[\w-]+)", text))
    assert pasted == {f"try-table-{page.key(n)}" for n in try_rows.GALLERY}
    verdicts = set(re.findall(r"\{glue:md\}`try-verdict-([\w-]+)`", text))
    assert verdicts == {page.key(n) for n in try_rows.GALLERY}
