"""The rows the izzo figures compute from their records, which the chapter's analysis reads
too: below both the figure modules and `izzo.analysis`, so the analysis imports them instead
of looking a figure module up by id (Fig. 2's logit-scaling comparison, Fig. 3's attention per
group of positions, the k-gram figure's losses, Theorem 4.1's construction).
"""
from statistics import mean

import numpy as np

from lengthgen.errors import LengthgenError


def modp_train_length(p, ratio):
    """Fig. 2's train length N = ratio * p, which must be whole."""
    n = ratio * p
    if n != int(n):
        raise LengthgenError(f"izzo-fig2-modp: N / p = {ratio:g} at p = {p} is not a whole "
                             f"train length")
    return int(n)


def scaling_rows(records) -> list[dict]:
    """The logit-scaling comparison: one row per (scaling, train length, test length) at the
    compared period, the test loss (mean, min, max over seeds) and the growth from test length
    64 (past every train length of the book) to the longest, the creep of the plateau."""
    config = records[0]["config"]
    extra = config.get("compare_all")
    if not extra:
        return []
    p = extra["period"]
    lengths = {modp_train_length(p, r) for r in extra["n_over_p"]}
    rows = []
    for scaling in (config["logit_scaling"], "all"):
        for n in sorted(lengths):
            group = [r for r in records if r["params"]["period"] == p
                     and r["params"]["train_length"] == n
                     and r["params"].get("logit_scaling", config["logit_scaling"]) == scaling]
            if not group:
                continue
            tests = config["test_lengths"]
            first, last = str(64 if 64 in tests else min(tests)), str(max(tests))
            growth = mean(r["metrics"]["test_loss"][last] / r["metrics"]["test_loss"][first]
                          for r in group)
            for t in config["test_lengths"]:
                losses = [r["metrics"]["test_loss"][str(t)] for r in group]
                rows.append({"logit_scaling": scaling, "period": p, "train_length": n,
                             "test_length": t, "test_loss": mean(losses),
                             "test_loss_min": min(losses), "test_loss_max": max(losses),
                             "seeds": len(group), "growth_longest_over_64": growth})
    return rows


def group_rows(records):
    """One row per (train length, seed, group): mean and std of the attention weight over the
    positions of the group and the batch; the group = k mod p positions or all others (the
    chapter's table)."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["train_length"], r["params"]["seed"])):
        config = r["config"]
        mean = np.array(r["metrics"]["attention_mean"])
        std = np.array(r["metrics"]["attention_std"])
        on = np.arange(len(mean)) % config["period"] == config["k"]
        for group, where in (("k mod p", on), ("other", ~on)):
            rows.append({"train_length": r["params"]["train_length"], "seed": r["params"]["seed"],
                         "positions": group, "count": int(where.sum()),
                         "mean_weight": float(mean[where].mean()),
                         "std_weight": float(np.sqrt((std[where] ** 2).mean())),
                         "test_loss": r["metrics"]["test_loss"][str(config["test_lengths"][-1])]})
    return rows


def kgram_data(records):
    """One row per (S, k, train length, test length): the test MSE (mean, min and max over
    seeds), the final train loss (mean and max) and how many seeds stopped by the loss rule."""
    rows = []
    keys = sorted({(r["params"]["S"], r["params"]["k"], r["params"]["train_length"])
                   for r in records})
    for S, k, n in keys:
        group = [r for r in records if (r["params"]["S"], r["params"]["k"],
                                        r["params"]["train_length"]) == (S, k, n)]
        for t in group[0]["config"]["test_lengths"]:
            losses = [r["metrics"]["test_loss"][str(t)] for r in group]
            rows.append({"S": S, "k": k, "train_length": n, "test_length": t,
                         "test_loss": mean(losses), "test_loss_min": min(losses),
                         "test_loss_max": max(losses),
                         "train_loss": mean(r["metrics"]["train_loss"] for r in group),
                         "train_loss_max": max(r["metrics"]["train_loss"] for r in group),
                         "stopped_by_loss": sum(r["metrics"]["reached_stop_loss"]
                                                for r in group),
                         "seeds": len(group)})
    return rows


def _label(r):
    p = r["params"]
    if p["kind"] == "pair":
        (kind, value, a), (_, _, b) = p["pair"]
        if kind == "modp":
            return f"pair: ModPTask Delta={int(value)}, k={a} and k={b}"
        return (f"pair: SimpleTask omega={value:g}, symbols {''.join(map(str, a))} and "
                f"{''.join(map(str, b))}")
    return (f"SimpleTask omega={p['value']:g}" if p["kind"] == "simple"
            else f"ModPTask Delta={int(p['value'])}")


def bound_data(records):
    """One row per (model, eps, |x|): the worst |z|, statistic and output errors over the
    inputs, beside the theorem's N, gamma, L and the O(L eps) scale."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["kind"], _label(r),
                                            -r["params"]["eps"])):
        m = r["metrics"]
        for n, v in sorted(m["by_length"].items(), key=lambda kv: int(kv[0])):
            rows.append({"model": _label(r), "pair": r["params"]["kind"] == "pair",
                         "eps": r["params"]["eps"], "x_length": int(n),
                         "z_length_max": v["z_length_max"],
                         "statistic_error_max": v["statistic_error_max"],
                         "output_error_max": v["output_error_max"],
                         "L_eps": m["L"] * r["params"]["eps"], "N": m["N"], "gamma": m["gamma"],
                         "L": m["L"], "delta": m["delta"], "tau": m["tau"]})
    return rows


def pair_summary(records) -> list[dict]:
    """Per pair and eps: the longest z over all |x|, the worst output error of either model
    against L eps, and |z| eps^2 / (tau Delta), which the second half keeps about constant."""
    rows = [r for r in bound_data(records) if r["pair"]]
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        for eps in sorted({r["eps"] for r in rows if r["model"] == model}, reverse=True):
            group = [r for r in rows if r["model"] == model and r["eps"] == eps]
            z = max(r["z_length_max"] for r in group)
            out.append({"pair": model.replace("pair: ", ""), "eps": eps, "longest z": z,
                        "z eps^2 / (tau Delta)": z * eps ** 2 / (group[0]["tau"]
                                                                 * group[0]["delta"]),
                        "worst output error": max(r["output_error_max"] for r in group),
                        "L eps": group[0]["L_eps"]})
    return out
