"""The quantitative-bounds chapter's tables and prose numbers, from the izzo figures' records
(and, for the k-gram task's change of target, a measurement on the task itself).

Below the figure modules, as `rows` is: the chapter's facade and notebook read them here, and a
figure module offers only the figure contract (lengthgen.runs.contract)."""
import numpy as np

from lengthgen.experiments.izzo.rows import (bound_data, group_rows, kgram_data,
                                             modp_train_length, scaling_rows)
from lengthgen.experiments.prose import sig
from lengthgen.tasks.izzo import KGramTask


def scaling_growth(records) -> dict:
    """The prose's numbers of the logit-scaling comparison (glued as izzo-scaling-KEY): per
    scaling, the growth of the test loss from 64 to the longest test length at each compared
    train length, and those train lengths.

    Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-scalings`"""
    growth = {}
    for r in scaling_rows(records):
        growth.setdefault((r["logit_scaling"], r["train_length"]), r["growth_longest_over_64"])
    ordered = sorted(growth.items())
    # glue keys: izzo-scaling-{suffix,all,lengths}
    # glue keys: izzo-scaling-{suffix,all}-{stopped,runs,stopped-growth}
    out = {"suffix": ", ".join(sig(v) for (s, _), v in ordered if s == "suffix"),
           "all": ", ".join(sig(v) for (s, _), v in ordered if s == "all"),
           "lengths": ", ".join(str(n) for (s, n), _ in ordered if s == "all")}
    # how many compared runs of each scaling met the stop rule, and the growth of those that
    # did with every logit scaled (the creep is not an unfinished fit if they creep too)
    config = records[0]["config"]
    extra = config.get("compare_all")
    if extra:
        tests = config["test_lengths"]
        first, last = str(64 if 64 in tests else min(tests)), str(max(tests))
        lengths = {modp_train_length(extra["period"], r) for r in extra["n_over_p"]}
        for scaling in (config["logit_scaling"], "all"):
            group = [r for r in records if r["params"]["period"] == extra["period"]
                     and r["params"]["train_length"] in lengths
                     and r["params"].get("logit_scaling", config["logit_scaling"]) == scaling]
            met = [r for r in group if r["metrics"]["reached_stop_loss"]]
            out[f"{scaling}-stopped"], out[f"{scaling}-runs"] = str(len(met)), str(len(group))
            grown = [r["metrics"]["test_loss"][last] / r["metrics"]["test_loss"][first]
                     for r in met]
            out[f"{scaling}-stopped-growth"] = (f"{sig(min(grown))} to {sig(max(grown))}"
                                                if grown else "-")
    return out


def hardmax_table(records) -> list[dict]:
    """The chapter's table: `group_rows` with the headers the reader sees."""
    shown = {"train_length": "N", "seed": "seed", "positions": "positions", "count": "count",
             "mean_weight": "mean weight", "std_weight": "std of the weight",
             "test_loss": "test MSE at 80"}
    return [{header: row[key] for key, header in shown.items()} for row in group_rows(records)]


def hardmax_headline(records) -> dict:
    """The numbers the chapter's prose quotes, formatted (keys glued as izzo-fig3-KEY): the
    largest mean weight off the k mod p positions (past the shortest train length when there
    are several), the largest std on them per train length, and the shortest and longest train
    lengths with their test loss and weight off the positions.

    Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-fig3-hardmax`,
    {numref}`tab-izzo-hardmax-table`"""
    rows = group_rows(records)
    lengths = sorted({r["train_length"] for r in rows})
    first, last = lengths[0], lengths[-1]
    off = [r for r in rows if r["positions"] == "other"]
    # glue keys: izzo-fig3-{off,std,lengths,first-loss,first-off,last-loss,first-n,last-n}
    return {
        "off": sig(max(r["mean_weight"] for r in off
                       if r["train_length"] > first or len(lengths) == 1)),
        "std": ", ".join(sig(max(r["std_weight"] for r in rows
                                 if r["positions"] == "k mod p" and r["train_length"] == n))
                         for n in lengths),
        "lengths": ", ".join(str(n) for n in lengths),
        "first-loss": sig(max(r["test_loss"] for r in rows if r["train_length"] == first)),
        "first-off": sig(max(r["mean_weight"] for r in off if r["train_length"] == first)),
        "last-loss": sig(max(r["test_loss"] for r in rows if r["train_length"] == last)),
        "first-n": first, "last-n": last}


