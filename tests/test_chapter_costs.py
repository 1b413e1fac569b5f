"""Each chapter's "At the paper's scale, on a GPU" section (issue 53): the cost table it glues has
one row per trained figure the chapter's pages show, no more and no fewer, and the figures it
does not reproduce have their causes glued in numbers.

The expected figures are found here on their own: every registered figure whose module (or a
module whose records it draws) offers `trainings(config)`, placed in the chapter whose pages
paste it as a figure or a table (```{glue:figure} ID``` / ```{glue:md} ID```).
"""
import json
import re
from pathlib import Path

import pytest

from lengthgen.errors import LengthgenError

BOOK = Path(__file__).resolve().parents[1] / "book"
# the chapters of the book's table of contents, each with its facade; try_your_own is no
# paper's chapter (its gallery is costed by `figure cost`, not shown at a paper's scale)
CHAPTERS = ["limit_transformers", "crasp", "ape_vs_nope", "communication",
            "quantitative_bounds", "dyck"]


def _pages(chapter: str) -> list[Path]:
    return [p for p in (BOOK / f"{chapter}.ipynb", BOOK / f"{chapter}_appendix.ipynb")
            if p.exists()]


def _trained_ids() -> set[str]:
    from lengthgen.runs.registry import EXPERIMENTS, experiment, source_ids
    return {f for f in EXPERIMENTS
            if any(hasattr(experiment(s), "trainings") for s in source_ids(f))}


def _expected(chapter: str) -> set[str]:
    text = "".join(p.read_text(encoding="utf-8") for p in _pages(chapter))
    return {f for f in _trained_ids()
            if f"{{glue:figure}} {f}\\n" in text or f"{{glue:md}} {f}\\n" in text}


def _glued(chapter: str, monkeypatch) -> dict[str, str]:
    """What the chapter facade's glue_paper_scale glues: {key: markdown}."""
    import importlib
    facade = importlib.import_module(f"lengthgen.chapters.{chapter}")
    glued = {}
    monkeypatch.setattr(facade, "book_table", lambda key, md, *a: glued.__setitem__(key, md))
    monkeypatch.setattr(facade, "book_text", lambda key, text: glued.__setitem__(key, text))
    facade.glue_paper_scale()
    return glued


def _row_ids(markdown: str) -> list[str]:
    """The figure ids of a cost table's rows (header, separator and total left out)."""
    rows = [line.split("|")[1].strip() for line in markdown.splitlines()[2:]]
    return [row.split(" (= ")[0] for row in rows if not row.startswith("**")]


def _problems(chapter: str, monkeypatch) -> list[str]:
    table = next(md for key, md in _glued(chapter, monkeypatch).items()
                 if key.endswith("-paper-scale"))
    ids, expected = _row_ids(table), _expected(chapter)
    return ([f"{chapter}: no row for {f}" for f in sorted(expected - set(ids))]
            + [f"{chapter}: a row for {f}, which its pages do not show trained"
               for f in sorted(set(ids) - expected)]
            + [f"{chapter}: {f} twice" for f in sorted({f for f in ids if ids.count(f) > 1})])


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if _expected(c)])
def test_a_chapter_glues_one_cost_row_per_trained_figure(chapter, monkeypatch):
    assert not _problems(chapter, monkeypatch)


def test_the_row_check_finds_a_missing_figure(monkeypatch):
    """Drop one figure from what the Dyck chapter costs: the check names it."""
    from lengthgen.viz import costs
    figures = costs.trained_figures("dyck")
    monkeypatch.setattr(costs, "trained_figures", lambda chapter: figures[:-1])
    assert _problems("dyck", monkeypatch) == [f"dyck: no row for {figures[-1]}"]


