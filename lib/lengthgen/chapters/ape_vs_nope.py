"""Chapter 3, APE vs NoPE (book/ape_vs_nope.ipynb and its appendix).

Everything the notebook calls from lengthgen, in one import. Huang et al. (2025), Figs. 1, 2, 4
and Tables 6-7, from `lengthgen.experiments.huang.sweep`: each function below does what one
code cell of the chapter shows (glue the numbers its prose quotes, show a table), reading the
committed records once per kernel (`sweep_records`), so the notebook is a few calls and the
logic stays where it is tested. `analysis` is offered too, for the exercise that changes the
success line.

The notebook imports from here and nowhere else in lengthgen, so what a chapter uses is
listed in one place and a module can move without touching the book.
"""
import functools

from lengthgen.config import get_device, get_scale
from lengthgen.experiments.huang.sweep import (analysis, budget, huang_ape_data_lead,
                                               huang_fig1_algorithmic, huang_fig1_languages,
                                               huang_table6_7_hparams, leads, protocol, tables)
from lengthgen.experiments.prose import for_reader, markdown_literal
from lengthgen.results import results_dir
from lengthgen.runs.records import caption, records_for
from lengthgen.viz.book import book_figure, draw_ahead, book_table, book_text, glue_numbers
from lengthgen.viz.costs import cause_numbers, chapter_cost_table, compare_table, reader_method
from lengthgen.viz.rerun import rerun_figure
from lengthgen.viz.tables import HTMLTable

__all__ = ["analysis", "book_figure", "draw_ahead", "cell_table", "get_device", "get_scale", "glue_budget",
           "glue_data_lead", "glue_differences", "glue_headline", "glue_language_cells",
           "glue_leads",
           "glue_progress", "glue_protocol", "hparams_table", "rerun_figure", "sweep_records"]

PANELS = {"algorithmic": "huang-fig1-algorithmic", "languages": "huang-fig1-languages"}


@functools.lru_cache(maxsize=None)
def _committed(figure_id: str) -> tuple[str, list]:
    return records_for(figure_id)


def sweep_records() -> dict:
    """The committed records of both Fig. 1 panels (read once per kernel) and the cells computed
    from them now (so a changed `analysis.SUCCESS_ACCURACY` counts): {"scale", "records",
    "rows"} per panel ("algorithmic", "languages")."""
    out = {}
    for panel, figure_id in PANELS.items():
        scale, records = _committed(figure_id)
        out[panel] = {"scale": scale, "records": records, "rows": analysis.table(records)}
    return out


def _both() -> tuple[list, list]:
    """(records, rows) of the two panels together."""
    s = sweep_records()
    return (s["algorithmic"]["records"] + s["languages"]["records"],
            s["algorithmic"]["rows"] + s["languages"]["rows"])


def _status() -> str:
    s = sweep_records()
    return tables.sweep_status(_both()[0], {
        "alg": huang_fig1_algorithmic.CONFIGS[s["algorithmic"]["scale"]],
        "lang": huang_fig1_languages.CONFIGS[s["languages"]["scale"]]})


def _budget() -> tuple[dict, list]:
    """(the paper-budget config, its job records)."""
    config = budget.budget_configs()["gpu"]
    return config, budget.load_job_records(results_dir() / "huang-fig1-budget" / "gpu")


def glue_protocol() -> None:
    """The protocol's numbers in prose and the protocol table (paper, book, paper config)."""
    books = [huang_fig1_languages.CONFIGS["book"], huang_fig1_algorithmic.CONFIGS["book"]]
    for key, text in tables.protocol_numbers(books, huang_fig1_languages.CONFIGS["paper"]).items():
        book_text(key, text)   # huang-p-cap, huang-p-seeds, ... (the keys are spelled there)
    book_table("huang-protocol", HTMLTable(tables.PROTOCOL_HEADER, tables.protocol_rows(
        huang_fig1_languages.CONFIGS["book"], huang_fig1_languages.CONFIGS["paper"])).markdown)


