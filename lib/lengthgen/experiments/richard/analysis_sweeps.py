"""The Dyck chapter's numbers and verdicts of its training sweeps (Richard 2024, Figs. 1, 3
and 6, and the compute ladder toward Fig. 1), from the committed records.

Each `*_numbers` function returns {key: text} for the chapter to glue; each `*_verdict` says
whether the paper's observation holds, by the rule written next to it. Over seeds, two
settings differ only where their ranges over seeds are apart (`prose.separate`). The chapter's
collections and its other figures are in `richard.analysis`.
"""
from lengthgen.experiments.prose import (listing, mean_span, num, pct, seeds_note, separate,
                                         span)
from lengthgen.experiments.richard.rows import boolean_data
from lengthgen.experiments.spread import group_by, metrics


def _seeds_of(records, *keys) -> dict:
    """{(param values...): [metrics of each seed, in seed order]}: every seed of each setting,
    a setting being the values of the params `keys`."""
    return group_by(sorted(records, key=lambda r: r["params"].get("seed", 0)),
                    lambda r: tuple(r["params"][k] for k in keys), metrics)


def _step(before, after) -> str:
    """'rises' or 'falls' from one setting to the next where their ranges over seeds are apart,
    else 'same' (they do not differ at this scale)."""
    return "rises" if separate(after, before) else "falls" if separate(before, after) else "same"


def _count(v) -> str:
    return str(round(v))


def wall_times(records) -> float:
    return sum(r["wall_time_s"] for r in records)


def boolean_numbers(records: list[dict]) -> dict:
    """Fig. 1 (Boolean simplification) over every seed: accuracies of the model and of the
    trivial predictor per training depth, each as its mean with the min-max range over seeds.
    A model 'beats' the trivial predictor only where its range of right answers over seeds lies
    above the predictor's.

    Feeds: book/dyck_appendix.ipynb, {numref}`fig-dyck-boolean`; book/dyck.ipynb (the prose
    that sums it up)"""
    cells = {}  # (training depth, test depth, split, predictor): [the row of each seed]
    for r in sorted(records, key=lambda r: r["params"].get("seed", 0)):
        for row in boolean_data([r]):
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
    out = {"dyck-boolean-n-in": listing(sorted({str(n) for q in tests
                                                for n in sizes(q, "in_sample")}, key=int)),
           "dyck-boolean-n-out": listing(span(sizes(q, "out_of_sample"), _count)
                                         for q in tests),
           "dyck-boolean-test-depths": listing(str(q) for q in tests),
           "dyck-boolean-sweep-minutes": f"{wall_times(records) / 60:.0f}",
           "dyck-boolean-params": f"{records[0]['metrics']['n_params']:,}",
           "dyck-boolean-seeds": seeds_note(records)}
    # glue keys: dyck-boolean-{in,base,beat,nonconstant-max,oos}-d<test-depth>
    for q in tests:
        out[f"dyck-boolean-in-d{q}"] = listing(mean_span(acc(t, q, "in_sample"))
                                               for t in depths)
        out[f"dyck-boolean-base-d{q}"] = listing(mean_span(acc(t, q, "in_sample", "baseline"))
                                                 for t in depths)
        beat = [t for t in depths if separate(right(t, q, "in_sample"),
                                               right(t, q, "in_sample", "baseline"))]
        out[f"dyck-boolean-beat-d{q}"] = ("none" if not beat else
                                          "the depth-" + listing(str(t) for t in beat) + " model"
                                          + ("s" if len(beat) > 1 else ""))
        out[f"dyck-boolean-nonconstant-max-d{q}"] = str(
            max(max(right(t, q, "in_sample_nonconstant")) for t in depths))
        out[f"dyck-boolean-oos-d{q}"] = listing(mean_span(acc(t, q, "out_of_sample"))
                                                for t in depths)
    if 3 in depths and 3 in tests:
        model, base = right(3, 3, "in_sample"), right(3, 3, "in_sample", "baseline")
        out["dyck-boolean-d3-in"] = mean_span(acc(3, 3, "in_sample"))
        out["dyck-boolean-d3-base"] = mean_span(acc(3, 3, "in_sample", "baseline"))
        # each seed's model against the trivial predictor of its own training set
        out["dyck-boolean-d3-margin"] = span([m - b for m, b in zip(model, base)], _count)
        out["dyck-boolean-d3-beats"] = (
            "beats it: its range of right answers over seeds lies above the predictor's"
            if separate(model, base) else
            "does not differ from it at this scale: the ranges over seeds overlap")
        out["dyck-boolean-d3-oos"] = mean_span(acc(3, 3, "out_of_sample"))
    first = depths[0]
    if first in tests:
        out["dyck-boolean-d1-nonconstant"] = span(right(first, first, "in_sample_nonconstant"),
                                                  _count)
        out["dyck-boolean-d1-nonconstant-pct"] = mean_span(acc(first, first,
                                                               "in_sample_nonconstant"))
        out["dyck-boolean-d1-nonconstant-base"] = span(right(first, first,
                                                             "in_sample_nonconstant", "baseline"),
                                                       _count)

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
    out["dyck-boolean-oos-hits"] = hits("out_of_sample")
    out["dyck-boolean-nonconstant-hits"] = hits("in_sample_nonconstant")
    return out


