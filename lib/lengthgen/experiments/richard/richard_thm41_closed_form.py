"""Theorem 4.1, Claim 5.3 and Theorem 3.1 of Richard (2024), run rather than read.

Three kinds of runs:
- exhaustive-N*: for D_2N, every prefix of every word against a set of training words s. The
  attractive head (gamma = -1/2, v = -(2N^2+1)) must complete every prefix into a balanced
  word (greedy, and with the probability of that completion above 1 - 2N e^-N), and every
  prefix of s into s; the repulsive head (gamma = +1/2, v gamma = N^2+1) must fail on prefixes
  whose stack differs from s's; the positional-embedding-free head of Claim 5.3 must complete
  every prefix.
- sampled-N16: D_32, sampled completions (not greedy) of thousands of random prefixes, of deep
  prefixes (depth >= 9), and of the deepest prefix '(' * 16.
- memorization-d*: Theorem 3.1, the exact probability that a d-dimensional head with random
  token embeddings regenerates a random sequence, against the theorem's lower bound.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-thm41`
"""
import math

import numpy as np

from lengthgen.experiments.spread import group_by, metrics
from lengthgen.tasks.dyck import (CLOSE, OPEN, catalan, deep_prefix, enumerate_words,
                                  is_balanced, path, sample_words)

FIGURE_ID = "richard-thm41-closed-form"
TITLE = "Closed-form Dyck head: memorization, depth extrapolation, repulsion, Claim 5.3, Thm 3.1"

