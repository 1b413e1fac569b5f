"""A chapter's paper-scale cost on a GPU, for its "At the paper's scale, on a GPU" section.

Which figures: those a chapter's pages paste by their figure id (```{glue:figure} ID``` or
```{glue:md} ID``` in a markdown cell, the chapter's notebook and its appendix) and that train
models (their module, or a module whose records they draw, offers `trainings(config)`). So a
figure added to a chapter is in its cost table without a line here.

What they cost: `lengthgen.runs.cost` (how the estimate is made is its docstring), the same
numbers `python -m lengthgen figure cost` prints (that command reads its costs from here too).
The trainings and costs are computed once per process (a sweep's thousands of jobs take seconds
to list). Each chapter's facade glues the tables under literal keys (`glue_paper_scale`).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from lengthgen.errors import LengthgenError

# a figure pasted as a block: ```{glue:figure} ID or ```{glue:md} ID (a table glued by its id)
_PASTED = re.compile(r"\{glue:(?:figure|md)\}[ \t]+([a-z0-9-]+)")


def book_folder() -> Path:
    from lengthgen.results import REPO_ROOT
    return REPO_ROOT / "book"


def chapter_notebooks(chapter: str) -> list[Path]:
    """The pages of a chapter: book/<chapter>.ipynb and its appendix where it has one."""
    main = book_folder() / f"{chapter}.ipynb"
    if not main.exists():
        found = sorted(p.stem for p in book_folder().glob("*.ipynb")
                       if not p.stem.endswith("_appendix"))
        raise LengthgenError(f"no chapter {chapter!r}; valid: {', '.join(found)}")
    appendix = book_folder() / f"{chapter}_appendix.ipynb"
    return [main] + ([appendix] if appendix.exists() else [])


def pasted_figures(path: Path) -> list[str]:
    """The registered figure ids a notebook's markdown pastes as a figure or table, in order."""
    import json
    from lengthgen.runs.registry import EXPERIMENTS
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    found: list[str] = []
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for key in _PASTED.findall("".join(cell.get("source", ""))):
                if key in EXPERIMENTS and key not in found:
                    found.append(key)
    return found


def trained_sources(figure_id: str) -> list[str]:
    """The figure ids whose trainings a figure's records come from (none: it trains nothing)."""
    from lengthgen.runs.registry import experiment, source_ids
    return [s for s in source_ids(figure_id) if hasattr(experiment(s), "trainings")]


def trained_figures(chapter: str) -> list[str]:
    """The chapter's pasted figures that train models, in the order its pages show them."""
    ids = [f for path in chapter_notebooks(chapter) for f in pasted_figures(path)]
    return [f for f in dict.fromkeys(ids) if trained_sources(f)]


def figure_cost(figure_id: str, scale: str = "paper"):
    """The `lengthgen.runs.cost.Cost` of a figure's trainings at a scale, labelled
    "ID (= SOURCE, ...)" where it draws other figures' records."""
    from lengthgen.runs import cost
    sources = trained_sources(figure_id)
    if not sources:
        raise LengthgenError(f"{figure_id}: trains no model (nothing to estimate); figures "
                             f"that train define trainings(config)")
    label = figure_id if sources == [figure_id] else f"{figure_id} (= {', '.join(sources)})"
    return cost.estimate(label, [t for s in sources for t in _trainings(s, scale)])


_trained: dict = {}   # (source figure id, scale) -> its trainings, listed once per process


def _trainings(source: str, scale: str) -> list:
    """A figure module's trainings at a scale: listed once per process, since several figures
    draw one sweep's records (its thousands of jobs take seconds to list)."""
    from lengthgen.runs.registry import experiment
    if (source, scale) not in _trained:
        module = experiment(source)
        _trained[source, scale] = list(module.trainings(module.CONFIGS[scale]))
    return _trained[source, scale]


_costs: dict = {}   # (figure id, scale) -> Cost, computed once per process


def cached_cost(figure_id: str, scale: str = "paper"):
    if (figure_id, scale) not in _costs:
        _costs[figure_id, scale] = figure_cost(figure_id, scale)
    return _costs[figure_id, scale]


def chapter_cost_table(chapter: str) -> str:
    """The Markdown cost table of a chapter's trained figures at paper scale (one row each, and
    the total with shared runs counted once): `lengthgen.runs.cost.table`."""
    from lengthgen.runs import cost
    figures = trained_figures(chapter)
    if not figures:
        raise LengthgenError(f"chapter {chapter}: no trained figure, so no cost table")
    return cost.table([cached_cost(f) for f in figures])


def _hours_or_minutes(minutes: float) -> str:
    if minutes >= 90:
        return f"about {minutes / 60:,.0f} hours" if minutes >= 600 else \
            f"about {minutes / 60:,.1f} hours"
    return f"about {minutes:,.0f} minutes" if minutes >= 10 else f"about {minutes:.1f} minutes"


def _ratio(a: float, b: float) -> str:
    """a / b, rounded as `lengthgen.runs.cost.compare_table` rounds its ratios."""
    r = a / b
    return f"{r:,.0f}" if r >= 10 else f"{r:.2g}"