def test_every_trained_figure_is_in_a_chapter():
    shown = set().union(*(_expected(c) for c in CHAPTERS))
    text = (BOOK / "try_your_own.ipynb").read_text(encoding="utf-8")
    elsewhere = {f for f in _trained_ids() if f"{{glue:figure}} {f}\\n" in text}
    assert _trained_ids() - shown == elsewhere


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if not _expected(c)])
def test_a_chapter_without_trained_figures_has_no_cost_table(chapter):
    import importlib
    from lengthgen.viz.costs import chapter_cost_table
    assert not hasattr(importlib.import_module(f"lengthgen.chapters.{chapter}"),
                       "glue_paper_scale")
    with pytest.raises(LengthgenError, match="no trained figure"):
        chapter_cost_table(chapter)


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if _expected(c)])
def test_the_pages_show_the_section_and_glue_each_cause(chapter):
    """A code cell (hidden on the site) calls glue_paper_scale, the prose pastes the tables it
    glues, and each figure the facade lists as not reproduced has its numbers glued."""
    import importlib
    facade = importlib.import_module(f"lengthgen.chapters.{chapter}")
    cells = [c for p in _pages(chapter) for c in json.loads(p.read_text())["cells"]]
    calls = [c for c in cells if c["cell_type"] == "code"
             and "glue_paper_scale()" in "".join(c["source"])]
    assert len(calls) == 1
    assert {"remove-input", "remove-output"} <= set(calls[0]["metadata"].get("tags", []))
    markdown = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "At the paper's scale, on a GPU" in markdown
    code = "".join(calls[0]["source"])
    keys = re.findall(r'book_(?:table|text)\("([\w-]+)"', Path(facade.__file__).read_text())
    for key in [k for k in keys if "-paper-scale" in k]:
        assert f"{{glue:md}} {key}\n" in markdown or f"{{glue:md}}`{key}`" in markdown, key
    for figure_id in getattr(facade, "NOT_REPRODUCED", ()):
        prefix = re.search(rf'cause_numbers\("{figure_id}"\), prefix="([\w-]+)"\)', code)
        assert prefix, f"{chapter}: no cause numbers for {figure_id}"
        assert f"{{glue:md}}`{prefix.group(1)}-" in markdown


def test_cause_numbers_are_the_estimates():
    """The numbers of a cause are those of `lengthgen.runs.cost` for the book's and the paper's
    configs: the ratio of the largest models and the allotments of the paper's minutes."""
    from lengthgen.runs import cost
    from lengthgen.viz.costs import cached_cost, cause_numbers
    numbers = cause_numbers("richard-fig7-learned-pe")
    book, paper = cached_cost("richard-fig7-learned-pe", "book"), \
        cached_cost("richard-fig7-learned-pe", "paper")
    biggest = [max(t.n_params for t in c.trainings) for c in (book, paper)]
    assert numbers["params-ratio"] == f"{biggest[1] / biggest[0]:,.0f}"
    assert numbers["allotments"] == cost.allotments(paper.minutes())
    assert numbers["fits"] == ("fits in one allotment" if paper.fits
                               else "does not fit in one allotment")


def test_a_figure_drawing_another_figures_records_is_labelled_and_costs_the_same():
    from lengthgen.viz.costs import figure_cost
    fig4, languages = figure_cost("huang-fig4-starfree"), figure_cost("huang-fig1-languages")
    assert fig4.figure_id == "huang-fig4-starfree (= huang-fig1-languages)"
    assert fig4.model_steps == languages.model_steps
    with pytest.raises(LengthgenError, match="trains no model"):
        figure_cost("comm-protocol-bits")


def test_counting_skips_initialization_yet_counts_every_parameter():
    """count_parameters builds without initializing (fast) and counts what a model built on the
    CPU has; torch's initializers are themselves again afterwards."""
    import torch
    from lengthgen.engine.single import decoder_for_task
    from lengthgen.runs.cost import count_parameters
    from lengthgen.tasks import get_task
    normal = torch.nn.init.normal_
    build = lambda: decoder_for_task(get_task("binary_majority"), n_layers=2,  # noqa: E731
                                     n_heads=2, d_model=16, pe="ape")
    assert count_parameters(build) == sum(p.numel() for p in build().parameters())
    assert torch.nn.init.normal_ is normal


def test_shapes_of_equal_size_are_listed_in_one_order():
    from lengthgen.runs.cost import Cost, Training
    trainings = [Training(s, 100, 1, 16, 8, 10, 1) for s in ("1L4H d16", "1L1H d16", "1L2H d16")]
    assert Cost("x", trainings).shapes == ["1L1H d16", "1L2H d16", "1L4H d16"]
