"""The Dyck chapter's numbers, verdicts and "Paper vs this book" table (Richard 2024), from
the committed records.

`dyck_numbers()` and `dyck_verdicts()` return {key: text}: the chapter glues them and its
prose pastes them with {glue:md}`key`, so that text and data cannot drift apart; each verdict
("reproduced", "partly", "not reproduced") follows the rule written next to it, and a
comparison over seeds is stated only where the ranges over seeds are apart (`prose.separate`).
`dyck_paper_vs_book()` is the chapter's table. The studied models' figures (Figs. 2, 4, 5, 7
and Table 1) are here; the training sweeps' (Figs. 1, 3 and 6) are in `richard.analysis_sweeps`.
"""
import math
from statistics import mean, stdev

from lengthgen.experiments.prose import (PAPER_VS_BOOK_HEADER, chapter_records, listing,
                                         markdown_table, num, pct, seconds, seeds_note, separate,
                                         span)
from lengthgen.experiments.richard.analysis_sweeps import (ablation_numbers, ablation_verdict,
                                                           boolean_numbers, boolean_verdict,
                                                           capacity_numbers, capacity_verdict,
                                                           samples_numbers, samples_verdict,
                                                           wall_times)
from lengthgen.experiments.spread import group_by, metrics


def _per_model(records, key="model") -> dict:
    """{model: [metrics of each seed, in seed order]} of a figure that studies trained models."""
    return group_by(sorted(records, key=lambda r: r["params"]["seed"]),
                    lambda r: r["params"][key], metrics)


def _dominant(m) -> tuple[float, float]:
    """(real, imaginary) part of the eigenvalue of largest modulus of a Fig. 5 record."""
    return max(zip(m["eigenvalues_real"], m["eigenvalues_imag"]), key=lambda z: math.hypot(*z))


def completions_numbers(fig4, table1, spectrum) -> dict:
    """Fig. 4, Table 1 and Fig. 5: each quoted as its range over the seeds (each seed studies
    its own single-word and many-word model).

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-completions`, {numref}`fig-dyck-deepest`,
    {numref}`fig-dyck-spectrum`; book/dyck_appendix.ipynb (the prose that recalls them)"""
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
    low_rank = separate(shares["many"], shares["single"])
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
                "larger in every many-word model than in every single-word model" if low_rank
                else "not larger at this scale: the ranges over seeds overlap"),
            "dyck-spectrum-low-rank": "yes" if low_rank else "no",
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
    low_rank = separate(shares["many"], shares["single"])
    negative = all(im == 0 and re < 0 for re, im in map(_dominant, spec["many"]))
    return ("reproduced" if low_rank and negative else "partly" if low_rank or negative
            else "not reproduced")


def sign_study_numbers(records) -> dict:
    """The sign study (after Fig. 5): per setting the range over seeds of W_O W_V's real part
    (`wo_wv_real`) and of the out-of-sample accuracy, how many models have it negative, complex
    or positive, and the study's extremes (moduli, gaps, LayerNorm gains).

    Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-sign-study`; book/dyck.ipynb,
    {numref}`fig-dyck-spectrum` (the prose that sums it up)"""
    m = group_by(records, lambda r: r["params"]["setting"], metrics)
    real = lambda rows: [x["wo_wv_real"] for x in rows]  # noqa: E731
    negative = lambda rows: [x for x in rows if x["wo_wv_imag"] == 0  # noqa: E731
                             and x["wo_wv_real"] < 0]
    oos = lambda rows: span([x["out_of_sample"] for x in rows], pct)  # noqa: E731
    out = {"dyck-sign-seeds": str(min(len(v) for v in m.values())),
           "dyck-sign-settings": str(len(m)), "dyck-sign-models": str(len(records))}
    # glue keys: dyck-sign-<setting>-{real,oos,negative,complex,positive}
    # glue keys: dyck-sign-<setting>-{negative-values,positive-values}
    for setting, rows in m.items():
        out[f"dyck-sign-{setting}-real"] = span(real(rows), lambda v: num(v, signed=True))
        out[f"dyck-sign-{setting}-oos"] = oos(rows)
        out[f"dyck-sign-{setting}-negative"] = str(len(negative(rows)))
        out[f"dyck-sign-{setting}-complex"] = str(sum(x["wo_wv_imag"] != 0 for x in rows))
        out[f"dyck-sign-{setting}-positive"] = str(sum(
            x["wo_wv_imag"] == 0 and x["wo_wv_real"] > 0 for x in rows))
        neg = negative(rows)
        out[f"dyck-sign-{setting}-negative-values"] = (
            listing(num(x["wo_wv_real"], signed=True)
                    for x in sorted(neg, key=lambda x: -x["wo_wv_real"])) if neg else "none")
        pos = [x for x in rows if x["wo_wv_imag"] == 0 and x["wo_wv_real"] > 0]
        out[f"dyck-sign-{setting}-positive-values"] = (
            listing(num(x["wo_wv_real"], signed=True) for x in pos) if pos else "none")
    pair = [x for s in ("wider", "fresh-words") for x in m.get(s, [])]
    if pair:
        out["dyck-sign-wider-fresh-negative"] = str(len(negative(pair)))
        out["dyck-sign-wider-fresh-models"] = str(len(pair))
        out["dyck-sign-wider-fresh-oos"] = oos(pair)
    few = m.get("fewer-words", [])
    if few:
        out["dyck-sign-few-min"] = num(min(real(few)), signed=True)
        out["dyck-sign-few-modulus"] = span([x["wo_wv_modulus"] for x in few])
        out["dyck-sign-few-gap"] = num(max(x["wo_wv_gap"] for x in few))
        out["dyck-sign-study-min"] = num(min(x["wo_wv_real"] for rows in m.values()
                                             for x in rows), signed=True)
        out["dyck-sign-few-is-min"] = "yes" if min(real(few)) == min(
            x["wo_wv_real"] for rows in m.values() for x in rows) else "no"
    good = [x for s, rows in m.items() if s != "fewer-words" for x in rows]
    out["dyck-sign-good-modulus"] = span([x["wo_wv_modulus"] for x in good])
    out["dyck-sign-good-gap"] = num(max(x["wo_wv_gap"] for x in good))
    every = [x for rows in m.values() for x in rows]
    out["dyck-sign-gain-min"] = num(min(x["ln_gain_min"] for x in every))
    out["dyck-sign-gain-negative-models"] = str(sum(x["ln_gain_negative_share"] > 0
                                                    for x in every))
    same = [x for x in every if (x["effective_real"] > 0) == (x["wo_wv_real"] > 0)]
    out["dyck-sign-same-sign"] = str(len(same))
    out["dyck-sign-effective-diff"] = num(max(abs(x["effective_real"] - x["wo_wv_real"])
                                              for x in every))
    out["dyck-sign-reading-ratio"] = span([x["wo_wv_modulus"] / x["wv_wot_modulus"]
                                           for x in every])
    return out