def smoothing_gap_rows(settings, length_bins, samples: int = 2000, seed: int = 0) -> list:
    """The measurement behind the change of target: per (S, k) and length bin, the mean squared
    distance (summed over the S outputs) between the Laplace-smoothed (n_s + 1) / (n + S) of
    the first version and the proportion n_s / n the task now uses, on `samples` strings."""
    rows = []
    for S, k in settings:
        task = KGramTask(S, k)
        rng = np.random.default_rng(seed)
        for lo, hi in length_bins:
            batch = task.sample(rng, samples, max(lo, task.min_len), hi)
            values = batch.inputs - 1
            y = batch.targets[np.arange(samples), batch.lengths - 1]
            smoothed = []
            for row, n in zip(values, batch.lengths):
                counts = np.zeros(S)
                string, context = list(row[:n]), list(row[n - k + 1:n])
                for end in range(k - 2, n - 1):
                    if string[end - k + 2:end + 1] == context:
                        counts[string[end + 1]] += 1
                smoothed.append((counts + 1) / (counts.sum() + S))
            gap = ((np.array(smoothed) - y) ** 2).sum(axis=1).mean()
            rows.append({"S": S, "k": k, "lengths": f"{lo}-{hi}", "gap_mse": float(gap)})
    return rows


# layer 1's weight on the previous tokens that counts as a settled local read (the k-gram figure)
KGRAM_SATURATED = 0.95


def kgram_attention_summary(records) -> dict:
    """What the prose says about where the layers look, computed from the records: the range
    over runs of layer 1's weight on the previous tokens and of layer 2's weight on the matches
    at the shortest and longest test length, the range of layer 1's phi at distance 1, and the
    regime it puts layer 1 in (the previous token's weight grows like i^phi against the i
    other positions: phi > 1 sharpens with length, phi < 1 fades), and, for k = 2, the growth
    of the loss from the shortest to the longest test length for the runs whose layer-1 read is
    already settled at the shortest length (weight >= SATURATED) and for the others; the final
    training losses of k = 2 and of longer contexts.

    Feeds: book/quantitative_bounds.ipynb, {numref}`fig-izzo-kgram`,
    {numref}`tab-izzo-kgram-attention`"""
    def span(values):
        values = [v for v in values if v is not None]
        return f"{min(values):.2g} to {max(values):.2g}" if values else "-"
    lengths = sorted({int(n) for r in records for n in r["metrics"]["attention"]})
    first, last = str(lengths[0]), str(lengths[-1])
    att = [r["metrics"]["attention"] for r in records]
    phi1 = [r["metrics"]["phi"][0][1] for r in records]
    l1 = [(a[first]["layer1_previous"], a[last]["layer1_previous"]) for a in att]
    sharper = sum(b > a for a, b in l1)
    regime = ("above 1 in every run: the paper's position-dominated regime" if min(phi1) > 1
              else "below 1 in every run: the token-dominated regime, where the local read "
                   "fades" if max(phi1) < 1 else "on both sides of 1 across runs")
    growth = [r["metrics"]["test_loss"][last] / r["metrics"]["test_loss"][first]
              for r in records]
    pairs = [(a, g) for r, (a, _), g in zip(records, l1, growth) if r["params"]["k"] == 2]
    sure = [g for a, g in pairs if a >= KGRAM_SATURATED]
    unsure = [g for a, g in pairs if a < KGRAM_SATURATED]
    longer = [r["metrics"]["train_loss"] for r in records if r["params"]["k"] > 2]
    # the chapter glues these with glue_numbers(..., prefix="izzo-kgram"):
    # glue keys: izzo-kgram-{first,last,phi1,regime,saturated,k2-runs,k2-train}
    # glue keys: izzo-kgram-{sure-runs,sure-growth,unsure-runs,unsure-growth}
    # glue keys: izzo-kgram-{longer-context-train,l1-first,l1-last,l1-sharper,l2-first,l2-last}
    return {"first": first, "last": last, "phi1": span(phi1), "regime": regime,
            "saturated": f"{KGRAM_SATURATED:g}", "sure-runs": str(len(sure)),
            "sure-growth": span(sure), "unsure-runs": str(len(unsure)),
            "unsure-growth": span(unsure), "k2-runs": str(len(pairs)),
            "longer-context-train": span(longer),
            "k2-train": span(r["metrics"]["train_loss"] for r in records
                             if r["params"]["k"] == 2),
            "l1-first": span(a for a, _ in l1), "l1-last": span(b for _, b in l1),
            "l1-sharper": f"{sharper} of {len(l1)}",
            "l2-first": span(a[first]["layer2_matches"] for a in att),
            "l2-last": span(a[last]["layer2_matches"] for a in att)}