CONFIGS = {
    "test": {"exhaustive_n": [1, 2, 3, 4], "max_train_words": 6, "sampled_n": 8,
             "sampled_train_words": 2, "sampled_prefixes": 100,
             "thm31": {"t": 8, "n": 16, "v_gamma_per_n": 8.0, "dims": [4, 64, 256], "seeds": 3},
             "seed": 0},
    "book": {"exhaustive_n": [1, 2, 3, 4, 5, 6, 7, 8], "max_train_words": 42, "sampled_n": 16,
             "sampled_train_words": 10, "sampled_prefixes": 1000,
             "thm31": {"t": 16, "n": 64, "v_gamma_per_n": 10.0,
                       "dims": [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "seeds": 20},
             "seed": 0},
    "paper": {"exhaustive_n": [1, 2, 3, 4, 5, 6, 7, 8], "max_train_words": 1430, "sampled_n": 16,
              "sampled_train_words": 100, "sampled_prefixes": 10000,
              "thm31": {"t": 16, "n": 64, "v_gamma_per_n": 10.0,
                        "dims": [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048], "seeds": 100},
              "seed": 0},
}


def runs(config):
    out = [{"name": f"exhaustive-N{n:02d}", "kind": "exhaustive", "n": n, "seed": config["seed"]}
           for n in config["exhaustive_n"]]
    out.append({"name": f"sampled-N{config['sampled_n']}", "kind": "sampled",
                "n": config["sampled_n"], "seed": config["seed"]})
    out += [{"name": f"memorization-d{d:04d}", "kind": "memorization", "d": d,
             "seed": config["seed"]} for d in config["thm31"]["dims"]]
    return out


def _training_words(n: int, limit: int, rng) -> list[str]:
    """All of D_2n when it is small, else the deepest, the shallowest and random others."""
    words = enumerate_words(n) if n <= 12 else []
    if len(words) <= limit:
        return words
    extremes = [OPEN * n + CLOSE * n, (OPEN + CLOSE) * n]
    others = [w for w in words if w not in extremes]
    picks = rng.choice(len(others), limit - 2, replace=False)
    return extremes + [others[i] for i in sorted(picks)]


def _all_prefixes(n: int) -> list[str]:
    """Every non-empty proper prefix of every word of D_2n."""
    return sorted({w[:r] for w in enumerate_words(n) for r in range(1, 2 * n)})


def _exhaustive(n: int, limit: int, rng) -> dict:
    from lengthgen.models.dyck import ClosedFormHead, NoPositionHead   # torch only where run
    prefixes = _all_prefixes(n)
    heights = {p: int(path(p)[-1]) for p in prefixes}
    bound = 1 - 2 * n * math.exp(-n)
    general_ok = memo_ok = repulsive_checked = repulsive_failed = 0
    min_prob = memo_min_prob = 1.0
    words = _training_words(n, limit, rng)
    for s in words:
        head = ClosedFormHead(s, gamma=-0.5)
        completions, probs = head.complete(prefixes, greedy=True)
        general_ok += sum(is_balanced(p + c, n) for p, c in zip(prefixes, completions))
        min_prob = min(min_prob, float(probs.min()))
        own = [s[:r] for r in range(1, 2 * n)]
        completions, probs = head.complete(own, greedy=True)
        memo_ok += sum(p + c == s for p, c in zip(own, completions))
        memo_min_prob = min(memo_min_prob, float(probs.min()))
        s_height = path(s)
        off_path = [p for p in prefixes if heights[p] != s_height[len(p) - 1]]
        if off_path:
            repulsive = ClosedFormHead(s, gamma=0.5)
            completions, _ = repulsive.complete(off_path, greedy=True)
            repulsive_checked += len(off_path)
            repulsive_failed += sum(not is_balanced(p + c, n) for p, c in zip(off_path, completions))
    no_pe = NoPositionHead(n)
    completions, probs = no_pe.complete(prefixes, greedy=True)
    return {
        "n": n, "catalan": catalan(n), "n_prefixes": len(prefixes), "n_train_words": len(words),
        "n_weights": 2 * n + 3,
        "generalization_rate": general_ok / (len(words) * len(prefixes)),
        "generalization_min_probability": min_prob,
        "memorization_rate": memo_ok / (len(words) * (2 * n - 1)),
        "memorization_min_probability": memo_min_prob,
        "probability_bound": bound,
        "repulsive_prefixes": repulsive_checked,
        "repulsive_failure_rate": (repulsive_failed / repulsive_checked
                                   if repulsive_checked else None),
        "no_pe_rate": sum(is_balanced(p + c, n) for p, c in zip(prefixes, completions)) / len(prefixes),
        "no_pe_min_probability": float(probs.min()),
    }


def _sampled(n: int, config, rng) -> dict:
    """Sampled (multinomial) completions in D_2n, from random, deep and the deepest prefixes."""
    from lengthgen.models.dyck import ClosedFormHead
    count = config["sampled_prefixes"]
    deep_from = n // 2 + 1
    words = sample_words(rng, n, config["sampled_train_words"])
    total = {"random": [0, 0], "deep": [0, 0], "deepest": [0, 0]}
    for s in words:
        head = ClosedFormHead(s, gamma=-0.5)
        sets = {
            "random": [w[: int(rng.integers(1, 2 * n))] for w in sample_words(rng, n, count)],
            "deep": [deep_prefix(w, deep_from, rng)
                     for w in sample_words(rng, n, count // 4, min_depth=deep_from)],
            "deepest": [OPEN * n] * 20,
        }
        for kind, prefixes in sets.items():
            completions, _ = head.complete(prefixes, rng)
            total[kind][0] += sum(is_balanced(p + c, n) for p, c in zip(prefixes, completions))
            total[kind][1] += len(prefixes)
    out = {"n": n, "deep_from": deep_from, "n_train_words": len(words)}
    for kind, (ok, seen) in total.items():
        out[f"{kind}_rate"], out[f"{kind}_count"] = ok / seen, seen
    return out


def _memorization(d: int, config, seed: int) -> dict:
    """Theorem 3.1: exact regeneration probability from the one-token prefix, over seeds."""
    from lengthgen.models.dyck import MemorizationHead
    from lengthgen.theory.dyck_bound import theorem31_bound, theorem31_min_dimension
    cfg = config["thm31"]
    n, t = cfg["n"], cfg["t"]
    v_gamma = cfg["v_gamma_per_n"] * n
    probs = []
    for k in range(cfg["seeds"]):
        rng = np.random.default_rng([seed, d, k])
        sequence = rng.integers(0, t, n)
        head = MemorizationHead(sequence, t, d, gamma=-0.5, v=-2 * v_gamma, rng=rng)
        probs.append(head.regeneration_probability(1))
    return {"d": d, "t": t, "n": n, "v_gamma": v_gamma,
            "mean_probability": float(np.mean(probs)), "min_probability": float(np.min(probs)),
            "bound": theorem31_bound(n, t, d, v_gamma),
            # the dimension the theorem asks for at eps = 1/2 (not the smallest d it allows)
            "dimension_at_eps_half": theorem31_min_dimension(n, 0.5)}


def run_one(params, config, device):
    rng = np.random.default_rng([params["seed"], params.get("n", 0), params.get("d", 0)])
    if params["kind"] == "exhaustive":
        return _exhaustive(params["n"], config["max_train_words"], rng)
    if params["kind"] == "sampled":
        return _sampled(params["n"], config, rng)
    return _memorization(params["d"], config, params["seed"])


_QUANTITIES = {
    "exhaustive": ("generalization_rate", "memorization_rate", "no_pe_rate",
                   "repulsive_success_rate", "generalization_failure_probability",
                   "no_pe_failure_probability", "theorem_failure_bound", "n_prefixes",
                   "n_train_words"),
    "sampled": ("random_rate", "deep_rate", "deepest_rate", "random_count", "deep_count",
                "deepest_count", "n_train_words"),
    "memorization": ("mean_probability", "min_probability", "bound", "t", "n", "v_gamma"),
}


def _thm31_bound(m: dict) -> float:
    """Theorem 3.1's bound for a memorization run, computed now from the formula (with its
    eps^3/3 term) rather than read from the record: records written before that term was kept
    carry an optimistic `bound`."""
    from lengthgen.theory.dyck_bound import theorem31_bound
    return theorem31_bound(m["n"], m["t"], m["d"], m["v_gamma"])


def data(records):
    """One row per run and plotted quantity (long form: the three kinds of runs measure
    different things). N is the half-length of the Dyck words, d the embedding dimension of
    Theorem 3.1; the failure probabilities are 1 - the smallest greedy-completion probability
    (middle panel), the repulsive success rate is 1 - its failure rate (left panel)."""
    rows = []
    for r in sorted(records, key=lambda r: r["run_name"]):
        m, kind = dict(r["metrics"]), r["params"]["kind"]
        if kind == "exhaustive":
            m["repulsive_success_rate"] = (None if m["repulsive_failure_rate"] is None
                                           else 1 - m["repulsive_failure_rate"])
            m["generalization_failure_probability"] = 1 - m["generalization_min_probability"]
            m["no_pe_failure_probability"] = 1 - m["no_pe_min_probability"]
            m["theorem_failure_bound"] = 2 * m["n"] * math.exp(-m["n"])
        if kind == "memorization":   # the theorem's bound, from its formula at draw time
            m["bound"] = _thm31_bound(m)
        rows += [{"run": r["run_name"], "kind": kind, "seed": r["params"]["seed"],
                  "N": r["params"].get("n", ""), "d": r["params"].get("d", ""),
                  "quantity": q, "value": "" if m[q] is None else m[q]}
                 for q in _QUANTITIES[kind]]
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    by_kind = group_by(records, lambda r: r["params"]["kind"], metrics)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ex = sorted(by_kind.get("exhaustive", []), key=lambda m: m["n"])
    ns = [m["n"] for m in ex]
    ax = axes[0]
    ax.plot(ns, [m["generalization_rate"] for m in ex], "o-", label="any prefix, gamma=-1/2")
    ax.plot(ns, [m["memorization_rate"] for m in ex], "s--", label="prefix of s -> s, gamma=-1/2")
    ax.plot(ns, [m["no_pe_rate"] for m in ex], "^-", label="no positions (Claim 5.3)")
    rep = [m for m in ex if m["repulsive_failure_rate"] is not None]
    ax.plot([m["n"] for m in rep], [1 - m["repulsive_failure_rate"] for m in rep], "x-",
            color="crimson", label="off-path prefixes, gamma=+1/2")
    for m in by_kind.get("sampled", []):
        ax.plot([m["n"]] * 3, [m["random_rate"], m["deep_rate"], m["deepest_rate"]], "D",
                color="limegreen", label=f"$D_{{{2 * m['n']}}}$: sampled, deep, deepest")
    ax.set(xlabel="N (words of length 2N)", ylabel="fraction completed into a balanced word",
           title="Theorem 4.1, checked on every prefix", ylim=(-0.05, 1.05))
    ax.legend(fontsize=7, loc="center left")
    ax = axes[1]
    ax.semilogy(ns, [1 - m["generalization_min_probability"] for m in ex], "o-",
                label="1 - min P(greedy completion), gamma=-1/2")
    ax.semilogy(ns, [1 - m["no_pe_min_probability"] for m in ex], "^-", label="same, Claim 5.3")
    ax.semilogy(ns, [2 * n * math.exp(-n) for n in ns], "k:", label="theorem: 2N exp(-N)")
    ax.set(xlabel="N", ylabel="failure probability", title="Probability bound of Theorem 4.1")
    ax.legend(fontsize=7)
    mem = sorted(by_kind.get("memorization", []), key=lambda m: m["d"])
    ax = axes[2]
    ds = [m["d"] for m in mem]
    ax.semilogx(ds, [m["mean_probability"] for m in mem], "o-", label="measured, mean over draws")
    ax.semilogx(ds, [m["min_probability"] for m in mem], "v:", label="measured, worst draw")
    ax.semilogx(ds, [_thm31_bound(m) for m in mem], "k--", label="Theorem 3.1 lower bound")
    if mem:
        m = mem[0]
        ax.set_title(f"Theorem 3.1: t={m['t']}, n={m['n']}, v*gamma={m['v_gamma']:.0f}")
    ax.set(xlabel="embedding dimension d", ylabel="P(prefix of length 1 regenerates s)",
           ylim=(-0.05, 1.05))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