def glue_headline() -> str:
    """The headline counts (ours and the paper's), the sweep's status line and the headline
    table. Returns the status line."""
    records, rows = _both()
    for key, text in {**tables.headline(rows), **tables.paper_overall()}.items():
        book_text(key, text)   # huang-h-fit, huang-h-agree, ... (the keys are spelled there)
    book_text("huang-h-perfect-baseline", tables.perfect_baseline(rows))
    status = _status()
    book_text("huang-status", status)
    book_table("huang-headline", HTMLTable(tables.HEADLINE_HEADER,
                                           tables.headline_rows(rows)).markdown, caption(records))
    return status


def cell_table(panel: str) -> None:
    """The cell-by-cell table of one panel ("algorithmic" or "languages")."""
    s = sweep_records()[panel]
    # glue keys: huang-cells-{algorithmic,languages}
    book_table(f"huang-cells-{panel}", HTMLTable(tables.CELL_HEADER,
                                                 tables.cell_rows(s["rows"])).markdown,
               caption(s["records"]))


def glue_budget() -> None:
    """The paper-budget section: its status, its cells beside the CPU book's, the counts at
    three success lines, and the numbers of the fit-then-fail lead."""
    records, rows = _both()
    config, jobs = _budget()
    baselines = [r for r in records if r["metrics"]["encoding"] == "baseline"]
    rows_budget = analysis.table(budget.cell_records(jobs, config) + baselines)
    book_text("huang-budget-status", tables.budget_status(budget.status(jobs, config)))
    # pasted as Markdown into a caption: a language's stars are kept ({0,1,2}*02*)
    book_text("huang-budget-open", markdown_literal(for_reader(
        tables.budget_open(budget.cell_progress(jobs, config)))))
    book_text("huang-budget-steps", f"{config['steps']:,}")
    book_table("huang-budget-cells", HTMLTable(tables.BUDGET_HEADER, tables.budget_rows(
        rows_budget, rows, config["steps"])).markdown, budget.caption(jobs))
    book_table("huang-lines", HTMLTable(tables.LINE_HEADER,
                                        tables.line_rows(rows_budget)).markdown,
               budget.caption(jobs))
    book_table("huang-lines-book", HTMLTable(tables.LINE_HEADER, tables.line_rows(rows)).markdown,
               caption(records))
    book_text("huang-line", f"{analysis.SUCCESS_ACCURACY:.0%}")
    book_text("huang-lines-list", ", ".join(f"{line:.0%}" for line in analysis.LINES[:-1])
              + f" or {analysis.LINES[-1]:.0%}")
    book_text("huang-paper-t7-nope",
              f"{protocol.reference()[('tomita7', 'nope')]['bins'][-1]:.1%}")
    # the share of D_n training words that reach depth n (book's law)
    for n in (2, 3, 4, 12):   # glue keys: huang-d{2,3,4,12}-full
        book_text(f"huang-d{n}-full", f"{analysis.full_depth_share(n, 1, 50):.1%}")
    languages = sweep_records()["languages"]["rows"]
    for task_id in ("d3", "d4"):   # glue keys: huang-{d3,d4}-ape
        book_text(f"huang-{task_id}-ape", tables.cell_text(languages, task_id, "ape"))
    book_text("huang-budget-agree", tables.budget_agreement(rows_budget, rows))


def glue_leads() -> None:
    """The study of the two leads (huang-ape-leads): its figure, table and summary sentence."""
    book_figure("huang-ape-leads")
    records = records_for("huang-ape-leads")[1]
    book_table("huang-leads", leads.lead_table(records), caption(records))
    book_text("huang-leads-summary", leads.lead_summary(records))


