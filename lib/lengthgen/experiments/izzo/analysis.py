"""The Izzo et al. chapter's numbers: required train lengths, fits and laws from the records,
the sentences around Figs. 1 and 2 (`headline`), and the chapter's verdicts and "Paper vs this
book" rows (`izzo_paper_vs_book_rows`; `kgram_verdict` is the rule for the k-gram task, written
next to it).

What the rows need from a figure (its data, Fig. 2's scalings, Fig. 3's groups, the bound's
pairs) is imported from `izzo.rows`, below the figure modules and this one: a module that is
not a figure neither imports a figure module nor looks one up by id. Numbers are written with
`prose`, records grouped with `spread.group_by`.
"""
from statistics import mean

from lengthgen.experiments.izzo.rows import (bound_data, group_rows, kgram_data, pair_summary,
                                             scaling_rows)
from lengthgen.experiments.prose import sig
from lengthgen.experiments.spread import group_by, spread


# ---- Figures 1 and 2: plateaus and the train length that reaches eps ------------------------
def plateau(record: dict) -> float:
    """The test loss at the longest test length: where the curves have flattened."""
    losses = record["metrics"]["test_loss"]
    return losses[max(losses, key=int)]

def required_length(lengths, losses, eps: float) -> float | None:
    """Smallest train length whose mean plateau is <= eps, interpolating log-loss linearly in
    the train length between the two grid points around the crossing; None if never reached.
    Where the first grid point is already <= eps this is that grid point, an upper bound on the
    crossing, not a crossing (`crossing_is_bound` says which)."""
    import math
    pairs = sorted(zip(lengths, losses))
    for i, (n, loss) in enumerate(pairs):
        if loss <= eps:
            if i == 0:
                return float(n)
            n0, l0 = pairs[i - 1]
            t = (math.log(l0) - math.log(eps)) / (math.log(l0) - math.log(loss))
            return n0 + t * (n - n0)
    return None

def crossing_is_bound(lengths, losses, eps: float) -> bool:
    """Whether `required_length` gives only an upper bound: the plateau of the smallest train
    length of the grid is already <= eps, so the crossing lies somewhere below the grid."""
    pairs = sorted(zip(lengths, losses))
    return bool(pairs) and pairs[0][1] <= eps


def main_records(records) -> list:
    """The records of the paper's logit scaling (the comparison runs of the other are apart)."""
    return [r for r in records
            if r["params"].get("logit_scaling", r["config"]["logit_scaling"])
            == r["config"]["logit_scaling"]]