def order_study_numbers(records) -> dict:
    """The order study (after Fig. 7): per variant the range over settings of the learned
    positional embeddings' end values (absolute and relative), how they change with more steps
    and a wider model, and the readout's end values.

    Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-order-study`; book/dyck.ipynb,
    {numref}`fig-dyck-learned-pe` (the prose that sums it up)"""
    cell = group_by(records, lambda r: (r["params"]["setting"], r["params"]["variant"]), metrics)
    settings = list(dict.fromkeys(r["params"]["setting"] for r in records))
    stat = lambda s, v, k: mean(x[k] for x in cell[(s, v)])  # noqa: E731
    fig7 = ("uniform-pm1", "uniform-pm1-v", "eq1")
    out = {"dyck-order-models": str(len(records)),
           "dyck-order-seeds": str(min(len(v) for v in cell.values())),
           "dyck-order-settings": str(len(settings))}
    stds = {(s, v): stdev([x["end_abs_mean"] for x in rows]) for (s, v), rows in cell.items()}
    out["dyck-order-std-fig7"] = num(max(sd for (s, v), sd in stds.items() if v in fig7))
    out["dyck-order-std-res"] = num(max(sd for (s, v), sd in stds.items() if v == "eq1-res"))
    # glue keys: dyck-order-{uniform-pm1,uniform-pm1-v,eq1,eq1-res}-{abs,rel}
    for v in fig7 + ("eq1-res",):
        out[f"dyck-order-{v}-abs"] = span([stat(s, v, "end_abs_mean") for s in settings])
        out[f"dyck-order-{v}-rel"] = span([stat(s, v, "end_relative") for s in settings])
    lowest = [s for s in settings
              if min(fig7, key=lambda v: stat(s, v, "end_abs_mean")) == "uniform-pm1"]
    out["dyck-order-pm1-lowest"] = ("every setting" if len(lowest) == len(settings) else
                                    f"{len(lowest)} of {len(settings)} settings")
    steps = [s for s in ("base", "more-steps", "most-steps") if s in settings]
    # glue keys: dyck-order-{pm1v,eq1}-{abs,rel}-by-steps
    for v, key in (("uniform-pm1-v", "pm1v"), ("eq1", "eq1")):
        out[f"dyck-order-{key}-abs-by-steps"] = listing(num(stat(s, v, "end_abs_mean"))
                                                        for s in steps)
        out[f"dyck-order-{key}-rel-by-steps"] = listing(num(stat(s, v, "end_relative"))
                                                        for s in steps)
    if "wider" in settings:
        shrink = [1 - stat("wider", v, "end_abs_mean") / stat("base", v, "end_abs_mean")
                  for v in fig7 + ("eq1-res",)]
        out["dyck-order-wider-shrink"] = span(shrink, pct)
        out["dyck-order-wider-all-shrink"] = "yes" if min(shrink) > 0 else "no"
    for s in steps:   # glue keys: dyck-order-readout-{base,more-steps,most-steps}
        ends = [x["readout_end"] for x in cell[(s, "eq1")]]
        out[f"dyck-order-readout-{s}"] = span(ends, lambda v: num(v, signed=True, digits=3))
    weights = [x["token_weight"] for s in settings for x in cell[(s, "eq1")]]
    out["dyck-order-token-weight"] = span(weights)
    return out