def kgram_gap_table(rows) -> list[dict]:
    """The chapter's table of `smoothing_gap_rows`."""
    return [{"S": r["S"], "k": r["k"], "lengths": r["lengths"],
             "smoothed vs proportion (MSE)": r["gap_mse"]} for r in rows]


def kgram_table(records) -> list[dict]:
    """The chapter's table: `data` with the headers the reader sees."""
    shown = {"S": "S", "k": "k", "train_length": "N", "test_length": "test length",
             "test_loss": "test MSE", "test_loss_min": "smallest seed",
             "test_loss_max": "largest seed", "train_loss": "train loss",
             "stopped_by_loss": "stopped by the rule"}
    return [{header: row[key] for key, header in shown.items()} for row in kgram_data(records)]


def kgram_attention_rows(records) -> list[dict]:
    """Per run and test length: layer 1's weight on the previous tokens, layer 2's on the
    matches (blank where none) and layer 1's learned local bias phi."""
    rows = []
    for r in sorted(records, key=lambda r: (r["params"]["S"], r["params"]["k"],
                                            r["params"]["seed"])):
        phi = ", ".join(f"{v:.2f}" for v in r["metrics"]["phi"][0])
        # records keep their keys as sorted strings ("128" before "32"): order by length
        for n, a in sorted(r["metrics"]["attention"].items(), key=lambda item: int(item[0])):
            rows.append({"S": r["params"]["S"], "k": r["params"]["k"], "seed": r["params"]["seed"],
                         "test length": int(n), "layer 1 on previous": a["layer1_previous"],
                         "layer 2 on matches": ("" if a["layer2_matches"] is None
                                                else a["layer2_matches"]),
                         "phi layer 1": phi})
    return rows


def simulation_table(records) -> list[dict]:
    """The chapter's simulation table: per (model, eps), the worst over every |x| and input of
    |z|, the statistic change and the output error, beside L eps and the theorem's N."""
    worst = {}
    for r in bound_data(records):
        w = worst.setdefault((r["model"], r["eps"]), {**r, "x_length": 0})
        for k in ("x_length", "z_length_max", "statistic_error_max", "output_error_max"):
            w[k] = max(w[k], r[k])
    return [{"model": w["model"], "eps": w["eps"], "longest |x|": w["x_length"],
             "longest z": w["z_length_max"], "largest proportion change": w["statistic_error_max"],
             "largest output error": w["output_error_max"], "L eps": w["L_eps"],
             "theorem's N": w["N"]} for w in worst.values()]


def theorem_lengths(records) -> tuple[float, float]:
    """The smallest and largest N of Theorem 4.1 over the models and eps of the records."""
    lengths = [r["metrics"]["N"] for r in records]
    return min(lengths), max(lengths)


def bound_z_shares(records) -> dict[str, str]:
    """The longest z as a share of the theorem's N (constants set to 1), worst case per model
    and eps: for the ModPTask pairs, where L = 1 and the second half needs tau Delta / eps^2
    positions, the theorem's second term itself, and for every other model or pair. Ranges as
    text, for the chapter's sentence on how short z is.

    Feeds: book/quantitative_bounds.ipynb, {numref}`tab-izzo-simulation-table`,
    {numref}`tab-izzo-pair-table`"""
    groups = {"modp-pairs": [], "others": []}   # glue keys: izzo-z-share-{modp-pairs,others}
    for row in simulation_table(records):
        modp_pair = row["model"].startswith("pair: ModPTask")
        groups["modp-pairs" if modp_pair else "others"].append(row["longest z"]
                                                                / row["theorem's N"])
    return {name: (f"{sig(min(v))} to {sig(max(v))}" if v else "none")
            for name, v in groups.items()}