def curve_rows(records, key: str) -> list[dict]:
    """One row per (key value, train length, test length) of the paper's logit scaling: the
    test loss (mean, min and max over seeds), the seed count, the plateau of that train length
    (mean, min, max over seeds), and the train length whose plateau reaches eps and eps / 10,
    interpolated on the mean plateaus and, for the spread, on each seed's own (min and max over
    seeds; None where the grid never gets there), and the least-squares line of each required
    length against the key, at this row's key (`required_N_line`, `required_N_eps_over_10_line`;
    None with fewer than two key values reaching it), as panel (d) of the figure draws it."""
    rows = []
    records = main_records(records)
    config = records[0]["config"]
    for value, group in sorted(group_by(records, lambda r: r["params"][key]).items()):
        lengths = sorted({r["params"]["train_length"] for r in group})
        seeds = sorted({r["params"]["seed"] for r in group})
        per_seed = {s: {r["params"]["train_length"]: plateau(r) for r in group
                        if r["params"]["seed"] == s} for s in seeds}
        plateaus = [mean(plateau(r) for r in group if r["params"]["train_length"] == n)
                    for n in lengths]
        need = {}
        for name, eps in (("required_N", config["eps"]),
                          ("required_N_eps_over_10", config["eps"] / 10)):
            need[name] = required_length(lengths, plateaus, eps)
            need[name + "_bound"] = crossing_is_bound(lengths, plateaus, eps)
            own = [required_length(sorted(per_seed[s]), [per_seed[s][n]
                                                         for n in sorted(per_seed[s])], eps)
                   for s in seeds]
            reached = [v for v in own if v is not None]
            need[name + "_min"] = min(reached) if len(reached) == len(own) else None
            need[name + "_max"] = max(reached) if len(reached) == len(own) else None
            # a seed whose first plateau is already below eps gives only an upper bound: the
            # lower end of the seeds' range is then unknown (anywhere below the grid)
            need[name + "_min_bound"] = any(
                crossing_is_bound(sorted(per_seed[s]), [per_seed[s][n]
                                                        for n in sorted(per_seed[s])], eps)
                for s in seeds)
        for n, level in zip(lengths, plateaus):
            runs_n = [r for r in group if r["params"]["train_length"] == n]
            levels = [plateau(r) for r in runs_n]
            for t in config["test_lengths"]:
                loss, low, high, _ = spread(r["metrics"]["test_loss"][str(t)] for r in runs_n)
                rows.append({key: value, "train_length": n, "test_length": t,
                             "test_loss": loss, "test_loss_min": low, "test_loss_max": high,
                             "seeds": len(runs_n), "plateau": level,
                             "plateau_min": min(levels), "plateau_max": max(levels),
                             "stopped_by_loss": sum(r["metrics"]["reached_stop_loss"]
                                                    for r in runs_n),
                             "train_loss_max": max(r["metrics"]["train_loss"] for r in runs_n),
                             **need})
    for column in ("required_N", "required_N_eps_over_10"):
        pts = sorted({(r[key], r[column]) for r in rows if r[column] is not None
                      and not r[column + "_bound"]})   # an upper bound is no point of a line
        line = linear_fit(*zip(*pts)) if len(pts) >= 2 else None
        for r in rows:
            r[column + "_line"] = None if line is None else line[1] + line[0] * r[key]
    return rows

def summary_rows(records, key: str) -> list[dict]:
    """One row per (key value, train length): the plateau (mean, min, max over seeds), how
    many seeds stopped by the loss rule, and the required N columns."""
    rows = curve_rows(records, key)
    longest = max(r["test_length"] for r in rows)
    return [{k: v for k, v in r.items() if not k.startswith("test_")}
            for r in rows if r["test_length"] == longest]

def columns(rows, shown: dict) -> list[dict]:
    """The chapter's table of tidy rows: the keys of `shown`, renamed to its values (headers)."""
    return [{header: row[key] for key, header in shown.items()} for row in rows]

def summary_table(records, key: str, symbol: str) -> list[dict]:
    """The chapter's table of `summary_rows`, `symbol` heading the column of `key`."""
    return columns(summary_rows(records, key), {
        key: symbol, "train_length": "N", "seeds": "seeds", "plateau": "plateau (mean)",
        "plateau_min": "smallest seed", "plateau_max": "largest seed",
        "stopped_by_loss": "stopped by the rule", "required_N": "required N, eps = 0.01",
        "required_N_eps_over_10": "required N, eps = 0.001"})

def linear_fit(xs, ys) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx

def required_fit(records, key: str, column: str = "required_N") -> dict | None:
    """The least-squares line of the required train length against `key` (None with fewer than
    two values reaching it): slope, intercept, and the ratio of the largest to the smallest."""
    rows = summary_rows(records, key)
    pts = sorted({(r[key], r[column]) for r in rows if r[column] is not None
                  and not r[column + "_bound"]})   # upper bounds are left out of the fit
    if len(pts) < 2:
        return None
    xs, ys = zip(*pts)
    slope, intercept = linear_fit(xs, ys)
    return {"slope": slope, "intercept": intercept, "points": len(pts),
            "ratio": ys[-1] / ys[0], "key_ratio": xs[-1] / xs[0]}