def cause_numbers(figure_id: str) -> dict[str, str]:
    """The numbers of a figure's cause in prose, book scale against paper scale, keyed for
    `glue_numbers` (prefix the figure id): the largest model's parameters at each scale and
    their ratio, tokens per run (batch x tokens per sequence x steps, the largest) and their
    ratio, runs, steps per run, the training FLOPs of all runs and their ratio, and the paper
    scale's H200 time (engine, `train()`, and a training's on average), T4 time and
    allotments.

    Feeds: book/ape_vs_nope_appendix.ipynb, {numref}`tab-huang-paper-scale-causes`;
    book/dyck_appendix.ipynb, {numref}`tab-dyck-paper-scale-causes`;
    book/quantitative_bounds.ipynb, {numref}`tab-izzo-paper-scale-causes` (the prose under
    each)"""
    from lengthgen.runs import cost
    book, paper = cached_cost(figure_id, "book"), cached_cost(figure_id, "paper")

    def biggest(c):
        return max(t.n_params for t in c.trainings)

    def tokens(c):
        return max(t.batch * t.tokens * t.steps for t in c.trainings)

    minutes = paper.minutes()
    # The pages glue these with glue_numbers(..., prefix="cost-<figure>"), <figure> a short name
    # of the figure (cost-alg, cost-fig1, cost-kgram, ...):
    # glue keys: cost-<figure>-{book-params,paper-params,params-ratio,book-tokens,paper-tokens}
    # glue keys: cost-<figure>-{tokens-ratio,book-runs,paper-runs,book-batch,paper-batch}
    # glue keys: cost-<figure>-{book-steps,paper-steps,book-flops,paper-flops,flops-ratio}
    # glue keys: cost-<figure>-{h200,h200-train,t4,run-h200,run-fits,book-h200,allotments,fits}
    return {
        "book-params": f"{biggest(book):.2g}", "paper-params": f"{biggest(paper):.2g}",
        "params-ratio": _ratio(biggest(paper), biggest(book)),
        "book-tokens": f"{tokens(book):.2g}", "paper-tokens": f"{tokens(paper):.2g}",
        "tokens-ratio": _ratio(tokens(paper), tokens(book)),
        "book-runs": f"{book.runs:,}", "paper-runs": f"{paper.runs:,}",
        "book-batch": f"{max(t.batch for t in book.trainings):,}",
        "paper-batch": f"{max(t.batch for t in paper.trainings):,}",
        "book-steps": f"{max(t.steps for t in book.trainings):,}",
        "paper-steps": f"{max(t.steps for t in paper.trainings):,}",
        "book-flops": f"{book.flops:.2g}", "paper-flops": f"{paper.flops:.2g}",
        "flops-ratio": _ratio(paper.flops, book.flops),
        "h200": _hours_or_minutes(minutes),
        "h200-train": _hours_or_minutes(paper.minutes(kind=cost.SINGLE_KIND)),
        "t4": _hours_or_minutes(paper.minutes("t4")),
        "run-h200": _hours_or_minutes(minutes / paper.runs),   # a training, on average
        "run-fits": "longer than" if minutes / paper.runs > cost.ALLOTMENT_MIN else "within",
        "book-h200": _hours_or_minutes(book.minutes()),
        "allotments": cost.allotments(minutes),
        "fits": "fits in one allotment" if paper.fits else "does not fit in one allotment",
    }


def compare_table(figure_ids: list[str]) -> str:
    """Book scale against paper scale for these figures (`lengthgen.runs.cost.compare_table`)."""
    from lengthgen.runs import cost
    return cost.compare_table([(cached_cost(f, "book"), cached_cost(f, "paper"))
                               for f in figure_ids])


def reader_method() -> str:
    """How the cost table is made, in a few sentences for a chapter's reader (the numbers from
    the rate table and `lengthgen.runs.cost`; its docstring has the details)."""
    from lengthgen.runs import cost
    cards = cost.rate_table()["cards"]
    return (
        "The table is an estimate, not a measurement. The floating-point operations of one "
        "training step are counted on the library's own models (six per parameter and token, "
        "plus attention) and turned into time by the rates the library's training engine "
        f"reached on one {cost.rate_table()['card']} in its benchmark, interpolated between "
        "the model sizes it measured. The engine column steps a figure's runs of one shape "
        "together, as the engine does, and as the GPU queue trains the planned figures; the "
        "`train()` column trains them one at a time, as `figure run` still trains most "
        "figures on a CPU. A Colab T4 has no bf16, so the library trains in fp32 "
        f"there: its datasheet's {cards['t4']['dense_tflops']:g} TFLOPS, at the "
        f"{_percent(cost._best_efficiency())} of its peak the H200 reached. Evaluation, "
        "making the data and early stops are left out (steps are the configurations' caps), "
        "and a GPU run's clock was longer than the estimate (`benchmarks/check_cost.py`): "
        "read each number as an order of magnitude, and as a lower bound. A figure fits when "
        f"its engine minutes are at most {cost.ALLOTMENT_MIN:g}, the usable part of one "
        "15-minute GPU allotment. `python -m lengthgen figure cost --notes ID` prints what "
        "each `paper` configuration takes from the paper and what it chooses where the paper "
        "is silent.")


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.1 else f"{share:.1%}"