STEP_WORDS = {"rises": "rises", "falls": "falls",
              "same": "does not move beyond the spread of its seeds"}


def _loss(value: float) -> str:
    """A training loss to three decimals: the ladder's losses differ in the second (1.03 and
    1.02 would both print as 1.0)."""
    return f"{value:.3f}"


def ladder_numbers(records: list[dict]) -> dict:
    """The compute ladder toward Fig. 1 (richard-fig1-ladder), at its one training and test
    depth, per rung over seeds: the training operations of one model, the model's in-sample
    and out-of-sample accuracy and the trivial predictor's, the rungs whose model beats that
    predictor (its range of right answers over seeds above the predictor's, the rule of Fig. 1),
    how in-sample accuracy and the training loss move from rung to rung (`_step`: only where the
    ranges over seeds are apart), the wall minutes of its runs, and all that in one sentence
    (`result`)."""
    rungs = _seeds_of(records, "rung")
    order = [key[0] for key in sorted(rungs)]
    q = records[0]["config"]["train_depth"]
    acc = lambda i, key: [m[key] for m in rungs[(i,)]]  # noqa: E731
    right = lambda i, key: [round(m[key] * m[f"in_sample_depth{q}_n"])  # noqa: E731
                            for m in rungs[(i,)]]
    flops = [rungs[(i,)][0]["train_flops"] for i in order]
    def moves(key):   # e.g. "rises from rung 0 to 1 and falls from rung 1 to 2"
        return listing(f"{STEP_WORDS[_step(acc(a, key), acc(b, key))]} from rung {a} to {b}"
                       for a, b in zip(order, order[1:]))
    beat = [i for i in order if separate(right(i, f"in_sample_depth{q}"),
                                         right(i, f"baseline_in_sample_depth{q}"))]
    out = {"rungs": str(len(order)), "seeds": seeds_note(records), "depth": str(q),
           "flops": listing(num(f) for f in flops), "flops-span": num(flops[-1] / flops[0]),
           "minutes": f"{wall_times(records) / 60:.0f}",
           "in": listing(mean_span(acc(i, f"in_sample_depth{q}")) for i in order),
           "base": listing(mean_span(acc(i, f"baseline_in_sample_depth{q}")) for i in order),
           "oos": listing(mean_span(acc(i, f"out_of_sample_depth{q}")) for i in order),
           "nonconstant": listing(mean_span(acc(i, f"in_sample_nonconstant_depth{q}"))
                                  for i in order),
           "beat": "none" if not beat else "rung " + listing(str(i) for i in beat),
           "in-steps": moves(f"in_sample_depth{q}"),
           "loss": listing(mean_span(acc(i, "train_loss"), _loss) for i in order),
           "loss-steps": moves("train_loss")}
    out["result"] = (f"Over {out['seeds']}, the models' in-sample accuracy at depth {q} is "
                     f"{out['in']} on rungs {order[0]} to {order[-1]}, against {out['base']} for "
                     f"the trivial predictor, and out-of-sample {out['oos']}; the rungs whose "
                     f"model beats the predictor: {out['beat']}. In-sample accuracy "
                     f"{out['in-steps']}; the training loss ({out['loss']}) "
                     f"{out['loss-steps']}. Its runs took "
                     f"{out['minutes']} minutes of wall time, one CPU thread each.")
    return out


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
    """Fig. 3 (left): each width's range over seeds of the deep prefixes completed, whether it
    grows with the width, the best and the smallest model, and the closed form's share.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-capacity`"""
    trained = [r for r in records if r["run_name"] != "closed-form"]
    by_d = {}
    for r in trained:
        by_d.setdefault(r["metrics"]["d"], []).append(r["metrics"]["accuracy"])
    widths = sorted(by_d)
    # glue keys: dyck-capacity-d<width>
    out = {f"dyck-capacity-d{d}": span(by_d[d], pct) for d in widths}
    out["dyck-capacity-monotone"] = "yes" if all(
        min(by_d[a]) <= min(by_d[b]) and max(by_d[a]) <= max(by_d[b])
        for a, b in zip(widths, widths[1:])) else "no"
    out["dyck-capacity-best"] = pct(max(max(v) for v in by_d.values()))
    closed = [r for r in records if r["run_name"] == "closed-form"]
    out["dyck-capacity-closed"] = pct(closed[0]["metrics"]["accuracy"]) if closed else "n/a"
    smallest = min((r["metrics"] for r in trained), key=lambda m: m["n_params"])
    out["dyck-capacity-smallest-params"] = f"{smallest['n_params']:,}"
    out["dyck-capacity-smallest"] = pct(smallest["accuracy"])
    out["dyck-capacity-seeds"] = seeds_note(trained)
    return out


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
    'not separated' otherwise (some steps do not differ at this scale).

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-samples`"""
    trained = [r for r in records if r["run_name"] != "closed-form"]
    acc = _samples_cells(records)
    ins = {key: [m["in_sample"] for m in seeds]
           for key, seeds in _seeds_of(trained, "max_depth", "train_size").items()}
    depths = sorted({q for q, _ in acc})
    sizes = sorted({s for _, s in acc})
    steps = {(q, a, b): _step(acc[(q, a)], acc[(q, b)])
             for q in depths for a, b in zip(sizes, sizes[1:])}
    out = {"dyck-samples-one-word": span([v for q in depths for v in acc[(q, sizes[0])]], pct),
           "dyck-samples-largest": f"{sizes[-1]:,}", "dyck-samples-seeds": seeds_note(trained)}
    # glue keys: dyck-samples-q<train-depth>-{curve,largest,monotone,in}
    for q in depths:
        out[f"dyck-samples-q{q}-curve"] = listing(mean_span(acc[(q, s)]) for s in sizes)
        out[f"dyck-samples-q{q}-largest"] = mean_span(acc[(q, sizes[-1])])
        mine = [steps[(q, a, b)] for a, b in zip(sizes, sizes[1:])]
        out[f"dyck-samples-q{q}-monotone"] = ("yes" if all(s == "rises" for s in mine) else
                                              "no" if "falls" in mine else "not separated")
        out[f"dyck-samples-q{q}-in"] = span([v for s in sizes for v in ins[(q, s)]], pct)
    out["dyck-samples-rises"] = _pairs(sizes, steps, "rises")
    out["dyck-samples-falls"] = _pairs(sizes, steps, "falls")
    out["dyck-samples-same"] = _pairs(sizes, steps, "same")
    # a point above both neighbours, its range over seeds apart from theirs
    bumps = [f"{mean_span(acc[(q, s)])} with {s:,} words of depth ≤ {q}"
             for q in depths for a, s, b in zip(sizes, sizes[1:], sizes[2:])
             if steps[(q, a, s)] == "rises" and steps[(q, s, b)] == "falls"]
    out["dyck-samples-bumps"] = listing(bumps) if bumps else "none"
    out["dyck-samples-non-monotone"] = str(sum(out[f"dyck-samples-q{q}-monotone"] == "no"
                                               for q in depths))
    out["dyck-samples-depths"] = str(len(depths))
    shallow, deeper = depths[0], depths[1:]
    lowest = all(separate(acc[(q, sizes[-1])], acc[(shallow, sizes[-1])]) for q in deeper)
    out["dyck-samples-shallow-lowest"] = "yes" if lowest else "no"
    out["dyck-samples-shallow-lowest-text"] = (
        "below every deeper training depth: the ranges over seeds are apart" if lowest else
        "not below every deeper training depth at this scale: the ranges over seeds overlap")
    return out


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
    ends = (all(separate(acc[(q, sizes[-1])], acc[(q, sizes[0])]) for q in deeper)
            and all(separate(acc[(q, sizes[-1])], acc[(shallow, sizes[-1])]) for q in deeper))
    steps = {(q, a): _step(acc[(q, a)], acc[(q, b)])
             for q in depths for a, b in zip(sizes, sizes[1:])}
    rising = all(steps[(q, a)] == "rises" for q in deeper for a in sizes[:-1])
    falling = any(step == "falls" for step in steps.values())
    return ("reproduced" if ends and rising and not falling else "partly" if ends
            else "not reproduced")


def _sizes_text(sizes) -> str:
    return listing(f"{s:,}" for s in sizes) + " words" if sizes else "no size"


def ablation_numbers(records) -> dict:
    """Fig. 6 over every seed: each variant's out-of-sample accuracy per training-set size as
    its mean with the min-max range over seeds. A variant is above or below another at a size
    only where their ranges over seeds are apart.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-ablation`"""
    acc = {key: [m["out_of_sample"] for m in seeds]
           for key, seeds in _seeds_of(records, "variant", "k").items()}
    ks = sorted({k for _, k in acc})
    variants = list(dict.fromkeys(v for v, _ in acc))
    size = {k: 4 ** k for k in ks}
    out = {"dyck-ablation-sizes": listing(f"{size[k]:,}" for k in ks),
           "dyck-ablation-largest": f"{size[ks[-1]]:,}",
           "dyck-ablation-smallest": f"{size[ks[0]]:,}",
           "dyck-ablation-seeds": seeds_note(records)}
    # glue keys: dyck-ablation-{full,nope,uniform-pm1,uniform-pm1-v,eq1}{,-range}
    for v in variants:
        out[f"dyck-ablation-{v}"] = listing(mean_span(acc[(v, k)]) for k in ks)
        out[f"dyck-ablation-{v}-range"] = span([x for k in ks for x in acc[(v, k)]], pct)

    def above(high, low, k):
        return separate(acc[(high, k)], acc[(low, k)])
    best = [v for v in variants if all(above(v, o, ks[0]) for o in variants if o != v)]
    out["dyck-ablation-best-few"] = best[0] if best else "none"
    out["dyck-ablation-best-few-text"] = (
        f"{best[0]}, whose range over seeds lies above every other variant's" if best else
        "no variant at this scale: the ranges over seeds overlap")
    below = [k for k in ks if above("full", "nope", k)]
    out["dyck-ablation-nope-below-at"] = _sizes_text([size[k] for k in below])
    out["dyck-ablation-nope-below-everywhere"] = "yes" if len(below) == len(ks) else "no"
    # behind some variant with the fewest words, behind none with the most
    behind = lambda k: [v for v in variants if v != "full" and above(v, "full", k)]  # noqa: E731
    out["dyck-ablation-full-catches-up"] = ("yes" if behind(ks[0]) and not behind(ks[-1])
                                            else "no")
    out["dyck-ablation-full-behind-smallest"] = listing(behind(ks[0])) if behind(ks[0]) else "none"
    out["dyck-ablation-full-behind-largest"] = (listing(behind(ks[-1])) if behind(ks[-1])
                                                else "none")
    eq1_above = [k for k in ks if above("eq1", "uniform-pm1-v", k)]
    out["dyck-ablation-eq1-beats-frozen-v"] = "yes" if len(eq1_above) == len(ks) else "no"
    out["dyck-ablation-eq1-above-frozen-v-at"] = _sizes_text([size[k] for k in eq1_above])
    eq1_below = [k for k in ks if above("uniform-pm1-v", "eq1", k)]
    out["dyck-ablation-eq1-below-frozen-v-at"] = _sizes_text([size[k] for k in eq1_below])
    same = [size[k] for k in ks if k not in eq1_above + eq1_below]
    out["dyck-ablation-eq1-vs-frozen-v"] = "; ".join(
        [f"above it with {_sizes_text([size[k] for k in eq1_above])}"] * bool(eq1_above)
        + [f"below it with {_sizes_text([size[k] for k in eq1_below])}"] * bool(eq1_below)
        + [("not different from it at this scale with " + _sizes_text(same)
            if len(same) < len(ks) else "not different from it at any size at this scale")
           + " (the ranges over seeds overlap)"] * bool(same))
    frozen_below = [k for k in ks if above("uniform-pm1", "uniform-pm1-v", k)]
    out["dyck-ablation-frozen-v-below-at"] = ("every size" if len(frozen_below) == len(ks)
                                              else _sizes_text([size[k] for k in frozen_below]))
    return out


def ablation_verdict(records) -> tuple[str, int]:
    """Of the paper's four observations, how many hold over seeds, each comparison counted only
    where the ranges over seeds are apart: uniform ±1 best with the fewest words (its range
    above every other variant's); full catches up (its range below some variant's with the
    fewest words and below none with the most); NoPE below full at every size; the single
    head (eq1) above the frozen-V decoder at every size. All: 'reproduced'; none: 'not
    reproduced'; else 'partly'.

    Feeds: book/dyck.ipynb, {numref}`fig-dyck-ablation`"""
    n = ablation_numbers(records)
    held = sum([n["dyck-ablation-best-few"] == "uniform-pm1",
                n["dyck-ablation-full-catches-up"] == "yes",
                n["dyck-ablation-nope-below-everywhere"] == "yes",
                n["dyck-ablation-eq1-beats-frozen-v"] == "yes"])
    return ("reproduced" if held == 4 else "not reproduced" if held == 0 else "partly"), held