def _line_through(intervals) -> bool:
    """Whether some line y = a + b x meets every vertical segment (x, lo, hi). For a slope b
    the feasible intercepts are [max(lo - b x), min(hi - b x)], whose width is concave in b,
    so it is largest at a slope where two of the bounding lines cross: those are checked."""
    bounds = [(x, lo) for x, lo, _ in intervals] + [(x, hi) for x, _, hi in intervals]
    slopes = {0.0} | {(y2 - y1) / (x2 - x1) for x1, y1 in bounds for x2, y2 in bounds
                      if x2 != x1}
    return any(min(hi - b * x for x, _, hi in intervals)
               >= max(lo - b * x for x, lo, _ in intervals) - 1e-12 for b in slopes)

def law_check(records, key: str, column: str = "required_N") -> dict | None:
    """Is the required train length linear in `key`, given the spread of the seeds' own
    crossings? Two readings of "linear", each decided on the ranges over seeds (None if some
    value of `key` has no seed range): "proportional", N = c * key for one c inside every
    range of N / key (the curves of N / key overlap); "affine", some line a + b * key through
    every range. With the end points' ratio of the mean crossings and of `key`."""
    rows = summary_rows(records, key)
    per_value = {}
    for r in rows:
        if r[column + "_min"] is not None and r[key] not in per_value:
            # where a seed's crossing is only an upper bound, the range reaches down to 0
            lo = 0.0 if r[column + "_min_bound"] else r[column + "_min"]
            per_value[r[key]] = (lo, r[column + "_max"], r[column], r[column + "_bound"])
    values = sorted({r[key] for r in rows})
    if len(per_value) < len(values) or len(values) < 2:
        return None
    ranges = [(v, *per_value[v][:2]) for v in values]
    bounded = [v for v in values if per_value[v][0] == 0.0]
    ends = per_value[values[-1]][3] or per_value[values[0]][3]
    return {"proportional": max(lo / v for v, lo, _ in ranges)
            <= min(hi / v for v, _, hi in ranges),
            "affine": _line_through(ranges),
            "bounded": bounded,
            # the end points' ratio means nothing where either end is only a bound
            "ratio": None if ends else per_value[values[-1]][2] / per_value[values[0]][2],
            "key_ratio": values[-1] / values[0],
            "per_key": ", ".join((f"at most {sig(hi / v)}" if lo == 0.0 else
                                  f"{sig(lo / v)} to {sig(hi / v)}") for v, lo, hi in ranges)}

def law_text(check: dict | None, symbol: str) -> str:
    """`law_check` in words: which reading of "linear in the key" the seeds' ranges allow."""
    if check is None:
        return f"not decided (some {symbol} has no seed crossing)"
    if check.get("bounded"):
        where = ", ".join(sig(v) for v in check["bounded"])
        head = ("proportional to " if check["proportional"] else "not proportional to ")
        return (f"{head}{symbol} within the seeds' ranges; at {symbol} = {where} a seed's "
                f"crossing is only an upper bound (the grid's first train length is already "
                f"below the error), so whether the required N lies on one line is not decided")
    if check["proportional"]:
        return f"proportional to {symbol} within the seeds' ranges"
    if check["affine"]:
        return (f"on a line a + b {symbol} within the seeds' ranges, but not proportional to "
                f"{symbol}")
    return f"neither proportional to {symbol} nor on one line within the seeds' ranges"

def stop_counts(records) -> tuple[int, int, float | None]:
    """How many runs stopped by the loss rule, of how many, and the largest final training loss
    among those that met the step cap instead (None if every run stopped by the rule)."""
    capped = [r["metrics"]["train_loss"] for r in records
              if not r["metrics"]["reached_stop_loss"]]
    return len(records) - len(capped), len(records), max(capped) if capped else None

