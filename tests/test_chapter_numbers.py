"""The numbers the Limit and Dyck chapters quote are computed from records: formatting, the
verdict rules (on records made up to hit each branch), and agreement with `figure data`."""
import copy
import re

import pytest

from lengthgen.experiments.huang.crasp import analysis as crasp_chapter
from lengthgen.experiments.izzo import analysis as izzo_chapter
from lengthgen.experiments.huang.limit import analysis as limit_chapter
from lengthgen.experiments import prose
from lengthgen.experiments.richard import analysis as dyck
from lengthgen.experiments.richard import analysis_sweeps as sweeps
from lengthgen.runs.records import committed_records
from lengthgen.runs.registry import experiment


def test_formatting():
    assert prose.pct(0.996) == "99.6%" and prose.pct(1.0) == "100%" and prose.pct(0.004) == "0.4%"
    assert prose.pct(0.0) == "0%" and prose.pct(0.7656) == "77%"
    assert prose.num(2.1e-7) == "2\u00a0×\u00a010⁻⁷" and prose.num(0.000955) == "1\u00a0×\u00a010⁻³"
    assert prose.num(0.0249) == "0.025" and prose.num(185.3) == "185" and prose.num(1.45) == "1.4"
    assert prose.num(0.19, signed=True) == "+0.19" and prose.num(-0.7, signed=True) == "\u22120.70"
    assert prose.num(42.47, signed=True, digits=3) == "+42.5"
    assert prose.span([0.95, 0.98], prose.pct) == "95 to 98%" and prose.span([0.5, 0.5]) == "0.50"
    assert prose.listing(["a"]) == "a" and prose.listing(["a", "b", "c"]) == "a, b and c"


def _samples_records(curves):
    """Fig. 3 right records: {depth: [deep-test accuracy at sizes 1, 10, 1000]}."""
    return [{"run_name": f"q{q}-{s}", "params": {"kind": "trained", "max_depth": q,
                                                 "train_size": s, "seed": 0},
             "metrics": {"out_of_sample": v, "in_sample": 1.0, "train_size": s}}
            for q, values in curves.items() for s, v in zip((1, 10, 1000), values)]


