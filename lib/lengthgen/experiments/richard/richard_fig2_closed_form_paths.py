"""Fig. 2 of Richard (2024): the closed-form head drawn as paths of cumulative sums.

For one D_16 training word s: the Dyck path of s (cumulative token embeddings), the cumulative
closed-form positional embeddings (gamma = -1/2, which run opposite to the path, shifted by
gamma E_{s(r+1)}), and a deeper prefix with the completion the head generates: it descends
until it meets the path of s, then follows it.

Feeds: book/dyck.ipynb, {numref}`fig-dyck-paths`
"""
import numpy as np

from lengthgen.tasks.dyck import is_balanced, path

FIGURE_ID = "richard-fig2-closed-form-paths"
TITLE = "Closed-form head: Dyck path of s, cumulative positional embeddings, a completed prefix"

_EXAMPLE = {"train_word": "(()(()))()(()())", "prefix": "((((((", "gamma": -0.5, "seed": 0}
CONFIGS = {"test": dict(_EXAMPLE), "book": dict(_EXAMPLE), "paper": dict(_EXAMPLE)}


def runs(config):
    return [{"name": "example", "seed": config["seed"]}]


def run_one(params, config, device):
    from lengthgen.models.dyck import ClosedFormHead   # here: torch only where a head runs
    head = ClosedFormHead(config["train_word"], gamma=config["gamma"])
    rng = np.random.default_rng(params["seed"])
    (completion,), (probability,) = head.complete([config["prefix"]], rng)
    word = config["prefix"] + completion
    return {
        "train_word": config["train_word"], "prefix": config["prefix"],
        "completion": completion, "balanced": is_balanced(word, head.n),
        "completion_probability": float(probability), "v": head.v, "n_weights": head.n_weights,
        "train_path": path(config["train_word"]).tolist(),
        "positional_cumsum": np.cumsum(head.positions[:, 0]).tolist(),
        "completed_path": path(word).tolist(),
    }


def data(records):
    """One row per position r: the training word's Dyck path, the cumulative closed-form
    positional embeddings, and the path of the prefix followed by the head's completion."""
    rows = []
    for r in records:
        m = r["metrics"]
        word = m["prefix"] + m["completion"]
        for i, (train, positional, completed) in enumerate(
                zip(m["train_path"], m["positional_cumsum"], m["completed_path"]), start=1):
            rows.append({"seed": r["params"]["seed"], "position": i,
                         "train_symbol": m["train_word"][i - 1], "train_path": train,
                         "positional_cumsum": positional, "completed_symbol": word[i - 1],
                         "part": "prefix" if i <= len(m["prefix"]) else "completion",
                         "completed_path": completed, "balanced": m["balanced"],
                         "completion_probability": m["completion_probability"]})
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    m = records[0]["metrics"]
    x = np.arange(1, len(m["train_path"]) + 1)
    r = len(m["prefix"])
    fig, ax = plt.subplots(figsize=(7.4, 5.4))
    ax.plot(np.r_[0, x], np.r_[0, m["train_path"]], "s-", color="black",
            label=f"training word s = {m['train_word']}")
    ax.plot(np.r_[0, x], np.r_[0, m["positional_cumsum"]], "^-", color="red",
            label="cumulative positional embeddings (gamma = -1/2)")
    ax.plot(np.r_[0, x[:r]], np.r_[0, m["completed_path"][:r]], "o-", color="tab:blue",
            label=f"prefix {m['prefix']}")
    ax.plot(x[r - 1:], m["completed_path"][r - 1:], "*--", color="limegreen", markersize=10,
            label=f"completion {m['completion']} ({'balanced' if m['balanced'] else 'unbalanced'})")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set(xlabel="position r", ylabel="cumulative sum (stack size for brackets)",
           title=f"Closed-form head with {m['n_weights']} weights, v = {m['v']:.0f}")
    # under the axes: inside, at the book's text size, it covers the paths
    ax.legend(fontsize=10.5, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    fig.tight_layout()
    return fig
