"""The Izzo et al. chapter's verdicts and "Paper vs this book" rows, from the records.

`izzo_paper_vs_book_rows` builds the chapter's table (the paper's setting, the book's, and a
verdict computed from the committed records of each izzo figure); `kgram_verdict` is the rule
for the k-gram task, written next to it. The figure modules are reached through the registry
(a protocol module imports no figure module).
"""
from lengthgen.experiments.izzo.protocol import (creep, fmt, law_check, law_text, main_records,
                                               monotone, required_fit, stop_counts, summary_rows)
from lengthgen.runs.registry import experiment


def _curves_verdict(records, key: str, symbol: str) -> str:
    main = main_records(records)
    summary = summary_rows(main, key)
    values = sorted({r[key] for r in summary})
    falling = sum(monotone([r["plateau"] for r in sorted(summary, key=lambda r: r["train_length"])
                            if r[key] == v], decreasing=True) for v in values)
    parts = [f"plateau falls with N for {falling} of {len(values)} {symbol}"]
    for column, eps in (("required_N", main[0]["config"]["eps"]),
                        ("required_N_eps_over_10", main[0]["config"]["eps"] / 10)):
        need = [next(r for r in summary if r[key] == v)[column] for v in values]
        if any(n is None for n in need):
            parts.append(f"eps = {fmt(eps)} not reached for every {symbol}")
            continue
        grows = monotone(need)
        fit = required_fit(main, key, column)
        factor = (f"; x{fmt(fit['ratio'])} for {symbol} x{fmt(fit['key_ratio'])}" if fit
                  else "")
        parts.append(f"required N at eps = {fmt(eps)} {'grows' if grows else 'does not grow'}"
                     f" with {symbol} ({', '.join(fmt(n) for n in need)}{factor})")
        law = law_check(main, key, column)
        if law:
            # the paper's "linear": decided on the seeds' own crossings (izzo_common.law_check)
            parts.append(f"{law_text(law, symbol)} (N / {symbol} over the seeds: "
                         f"{law['per_key']})")
    middle, top = creep(main)
    tests = main[0]["config"]["test_lengths"]
    parts.append(f"loss at {max(tests)} over loss at {64 if 64 in tests else min(tests)}: "
                 f"median {fmt(middle)}, largest {fmt(top)}")
    return "; ".join(parts)


def _kgram_facts(kgram) -> dict:
    """What the k-gram row reads from the records: the loss at the longest test length per
    (S, k), its trend with S (at k = 2) and with k (at S = 2), its growth over the last doubling
    of the test length, and the stop counts."""
    kd = experiment("izzo-kgram").data(kgram)
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
            "this book": (f"{symbol} = {', '.join(fmt(v) for v in values)}; N = "
                          f"{', '.join(str(n) for n in lengths)}; {len(config['seeds'])} seeds, "
                          f"batch {config['batch_size']}; {stopped} of {total} runs stopped "
                          f"by the rule (cap {config['max_steps']})"),
            "verdict": _curves_verdict(recs, key, symbol)})
    if fig2:
        comparison = experiment("izzo-fig2-modp").scaling_rows(fig2)
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
                                        f" x{fmt(min(g))} to x{fmt(max(g))}"
                                        for s, g in growth.items()))})
    fig3 = records.get("izzo-fig3-hardmax")
    if fig3:
        hd = experiment("izzo-fig3-hardmax").group_rows(fig3)
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
            "verdict": (f"off-residue mean weight at most {fmt(off[lengths[-1]])} at N = "
                        f"{lengths[-1]} ({fmt(off[lengths[0]])} at N = {lengths[0]}); spread on "
                        f"the residue {', '.join(fmt(on[n]) for n in lengths)} (largest over "
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
                        f" with S ({', '.join(fmt(r['test_loss']) for r in by_s)}) and "
                        f"{facts['with_k']} with k ({', '.join(fmt(r['test_loss']) for r in by_k)}); still x"
                        f"{fmt(min(rising))} to x{fmt(max(rising))} from {longest // 2} to "
                        f"{longest}: not a plateau")})
    bound = records.get("izzo-thm41-bound")
    if bound:
        thm41 = experiment("izzo-thm41-bound")
        bd = [r for r in thm41.data(bound) if not r["pair"]]
        ratio = [r["output_error_max"] / r["L_eps"] for r in bd]
        by_model = {}
        for r in bd:
            by_model.setdefault((r["model"], r["eps"]), []).append(r)
        z_prev = max(g[-2]["z_length_max"] for g in by_model.values() if len(g) > 1)
        z_last = max(g[-1]["z_length_max"] for g in by_model.values())
        lengths = sorted({r["x_length"] for r in bd})
        pairs = thm41.pair_summary(bound)
        if pairs:
            scaled = [p["z eps^2 / (tau Delta)"] for p in pairs]
            worst = max(p["worst output error"] / p["L eps"] for p in pairs)
            second = (f"; two models: |z| eps^2 / (tau Delta) {fmt(min(scaled))} to "
                      f"{fmt(max(scaled))}, output error / (L eps) at most {fmt(worst)}")
            book = "both halves: z for one model f, and for f and g together"
        else:
            second, book = "", "the first half: z for one model f; the step for g is not run"
        rows.append({
            "figure": "izzo-thm41-bound",
            "paper": "Thm. 4.1 and its proof (App. A.1): no experiment",
            "this book": f"the proof's construction, {book}; |x| up to {lengths[-1]}",
            "verdict": (f"one model: longest z {z_prev} at |x| = {lengths[-2]}, {z_last} at "
                        f"|x| = {lengths[-1]} ({'flat' if z_last <= z_prev else 'still growing'}),"
                        f" output error / (L eps) {fmt(min(ratio))} to {fmt(max(ratio))}"
                        f"{second}; the theorem's N (constants 1) "
                        f"{fmt(min(r['N'] for r in bd))} to {fmt(max(r['N'] for r in bd))}")})
    return rows