def test_a_markdown_literal_reads_back_as_its_text():
    """Text pasted as Markdown keeps every character: each one MyST reads as emphasis, code,
    a link, math, HTML, a role or a cell border is escaped, and so is a heading's or a quote's
    mark at a line's start (and nothing else is): undoing the escapes gives the text, and
    markdown-it (MyST's parser, with its math) renders one paragraph of that text."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    md = MarkdownIt("commonmark").use(dollarmath_plugin).enable("table")
    special = "\\`*_[]$<{}|"
    for text in ("{0,1,2}*02* (APE and NoPE), (aa)* (NoPE)", "D_4 [x] `c` a\\b", "plain", "",
                 "**__``[[]]\\\\", "$x$ costs <b>1</b> {{ y }} a|b", "# not a heading",
                 "> not a quote", "a # b > c"):
        out = prose.markdown_literal(text)
        assert re.sub(r"\\(.)", r"\1", out) == text
        bare = re.sub(r"\\.", "", out)
        assert not any(c in special for c in bare) and not bare.startswith(("#", ">")), out
        marks = sum(c in special for c in text) + text.startswith(("#", ">"))
        assert len(out) == len(text) + marks
        if text:
            html = md.render(out)
            assert html.startswith("<p>") and "<span" not in html and "<b>" not in html, html


def test_samples_verdict_follows_its_rule():
    shape = {4: [0.2, 0.25, 0.3], 8: [0.3, 0.5, 0.9], 12: [0.3, 0.6, 0.95]}
    assert sweeps.samples_verdict(_samples_records(shape)) == "reproduced"
    bump = copy.deepcopy(shape)
    bump[4] = [0.2, 0.8, 0.3]             # a non-monotone point, the end points still agree
    assert sweeps.samples_verdict(_samples_records(bump)) == "partly"
    flat = {4: [0.2, 0.3, 0.95], 8: [0.3, 0.5, 0.9], 12: [0.3, 0.6, 0.92]}
    assert sweeps.samples_verdict(_samples_records(flat)) == "not reproduced"
    numbers = sweeps.samples_numbers(_samples_records(bump))
    assert numbers["dyck-samples-q4-monotone"] == "no" and numbers["dyck-samples-non-monotone"] == "1"
    assert numbers["dyck-samples-bumps"] == "80% with 10 words of depth ≤ 4"


def test_boolean_verdict_follows_its_rule():
    def record(model, baseline, n=48):
        return [{"run_name": "train-depth3", "params": {"train_depth": 3, "seed": 0},
                 "metrics": {"in_sample_depth3": model, "baseline_in_sample_depth3": baseline,
                             "in_sample_depth3_n": n}}]
    assert sweeps.boolean_verdict(record(17 / 48, 15 / 48)) == "not reproduced"  # 2 expressions
    assert sweeps.boolean_verdict(record(0.30, 0.15)) == "partly"
    assert sweeps.boolean_verdict(record(0.68, 0.15)) == "reproduced"


def test_the_issue_items_are_what_the_records_say():
    """The statements issue 22 found untrue are now computed; check them against figure data."""
    numbers = {**dyck.dyck_numbers(), **dyck.dyck_verdicts(), **limit_chapter.limit_numbers()}
    _, boolean = committed_records("richard-fig1-boolean")
    rows = experiment("richard-fig1-boolean").data(boolean)
    out_n = {r["test_depth"]: r["n"] for r in rows
             if r["split"] == "out_of_sample" and r["predictor"] == "model"}
    assert numbers["dyck-boolean-n-out"] == prose.listing(str(out_n[q]) for q in sorted(out_n))
    _, order = committed_records("richard-fig7-order-study")
    ends = [r["metrics"]["readout_end"] for r in order
            if r["params"]["setting"] == "most-steps" and r["params"]["variant"] == "eq1"]
    assert numbers["dyck-order-readout-most-steps"] == (
        f"{prose.num(min(ends), True, 3)} to {prose.num(max(ends), True, 3)}")
    # "training longer makes it worse" is said per width, from the checkpoints
    _, positional = committed_records("huang-fig5-6-positional")
    for width in (64, 256):
        local = [r for r in positional if r["metrics"]["kind"] == "local"
                 and r["params"]["width"] == width]
        grew = [r["metrics"]["test_mse_by_steps"]["15000"]["200"]
                > r["metrics"]["test_mse_by_steps"]["1000"]["200"] for r in local]
        word = numbers[f"limit-positional-local-d{width}-longer"]
        assert word == ("worse" if all(grew) else "better" if not any(grew) else "mixed")
    # wall times: one sum per trained figure, from the records
    for figure_id in dyck.DYCK_TRAINED:
        total = sum(r["wall_time_s"] for r in committed_records(figure_id)[1])
        assert prose.seconds(total) in numbers["dyck-wall-times"]
    # NoPE below full: at exactly the sizes where every seed of NoPE is below every seed of full
    _, ablation = committed_records("richard-fig6-ablation")
    acc = {}
    for r in ablation:
        acc.setdefault((r["params"]["variant"], r["params"]["k"]), []).append(
            r["metrics"]["out_of_sample"])
    below = [f"{4 ** k:,}" for k in sorted({k for _, k in acc})
             if max(acc[("nope", k)]) < min(acc[("full", k)])]
    assert numbers["dyck-ablation-nope-below-at"] == (prose.listing(below) + " words" if below
                                                      else "no size")


def test_paper_vs_book_tables_have_a_verdict_per_row():
    for table in (limit_chapter.limit_paper_vs_book(), dyck.dyck_paper_vs_book()):
        lines = table.splitlines()
        assert lines[0] == "| " + " | ".join(prose.PAPER_VS_BOOK_HEADER) + " |"
        for row in lines[2:]:
            cells = [c.strip() for c in row.strip("|").split(" | ")]
            assert len(cells) == len(prose.PAPER_VS_BOOK_HEADER), row
            assert cells[2].startswith("**") or cells[2] == "nothing to compare", row


def test_the_crasp_table_counts_what_the_records_checked():
    """Issue 22: the C-RASP table said "2,000 random instances" where the records compared
    1,968 distinct ones; the table now quotes the records."""
    table = crasp_chapter.crasp_paper_vs_book()
    rows = experiment("huang-table3-algorithmic").data(
        committed_records("huang-table3-algorithmic")[1])
    checked = {int(r["checked"]) for r in rows if r["entry"] == "yes"}
    assert f"({min(checked):,} distinct instances" in table
    assert table.count("**matches**") == 4 and table.count("\n") == 5


def _seeded(model_key, values, metric):
    """Records of one model per seed: {model: [metric value of each seed]}."""
    return [{"run_name": f"{m}-s{s}", "params": {model_key: m, "seed": s},
             "metrics": {**({"variant": m} if model_key == "variant" else {}), **metric(v)}}
            for m, vs in values.items() for s, v in enumerate(vs)]


def test_seeded_comparisons_are_stated_only_where_the_ranges_separate():
    ends = lambda values: _seeded("variant", values, lambda v: {"end_abs_mean": v})  # noqa: E731
    apart = dyck.learned_pe_numbers(ends({"uniform-pm1": [1.1, 1.3], "uniform-pm1-v": [2.9, 3.0],
                                        "eq1": [1.6, 1.9]}))
    assert apart["dyck-learned-pe-closest"] == "uniform-pm1"
    assert apart["dyck-learned-pe-uniform-pm1"] == "1.1 to 1.3"
    overlap = dyck.learned_pe_numbers(ends({"uniform-pm1": [1.1, 1.7], "uniform-pm1-v": [2.9, 3.0],
                                          "eq1": [1.6, 1.9]}))
    assert overlap["dyck-learned-pe-closest"] == "none"
    assert "overlap" in overlap["dyck-learned-pe-closest-text"]

    def spectrum(shares, eigen):
        return [{"run_name": f"{m}-s{s}", "params": {"model": m, "seed": s},
                 "metrics": {"top_singular_share": share, "eigenvalues_real": [eigen[s], 0.01],
                             "eigenvalues_imag": [0.0, 0.0]}}
                for m, values in shares.items() for s, share in enumerate(values)]
    negative = [-0.3, -0.2, -0.1]
    assert dyck.spectrum_verdict(spectrum({"many": [0.9, 0.8, 0.85], "single": [0.6, 0.7, 0.65]},
                                        negative)) == "reproduced"
    assert dyck.spectrum_verdict(spectrum({"many": [0.9, 0.6, 0.85], "single": [0.6, 0.7, 0.65]},
                                        negative)) == "partly"        # the shares overlap
    assert dyck.spectrum_verdict(spectrum({"many": [0.9, 0.6, 0.85], "single": [0.6, 0.7, 0.65]},
                                        [-0.3, 0.2, -0.1])) == "not reproduced"

    deep = lambda values: _seeded("model", values, lambda v: {"balanced": v})  # noqa: E731
    assert dyck.table1_verdict(deep({"single": [0, 0, 0], "many": [50, 89, 79]})) == "reproduced"
    assert dyck.table1_verdict(deep({"single": [0, 1, 0], "many": [50, 89, 79]})) == "partly"
    assert dyck.table1_verdict(deep({"single": [0, 1, 0], "many": [0, 89, 79]})) == \
        "not reproduced"


def test_inference_numbers_span_every_seed_not_the_last_one_read():
    """With several seeds per training length, each number is a range over all of them and
    fitting is counted per seed (a dict keyed by length would keep only one seed)."""
    from lengthgen.experiments.huang.limit.analysis import inference_numbers

    def record(task, n, seed, fit, twice):
        return {"params": {"task": task, "train_length": n, "seed": seed, "name": f"{task}{n}"},
                "metrics": {"steps": 100, "in_distribution": fit, "twice_length": twice,
                            "products": [{"limit": 0.5}]}}
    records = [record("aa_star", 8, 0, 1.0, 1.0), record("aa_star", 8, 1, 1.0, 0.2),
               record("aa_star", 16, 0, 1.0, 1.0), record("aa_star", 16, 1, 1.0, 1.0),
               record("parity", 8, 0, 1.0, 0.6), record("parity", 8, 1, 0.7, 0.1),
               record("parity", 16, 0, 0.8, 0.0), record("parity", 16, 1, 0.9, 0.05)]
    n = inference_numbers(records)
    assert n["limit-inference-aa-twice-shorter"] == "20 to 100%"
    assert n["limit-inference-aa-twice-longest"] == "100%"
    assert n["limit-inference-parity-fit-seeds"] == "1 of 2"
    assert n["limit-inference-parity-fit"] == "70 to 100%"
    assert n["limit-inference-parity-unfit-lengths"] == "16"
    assert n["limit-inference-parity-unfit"] == "80 to 90%"
    assert n["limit-inference-seeds"] == "2 seeds"
    # the book's rule for fitting is 100% in distribution: 99.6% is not a fit
    nearly = records[:4] + [record("parity", 8, 0, 0.996, 0.6), record("parity", 8, 1, 1.0, 0.1),
                            record("parity", 16, 0, 0.996, 0.0), record("parity", 16, 1, 0.9, 0.05)]
    assert inference_numbers(nearly)["limit-inference-parity-fit-seeds"] == "1 of 2"
    assert inference_numbers(nearly)["limit-inference-parity-unfit-lengths"] == "16"


def _samples_seeds(curves_by_seed):
    """Fig. 3 right records of several seeds: [{depth: [accuracy at 1, 10, 1000 words]}]."""
    return [{**r, "run_name": f"{r['run_name']}-s{seed}",
             "params": {**r["params"], "seed": seed}}
            for seed, curves in enumerate(curves_by_seed) for r in _samples_records(curves)]


def test_samples_numbers_span_every_seed_and_compare_only_apart_ranges():
    """Fig. 3 right with three seeds, the third disagreeing: every point is its mean with the
    range over seeds, and a curve rises only where the ranges over seeds are apart (the first
    seed alone would call the shape reproduced)."""
    agree = [{4: [0.2, 0.25, 0.3], 8: [0.3, 0.5, 0.9], 12: [0.3, 0.6, 0.95]},
             {4: [0.21, 0.26, 0.31], 8: [0.31, 0.52, 0.91], 12: [0.31, 0.62, 0.96]}]
    apart = agree + [{4: [0.22, 0.27, 0.32], 8: [0.32, 0.54, 0.92], 12: [0.32, 0.64, 0.97]}]
    n = sweeps.samples_numbers(_samples_seeds(apart))
    assert n["dyck-samples-q8-curve"] == "31% (30 to 32%), 52% (50 to 54%) and 91% (90 to 92%)"
    assert n["dyck-samples-q8-monotone"] == "yes" and n["dyck-samples-falls"] == "none"
    assert n["dyck-samples-seeds"] == "3 seeds"
    assert sweeps.samples_verdict(_samples_seeds(apart)) == "reproduced"
    # the third seed's 10-word model of depth <= 8 does worse than the one-word models
    odd = agree + [{4: [0.22, 0.8, 0.32], 8: [0.32, 0.28, 0.92], 12: [0.32, 0.64, 0.97]}]
    n = sweeps.samples_numbers(_samples_seeds(odd))
    assert n["dyck-samples-q8-curve"] == "31% (30 to 32%), 43% (28 to 52%) and 91% (90 to 92%)"
    assert n["dyck-samples-q8-monotone"] == "not separated"
    assert n["dyck-samples-q4-largest"] == "31% (30 to 32%)"
    assert n["dyck-samples-bumps"] == "none"          # 80% is one seed, not a bump
    assert "1 and 10 words (depth ≤ 8)" in n["dyck-samples-same"]
    assert n["dyck-samples-rises"] == ("1 and 10 words (depth ≤ 4 and 12); "
                                       "10 and 1,000 words (depth ≤ 8 and 12)")
    assert n["dyck-samples-shallow-lowest"] == "yes"
    assert sweeps.samples_verdict(_samples_seeds(odd)) == "partly"
    # a fall every seed shows is a fall; the shallowest depth's range must lie below the others'
    fall = [{**c, 8: [c[8][0], 0.1 + c[8][0] / 10, c[8][2]]} for c in apart]
    assert sweeps.samples_numbers(_samples_seeds(fall))["dyck-samples-q8-monotone"] == "no"
    assert sweeps.samples_verdict(_samples_seeds(fall)) == "partly"
    high = agree + [{4: [0.22, 0.27, 0.95], 8: [0.32, 0.54, 0.92], 12: [0.32, 0.64, 0.97]}]
    n = sweeps.samples_numbers(_samples_seeds(high))
    assert n["dyck-samples-shallow-lowest"] == "no" and "overlap" in n[
        "dyck-samples-shallow-lowest-text"]
    assert sweeps.samples_verdict(_samples_seeds(high)) == "not reproduced"


def _ablation_records(by_seed):
    """Fig. 6 records: [{variant: [out-of-sample accuracy at k = 1, 3, 5]} of each seed]."""
    return [{"run_name": f"{v}-k{k:02d}-s{seed}", "params": {"variant": v, "k": k, "seed": seed},
             "metrics": {"out_of_sample": x, "in_sample": 1.0, "variant": v}}
            for seed, curves in enumerate(by_seed) for v, xs in curves.items()
            for k, x in zip((1, 3, 5), xs)]


def test_ablation_numbers_span_every_seed_and_compare_only_apart_ranges():
    """Fig. 6 with three seeds: the paper's four observations hold in the first two seeds; the
    third's NoPE decoder does best with 4 words. Over the seeds, uniform-pm1 is no longer the
    best with few words nor NoPE below full at 4 words (ranges overlap); the first seed alone
    would say all four hold."""
    first = {"uniform-pm1": [0.9, 0.95, 0.96], "full": [0.5, 0.85, 0.97],
             "nope": [0.4, 0.7, 0.8], "uniform-pm1-v": [0.3, 0.3, 0.3], "eq1": [0.35, 0.4, 0.4]}
    second = {v: [x + 0.01 for x in xs] for v, xs in first.items()}
    third = {**first, "nope": [0.95, 0.7, 0.8]}
    agree = _ablation_records([first, second, {v: [x + 0.005 for x in xs]
                                               for v, xs in first.items()}])
    n = sweeps.ablation_numbers(agree)
    assert n["dyck-ablation-best-few"] == "uniform-pm1"
    assert n["dyck-ablation-nope-below-at"] == "4, 64 and 1,024 words"
    assert sweeps.ablation_verdict(agree) == ("reproduced", 4)
    odd = _ablation_records([first, second, third])
    n = sweeps.ablation_numbers(odd)
    assert n["dyck-ablation-nope"] == "59% (40 to 95%), 70% (70 to 71%) and 80% (80 to 81%)"
    assert n["dyck-ablation-nope-range"] == "40 to 95%"
    assert n["dyck-ablation-best-few"] == "none" and "overlap" in n["dyck-ablation-best-few-text"]
    assert n["dyck-ablation-nope-below-at"] == "64 and 1,024 words"
    assert n["dyck-ablation-nope-below-everywhere"] == "no"
    assert n["dyck-ablation-full-catches-up"] == "yes"
    assert n["dyck-ablation-eq1-above-frozen-v-at"] == "4, 64 and 1,024 words"
    assert n["dyck-ablation-frozen-v-below-at"] == "every size"
    assert sweeps.ablation_verdict(odd) == ("partly", 2)
    # eq1 and the frozen-V decoder overlapping in one seed: no longer above it at that size
    close = _ablation_records([first, second, {**first, "eq1": [0.25, 0.4, 0.4]}])
    assert sweeps.ablation_numbers(close)["dyck-ablation-eq1-above-frozen-v-at"] == \
        "64 and 1,024 words"
    assert sweeps.ablation_numbers(close)["dyck-ablation-eq1-beats-frozen-v"] == "no"
    assert sweeps.ablation_numbers(close)["dyck-ablation-eq1-vs-frozen-v"] == (
        "above it with 64 and 1,024 words; not different from it at this scale with 4 words "
        "(the ranges over seeds overlap)")


def _boolean_records(by_seed, n=48):
    """Fig. 1 records of training depths 1 and 3, tested at depths 1 and 3:
    [{training depth: (right in-sample answers at depth 3, the trivial predictor's)}]."""
    out = []
    for seed, cells in enumerate(by_seed):
        for t, (model, base) in cells.items():
            m = {"train_depth": t, "n_params": 1000}
            for q in (1, 3):
                for split in ("in_sample", "in_sample_nonconstant", "out_of_sample"):
                    m[f"{split}_depth{q}"] = m[f"baseline_{split}_depth{q}"] = 0.0
                    m[f"{split}_depth{q}_n"] = n if split != "out_of_sample" else 20
            m["in_sample_depth3"], m["baseline_in_sample_depth3"] = model / n, base / n
            out.append({"run_name": f"train-depth{t}-s{seed}", "wall_time_s": 60.0,
                        "params": {"name": f"train-depth{t}-s{seed}", "train_depth": t,
                                   "seed": seed},
                        "config": {"test_depths": [1, 3]}, "metrics": m})
    return out


def test_boolean_numbers_span_every_seed_and_compare_only_apart_ranges():
    """Fig. 1 with three seeds: the first seed's depth-3 model beats the trivial predictor at
    depth 3 by 23 expressions, the other two tie with it or lose by one. Over the seeds the
    accuracy is a range, the model does not beat the predictor (the ranges of right answers
    overlap) and the verdict is 'not reproduced'; the first seed alone would give 'partly'."""
    odd = _boolean_records([{1: (5, 7), 3: (30, 7)}, {1: (5, 7), 3: (7, 7)},
                            {1: (5, 7), 3: (6, 7)}])
    n = sweeps.boolean_numbers(odd)
    assert n["dyck-boolean-d3-in"] == "30% (12 to 62%)"
    assert n["dyck-boolean-in-d3"] == "10% and 30% (12 to 62%)"
    assert n["dyck-boolean-d3-base"] == "15%"
    assert n["dyck-boolean-d3-margin"] == "-1 to 23"
    assert n["dyck-boolean-beat-d3"] == "none" and "overlap" in n["dyck-boolean-d3-beats"]
    assert n["dyck-boolean-seeds"] == "3 seeds"
    assert sweeps.boolean_verdict(odd) == "not reproduced"
    apart = _boolean_records([{1: (5, 7), 3: (30, 7)}, {1: (5, 7), 3: (20, 7)},
                              {1: (5, 7), 3: (11, 7)}])
    n = sweeps.boolean_numbers(apart)
    assert n["dyck-boolean-beat-d3"] == "the depth-3 model"
    assert n["dyck-boolean-d3-margin"] == "4 to 23"
    assert sweeps.boolean_verdict(apart) == "partly"
    assert sweeps.boolean_verdict(_boolean_records([{3: (34, 7)}, {3: (33, 7)}, {3: (40, 7)}])) == \
        "reproduced"


def test_the_positional_step_change_is_called_separate_only_where_seed_ranges_separate():
    """The committed seeds separate every local change from 1,000 to 15,000 steps; moving one
    seed's final error onto another seed's early one makes that change overlap, and the text
    then counts it as within the spread."""
    _, records = committed_records("huang-fig5-6-positional")
    key = "limit-positional-local-steps-separate"
    assert limit_chapter.positional_numbers(records)[key].startswith("every one")
    planted = copy.deepcopy(records)
    group = sorted((r for r in planted if r["params"]["target"] == "i-j=2"
                    and r["params"]["width"] == 64), key=lambda r: r["params"]["seed"])
    group[0]["metrics"]["bands"]["all"]["200"]["model"] = \
        group[1]["metrics"]["test_mse_by_steps"]["1000"]["200"]
    assert limit_chapter.positional_numbers(planted)[key] == \
        "1 of 6 of these changes are within the spread over seeds"


def _fig4(single_own=1.0, single_other=0.0, many_deep=0.5, many_other=0.9, distinct=(1, 50)):
    """Fig. 4 records of two seeds: a single-word and a many-word model each."""
    word = "(()())"
    order = ["training prefix", "deeper (depth 9)", "shallow"]

    def context(name, accuracy, n_distinct):
        prefix = word[:2] if name == "training prefix" else "((((((((("
        rest = word[2:] if accuracy == 1 and n_distinct == 1 else ")("
        return {"accuracy": accuracy, "context": prefix, "distinct": n_distinct,
                "top": [{"completion": rest, "count": 100 if n_distinct == 1 else 3,
                         "balanced": accuracy == 1}]}
    records = []
    for seed in (0, 1):
        for model, rates, n_distinct in (
                ("single", [single_own, single_other, single_other], distinct[0]),
                ("many", [many_other, many_deep, many_other], distinct[1])):
            records.append({"run_name": f"{model}-s{seed}",
                            "params": {"model": model, "seed": seed},
                            "metrics": {"order": order, "single_word": word,
                                        "contexts": {k: context(k, a, n_distinct)
                                                     for k, a in zip(order, rates)}}})
    return records


def test_fig4_verdict_counts_the_papers_four_observations():
    assert dyck.fig4_verdict(_fig4()) == ("reproduced", 4)
    assert dyck.fig4_verdict(_fig4(many_deep=0.99)) == ("partly", 3)       # deep not lower
    assert dyck.fig4_checks(_fig4(single_other=0.1))["fails-elsewhere"] is False
    assert dyck.fig4_verdict(_fig4(single_own=0.5, single_other=0.5, many_deep=0.99,
                                 distinct=(50, 50))) == ("not reproduced", 0)


def test_order_verdict_follows_its_rule():
    """Fig. 7: the paper's order everywhere, the reverse everywhere, or a mix."""
    def learned(pm1, pm1v, eq1):
        return _seeded("variant", {"uniform-pm1": pm1, "uniform-pm1-v": pm1v, "eq1": eq1},
                       lambda v: {"end_abs_mean": v})

    def study(*settings):
        return [{**r, "params": {**r["params"], "setting": f"s{i}"}}
                for i, ends in enumerate(settings) for r in learned(*ends)]
    paper = ([3.0, 3.1], [2.0, 2.1], [1.0, 1.1])
    reverse = ([1.1, 1.3], [2.9, 3.0], [1.6, 1.9])
    assert dyck.order_verdict(learned(*paper), study(paper, paper)) == "reproduced"
    assert dyck.order_verdict(learned(*reverse), study(reverse, reverse)) == "not reproduced"
    assert dyck.order_verdict(learned(*reverse), study(reverse, paper)) == "partly"
    overlap = ([1.1, 2.0], [1.5, 3.0], [1.6, 1.9])          # nothing apart: neither order
    assert dyck.order_verdict(learned(*overlap), study(overlap)) == "partly"
    numbers = dyck.order_numbers(learned(*reverse), study(reverse, paper))
    assert numbers["dyck-order-reverse-settings"] == "1"
    assert numbers["dyck-order-figure-reverse"] == "yes"


def test_the_kgram_verdict_needs_trained_runs_and_both_rises():
    assert izzo_chapter.kgram_verdict(12, 12, "grows", "grows")[0] == "reproduced"
    assert izzo_chapter.kgram_verdict(0, 12, "grows", "grows")[0] == \
        "not reproduced"   # nothing fitted
    assert izzo_chapter.kgram_verdict(12, 12, "does not grow", "does not grow")[0] == \
        "not reproduced"
    assert izzo_chapter.kgram_verdict(6, 12, "does not grow", "grows")[0] == "partly"
    verdict, rule = izzo_chapter.kgram_verdict(0, 12, "does not grow", "grows")
    assert verdict == "not reproduced" and rule.startswith("0 of 12 runs met the stop rule")


def test_linear_laws_are_decided_on_the_seed_ranges():
    from lengthgen.experiments.izzo.analysis import _line_through, law_text
    # the SimpleTask crossings: N / omega 2.4-2.7, 2.2-2.7, 1.6-2.05 do not overlap, but a line
    # a + b omega passes through (1, 2.4..2.7), (2, 4.4..5.4), (4, 6.5..8.2)
    assert _line_through([(1, 2.4, 2.7), (2, 4.4, 5.4), (4, 6.5, 8.2)])
    assert not _line_through([(1, 2.0, 2.1), (2, 5.0, 5.1), (4, 6.0, 6.1)])   # a kink
    assert _line_through([(1, 2.0, 2.0), (2, 4.0, 4.0), (4, 8.0, 8.0)])       # exact points
    assert law_text(None, "ω").startswith("not decided")
    assert law_text({"proportional": False, "affine": True}, "ω").startswith("on a line")
    assert law_text({"proportional": False, "affine": False}, "Δ").startswith("neither")


def test_the_list_of_what_is_not_reproduced_names_every_failed_observation():
    """The Dyck summary's list of the paper's Figs. 4 and 6 observations that do not hold is
    computed by the same checks as their verdicts: as many items as observations failed, and
    the Fig. 4 ones by name."""
    fig4 = committed_records("richard-fig4-completions")[1]
    ablation = committed_records("richard-fig6-ablation")[1]
    text = dyck.observations_not_held(fig4, ablation)
    checks = dyck.fig4_checks(fig4)
    failed = (4 - sum(checks.values())) + (4 - sweeps.ablation_verdict(ablation)[1])
    assert text.count("(Fig. 4)") + text.count("(Fig. 6)") == failed
    for key, ok in checks.items():
        assert (dyck.FIG4_WORDS[key] in text) == (not ok)


# A hyphen-minus next to a digit or inside a short formula is where a browser may break a line
# ("1.29e-⏎06", "98.9-⏎100.0", "(i-⏎j)"). Backslashes: Markdown's escapes in table cells.
BREAKABLE = re.compile(r"\d\\?-\\?\.?\d|\d[eE]\\?[-+]?\d|(?<![\w\\])\\?-\\?\.?\d|\(\w\\?-\w\)")


def test_numbers_ranges_and_formulas_stay_on_one_line():
    keep = prose.keep_together
    assert keep("1.29e-06") == "1.29\u00a0×\u00a010⁻⁶"
    assert keep("lr 3e-05") == "lr 3\u00a0×\u00a010⁻⁵"
    assert keep("98.9-100.0") == "98.9\u2011100.0"
    assert keep("seeds 1.3-9.0%") == "seeds 1.3\u20119.0%"
    assert keep("(i-j)%4=0") == "(i\u2212j)%4=0" and keep("-0.5") == "\u22120.5"
    assert keep("Len 101-150") == "Len 101\u2011150"
    for name in ("huang-fig1-algorithmic", "w0.5-N10-s0", "aa_star-d3", "x-axis", "copy-unique",
                 "`--seed -1`", "$10^{-6}$", "[arXiv](https://x.org/1-2)", "lr1e-3"):
        assert keep(name) == name, name
    for text in (prose.num(-2.1e-7), prose.num(-0.7), prose.sig(1.2e-5), prose.cell_pct(-0.001),
                 prose.span([-0.5, 0.25]), prose.pct(-0.2)):
        assert not BREAKABLE.search(text), text
    from lengthgen.viz.tables import HTMLTable
    table = HTMLTable(["error (1e-6)", "seeds % (101-150)"], [[1.29e-6, "98.9-100.0"],
                                                            [-0.5, "(i-j)%4=0"]])
    for shown in (table.markdown, table.html, str(table)):
        assert not BREAKABLE.search(shown), shown
    rows = [["fig", "paper", "c", "ok", "1e-06 and 3.4-5.6"]]
    assert not BREAKABLE.search(prose.markdown_table(prose.PAPER_VS_BOOK_HEADER, rows))


@pytest.fixture(scope="module")
def chapter_glue():
    """Everything the APE vs NoPE and C-RASP chapters glue (their facades' calls, as the
    notebooks make them): [(key, unescaped Markdown)], provenance lines left out."""
    import html

    import IPython.display

    from lengthgen.chapters import ape_vs_nope, crasp
    glued = []
    patch = pytest.MonkeyPatch()
    patch.setattr(IPython.display, "display", lambda bundle, raw=False, metadata=None:
                  glued.append((metadata["scrapbook"]["name"],
                                html.unescape(bundle.get("text/markdown", "")))))
    try:
        for call in (ape_vs_nope.glue_protocol, ape_vs_nope.glue_headline,
                     ape_vs_nope.glue_budget, ape_vs_nope.glue_leads,
                     ape_vs_nope.glue_language_cells, ape_vs_nope.hparams_table,
                     ape_vs_nope.glue_differences, ape_vs_nope.glue_progress,
                     crasp.paper_vs_book_table):
            call()
        for panel in ape_vs_nope.PANELS:
            ape_vs_nope.cell_table(panel)
        for figure_id in ("huang-table2-languages", "huang-table3-algorithmic"):
            glued.append((figure_id, crasp.expressiveness_table(figure_id)[0]))
    finally:
        patch.undo()
    return [(key, text) for key, text in glued if not key.endswith("-provenance")]


def test_the_chapters_glued_tables_and_numbers_have_no_breakable_number(chapter_glue):
    """No table cell or pasted number of those chapters can break at a minus sign (the
    provenance lines break anywhere on purpose)."""
    assert len(chapter_glue) > 50
    bad = [(key, m.group(0)) for key, text in chapter_glue for m in BREAKABLE.finditer(text)]
    assert not bad, bad[:10]


def test_indexed_names_read_as_in_the_prose():
    """D_12 in a table cell or a pasted text reads D₁₂ (the prose typesets $D_{12}$), and
    $D_{32}$ in a figure's text; code ids and other underscores are left alone."""
    assert prose.for_reader("D_2, D_3 and D_12 (APE)") == "D₂, D₃ and D₁₂ (APE)"
    assert prose.math_names("deepest context of D_32") == "deepest context of $D_{32}$"
    for text in ("Bit_0", "aa_star", "binary_majority", "`D_12`", "$D_{12}$", "D_2N"):
        assert prose.for_reader(text) == text
    from lengthgen.viz.tables import HTMLTable
    assert "D₁₂" in HTMLTable(["task"], [["D_12"]]).markdown


def test_the_chapters_tables_name_tasks_as_the_paper_does(chapter_glue):
    """No glued table or text shows D_12 with an underscore, and the tables of the APE vs NoPE
    chapter name a task as the paper does (D₁₂, (aa)*), not by its code id (d12, aa_star)."""
    from lengthgen.tasks.metadata import algorithmic_ids, info, language_ids
    assert not [(key, m) for key, text in chapter_glue
                for m in re.findall(r"\bD\\?_\d+", text)]
    ids = {i for i in language_ids() + algorithmic_ids() if info(i).name != i}
    glued = dict(chapter_glue)
    for key in ("huang-table6-7-hparams", "huang-differences"):
        first_column = [line.split("|")[1].strip() for line in glued[key].splitlines()[2:]]
        assert first_column and not ids & {c.replace("\\", "") for c in first_column}, \
            (key, first_column)