def learned_pe_numbers(records) -> dict:
    """Fig. 7: each variant's mean absolute end value, its range over the seeds; the variant
    closest to zero is named only where its range lies below every other variant's.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-learned-pe`; book/dyck_appendix.ipynb (the prose
    that recalls it)"""
    ends = {v: [x["end_abs_mean"] for x in rows]
            for v, rows in _per_model(records, "variant").items()}
    closest = [v for v in ends if all(separate(ends[o], ends[v]) for o in ends if o != v)]
    # glue keys: dyck-learned-pe-{uniform-pm1,uniform-pm1-v,eq1}
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
    return {"reverse": separate(frozen, learned) and separate(single, learned),
            "paper": separate(learned, frozen) and separate(frozen, single)
            and separate(learned, single)}


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
    """The counts behind `order_verdict`, for the table.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-learned-pe`"""
    checks = order_checks(learned, study)
    settings = checks["settings"].values()
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    return {"dyck-order-figure-reverse": yes(checks["figure"]["reverse"]),
            "dyck-order-figure-paper": yes(checks["figure"]["paper"]),
            "dyck-order-reverse-settings": str(sum(p["reverse"] for p in settings)),
            "dyck-order-paper-settings": str(sum(p["paper"] for p in settings)),
            "dyck-order-checked-settings": str(len(checks["settings"]))}


def closed_form_numbers(paths, thm) -> dict:
    """The closed form's numbers: the exhaustive check's largest N, its prefixes and training
    words, the completion rates against the bound, and whether the drawn path is balanced.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-paths`, {numref}`fig-dyck-thm41`"""
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
    """Every record-derived number the Dyck chapter quotes.

    Feeds: book/dyck.ipynb; book/dyck_appendix.ipynb (the numbers of every section)"""
    rec = lambda fid: chapter_records(fid, root)  # noqa: E731
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


# The paper's observations in words, for the chapter's list of what is not reproduced
FIG4_WORDS = {"replays": "the single-word model replaying its word (Fig. 4)",
              "fails-elsewhere": "the single-word model failing the other contexts (Fig. 4)",
              "diverse": "the many-word model's more varied completions (Fig. 4)",
              "deep-lower": "the many-word model doing worse on the deep context (Fig. 4)"}
FIG6_WORDS = (("dyck-ablation-best-few", "uniform-pm1",
               "uniform attention with fixed ±1 tokens best with few words (Fig. 6)"),
              ("dyck-ablation-full-catches-up", "yes", "the full model catching up (Fig. 6)"),
              ("dyck-ablation-nope-below-everywhere", "yes",
               "NoPE below the full model at every size (Fig. 6)"),
              ("dyck-ablation-eq1-beats-frozen-v", "yes",
               "the single head beating the frozen-V decoder (Fig. 6)"))


def observations_not_held(fig4, ablation) -> str:
    """The observations of the paper's Figs. 4 and 6 that do not hold in the records (by
    `fig4_checks` and `ablation_verdict`'s four comparisons), listed in words."""
    failed = [FIG4_WORDS[k] for k, ok in fig4_checks(fig4).items() if not ok]
    numbers = ablation_numbers(ablation)
    failed += [words for key, wanted, words in FIG6_WORDS if numbers[key] != wanted]
    return listing(failed) if failed else "none of those of Figs. 4 and 6"


def dyck_verdicts(root=None) -> dict:
    """Every verdict of the Dyck chapter (reproduced, partly, not reproduced) and the checks
    behind them, keyed for the prose and the paper-vs-book table.

    Feeds: book/dyck.ipynb, {numref}`tab-dyck-paper-vs-book` (and the verdict after each
    figure); book/dyck_appendix.ipynb"""
    rec = lambda fid: chapter_records(fid, root)  # noqa: E731
    ablation, held = ablation_verdict(rec("richard-fig6-ablation"))
    # glue keys: dyck-fig4-{replays,fails-elsewhere,diverse,deep-lower} (fig4_checks)
    return {"dyck-observations-not-held": observations_not_held(
                rec("richard-fig4-completions"), rec("richard-fig6-ablation")),
            "dyck-boolean-verdict": boolean_verdict(rec("richard-fig1-boolean")),
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
    """The Dyck chapter's 'Paper vs this book' table; verdicts from the records.

    Feeds: book/dyck.ipynb, {numref}`tab-dyck-paper-vs-book`"""
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
    return markdown_table(PAPER_VS_BOOK_HEADER, rows)