def glue_data_lead() -> None:
    """The third lead (huang-ape-data-lead): its figure, table, summary sentence and how far
    its sweep is (trainings recorded of those registered)."""
    book_figure("huang-ape-data-lead")
    scale, records = records_for("huang-ape-data-lead")
    config = huang_ape_data_lead.CONFIGS[scale]
    book_table("huang-data-lead", leads.data_lead_table(records, config), caption(records))
    book_text("huang-data-lead-summary", leads.lead_summary(records))
    registered = len(huang_ape_data_lead.runs(config))
    seeds = sorted({r["metrics"]["seed"] for r in records})
    progress = (f"all {registered} of its trainings ({len(config['seeds'])} seeds) are "
                "recorded" if len(records) == registered else
                f"{len(records)} of the {registered} trainings registered "
                f"({len(config['seeds'])} seeds) are recorded so far, from seed"
                f"{'' if len(seeds) == 1 else 's'} {', '.join(map(str, seeds))}")
    book_text("huang-data-lead-progress", progress)
    book_text("huang-data-lead-size", f"{config['fixed_size']:,}")


def glue_language_cells() -> None:
    """The language cells the prose names, and the star-free groups' means (Fig. 4)."""
    s = sweep_records()["languages"]
    # glue keys: huang-{d12,012-02,aa-star,aaaa-star,abab-star}-{ape,nope}
    for task_id in ("d12", "012_02", "aa_star", "aaaa_star", "abab_star"):
        for encoding in protocol.ENCODINGS:
            book_text(f"huang-{task_id.replace('_', '-')}-{encoding}",
                      tables.cell_text(s["rows"], task_id, encoding))
    # glue keys: huang-{sf,nsf}-{ape,nope}-{ours,paper}
    for (encoding, source, group), mean in analysis.starfree_group_means(
            s["records"]).items():
        short = "sf" if group == "star-free" else "nsf"
        book_text(f"huang-{short}-{encoding}-{source}", f"{mean:.1f}%")
    book_text("huang-sf-groups-ape", analysis.starfree_group_counts(s["records"], "ape"))


def hparams_table() -> None:
    """Tables 6-7: the setting each cell selected, beside the paper's."""
    records, _ = _both()
    book_table("huang-table6-7-hparams", HTMLTable(
        tables.HPARAMS_HEADER,
        tables.hparams_rows(huang_table6_7_hparams.data(records))).markdown, caption(records))


def glue_differences() -> None:
    """The cells where the book and the paper differ by 20 points or more, and what giving up
    early saved."""
    records, rows = _both()
    diffs = analysis.differences(rows, threshold=0.2)
    book_text("huang-n-diffs", f"{len(diffs)} of {len(rows)}")
    book_text("huang-abandoned", tables.abandoned_text(analysis.abandon_savings(records)))
    book_table("huang-differences", HTMLTable(tables.DIFFERENCES_HEADER,
                                              tables.differences_rows(diffs)).markdown)


def glue_progress() -> str:
    """The appendix: the CPU sweep's status, the paper-budget sweep's, and its progress per
    cell. Returns the CPU status line."""
    status = _status()
    book_text("huang-apx-status", status)
    config, jobs = _budget()
    book_text("huang-apx-budget-status", tables.budget_status(budget.status(jobs, config)))
    book_table("huang-budget-progress", HTMLTable(tables.PROGRESS_HEADER, tables.progress_rows(
        budget.cell_progress(jobs, config))).markdown, budget.caption(jobs))
    return status


# The chapter's figures this book does not reproduce (the "Paper vs this book" verdicts); each
# has its cause in numbers in the section "At the paper's scale, on a GPU".
NOT_REPRODUCED = ("huang-fig1-algorithmic", "huang-fig4-starfree")


def glue_paper_scale() -> None:
    """The section "At the paper's scale, on a GPU": the paper-scale cost of every trained
    figure the chapter's pages show (`lengthgen.viz.costs`) and, for those not reproduced, the
    book's scale against the paper's."""
    book_table("huang-paper-scale", chapter_cost_table("ape_vs_nope"))
    book_text("huang-paper-scale-method", reader_method())
    book_table("huang-paper-scale-causes", compare_table(list(NOT_REPRODUCED)))


__all__ += ["cause_numbers", "glue_numbers", "glue_paper_scale"]
