"""The numbers a chapter's prose quotes from its records, computed, never typed.

Each `*_numbers()` function reads the committed records of a chapter's figures and returns
{key: text}; the chapter glues them (`lengthgen.viz.book.glue_numbers`) and its prose pastes
them with {glue:md}`key`, so that text and data cannot drift apart. Verdicts ("reproduced",
"partly", "not") and words that state a direction ("worse", "better") are computed here too,
from the same records, by the rules written next to them. The "Paper vs this book" tables are
built here as well (`*_paper_vs_book`), with their verdicts.

Numbers the papers report stay typed in the prose, marked as the paper's (see
tests/test_book_hygiene.py for the convention).
"""
import math
from statistics import mean, stdev

from lengthgen.experiments.prose import (  # noqa: F401  (the formatting lives in prose)
    PAPER_VS_BOOK_COLUMNS, PAPER_VS_BOOK_HEADER, chapter_records as _records, listing,
    markdown_table as _table, mean_span, num, pct, seconds, seeds_note, separate as _separate,
    span)


# ---------------------------------------------------------------- Limit Transformers

def positional_numbers(records: list[dict]) -> dict:
    """The numbers of the positional-fit section (huang-fig5-6-positional)."""
    from lengthgen.runs.registry import experiment
    from lengthgen.theory.positional_targets import TARGETS
    module = experiment("huang-fig5-6-positional")
    config = records[0]["config"]
    train, longest = config["train_length"], max(config["test_lengths"])
    middle = 2 * train if 2 * train in config["test_lengths"] else sorted(
        config["test_lengths"])[len(config["test_lengths"]) // 2]
    first, last = config["checkpoints"][0], config["steps"]
    at = {n: module.summary(records, n) for n in (train, middle, longest)}

    def rows(n, kind, widths=None):
        return [r for r in at[n] if r["kind"] == kind and (widths is None or r["width"] in widths)]

    widths = sorted(config["widths"])
    small, wide = widths[0], [w for w in widths if w > widths[0]]
    out = {"n-train": str(train), "n-middle": str(middle), "n-longest": str(longest),
           "steps": f"{last:,}", "first-checkpoint": f"{first:,}",
           "seeds": seeds_note(records), "d-small": str(small), "d-wide": str(wide[0]),
           "train-ratio": span(r["ratio_to_constant"] for r in at[train]),
           "periodic-ratio": span(r["ratio_to_constant"] for r in rows(longest, "periodic")),
           "periodic-unseen": span(r["unseen_mse"] for r in rows(longest, "periodic")),
           "periodic-unseen-zero": listing(sorted({num(r["unseen_zero_mse"])
                                                   for r in rows(longest, "periodic")})),
           "neither-ratio": span(r["ratio_to_constant"] for r in rows(longest, "neither")),
           "neither-unseen": span(r["unseen_mse"] for r in rows(longest, "neither")),
           "local-small-unseen": listing(num(r["unseen_mse"])
                                         for r in rows(longest, "local", [small])),
           "local-small-ratio": listing(num(r["ratio_to_constant"])
                                        for r in rows(longest, "local", [small])),
           "local-wide-ratio-middle": span(r["ratio_to_constant"]
                                           for r in rows(middle, "local", wide)),
           "local-wide-ratio": span(r["ratio_to_constant"] for r in rows(longest, "local", wide)),
           "local-wide-unseen": span(r["unseen_mse"] for r in rows(longest, "local", wide)),
           "local-wide-size": span(math.sqrt(r["unseen_mse"])
                                   for r in rows(longest, "local", wide)),
           "combined-wide-ratio-middle": span(r["ratio_to_constant"]
                                              for r in rows(middle, "combined", wide)),
           "combined-wide-ratio": span(r["ratio_to_constant"]
                                       for r in rows(longest, "combined", wide)),
           "combined-small-ratio": span(r["ratio_to_constant"]
                                        for r in rows(longest, "combined", [small]))}
    # Training longer, per width: the local fits' ratio at n = longest after the first
    # checkpoint and at the end. "worse" if every local target's ratio grew, "better" if every
    # one fell, else "mixed".
    for width in widths:
        local = rows(longest, "local", [width])
        early = [r[f"ratio_to_constant_at_{first}_steps"] for r in local]
        final = [r["ratio_to_constant"] for r in local]
        grew = [b > a for a, b in zip(early, final)]
        out[f"local-d{width}-longer"] = ("worse" if all(grew) else
                                         "better" if not any(grew) else "mixed")
        out[f"local-d{width}-early"] = listing(num(v) for v in early)
        out[f"local-d{width}-final"] = listing(num(v) for v in final)
    # Is each local change from the first checkpoint to the end larger than the seeds' spread?
    # ("separate": for every local target and width, the per-seed ranges do not overlap)
    n = str(longest)
    separate = []
    for target in [t for t in config["targets"] if TARGETS[t][0] == "local"]:
        for width in widths:
            group = [r["metrics"] for r in records if r["params"]["target"] == target
                     and r["params"]["width"] == width]
            early = [m["test_mse_by_steps"][str(first)][n] / m["bands"]["all"][n]["constant"]
                     for m in group]
            final = [m["bands"]["all"][n]["model"] / m["bands"]["all"][n]["constant"]
                     for m in group]
            separate.append(_separate(early, final) or _separate(final, early))
    out["local-steps-separate"] = ("every one of these changes is larger than the spread "
                                   "over seeds" if all(separate) else
                                   f"{len(separate) - sum(separate)} of {len(separate)} of "
                                   f"these changes are within the spread over seeds")
    # the exercise: the target i - j >= 20
    far = [r for r in rows(longest, "neither") if r["target"] == "i-j>=20"]
    if far:
        out["far-unseen"] = span(r["unseen_mse"] for r in far)
        out["far-ratio"] = span(r["ratio_to_constant"] for r in far)
    return {f"limit-positional-{k}": v for k, v in out.items()}


def positional_verdict(records: list[dict]) -> tuple[str, str]:
    """Huang et al.'s App. G.2 picture: periodic targets extrapolate at every width, targets
    that are neither do not, local ones do at large width. 'reproduced' if all three hold at
    the longest test length (ratio to the best constant below 1, resp. above), 'partly' if the
    periodic and neither parts hold but local targets fail at the largest width, else 'not'."""
    from lengthgen.runs.registry import experiment
    config = records[0]["config"]
    rows = experiment("huang-fig5-6-positional").summary(records, max(config["test_lengths"]))
    ratio = lambda kind, widths=None: [r["ratio_to_constant"] for r in rows  # noqa: E731
                                       if r["kind"] == kind and (widths is None
                                                                 or r["width"] in widths)]
    periodic = all(v < 1 for v in ratio("periodic"))
    neither = all(v > 1 for v in ratio("neither"))
    local = all(v < 1 for v in ratio("local", [max(config["widths"])]))
    verdict = ("reproduced" if periodic and neither and local else
               "partly" if periodic and neither else "not reproduced")
    return verdict, seeds_note(records)


def prop54_numbers(records: list[dict]) -> dict:
    linear = [r for r in records if r["run_name"].startswith("linear")]
    fixed = sorted((r for r in records if r["run_name"].startswith("fixed")),
                   key=lambda r: r["params"]["n"])
    first = [r["metrics"]["first_position"] for r in linear]
    pairs = [r["metrics"]["all_pairs"] for r in linear]
    grow = lambda term: (fixed[-1]["metrics"][term]["mean"]  # noqa: E731
                         / fixed[0]["metrics"][term]["mean"])
    lengths = sorted(r["params"]["n"] for r in linear)
    return {"limit-prop54-first": span(m["mean"] for m in first),
            "limit-prop54-first-expected": span(m["expected"] for m in first),
            "limit-prop54-pairs": span(m["mean"] for m in pairs),
            "limit-prop54-fixed-growth": num(grow("first_position")),
            "limit-prop54-fixed-growth-pairs": num(grow("all_pairs")),
            "limit-prop54-length-growth": num(lengths[-1] / lengths[0])}


def prop54_verdict(records: list[dict]) -> str:
    """'matches' when, with the width growing with N, every measured mean is within 3 standard
    errors of its exact expectation, and at a fixed width the term grows with N."""
    linear = [r for r in records if r["run_name"].startswith("linear")]
    fixed = sorted((r for r in records if r["run_name"].startswith("fixed")),
                   key=lambda r: r["params"]["n"])
    inits = records[0]["config"]["seeds"]  # random initializations per run
    close = all(abs(r["metrics"][t]["mean"] - r["metrics"][t]["expected"])
                <= 3 * r["metrics"][t]["std"] / math.sqrt(inits) + 1e-9
                for r in linear for t in ("first_position", "all_pairs"))
    grows = fixed[-1]["metrics"]["all_pairs"]["mean"] > 4 * fixed[0]["metrics"]["all_pairs"]["mean"]
    return "reproduced" if close and grows else "partly" if close or grows else "not reproduced"


# A run fits its training lengths when it is at 100% on them: the book's one rule for "fits"
# (the APE vs NoPE chapter's "a seed fits when it is at 100% on the in-distribution bin", and
# the inference-procedure training's own stop rule). No lower threshold: a run at 99.6% did not
# fit.
FITS = 1.0


def fits(accuracy: float) -> bool:
    """The book's rule: a run fits its training lengths at 100% in distribution."""
    return accuracy >= FITS


def _share_fit(accuracies) -> str:
    return f"{sum(fits(a) for a in accuracies)} of {len(accuracies)}"


def inference_numbers(records: list[dict]) -> dict:
    """The inference-procedure figure's numbers, over every seed: ranges across seeds per
    training length, and how many seeds fit."""
    def values(task, key, n=None):
        return [r["metrics"][key] for r in records if r["params"]["task"] == task
                and (n is None or r["params"]["train_length"] == n)]

    def head_distance(task):
        return [h["limit"] for r in records if r["params"]["task"] == task
                for h in r["metrics"]["products"]]

    lengths = sorted({r["params"]["train_length"] for r in records})
    first, longest = lengths[0], lengths[-1]
    parity_first = values("parity", "in_distribution", first)
    never_fit = [n for n in lengths if not any(map(fits, values("parity", "in_distribution", n)))]
    return {"limit-inference-aa-steps": str(max(values("aa_star", "steps"))),
            "limit-inference-aa-fit-seeds": _share_fit(values("aa_star", "in_distribution")),
            "limit-inference-aa-twice": span(values("aa_star", "twice_length"), pct),
            "limit-inference-aa-twice-longest": span(values("aa_star", "twice_length", longest),
                                                      pct),
            "limit-inference-aa-twice-shorter": listing(
                span(values("aa_star", "twice_length", n), pct) for n in lengths[:-1]),
            "limit-inference-longest": str(longest),
            "limit-inference-shorter": listing(str(n) for n in lengths[:-1]),
            "limit-inference-parity-fit": span(parity_first, pct),
            "limit-inference-parity-fit-seeds": _share_fit(parity_first),
            "limit-inference-parity-first-twice": span(values("parity", "twice_length", first), pct),
            "limit-inference-parity-unfit-lengths": listing(str(n) for n in never_fit) or "none",
            "limit-inference-parity-unfit": listing(
                span(values("parity", "in_distribution", n), pct) for n in never_fit) or "none",
            "limit-inference-parity-twice": listing(
                span(values("parity", "twice_length", n), pct) for n in lengths),
            "limit-inference-parity-twice-rest": listing(
                span(values("parity", "twice_length", n), pct) for n in lengths[1:]),
            "limit-inference-aa-distance-min": num(min(head_distance("aa_star"))),
            "limit-inference-parity-distance": span(head_distance("parity")),
            "limit-inference-seeds": seeds_note(records),
            "limit-inference-fit-rule": pct(FITS)}


def limit_numbers(root=None) -> dict:
    """Every record-derived number the Limit Transformers chapter quotes."""
    out = {}
    out.update(positional_numbers(_records("huang-fig5-6-positional", root)))
    out.update(prop54_numbers(_records("huang-prop54-regularizer", root)))
    out.update(inference_numbers(_records("limit-inference-procedure", root)))
    return out


def limit_paper_vs_book(root=None) -> str:
    """The Limit chapter's 'Paper vs this book' table; verdicts from the records."""
    pos = _records("huang-fig5-6-positional", root)
    n = limit_numbers(root)
    verdict, seeds = positional_verdict(pos)
    p = lambda key: n["limit-positional-" + key]  # noqa: E731
    prop = _records("huang-prop54-regularizer", root)
    rows = [
        ["`huang-fig5-6-positional` ({numref}`fig-huang-positional`, "
         "{numref}`tab-huang-positional`)",
         "App. G.2, Figs. 5 and 6: periodic targets extrapolate at small $d$, local ones at "
         "large $d$, the others not (read by eye)",
         f"the paper's setup, widths 16, 64, 256, 0/1 targets, {p('steps')} steps, {seeds}",
         f"**{verdict}** ({seeds})",
         f"ratio to the best constant at $n = {p('n-longest')}$: periodic {p('periodic-ratio')}, "
         f"neither {p('neither-ratio')}, local at $d \\ge {p('d-wide')}$ {p('local-wide-ratio')} "
         f"(at $n = {p('n-middle')}$: {p('local-wide-ratio-middle')})"],
        ["`huang-prop54-regularizer` ({numref}`fig-prop54`)",
         "Proposition 54 (App. G.1): a proof, no experiment",
         "$N$ = 16 to 512, random initializations, width $d = N$ or fixed $d = 16$",
         f"**{prop54_verdict(prop)}** (the proposition)",
         f"with $d = N$ the first-position term is {n['limit-prop54-first']} (expected "
         f"{n['limit-prop54-first-expected']}), the all-pairs term {n['limit-prop54-pairs']}; "
         f"at $d = 16$ they grow {n['limit-prop54-fixed-growth']}-fold and "
         f"{n['limit-prop54-fixed-growth-pairs']}-fold over a "
         f"{n['limit-prop54-length-growth']}-fold range of $N$"],
        ["`limit-inference-procedure` ({numref}`fig-inference-procedure`)",
         "no counterpart: Definition 6 and Theorem 7 describe an idealized learner, not run",
         f"APE decoders, $n$ = 8, 16, 32, {n['limit-inference-seeds']}",
         "nothing to compare",
         f"$(aa)^*$: {n['limit-inference-aa-twice']} at lengths $n+1..2n$; PARITY: "
         f"{n['limit-inference-parity-twice']} there"],
        ["`limit-slider`, `limit-small-multiples` ({numref}`fig-limit-slider`, "
         "{numref}`fig-small-multiples`)",
         "no counterpart: a hand-built head", "drawn, not trained", "nothing to compare", "none"],
    ]
    return _table(PAPER_VS_BOOK_HEADER, rows)


# ---------------------------------------------------------------- Dyck (Richard 2024)

def _seeds_of(records, *keys) -> dict:
    """{(param values...): [metrics of each seed, in seed order]}: every seed of each setting,
    a setting being the values of the params `keys`."""
    out = {}
    for r in sorted(records, key=lambda r: r["params"].get("seed", 0)):
        out.setdefault(tuple(r["params"][k] for k in keys), []).append(r["metrics"])
    return out


def _step(before, after) -> str:
    """'rises' or 'falls' from one setting to the next where their ranges over seeds are apart,
    else 'same' (they do not differ at this scale)."""
    return "rises" if _separate(after, before) else "falls" if _separate(before, after) else "same"


def _count(v) -> str:
    return str(round(v))


def wall_times(records) -> float:
    return sum(r["wall_time_s"] for r in records)


def boolean_numbers(records: list[dict]) -> dict:
    """Fig. 1 (Boolean simplification) over every seed: accuracies of the model and of the
    trivial predictor per training depth, each as its mean with the min-max range over seeds.
    A model 'beats' the trivial predictor only where its range of right answers over seeds lies
    above the predictor's."""
    from lengthgen.runs.registry import experiment
    module = experiment("richard-fig1-boolean")
    cells = {}  # (training depth, test depth, split, predictor): [the row of each seed]
    for r in sorted(records, key=lambda r: r["params"].get("seed", 0)):
        for row in module.data([r]):
            if row["predictor"] in ("model", "baseline"):
                cells.setdefault((row["train_depth"], row["test_depth"], row["split"],
                                  row["predictor"]), []).append(row)
    depths = sorted({key[0] for key in cells})
    tests = sorted({key[1] for key in cells})
    acc = lambda t, q, split, who="model": [row["accuracy"]  # noqa: E731
                                            for row in cells[(t, q, split, who)]]
    right = lambda t, q, split, who="model": [round(row["accuracy"] * row["n"])  # noqa: E731
                                              for row in cells[(t, q, split, who)]]
    sizes = lambda q, split: {row["n"] for t in depths  # noqa: E731
                              for row in cells[(t, q, split, "model")]}
    out = {"n-in": listing(sorted({str(n) for q in tests for n in sizes(q, "in_sample")},
                                  key=int)),
           "n-out": listing(span(sizes(q, "out_of_sample"), _count) for q in tests),
           "test-depths": listing(str(q) for q in tests),
           "sweep-minutes": f"{wall_times(records) / 60:.0f}",
           "params": f"{records[0]['metrics']['n_params']:,}",
           "seeds": seeds_note(records)}
    for q in tests:
        out[f"in-d{q}"] = listing(mean_span(acc(t, q, "in_sample")) for t in depths)
        out[f"base-d{q}"] = listing(mean_span(acc(t, q, "in_sample", "baseline"))
                                    for t in depths)
        beat = [t for t in depths if _separate(right(t, q, "in_sample"),
                                               right(t, q, "in_sample", "baseline"))]
        out[f"beat-d{q}"] = ("none" if not beat else
                             "the depth-" + listing(str(t) for t in beat) + " model"
                             + ("s" if len(beat) > 1 else ""))
        out[f"nonconstant-max-d{q}"] = str(max(max(right(t, q, "in_sample_nonconstant"))
                                               for t in depths))
        out[f"oos-d{q}"] = listing(mean_span(acc(t, q, "out_of_sample")) for t in depths)
    if 3 in depths and 3 in tests:
        model, base = right(3, 3, "in_sample"), right(3, 3, "in_sample", "baseline")
        out["d3-in"] = mean_span(acc(3, 3, "in_sample"))
        out["d3-base"] = mean_span(acc(3, 3, "in_sample", "baseline"))
        # each seed's model against the trivial predictor of its own training set
        out["d3-margin"] = span([m - b for m, b in zip(model, base)], _count)
        out["d3-beats"] = ("beats it: its range of right answers over seeds lies above the "
                           "predictor's" if _separate(model, base) else
                           "does not differ from it at this scale: the ranges over seeds overlap")
        out["d3-oos"] = mean_span(acc(3, 3, "out_of_sample"))
    first = depths[0]
    if first in tests:
        out["d1-nonconstant"] = span(right(first, first, "in_sample_nonconstant"), _count)
        out["d1-nonconstant-pct"] = mean_span(acc(first, first, "in_sample_nonconstant"))
        out["d1-nonconstant-base"] = span(right(first, first, "in_sample_nonconstant",
                                                "baseline"), _count)

    def hits(split):
        found = []
        for (t, q, s, who), rows in sorted(cells.items()):
            counts = right(t, q, s, who)
            if s == split and who == "model" and max(counts) > 0:
                seeds = (f" (in {sum(c > 0 for c in counts)} of {len(counts)} seeds)"
                         if len(counts) > 1 else "")
                found.append(f"{span(counts, _count)} of {rows[0]['n']} for the depth-{t} model "
                             f"tested at depth {q}{seeds}")
        return listing(found) if found else "none"
    out["oos-hits"] = hits("out_of_sample")
    out["nonconstant-hits"] = hits("in_sample_nonconstant")
    return {f"dyck-boolean-{k}": v for k, v in out.items()}


def boolean_verdict(records) -> str:
    """The paper: in-sample well above out-of-sample (68% against 9% for the depth-3 model at
    depth 3). Over the seeds of our depth-3 model tested at depth 3 (in-sample): 'not
    reproduced' unless its range of right answers lies more than 2 expressions above the
    trivial predictor's (its worst seed beats the predictor's best by 3 or more); 'partly' if
    it does but some seed stays below half the paper's 68%; else 'reproduced'."""
    seeds = _seeds_of(records, "train_depth").get((3,))
    if not seeds:
        return "not run"
    model = [round(m["in_sample_depth3"] * m["in_sample_depth3_n"]) for m in seeds]
    base = [round(m["baseline_in_sample_depth3"] * m["in_sample_depth3_n"]) for m in seeds]
    if min(model) - max(base) <= 2:
        return "not reproduced"
    return "partly" if min(m["in_sample_depth3"] for m in seeds) < 0.34 else "reproduced"


def capacity_numbers(records) -> dict:
    trained = [r for r in records if r["run_name"] != "closed-form"]
    by_d = {}
    for r in trained:
        by_d.setdefault(r["metrics"]["d"], []).append(r["metrics"]["accuracy"])
    widths = sorted(by_d)
    out = {f"d{d}": span(by_d[d], pct) for d in widths}
    out["monotone"] = "yes" if all(min(by_d[a]) <= min(by_d[b]) and max(by_d[a]) <= max(by_d[b])
                                   for a, b in zip(widths, widths[1:])) else "no"
    out["best"] = pct(max(max(v) for v in by_d.values()))
    closed = [r for r in records if r["run_name"] == "closed-form"]
    out["closed"] = pct(closed[0]["metrics"]["accuracy"]) if closed else "n/a"
    smallest = min((r["metrics"] for r in trained), key=lambda m: m["n_params"])
    out["smallest-params"] = f"{smallest['n_params']:,}"
    out["smallest"] = pct(smallest["accuracy"])
    out["seeds"] = seeds_note(trained)
    return {f"dyck-capacity-{k}": v for k, v in out.items()}


def capacity_verdict(records) -> str:
    """'reproduced' if deep accuracy grows with width (every shape of a width at least as good
    as every shape of the narrower one, which the paper's figure shows), else 'partly'."""
    return ("reproduced" if capacity_numbers(records)["dyck-capacity-monotone"] == "yes"
            else "partly")


def _samples_cells(records) -> dict:
    """{(training depth, training-set size): [deep-test accuracy of each seed]} of Fig. 3
    right's trained models."""
    trained = [r for r in records if r["run_name"] != "closed-form"]
    return {key: [m["out_of_sample"] for m in seeds]
            for key, seeds in _seeds_of(trained, "max_depth", "train_size").items()}


def _pairs(sizes, steps, which) -> str:
    """'1 and 10 words (depth ≤ 4 and 8); ...': the pairs of consecutive sizes whose step is
    `which`, with the training depths where it is."""
    groups = {}
    for (q, a, b), step in steps.items():
        if step == which:
            groups.setdefault((a, b), []).append(q)
    return "; ".join(f"{a:,} and {b:,} words (depth ≤ {listing(str(q) for q in qs)})"
                     for (a, b), qs in sorted(groups.items())) or "none"


def samples_numbers(records) -> dict:
    """Fig. 3 right over every seed: each point as its mean with the min-max range over seeds.
    A curve rises or falls between two sizes only where the ranges over seeds are apart; a
    curve is 'monotone' ('yes') if it rises at every step, 'no' if it falls at some step, and
    'not separated' otherwise (some steps do not differ at this scale)."""
    trained = [r for r in records if r["run_name"] != "closed-form"]
    acc = _samples_cells(records)
    ins = {key: [m["in_sample"] for m in seeds]
           for key, seeds in _seeds_of(trained, "max_depth", "train_size").items()}
    depths = sorted({q for q, _ in acc})
    sizes = sorted({s for _, s in acc})
    steps = {(q, a, b): _step(acc[(q, a)], acc[(q, b)])
             for q in depths for a, b in zip(sizes, sizes[1:])}
    out = {"one-word": span([v for q in depths for v in acc[(q, sizes[0])]], pct),
           "largest": f"{sizes[-1]:,}", "seeds": seeds_note(trained)}
    for q in depths:
        out[f"q{q}-curve"] = listing(mean_span(acc[(q, s)]) for s in sizes)
        out[f"q{q}-largest"] = mean_span(acc[(q, sizes[-1])])
        mine = [steps[(q, a, b)] for a, b in zip(sizes, sizes[1:])]
        out[f"q{q}-monotone"] = ("yes" if all(s == "rises" for s in mine) else
                                 "no" if "falls" in mine else "not separated")
        out[f"q{q}-in"] = span([v for s in sizes for v in ins[(q, s)]], pct)
    out["rises"] = _pairs(sizes, steps, "rises")
    out["falls"] = _pairs(sizes, steps, "falls")
    out["same"] = _pairs(sizes, steps, "same")
    # a point above both neighbours, its range over seeds apart from theirs
    bumps = [f"{mean_span(acc[(q, s)])} with {s:,} words of depth ≤ {q}"
             for q in depths for a, s, b in zip(sizes, sizes[1:], sizes[2:])
             if steps[(q, a, s)] == "rises" and steps[(q, s, b)] == "falls"]
    out["bumps"] = listing(bumps) if bumps else "none"
    out["non-monotone"] = str(sum(out[f"q{q}-monotone"] == "no" for q in depths))
    out["depths"] = str(len(depths))
    shallow, deeper = depths[0], depths[1:]
    lowest = all(_separate(acc[(q, sizes[-1])], acc[(shallow, sizes[-1])]) for q in deeper)
    out["shallow-lowest"] = "yes" if lowest else "no"
    out["shallow-lowest-text"] = (
        "below every deeper training depth: the ranges over seeds are apart" if lowest else
        "not below every deeper training depth at this scale: the ranges over seeds overlap")
    return {f"dyck-samples-{k}": v for k, v in out.items()}


def samples_verdict(records) -> str:
    """The paper's shape: more words help at every training depth above the shallowest, and the
    shallowest training depth stays lowest with many words. Over seeds, with a difference only
    where the ranges are apart: the end points agree if, for every deeper training depth, the
    range at the largest training set lies above the range with one word, and the shallowest
    depth's range at the largest set lies below every deeper depth's. 'reproduced' if the end
    points agree, every deeper curve rises at every step and no curve falls at any step;
    'partly' if only the end points agree; else 'not reproduced'."""
    acc = _samples_cells(records)
    depths = sorted({q for q, _ in acc})
    sizes = sorted({s for _, s in acc})
    shallow, deeper = depths[0], depths[1:]
    ends = (all(_separate(acc[(q, sizes[-1])], acc[(q, sizes[0])]) for q in deeper)
            and all(_separate(acc[(q, sizes[-1])], acc[(shallow, sizes[-1])]) for q in deeper))
    steps = {(q, a): _step(acc[(q, a)], acc[(q, b)])
             for q in depths for a, b in zip(sizes, sizes[1:])}
    rising = all(steps[(q, a)] == "rises" for q in deeper for a in sizes[:-1])
    falling = any(step == "falls" for step in steps.values())
    return ("reproduced" if ends and rising and not falling else "partly" if ends
            else "not reproduced")


def _per_model(records, key="model") -> dict:
    """{model: [metrics of each seed, in seed order]} of a figure that studies trained models."""
    out = {}
    for r in sorted(records, key=lambda r: r["params"]["seed"]):
        out.setdefault(r["params"][key], []).append(r["metrics"])
    return out


def _dominant(m) -> tuple[float, float]:
    """(real, imaginary) part of the eigenvalue of largest modulus of a Fig. 5 record."""
    return max(zip(m["eigenvalues_real"], m["eigenvalues_imag"]), key=lambda z: math.hypot(*z))


def completions_numbers(fig4, table1, spectrum) -> dict:
    """Fig. 4, Table 1 and Fig. 5: each quoted as its range over the seeds (each seed studies
    its own single-word and many-word model)."""
    ctx = {m: [x["contexts"] for x in rows] for m, rows in _per_model(fig4).items()}
    single, many = ctx["single"], ctx["many"]
    order = fig4[0]["metrics"]["order"]
    own = [k for k in order if "training prefix" in k][0]
    others = [k for k in order if k != own]
    deep_context = [k for k in order if "deeper" in k][0]
    rate = lambda runs, k: [c[k]["accuracy"] for c in runs]  # noqa: E731
    deep = _per_model(table1)
    spec = _per_model(spectrum)
    shares = {m: [x["top_singular_share"] for x in rows] for m, rows in spec.items()}
    dominant = [_dominant(x) for x in spec["many"]]
    negative = [re for re, im in dominant if im == 0 and re < 0]
    separate = _separate(shares["many"], shares["single"])
    balanced = {m: [x["balanced"] for x in rows] for m, rows in deep.items()}
    return {"dyck-fig4-seeds": seeds_note(fig4),
            "dyck-fig4-single-own": span(rate(single, own), pct),
            "dyck-fig4-single-others": listing(span(rate(single, k), pct) for k in others),
            "dyck-fig4-many": span([v for k in order for v in rate(many, k)], pct),
            "dyck-fig4-many-deep": span(rate(many, deep_context), pct),
            "dyck-fig4-many-rest": span([v for k in order if k != deep_context
                                         for v in rate(many, k)], pct),
            "dyck-fig4-many-distinct": span([c[k]["distinct"] for c in many for k in order],
                                            lambda v: str(round(v))),
            "dyck-fig4-trials": str(fig4[0]["config"]["trials"]),
            "dyck-table1-seeds": seeds_note(table1),
            "dyck-table1-many": span(balanced["many"], lambda v: str(round(v))),
            "dyck-table1-many-mean": num(mean(balanced["many"])),
            "dyck-table1-single": span(balanced["single"], lambda v: str(round(v))),
            "dyck-table1-trials": str(deep["many"][0]["trials"]),
            "dyck-spectrum-seeds": seeds_note(spectrum),
            "dyck-spectrum-many-share": span(shares["many"], pct),
            "dyck-spectrum-single-share": span(shares["single"], pct),
            # a comparison is stated only where the ranges over seeds do not overlap
            "dyck-spectrum-share-comparison": (
                "larger in every many-word model than in every single-word model" if separate
                else "not larger at this scale: the ranges over seeds overlap"),
            "dyck-spectrum-low-rank": "yes" if separate else "no",
            "dyck-spectrum-many-dominant": listing(
                num(re, signed=True) if im == 0 else f"{num(re, signed=True)} ± {num(abs(im))}i"
                for re, im in dominant),
            "dyck-spectrum-many-negative": str(len(negative)),
            "dyck-spectrum-many-models": str(len(dominant))}


FIG4_OBSERVATIONS = ("replays", "fails-elsewhere", "diverse", "deep-lower")


def fig4_checks(fig4) -> dict:
    """The paper's four observations on its Fig. 4 (Richard 2024, Sec. 4.3), each checked in
    every seed: the single-word model completes the prefix of its training word into that word
    in every trial ("replays"); it completes neither the deeper nor the shallow context into a
    balanced word ("fails-elsewhere"); the many-word model samples more distinct completions of
    every context than the single-word model ("diverse"); and its share of balanced completions
    is lower on the deep context than on each of the other two ("deep-lower")."""
    models = _per_model(fig4)
    single, many = models["single"], models["many"]
    order = fig4[0]["metrics"]["order"]
    own = [k for k in order if "training prefix" in k][0]
    deep = [k for k in order if "deeper" in k][0]
    others = [k for k in order if k != own]

    def replays(x):
        c = x["contexts"][own]
        whole = [t for t in c["top"] if c["context"] + t["completion"] == x["single_word"]]
        return bool(whole) and whole[0]["count"] == sum(t["count"] for t in c["top"]) \
            and c["distinct"] == 1
    seeds = sorted({r["params"]["seed"] for r in fig4})
    by_seed = {m: dict(zip(seeds, rows)) for m, rows in (("single", single), ("many", many))}
    return {
        "replays": all(replays(x) for x in single),
        "fails-elsewhere": all(x["contexts"][k]["accuracy"] == 0 for x in single for k in others),
        "diverse": all(by_seed["many"][s]["contexts"][k]["distinct"]
                       > by_seed["single"][s]["contexts"][k]["distinct"]
                       for s in seeds for k in order),
        "deep-lower": all(x["contexts"][deep]["accuracy"] < x["contexts"][k]["accuracy"]
                          for x in many for k in order if k != deep)}


def fig4_verdict(fig4) -> tuple[str, int]:
    """Of the paper's four Fig. 4 observations (`fig4_checks`), how many hold in every seed:
    all four 'reproduced', none 'not reproduced', else 'partly'; and that count."""
    held = sum(fig4_checks(fig4).values())
    return ("reproduced" if held == len(FIG4_OBSERVATIONS) else "not reproduced" if held == 0
            else "partly"), held


def table1_verdict(table1) -> str:
    """The paper's Table 1: the many-word model closes sixteen open brackets sometimes, the
    single-word model never. 'reproduced' if both hold in every seed, 'partly' if one does,
    else 'not reproduced'."""
    deep = _per_model(table1)
    never = all(x["balanced"] == 0 for x in deep["single"])
    sometimes = all(x["balanced"] > 0 for x in deep["many"])
    return ("reproduced" if never and sometimes else "partly" if never or sometimes
            else "not reproduced")


def spectrum_verdict(spectrum) -> str:
    """The paper's Fig. 5: a lower-rank W_O W_V (larger top singular share) in the model that
    generalizes, with a dominant negative real eigenvalue. 'reproduced' if the shares separate
    and every many-word seed has a negative real dominant eigenvalue, 'partly' if one of the
    two holds, else 'not reproduced'."""
    spec = _per_model(spectrum)
    shares = {m: [x["top_singular_share"] for x in rows] for m, rows in spec.items()}
    low_rank = _separate(shares["many"], shares["single"])
    negative = all(im == 0 and re < 0 for re, im in map(_dominant, spec["many"]))
    return ("reproduced" if low_rank and negative else "partly" if low_rank or negative
            else "not reproduced")


def sign_study_numbers(records) -> dict:
    m = {}
    for r in records:
        m.setdefault(r["params"]["setting"], []).append(r["metrics"])
    real = lambda rows: [x["wo_wv_real"] for x in rows]  # noqa: E731
    negative = lambda rows: [x for x in rows if x["wo_wv_imag"] == 0  # noqa: E731
                             and x["wo_wv_real"] < 0]
    oos = lambda rows: span([x["out_of_sample"] for x in rows], pct)  # noqa: E731
    out = {"seeds": str(min(len(v) for v in m.values())), "settings": str(len(m)),
           "models": str(len(records))}
    for setting, rows in m.items():
        out[f"{setting}-real"] = span(real(rows), lambda v: num(v, signed=True))
        out[f"{setting}-oos"] = oos(rows)
        out[f"{setting}-negative"] = str(len(negative(rows)))
        out[f"{setting}-complex"] = str(sum(x["wo_wv_imag"] != 0 for x in rows))
        out[f"{setting}-positive"] = str(sum(x["wo_wv_imag"] == 0 and x["wo_wv_real"] > 0
                                             for x in rows))
        neg = negative(rows)
        out[f"{setting}-negative-values"] = (listing(num(x["wo_wv_real"], signed=True)
                                                     for x in sorted(neg, key=lambda x:
                                                                     -x["wo_wv_real"]))
                                             if neg else "none")
        pos = [x for x in rows if x["wo_wv_imag"] == 0 and x["wo_wv_real"] > 0]
        out[f"{setting}-positive-values"] = (listing(num(x["wo_wv_real"], signed=True)
                                                     for x in pos) if pos else "none")
    pair = [x for s in ("wider", "fresh-words") for x in m.get(s, [])]
    if pair:
        out["wider-fresh-negative"] = str(len(negative(pair)))
        out["wider-fresh-models"] = str(len(pair))
        out["wider-fresh-oos"] = oos(pair)
    few = m.get("fewer-words", [])
    if few:
        out["few-min"] = num(min(real(few)), signed=True)
        out["few-modulus"] = span([x["wo_wv_modulus"] for x in few])
        out["few-gap"] = num(max(x["wo_wv_gap"] for x in few))
        out["study-min"] = num(min(x["wo_wv_real"] for rows in m.values() for x in rows),
                               signed=True)
        out["few-is-min"] = "yes" if min(real(few)) == min(
            x["wo_wv_real"] for rows in m.values() for x in rows) else "no"
    good = [x for s, rows in m.items() if s != "fewer-words" for x in rows]
    out["good-modulus"] = span([x["wo_wv_modulus"] for x in good])
    out["good-gap"] = num(max(x["wo_wv_gap"] for x in good))
    every = [x for rows in m.values() for x in rows]
    out["gain-min"] = num(min(x["ln_gain_min"] for x in every))
    out["gain-negative-models"] = str(sum(x["ln_gain_negative_share"] > 0 for x in every))
    same = [x for x in every if (x["effective_real"] > 0) == (x["wo_wv_real"] > 0)]
    out["same-sign"] = str(len(same))
    out["effective-diff"] = num(max(abs(x["effective_real"] - x["wo_wv_real"]) for x in every))
    out["reading-ratio"] = span([x["wo_wv_modulus"] / x["wv_wot_modulus"] for x in every])
    return {f"dyck-sign-{k}": v for k, v in out.items()}


def order_study_numbers(records) -> dict:
    cell = {}
    for r in records:
        cell.setdefault((r["params"]["setting"], r["params"]["variant"]), []).append(r["metrics"])
    settings = list(dict.fromkeys(r["params"]["setting"] for r in records))
    stat = lambda s, v, k: mean(x[k] for x in cell[(s, v)])  # noqa: E731
    fig7 = ("uniform-pm1", "uniform-pm1-v", "eq1")
    out = {"models": str(len(records)),
           "seeds": str(min(len(v) for v in cell.values())),
           "settings": str(len(settings))}
    stds = {(s, v): stdev([x["end_abs_mean"] for x in rows]) for (s, v), rows in cell.items()}
    out["std-fig7"] = num(max(sd for (s, v), sd in stds.items() if v in fig7))
    out["std-res"] = num(max(sd for (s, v), sd in stds.items() if v == "eq1-res"))
    for v in fig7 + ("eq1-res",):
        out[f"{v}-abs"] = span([stat(s, v, "end_abs_mean") for s in settings])
        out[f"{v}-rel"] = span([stat(s, v, "end_relative") for s in settings])
    lowest = [s for s in settings
              if min(fig7, key=lambda v: stat(s, v, "end_abs_mean")) == "uniform-pm1"]
    out["pm1-lowest"] = ("every setting" if len(lowest) == len(settings) else
                         f"{len(lowest)} of {len(settings)} settings")
    steps = [s for s in ("base", "more-steps", "most-steps") if s in settings]
    for v, key in (("uniform-pm1-v", "pm1v"), ("eq1", "eq1")):
        out[f"{key}-abs-by-steps"] = listing(num(stat(s, v, "end_abs_mean")) for s in steps)
        out[f"{key}-rel-by-steps"] = listing(num(stat(s, v, "end_relative")) for s in steps)
    if "wider" in settings:
        shrink = [1 - stat("wider", v, "end_abs_mean") / stat("base", v, "end_abs_mean")
                  for v in fig7 + ("eq1-res",)]
        out["wider-shrink"] = span(shrink, pct)
        out["wider-all-shrink"] = "yes" if min(shrink) > 0 else "no"
    for s in steps:
        ends = [x["readout_end"] for x in cell[(s, "eq1")]]
        out[f"readout-{s}"] = span(ends, lambda v: num(v, signed=True, digits=3))
    weights = [x["token_weight"] for s in settings for x in cell[(s, "eq1")]]
    out["token-weight"] = span(weights)
    return {f"dyck-order-{k}": v for k, v in out.items()}


def _sizes_text(sizes) -> str:
    return listing(f"{s:,}" for s in sizes) + " words" if sizes else "no size"


def ablation_numbers(records) -> dict:
    """Fig. 6 over every seed: each variant's out-of-sample accuracy per training-set size as
    its mean with the min-max range over seeds. A variant is above or below another at a size
    only where their ranges over seeds are apart."""
    acc = {key: [m["out_of_sample"] for m in seeds]
           for key, seeds in _seeds_of(records, "variant", "k").items()}
    ks = sorted({k for _, k in acc})
    variants = list(dict.fromkeys(v for v, _ in acc))
    size = {k: 4 ** k for k in ks}
    out = {"sizes": listing(f"{size[k]:,}" for k in ks), "largest": f"{size[ks[-1]]:,}",
           "smallest": f"{size[ks[0]]:,}", "seeds": seeds_note(records)}
    for v in variants:
        out[f"{v}"] = listing(mean_span(acc[(v, k)]) for k in ks)
        out[f"{v}-range"] = span([x for k in ks for x in acc[(v, k)]], pct)

    def above(high, low, k):
        return _separate(acc[(high, k)], acc[(low, k)])
    best = [v for v in variants if all(above(v, o, ks[0]) for o in variants if o != v)]
    out["best-few"] = best[0] if best else "none"
    out["best-few-text"] = (f"{best[0]}, whose range over seeds lies above every other "
                            "variant's" if best else
                            "no variant at this scale: the ranges over seeds overlap")
    below = [k for k in ks if above("full", "nope", k)]
    out["nope-below-at"] = _sizes_text([size[k] for k in below])
    out["nope-below-everywhere"] = "yes" if len(below) == len(ks) else "no"
    # behind some variant with the fewest words, behind none with the most
    behind = lambda k: [v for v in variants if v != "full" and above(v, "full", k)]  # noqa: E731
    out["full-catches-up"] = "yes" if behind(ks[0]) and not behind(ks[-1]) else "no"
    out["full-behind-smallest"] = listing(behind(ks[0])) if behind(ks[0]) else "none"
    out["full-behind-largest"] = listing(behind(ks[-1])) if behind(ks[-1]) else "none"
    eq1_above = [k for k in ks if above("eq1", "uniform-pm1-v", k)]
    out["eq1-beats-frozen-v"] = "yes" if len(eq1_above) == len(ks) else "no"
    out["eq1-above-frozen-v-at"] = _sizes_text([size[k] for k in eq1_above])
    eq1_below = [k for k in ks if above("uniform-pm1-v", "eq1", k)]
    out["eq1-below-frozen-v-at"] = _sizes_text([size[k] for k in eq1_below])
    same = [size[k] for k in ks if k not in eq1_above + eq1_below]
    out["eq1-vs-frozen-v"] = "; ".join(
        [f"above it with {_sizes_text([size[k] for k in eq1_above])}"] * bool(eq1_above)
        + [f"below it with {_sizes_text([size[k] for k in eq1_below])}"] * bool(eq1_below)
        + [("not different from it at this scale with " + _sizes_text(same)
            if len(same) < len(ks) else "not different from it at any size at this scale")
           + " (the ranges over seeds overlap)"] * bool(same))
    frozen_below = [k for k in ks if above("uniform-pm1", "uniform-pm1-v", k)]
    out["frozen-v-below-at"] = ("every size" if len(frozen_below) == len(ks)
                                else _sizes_text([size[k] for k in frozen_below]))
    return {f"dyck-ablation-{k}": v for k, v in out.items()}


def ablation_verdict(records) -> tuple[str, int]:
    """Of the paper's four observations, how many hold over seeds, each comparison counted only
    where the ranges over seeds are apart: uniform ±1 best with the fewest words (its range
    above every other variant's); full catches up (its range below some variant's with the
    fewest words and below none with the most); NoPE below full at every size; the single
    head (eq1) above the frozen-V decoder at every size. All: 'reproduced'; none: 'not
    reproduced'; else 'partly'."""
    n = ablation_numbers(records)
    held = sum([n["dyck-ablation-best-few"] == "uniform-pm1",
                n["dyck-ablation-full-catches-up"] == "yes",
                n["dyck-ablation-nope-below-everywhere"] == "yes",
                n["dyck-ablation-eq1-beats-frozen-v"] == "yes"])
    return ("reproduced" if held == 4 else "not reproduced" if held == 0 else "partly"), held


def learned_pe_numbers(records) -> dict:
    """Fig. 7: each variant's mean absolute end value, its range over the seeds; the variant
    closest to zero is named only where its range lies below every other variant's."""
    ends = {v: [x["end_abs_mean"] for x in rows]
            for v, rows in _per_model(records, "variant").items()}
    closest = [v for v in ends if all(_separate(ends[o], ends[v]) for o in ends if o != v)]
    return {**{f"dyck-learned-pe-{v}": span(e) for v, e in ends.items()},
            "dyck-learned-pe-seeds": seeds_note(records),
            "dyck-learned-pe-closest": closest[0] if closest else "none",
            "dyck-learned-pe-closest-text": (
                f"{closest[0]}, whose range over seeds lies below the other two" if closest
                else "no variant at this scale: the ranges over seeds overlap")}


FIG7_VARIANTS = ("uniform-pm1", "uniform-pm1-v", "eq1")   # learned V, frozen V, single head


def _order_of(ends: dict) -> dict:
    """Of one place (the figure's models, or one setting of the study), given each Fig. 7
    variant's mean absolute end value per seed: whether the learned-V decoder ends closest to 0
    ("reverse", its range over seeds below both others'), and whether the paper's order holds
    (frozen V below learned V and the single head below both, ranges apart)."""
    learned, frozen, single = (ends[v] for v in FIG7_VARIANTS)
    return {"reverse": _separate(frozen, learned) and _separate(single, learned),
            "paper": _separate(learned, frozen) and _separate(frozen, single)
            and _separate(learned, single)}


def order_checks(learned, study) -> dict:
    """Fig. 7's order in the figure's models and in each setting of the order study."""
    fig = {v: [x["end_abs_mean"] for x in rows]
           for v, rows in _per_model(learned, "variant").items()}
    cells = {}
    for r in study:
        cells.setdefault(r["params"]["setting"], {}).setdefault(
            r["params"]["variant"], []).append(r["metrics"]["end_abs_mean"])
    settings = {s: _order_of(v) for s, v in cells.items()}
    return {"figure": _order_of(fig), "settings": settings}


def order_verdict(learned, study) -> str:
    """The paper's Fig. 7 order: the curves end closer to 0 with V frozen than with V learned,
    and closest for the single head. Checked in the figure's models and in every setting of
    the order study, a comparison counting only where the ranges over seeds are apart:
    'reproduced' if the paper's order holds in the figure and in every setting; 'not
    reproduced' if the reverse holds there instead (the learned-V decoder ends closest, in the
    figure and in every setting); else 'partly'."""
    checks = order_checks(learned, study)
    places = [checks["figure"], *checks["settings"].values()]
    return ("reproduced" if all(p["paper"] for p in places) else
            "not reproduced" if all(p["reverse"] for p in places) else "partly")


def order_numbers(learned, study) -> dict:
    """The counts behind `order_verdict`, for the table."""
    checks = order_checks(learned, study)
    settings = checks["settings"].values()
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    return {"dyck-order-figure-reverse": yes(checks["figure"]["reverse"]),
            "dyck-order-figure-paper": yes(checks["figure"]["paper"]),
            "dyck-order-reverse-settings": str(sum(p["reverse"] for p in settings)),
            "dyck-order-paper-settings": str(sum(p["paper"] for p in settings)),
            "dyck-order-checked-settings": str(len(checks["settings"]))}


def closed_form_numbers(paths, thm) -> dict:
    ex = [r["metrics"] for r in thm if r["run_name"].startswith("exhaustive")]
    sampled = [r["metrics"] for r in thm if r["run_name"].startswith("sampled")]
    rates = [m["generalization_rate"] for m in ex + sampled if "generalization_rate" in m]
    above = all(m["generalization_min_probability"] >= m["probability_bound"]
                for m in ex + sampled if "probability_bound" in m)
    largest = max((m for m in ex), key=lambda m: m["n"])
    return {"dyck-closed-exhaustive-n": str(largest["n"]),
            "dyck-closed-exhaustive-prefixes": f"{largest['n_prefixes']:,}",
            "dyck-closed-exhaustive-words": str(largest["n_train_words"]),
            "dyck-closed-rate": span(rates, pct),
            "dyck-closed-above-bound": "yes" if above else "no",
            "dyck-closed-path-balanced": "yes" if paths[0]["metrics"]["balanced"] else "no"}


DYCK_TRAINED = ("richard-fig1-boolean", "richard-fig3-left-capacity",
                "richard-fig3-right-samples", "richard-fig6-ablation",
                "richard-fig5-sign-study", "richard-fig7-order-study")


# the figures of the chapter that train models (or open trained ones) and draw their seeds
DYCK_SEEDED = ("richard-fig1-boolean", "richard-fig3-left-capacity", "richard-fig3-right-samples",
               "richard-fig4-completions", "richard-table1-deepest", "richard-fig5-spectrum",
               "richard-fig6-ablation", "richard-fig7-learned-pe")


def dyck_numbers(root=None) -> dict:
    """Every record-derived number the Dyck chapter quotes."""
    rec = lambda fid: _records(fid, root)  # noqa: E731
    out = {}
    out.update(boolean_numbers(rec("richard-fig1-boolean")))
    out.update(capacity_numbers(rec("richard-fig3-left-capacity")))
    out.update(samples_numbers(rec("richard-fig3-right-samples")))
    out.update(completions_numbers(rec("richard-fig4-completions"), rec("richard-table1-deepest"),
                                   rec("richard-fig5-spectrum")))
    out.update(sign_study_numbers(rec("richard-fig5-sign-study")))
    out.update(ablation_numbers(rec("richard-fig6-ablation")))
    out.update(learned_pe_numbers(rec("richard-fig7-learned-pe")))
    out.update(order_study_numbers(rec("richard-fig7-order-study")))
    out.update(closed_form_numbers(rec("richard-fig2-closed-form-paths"),
                                   rec("richard-thm41-closed-form")))
    times = {fid: wall_times(rec(fid)) for fid in DYCK_TRAINED}
    out["dyck-wall-times"] = listing(seconds(t) for t in sorted(times.values()))
    # the trained figures whose records still have one seed per point (closed forms aside)
    one = [fid for fid in DYCK_SEEDED
           if seeds_note([r for r in rec(fid) if r["params"].get("kind") != "closed-form"])
           == "1 seed"]
    out["dyck-one-seed"] = listing(f"`{fid}`" for fid in one) if one else "none"
    return out


def dyck_verdicts(root=None) -> dict:
    rec = lambda fid: _records(fid, root)  # noqa: E731
    ablation, held = ablation_verdict(rec("richard-fig6-ablation"))
    return {"dyck-boolean-verdict": boolean_verdict(rec("richard-fig1-boolean")),
            "dyck-capacity-verdict": capacity_verdict(rec("richard-fig3-left-capacity")),
            "dyck-samples-verdict": samples_verdict(rec("richard-fig3-right-samples")),
            "dyck-ablation-verdict": ablation, "dyck-ablation-held": str(held),
            "dyck-fig4-verdict": fig4_verdict(rec("richard-fig4-completions"))[0],
            "dyck-fig4-held": str(fig4_verdict(rec("richard-fig4-completions"))[1]),
            **{f"dyck-fig4-{k}": "yes" if v else "no"
               for k, v in fig4_checks(rec("richard-fig4-completions")).items()},
            "dyck-table1-verdict": table1_verdict(rec("richard-table1-deepest")),
            "dyck-spectrum-verdict": spectrum_verdict(rec("richard-fig5-spectrum")),
            "dyck-order-verdict": order_verdict(rec("richard-fig7-learned-pe"),
                                                rec("richard-fig7-order-study")),
            **order_numbers(rec("richard-fig7-learned-pe"), rec("richard-fig7-order-study"))}


def dyck_paper_vs_book(root=None) -> str:
    """The Dyck chapter's 'Paper vs this book' table; verdicts from the records."""
    n = {**dyck_numbers(root), **dyck_verdicts(root)}
    d = lambda key: n["dyck-" + key]  # noqa: E731
    fig = lambda *labels: ", ".join("{numref}`" + x + "`" for x in labels)  # noqa: E731
    table1 = (f"{d('table1-many')} of {d('table1-trials')} (mean {d('table1-many-mean')}) and "
              f"{d('table1-single')} of {d('table1-trials')} balanced")
    rows = [
        [f"`richard-fig1-boolean` ({fig('fig-dyck-boolean')})",
         "Fig. 1: depth-3 model at depth 3: 68% in-sample, 9% out-of-sample; $d = 1024$, "
         "$10^5$ steps, 10,000 test expressions",
         f"$d = 64$, 2 layers, 2,000 steps, {d('boolean-n-in')} in-sample and "
         f"{d('boolean-n-out')} out-of-sample test expressions, {d('boolean-seeds')}",
         f"**{d('boolean-verdict')}** ({d('boolean-seeds')})",
         f"depth 3: in-sample {d('boolean-in-d3')} (training depths 1 to 4) against "
         f"{d('boolean-base-d3')} for the trivial predictor; out-of-sample {d('boolean-oos-d3')}"],
        [f"`richard-fig2-closed-form-paths`, `richard-thm41-closed-form` "
         f"({fig('fig-dyck-paths', 'fig-dyck-thm41')})",
         "Fig. 2, Theorems 3.1 and 4.1 (proofs, no experiment)",
         "the construction, exhaustive for $N \\le 8$, sampled for $\\mathcal{D}_{32}$",
         "**reproduced**" if d("closed-rate") == "100%" and d("closed-above-bound") == "yes"
         else "**not reproduced**",
         f"balanced completions {d('closed-rate')}; every probability above the bound: "
         f"{d('closed-above-bound')}"],
        [f"`richard-fig3-left-capacity` ({fig('fig-dyck-capacity')})",
         "Fig. 3 left: deep accuracy grows with width, up to $d = 1024$",
         f"$d \\in \\{{2, 8, 32\\}}$, 400 steps, 128 prefixes, {d('capacity-seeds')}",
         f"**{d('capacity-verdict')}** ({d('capacity-seeds')})",
         f"$d = 2$: {d('capacity-d2')}, $d = 8$: {d('capacity-d8')}, $d = 32$: "
         f"{d('capacity-d32')}; closed form {d('capacity-closed')}"],
        [f"`richard-fig3-right-samples` ({fig('fig-dyck-samples')})",
         "Fig. 3 right: more words help; depth $\\le 4$ stays low; $10^k$ words, $k \\le 7$",
         f"$d = 32$, up to {d('samples-largest')} words, {d('samples-seeds')}; the `paper` "
         "config uses one rate of the paper's range",
         f"**{d('samples-verdict')}** ({d('samples-seeds')})",
         f"deep test by training-set size: depth $\\le 4$ {d('samples-q4-curve')}; $\\le 8$ "
         f"{d('samples-q8-curve')}; $\\le 12$ {d('samples-q12-curve')}"],
        [f"`richard-fig4-completions` ({fig('fig-dyck-completions')})",
         "Fig. 4: the 1-word model replays its word on its prefix and fails a deeper and a "
         "shallow context; the $10^7$-word model is more diverse, and less accurate on the "
         "deep context",
         f"the 1-word and 1,000-word models of Fig. 3 right, {d('fig4-trials')} trials, "
         f"{d('fig4-seeds')}",
         f"**{n['dyck-fig4-verdict']}** ({d('fig4-held')} of the paper's 4 observations hold "
         f"in every seed, {d('fig4-seeds')}; rule: all 4, reproduced; none, not reproduced; "
         f"else partly)",
         f"1-word models: {d('fig4-single-own')} balanced on their own prefix (their word "
         f"replayed: {d('fig4-replays')}), "
         f"{d('fig4-single-others')} elsewhere; many-word models more diverse: "
         f"{d('fig4-diverse')}; their deep context {d('fig4-many-deep')} against "
         f"{d('fig4-many-rest')} on the other two (lower, as the paper's: "
         f"{d('fig4-deep-lower')})"],
        [f"`richard-table1-deepest` ({fig('fig-dyck-deepest')})",
         "Table 1: sixteen open brackets: 52/100 ($10^7$ words) and 0/100 (1 word)",
         "the same models", f"**{n['dyck-table1-verdict']}** ({d('table1-seeds')})", table1],
        [f"`richard-fig5-spectrum`, `richard-fig5-sign-study` "
         f"({fig('fig-dyck-spectrum', 'fig-dyck-sign-study')})",
         "Fig. 5: low rank, dominant negative real eigenvalue",
         f"the Fig. 4 models, {d('spectrum-seeds')}; the study: {d('sign-settings')} settings, "
         f"{d('sign-seeds')} seeds",
         f"**{n['dyck-spectrum-verdict']}** ({d('spectrum-seeds')})",
         f"top singular share {d('spectrum-many-share')} against {d('spectrum-single-share')}; "
         f"dominant eigenvalue of the many-word models {d('spectrum-many-dominant')}; "
         f"negative for "
         f"{d('sign-more-steps-negative')} of {d('sign-seeds')} seeds at 2,000 steps"],
        [f"`richard-fig6-ablation` ({fig('fig-dyck-ablation')})",
         "Fig. 6: four observations on five variants, $4^k$ words, $k \\le 12$",
         f"{d('ablation-sizes')} words, $d = 32$, {d('ablation-seeds')}; `eq1` without "
         "residual or LayerNorm",
         f"**{d('ablation-verdict')}** ({d('ablation-held')} of 4 hold, {d('ablation-seeds')})",
         f"by training-set size: full {d('ablation-full')}; nope {d('ablation-nope')}; "
         f"uniform-pm1 {d('ablation-uniform-pm1')}; uniform-pm1-v "
         f"{d('ablation-uniform-pm1-v')}; eq1 {d('ablation-eq1')}"],
        [f"`richard-fig7-learned-pe`, `richard-fig7-order-study` "
         f"({fig('fig-dyck-learned-pe', 'fig-dyck-order-study')})",
         "Fig. 7: curves end closer to 0 with $V$ frozen, closest for the single head",
         f"the Fig. 6 models, {d('learned-pe-seeds')}; the study: {d('order-settings')} "
         f"settings, {d('order-seeds')} seeds",
         f"**{d('order-verdict')}** (rule: the paper's order in the figure and in every "
         f"setting, reproduced; the reverse there, not reproduced; else partly. The paper's "
         f"order in the figure: "
         f"{d('order-figure-paper')}, in {d('order-paper-settings')} of "
         f"{d('order-checked-settings')} settings; the reverse, learned $V$ closest: "
         f"{d('order-figure-reverse')}, in {d('order-reverse-settings')} of "
         f"{d('order-checked-settings')}; ranges over seeds apart)",
         f"mean absolute end in the figure ({d('learned-pe-seeds')}): learned $V$ "
         f"{d('learned-pe-uniform-pm1')}, frozen $V$ {d('learned-pe-uniform-pm1-v')}, eq1 "
         f"{d('learned-pe-eq1')}; in the study (means per setting): learned $V$ "
         f"{d('order-uniform-pm1-abs')}, frozen $V$ {d('order-uniform-pm1-v-abs')}, eq1 "
         f"{d('order-eq1-abs')}"],
    ]
    return _table(PAPER_VS_BOOK_HEADER, rows)


# ---------------------------------------------------------------- C-RASP

def crasp_paper_vs_book(root=None) -> str:
    """The C-RASP chapter's 'Paper vs this book' table: the paper's claims are proofs, so the
    book's outcome is whether every program it runs agrees with them; settings and counts from
    the configs and the records."""
    from lengthgen.runs.registry import experiment
    rows = []
    for figure_id, label, paper, what, compared in (
            ("huang-table2-languages", "tab-crasp-languages",
             "Table 2 (App. E.1): C-RASP[] and C-RASP[periodic,local] membership of 18 languages, "
             "settled by proof sketches; no programs are run", "strings",
             "prefix verdicts"),
            ("huang-table3-algorithmic", "tab-crasp-algorithmic",
             "Table 3 (App. E.2): the same for 8 algorithmic tasks, by proof sketches",
             "instances", "distinct instances")):
        module = experiment(figure_id)
        data = module.data(_records(figure_id, root))
        yes = [r for r in data if r["entry"] == "yes"]
        agree = sum(bool(r["agrees"]) for r in data)
        clean = all(r["verified"] and not r["disagreements"] for r in yes)
        checked = sorted({int(r["checked"]) for r in yes})
        verdict = "matches" if agree == len(data) and clean else "differs"

        def setting(scale):
            c = module.CONFIGS[scale]
            exhaustive = (f"all strings up to length {c['max_length']}, " if "max_length" in c
                          and figure_id.endswith("languages") else "")
            lengths = f"{c['n_lengths']} lengths, " if "n_lengths" in c else ""
            return (f"every \"yes\" a library program checked on {exhaustive}{lengths}"
                    f"{c['n_random']:,} random {what} up to length {c['max_random_length']:,}; "
                    f"every \"no\" cites its proof")
        rows.append([f"`{figure_id}` ({{numref}}`{label}`)", paper, setting("book"),
                     f"**{verdict}**",
                     f"{agree} of {len(data)} cells agree with the paper; "
                     f"{sum(not r['disagreements'] for r in yes)} of {len(yes)} \"yes\" cells' "
                     f"programs agree on all of them ({span(checked, lambda c: f'{c:,}')} {compared} "
                     f"compared per program)"])
    unary = experiment("crasp-long-unary")
    data = unary.data(_records("crasp-long-unary", root))
    last = {}
    for r in data:
        last[(r["program"], r["fragment"])] = max(last.get((r["program"], r["fragment"]), 0),
                                                  int(r["last_change_any"]))
    n = unary.CONFIGS["book"]["n"]
    plain = [v for (p, f), v in last.items() if "periodic" not in f]
    periodic = [v for (p, f), v in last.items() if "periodic" in f]
    unary_ok = max(plain) < n and all(v > max(plain) for v in periodic)
    rows.append(["`crasp-long-unary` ({numref}`fig-crasp-unary`)",
                 "Lemmas 37 and 38: a proof, **no experiment**",
                 f"all {len(last)} library programs on $a^n$, $n \\le {n:,}$",
                 f"**{'matches' if unary_ok else 'differs'}**",
                 f"the {len(plain)} programs without "
                 f"periodic relations stop changing by $n = {max(plain)}$; the "
                 f"{len(periodic)} periodic ones still change at $n = {min(periodic):,}$ or later"])
    check = experiment("crasp-compile-check")
    data = check.data(_records("crasp-compile-check", root))
    book = check.CONFIGS["book"]
    heavi = [r for r in data if r["mode"] == "heaviside"]
    relu = [r for r in data if r["mode"] == "relu"]
    broken = [r for r in data if r["mode"] == "relu_break"]
    within = all(r["exact"] for r in broken if r["length"] <= r["max_length"])
    first_wrong = {}
    for r in sorted(broken, key=lambda r: r["length"]):
        if r["length"] > r["max_length"] and r["accept_agree"] < r["positions"]:
            first_wrong.setdefault(r["program"], r["length"])
    programs = {r["program"] for r in data}
    exact = all(r["exact"] for r in heavi) and all(r["exact"] for r in relu) and within
    wrong = sorted(first_wrong.values())
    rows.append(["`crasp-compile-check` (not drawn in this chapter; the cells of \"From program "
                 "to transformer\" run the same compiler)",
                 "Theorem 9: a construction, **no experiment**",
                 f"all {len(programs)} programs compiled with Heaviside and with ReLU comparisons, "
                 f"run at lengths up to {max(book['lengths']):,}; ReLU compiled for length "
                 f"{book['relu_max_length']} and run up to {max(book['break_lengths']):,}",
                 f"**{'matches' if exact else 'differs'}**",
                 f"Heaviside exact at every length "
                 f"(largest deviation {num(max(r['max_error'] for r in heavi), digits=1)}); "
                 f"ReLU exact within the length it was compiled for, and beyond it "
                 f"{len(first_wrong)} of {len(programs)} programs give a wrong output by length "
                 + (f"{wrong[0]} to {wrong[-1]}" if wrong else "(none)")])
    return _table(PAPER_VS_BOOK_COLUMNS, rows)
