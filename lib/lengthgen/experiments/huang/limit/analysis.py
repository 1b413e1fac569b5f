"""The Limit Transformers chapter's numbers, verdicts and "Paper vs this book" table (Huang
et al. 2025: the positional fits, Proposition 54, the inference procedure), from the committed
records.

`limit_numbers()` returns {key: text}: the chapter glues it and its prose pastes each key with
{glue:md}`key`, so that text and data cannot drift apart; each verdict follows the rule written
next to it. `limit_paper_vs_book()` is the chapter's table. `FITS` and `fits` are the book's
one rule for a run that fits its training lengths.
"""
import math

from lengthgen.experiments.huang.limit.rows import summary
from lengthgen.experiments.prose import (PAPER_VS_BOOK_HEADER, chapter_records, listing,
                                         markdown_table, num, pct, seeds_note, separate, span)


def positional_numbers(records: list[dict]) -> dict:
    """The numbers of the positional-fit section (huang-fig5-6-positional).

    Feeds: book/limit_transformers.ipynb, {numref}`fig-huang-positional`,
    {numref}`tab-huang-positional`"""
    from lengthgen.theory.positional_targets import TARGETS
    config = records[0]["config"]
    train, longest = config["train_length"], max(config["test_lengths"])
    middle = 2 * train if 2 * train in config["test_lengths"] else sorted(
        config["test_lengths"])[len(config["test_lengths"]) // 2]
    first, last = config["checkpoints"][0], config["steps"]
    at = {n: summary(records, n) for n in (train, middle, longest)}

    def rows(n, kind, widths=None):
        return [r for r in at[n] if r["kind"] == kind and (widths is None or r["width"] in widths)]

    widths = sorted(config["widths"])
    small, wide = widths[0], [w for w in widths if w > widths[0]]
    def ratio(n, kind, widths=None):
        return [r["ratio_to_constant"] for r in rows(n, kind, widths)]

    def unseen(n, kind, widths=None):
        return [r["unseen_mse"] for r in rows(n, kind, widths)]

    out = {"limit-positional-n-train": str(train),
           "limit-positional-n-middle": str(middle),
           "limit-positional-n-longest": str(longest),
           "limit-positional-steps": f"{last:,}",
           "limit-positional-first-checkpoint": f"{first:,}",
           "limit-positional-seeds": seeds_note(records),
           "limit-positional-d-small": str(small),
           "limit-positional-d-wide": str(wide[0]),
           "limit-positional-train-ratio": span(r["ratio_to_constant"] for r in at[train]),
           "limit-positional-periodic-ratio": span(ratio(longest, "periodic")),
           "limit-positional-periodic-unseen": span(unseen(longest, "periodic")),
           "limit-positional-periodic-unseen-zero": listing(sorted(
               {num(r["unseen_zero_mse"]) for r in rows(longest, "periodic")})),
           "limit-positional-neither-ratio": span(ratio(longest, "neither")),
           "limit-positional-neither-unseen": span(unseen(longest, "neither")),
           "limit-positional-local-small-unseen": listing(
               num(v) for v in unseen(longest, "local", [small])),
           "limit-positional-local-small-ratio": listing(
               num(v) for v in ratio(longest, "local", [small])),
           "limit-positional-local-wide-ratio-middle": span(ratio(middle, "local", wide)),
           "limit-positional-local-wide-ratio": span(ratio(longest, "local", wide)),
           "limit-positional-local-wide-unseen": span(unseen(longest, "local", wide)),
           "limit-positional-local-wide-size": span(
               math.sqrt(v) for v in unseen(longest, "local", wide)),
           "limit-positional-combined-wide-ratio-middle": span(ratio(middle, "combined", wide)),
           "limit-positional-combined-wide-ratio": span(ratio(longest, "combined", wide)),
           "limit-positional-combined-small-ratio": span(ratio(longest, "combined", [small]))}
    # Training longer, per width: the local fits' ratio at n = longest after the first
    # checkpoint and at the end. "worse" if every local target's ratio grew, "better" if every
    # one fell, else "mixed".
    # glue keys: limit-positional-local-d<width>-{longer,early,final}
    for width in widths:
        local = rows(longest, "local", [width])
        early = [r[f"ratio_to_constant_at_{first}_steps"] for r in local]
        final = [r["ratio_to_constant"] for r in local]
        grew = [b > a for a, b in zip(early, final)]
        out[f"limit-positional-local-d{width}-longer"] = (
            "worse" if all(grew) else "better" if not any(grew) else "mixed")
        out[f"limit-positional-local-d{width}-early"] = listing(num(v) for v in early)
        out[f"limit-positional-local-d{width}-final"] = listing(num(v) for v in final)
    # Is each local change from the first checkpoint to the end larger than the seeds' spread?
    # ("separate": for every local target and width, the per-seed ranges do not overlap)
    n = str(longest)
    apart = []
    for target in [t for t in config["targets"] if TARGETS[t][0] == "local"]:
        for width in widths:
            group = [r["metrics"] for r in records if r["params"]["target"] == target
                     and r["params"]["width"] == width]
            early = [m["test_mse_by_steps"][str(first)][n] / m["bands"]["all"][n]["constant"]
                     for m in group]
            final = [m["bands"]["all"][n]["model"] / m["bands"]["all"][n]["constant"]
                     for m in group]
            apart.append(separate(early, final) or separate(final, early))
    out["limit-positional-local-steps-separate"] = (
        "every one of these changes is larger than the spread over seeds" if all(apart) else
        f"{len(apart) - sum(apart)} of {len(apart)} of these changes are within the spread "
        "over seeds")
    # the exercise: the target i - j >= 20
    far = [r for r in rows(longest, "neither") if r["target"] == "i-j>=20"]
    if far:
        out["limit-positional-far-unseen"] = span(r["unseen_mse"] for r in far)
        out["limit-positional-far-ratio"] = span(r["ratio_to_constant"] for r in far)
    return out


def positional_verdict(records: list[dict]) -> tuple[str, str]:
    """Huang et al.'s App. G.2 picture: periodic targets extrapolate at every width, targets
    that are neither do not, local ones do at large width. 'reproduced' if all three hold at
    the longest test length (ratio to the best constant below 1, resp. above), 'partly' if the
    periodic and neither parts hold but local targets fail at the largest width, else 'not'."""
    config = records[0]["config"]
    rows = summary(records, max(config["test_lengths"]))
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
    """Proposition 54's numbers: the regularizer's first-position and all-pairs terms of the
    linear runs (ranges), and how the terms and the length grow across the fixed runs.

    Feeds: book/limit_transformers.ipynb, {numref}`fig-prop54`"""
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
    training length, and how many seeds fit.

    Feeds: book/limit_transformers.ipynb, {numref}`fig-inference-procedure`"""
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
    """Every record-derived number the Limit Transformers chapter quotes.

    Feeds: book/limit_transformers.ipynb (the numbers of every section)"""
    out = {}
    out.update(positional_numbers(chapter_records("huang-fig5-6-positional", root)))
    out.update(prop54_numbers(chapter_records("huang-prop54-regularizer", root)))
    out.update(inference_numbers(chapter_records("limit-inference-procedure", root)))
    return out


def limit_paper_vs_book(root=None) -> str:
    """The Limit chapter's 'Paper vs this book' table; verdicts from the records.

    Feeds: book/limit_transformers.ipynb, {numref}`tab-limit-paper-vs-book`"""
    pos = chapter_records("huang-fig5-6-positional", root)
    n = limit_numbers(root)
    verdict, seeds = positional_verdict(pos)
    p = lambda key: n["limit-positional-" + key]  # noqa: E731
    prop = chapter_records("huang-prop54-regularizer", root)
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
    return markdown_table(PAPER_VS_BOOK_HEADER, rows)