def creep(records, start: int = 64) -> tuple[float, float]:
    """Median and largest ratio, over the runs whose train length is at least twice the
    smallest, of the test loss at the longest test length to that at `start`: 1 means flat."""
    records = main_records(records)
    tests = records[0]["config"]["test_lengths"]
    start = start if start in tests else min(tests)
    shortest = min(r["params"]["train_length"] for r in records)
    ratios = sorted(r["metrics"]["test_loss"][str(max(r["config"]["test_lengths"]))]
                    / r["metrics"]["test_loss"][str(start)]
                    for r in records if r["params"]["train_length"] >= 2 * shortest)
    return ratios[len(ratios) // 2], ratios[-1]

def headline(records, key: str) -> dict:
    """The numbers the prose around Figs. 1 and 2 cites, as strings keyed for book_text:
    stops, the plateau per train length at the largest key value, the required N per key
    value at eps and eps/10 (seed range in brackets), the fitted slopes and the creep.

    Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-fig1-simpletask`,
    {numref}`fig-izzo-fig2-modp`"""
    # The chapter glues these with glue_numbers(..., prefix="izzo-fig1") (omega) and "izzo-fig2"
    # (period):
    # glue keys: izzo-{fig1,fig2}-{stopped,runs,capped-worst,cap,largest,values}
    # glue keys: izzo-{fig1,fig2}-{plateaus-largest,required-stops,creep-median,creep-max}
    # glue keys: izzo-{fig1,fig2}-{law,law-per-key,law-ratio,law-key-ratio}
    # glue keys: izzo-{fig1,fig2}-{required,required10}{,-slope,-ratio}
    # glue keys: izzo-{fig1,fig2}-{required,required10}-<value>
    main = main_records(records)
    out = {}
    stopped, total, worst = stop_counts(main)
    out["stopped"], out["runs"], out["capped-worst"] = str(stopped), str(total), sig(worst)
    out["cap"] = str(main[0]["config"]["max_steps"])
    summary = summary_rows(main, key)
    values = sorted({r[key] for r in summary})
    largest = values[-1]
    out["largest"] = sig(largest)
    out["plateaus-largest"] = ", ".join(
        f"{sig(r['plateau'])} (N = {r['train_length']})"
        for r in sorted(summary, key=lambda r: r["train_length"]) if r[key] == largest)
    for column, name in (("required_N", "required"), ("required_N_eps_over_10", "required10")):
        parts = []
        for v in values:
            r = next(r for r in summary if r[key] == v)
            # "≤": the first grid point already below the error, an upper bound only
            low = "≤ " if r[column + "_min_bound"] else ""
            spread_text = (f" ({low}{sig(r[column + '_min'])} to {sig(r[column + '_max'])})"
                           if r[column + "_min"] is not None else "")
            mark = "≤ " if r[column + "_bound"] else ""
            parts.append(f"{mark}{sig(r[column])}{spread_text}")
            out[f"{name}-{_key(v)}"] = mark + sig(r[column])
        out[name] = ", ".join(parts)
        fit = required_fit(main, key, column)
        out[f"{name}-slope"] = sig(fit["slope"]) if fit else "-"
        out[f"{name}-ratio"] = sig(fit["ratio"]) if fit else "-"
    out["required-stops"] = crossing_stops(summary, key, values)
    middle, top = creep(main)
    out["creep-median"], out["creep-max"] = sig(middle), sig(top)
    out["values"] = ", ".join(sig(v) for v in values)
    law = law_check(main, key)
    out["law"] = law_text(law, _SYMBOLS.get(key, key))
    out["law-per-key"] = law["per_key"] if law else "-"
    out["law-ratio"] = sig(law["ratio"]) if law and law["ratio"] is not None else "-"
    out["law-key-ratio"] = sig(law["key_ratio"]) if law else "-"
    return out

def crossing_stops(summary, key: str, values, column: str = "required_N") -> str:
    """Where a mean crossing (at eps) is interpolated between two train lengths whose runs did
    not all meet the stop rule, in words per key value: such a crossing rests on models that
    were still training when the step cap ended them."""
    notes = []
    for v in values:
        rows = sorted((r for r in summary if r[key] == v), key=lambda r: r["train_length"])
        need = rows[0][column]
        if need is None or rows[0][column + "_bound"]:
            continue
        n1 = next(r for r in rows if r["train_length"] >= need)
        n0 = max((r for r in rows if r["train_length"] < n1["train_length"]),
                 key=lambda r: r["train_length"])
        stopped = n0["stopped_by_loss"] + n1["stopped_by_loss"]
        runs = n0["seeds"] + n1["seeds"]
        if stopped < runs:
            notes.append(f"for {_SYMBOLS.get(key, key)} = {sig(v)} it is interpolated between "
                         f"N = {n0['train_length']} and {n1['train_length']}, where {stopped} "
                         f"of {runs} runs met the stop rule")
    if not notes:
        return "every crossing lies between runs that met the stop rule"
    return "; ".join(notes) + (" (such a crossing rests on models that the step cap, not the "
                               "loss rule, stopped)")


def _key(value) -> str:
    return sig(value).replace(".", "p").replace("-", "m")

def monotone(values, decreasing: bool = False) -> bool:
    pairs = list(zip(values, values[1:]))
    return all((b <= a) if decreasing else (b >= a) for a, b in pairs)

_SYMBOLS = {"omega": "ω", "period": "Δ"}


# ---- the chapter's verdicts and its "Paper vs this book" rows --------------------------------
def _curves_verdict(records, key: str, symbol: str) -> str:
    main = main_records(records)
    summary = summary_rows(main, key)
    values = sorted({r[key] for r in summary})
    falling = sum(monotone([r["plateau"] for r in sorted(summary, key=lambda r: r["train_length"])
                            if r[key] == v], decreasing=True) for v in values)
    parts = [f"plateau falls with N for {falling} of {len(values)} {symbol}"]
    for column, eps in (("required_N", main[0]["config"]["eps"]),
                        ("required_N_eps_over_10", main[0]["config"]["eps"] / 10)):
        firsts = [next(r for r in summary if r[key] == v) for v in values]
        need = [r[column] for r in firsts]
        shown = [("≤ " if r[column + "_bound"] else "") + sig(r[column])
                 for r in firsts if r[column] is not None]
        if any(n is None for n in need):
            parts.append(f"eps = {sig(eps)} not reached for every {symbol}")
            continue
        grows = monotone(need)
        fit = required_fit(main, key, column)
        bounded = any(r[column + "_bound"] for r in firsts)
        factor = (f"; x{sig(fit['ratio'])} for {symbol} x{sig(fit['key_ratio'])}" if fit
                  else "")
        if bounded:   # a growth factor between upper bounds would be the grid's, not the runs'
            parts.append(f"required N at eps = {sig(eps)} for each {symbol}: "
                         f"{', '.join(shown)} (≤: an upper bound only)")
        else:
            parts.append(f"required N at eps = {sig(eps)} "
                         f"{'grows' if grows else 'does not grow'} with {symbol} "
                         f"({', '.join(shown)}{factor})")
        law = law_check(main, key, column)
        if law:
            # the paper's "linear": decided on the seeds' own crossings (izzo_common.law_check)
            parts.append(f"{law_text(law, symbol)} (N / {symbol} over the seeds: "
                         f"{law['per_key']})")
    middle, top = creep(main)
    tests = main[0]["config"]["test_lengths"]
    parts.append(f"loss at {max(tests)} over loss at {64 if 64 in tests else min(tests)}: "
                 f"median {sig(middle)}, largest {sig(top)}")
    return "; ".join(parts)


def _kgram_facts(kgram) -> dict:
    """What the k-gram row reads from the records: the loss at the longest test length per
    (S, k), its trend with S (at k = 2) and with k (at S = 2), its growth over the last doubling
    of the test length, and the stop counts."""
    kd = kgram_data(kgram)
    longest = max(r["test_length"] for r in kd)
    at = {(r["S"], r["k"]): r for r in kd if r["test_length"] == longest}
    by_s = [at[s] for s in sorted(at) if s[1] == 2]
    by_k = [at[s] for s in sorted(at) if s[0] == 2]
    before = {(r["S"], r["k"]): r for r in kd if r["test_length"] == longest // 2}
    rising = [at[s]["test_loss"] / before[s]["test_loss"] for s in at if s in before]
    stopped, total, _ = stop_counts(kgram)

    def trend(points):
        if len(points) < 2:
            return "not measured"
        return "grows" if monotone([r["test_loss"] for r in points]) else "does not grow"
    return {"longest": longest, "at": at, "by_s": by_s, "by_k": by_k, "rising": rising,
            "stopped": stopped, "total": total, "with_s": trend(by_s), "with_k": trend(by_k)}


def izzo_kgram_verdict(kgram) -> tuple[str, str]:
    """`kgram_verdict` on the k-gram records."""
    k = _kgram_facts(kgram)
    return kgram_verdict(k["stopped"], k["total"], k["with_s"], k["with_k"])


def kgram_verdict(stopped: int, total: int, with_s: str, with_k: str) -> tuple[str, str]:
    """The summary's claim for the k-gram task: the plateau rises with S and with k, for
    trained models. 'reproduced' if every run met the stop rule and the loss at the longest
    test length grows with S and with k; 'not reproduced' if no run met the stop rule (the
    comparison is then between unfinished fits) or it grows with neither; else 'partly'.
    Returns the verdict and the rule's reading of the records."""
    rises = [with_s == "grows", with_k == "grows"]
    verdict = ("reproduced" if stopped == total and all(rises) else
               "not reproduced" if stopped == 0 or not any(rises) else "partly")
    return verdict, (f"{stopped} of {total} runs met the stop rule; rises with S: "
                     f"{'yes' if rises[0] else 'no'}, with k: {'yes' if rises[1] else 'no'}")


def izzo_paper_vs_book_rows(records: dict) -> list[dict]:
    """The chapter's "Paper vs this book" rows from the committed records of each izzo figure
    (`records` maps figure id to its records): the paper's setting, the book's, and a verdict
    computed from the records."""
    rows = []
    fig1, fig2 = records.get("izzo-fig1-simpletask"), records.get("izzo-fig2-modp")
    for fid, recs, key, symbol, what in (
            ("izzo-fig1-simpletask", fig1, "omega", "omega",
             "Fig. 1, SimpleTask: plateaus fall with N, required N linear in omega"),
            ("izzo-fig2-modp", fig2, "period", "Delta",
             "Fig. 2, ModPTask: plateaus fall with N, required N linear in Delta (their p)")):
        if not recs:
            continue
        main = main_records(recs)
        config = main[0]["config"]
        stopped, total, _ = stop_counts(main)
        values = sorted({r["params"][key] for r in main})
        lengths = sorted({r["params"]["train_length"] for r in main})
        rows.append({
            "figure": fid, "paper": f"{what}; 8 seeds, batch 1024, stop at loss < 1e-5",
            "this book": (f"{symbol} = {', '.join(sig(v) for v in values)}; N = "
                          f"{', '.join(str(n) for n in lengths)}; {len(config['seeds'])} seeds, "
                          f"batch {config['batch_size']}; {stopped} of {total} runs stopped "
                          f"by the rule (cap {config['max_steps']})"),
            "verdict": _curves_verdict(recs, key, symbol)})
    if fig2:
        comparison = scaling_rows(fig2)
        if comparison:
            growth = {}
            for r in comparison:
                growth.setdefault(r["logit_scaling"], []).append(
                    r["growth_longest_over_64"])
            rows.append({
                "figure": "izzo-fig2-modp (scalings)",
                "paper": "Sec. 3.1: every logit x log N; Sec. 5 (two layers): the tau-suffix "
                         "only; App. B does not say which it trained",
                "this book": f"both at Delta = {comparison[0]['period']}, "
                             f"N = {', '.join(str(n) for n in sorted({r['train_length'] for r in comparison}))}",
                "verdict": ("loss at the longest test length over the loss at 64: "
                            + "; ".join(f"{'suffix only' if s == 'suffix' else 'every logit'}"
                                        f" x{sig(min(g))} to x{sig(max(g))}"
                                        for s, g in growth.items()))})
    fig3 = records.get("izzo-fig3-hardmax")
    if fig3:
        hd = group_rows(fig3)
        lengths = sorted({r["train_length"] for r in hd})
        on = {n: max(r["std_weight"] for r in hd if r["train_length"] == n
                     and r["positions"] == "k mod p") for n in lengths}
        off = {n: max(r["mean_weight"] for r in hd if r["train_length"] == n
                      and r["positions"] == "other") for n in lengths}
        rows.append({
            "figure": "izzo-fig3-hardmax",
            "paper": "Fig. 3: Delta = 5, length-80 strings, weights near 1/16 on t = k mod 5",
            "this book": f"N = {', '.join(str(n) for n in lengths)}, "
                         f"{len({r['seed'] for r in hd})} seeds",
            "verdict": (f"off-residue mean weight at most {sig(off[lengths[-1]])} at N = "
                        f"{lengths[-1]} ({sig(off[lengths[0]])} at N = {lengths[0]}); spread on "
                        f"the residue {', '.join(sig(on[n]) for n in lengths)} (largest over "
                        f"seeds) for N = {', '.join(str(n) for n in lengths)}")})
    kgram = records.get("izzo-kgram")
    if kgram:
        facts = _kgram_facts(kgram)
        longest, by_s, by_k, rising = (facts[x] for x in ("longest", "by_s", "by_k", "rising"))
        at, stopped, total = facts["at"], facts["stopped"], facts["total"]
        verdict, rule = izzo_kgram_verdict(kgram)
        rows.append({
            "figure": "izzo-kgram",
            "paper": "two layers, in-context k-grams, described in words only (summary): the "
                     "plateau rises with S and with k",
            "this book": f"our setup; S, k = {', '.join(f'{s}, {k}' for s, k in sorted(at))}; "
                         f"{stopped} of {total} runs stopped by the rule",
            "verdict": (f"**{verdict}** ({rule}): loss at {longest} {facts['with_s']}"
                        f" with S ({', '.join(sig(r['test_loss']) for r in by_s)}) and "
                        f"{facts['with_k']} with k ({', '.join(sig(r['test_loss']) for r in by_k)}); still x"
                        f"{sig(min(rising))} to x{sig(max(rising))} from {longest // 2} to "
                        f"{longest}: not a plateau")})
    bound = records.get("izzo-thm41-bound")
    if bound:
        bd = [r for r in bound_data(bound) if not r["pair"]]
        ratio = [r["output_error_max"] / r["L_eps"] for r in bd]
        by_model = {}
        for r in bd:
            by_model.setdefault((r["model"], r["eps"]), []).append(r)
        z_prev = max(g[-2]["z_length_max"] for g in by_model.values() if len(g) > 1)
        z_last = max(g[-1]["z_length_max"] for g in by_model.values())
        lengths = sorted({r["x_length"] for r in bd})
        pairs = pair_summary(bound)
        if pairs:
            scaled = [p["z eps^2 / (tau Delta)"] for p in pairs]
            worst = max(p["worst output error"] / p["L eps"] for p in pairs)
            second = (f"; two models: |z| eps^2 / (tau Delta) {sig(min(scaled))} to "
                      f"{sig(max(scaled))}, output error / (L eps) at most {sig(worst)}")
            book = "both halves: z for one model f, and for f and g together"
        else:
            second, book = "", "the first half: z for one model f; the step for g is not run"
        rows.append({
            "figure": "izzo-thm41-bound",
            "paper": "Thm. 4.1 and its proof (App. A.1): no experiment",
            "this book": f"the proof's construction, {book}; |x| up to {lengths[-1]}",
            "verdict": (f"one model: longest z {z_prev} at |x| = {lengths[-2]}, {z_last} at "
                        f"|x| = {lengths[-1]} ({'flat' if z_last <= z_prev else 'still growing'}),"
                        f" output error / (L eps) {sig(min(ratio))} to {sig(max(ratio))}"
                        f"{second}; the theorem's N (constants 1) "
                        f"{sig(min(r['N'] for r in bd))} to {sig(max(r['N'] for r in bd))}")})
    return rows
