"""Fig. 7 of Richard (2024): the positional embeddings that gradient descent learns.

For the three uniform-attention variants of Fig. 6 trained on its largest set (same specs,
same weights: ablation_spec), each of the d coordinates of the learned positional table B
gives one curve r -> sum_{i<=r} B_i (in the decoder variants, coordinate j is multiplied by
the sign u_j of the frozen '(' embedding, so that up means "towards '('" in every curve);
k-means (k = 8) groups the curves. The closed form has a
single such curve (d = 1): minus the Dyck path of the training word, shifted by gamma E.
"""
import numpy as np

from lengthgen.experiments import richard_fig6_ablation as ablation
from lengthgen.experiments.richard_dyck_training import position_curves, trained_model

FIGURE_ID = "richard-fig7-learned-pe"
TITLE = "Cumulative sums of learned positional embeddings, with k-means centroids"

MODELS = ("uniform-pm1", "uniform-pm1-v", "eq1")
CONFIGS = {scale: {"models": {v: ablation.ablation_spec(cfg, v, max(cfg["ks"])) for v in MODELS},
                   "clusters": {"test": 2, "book": 8, "paper": 8}[scale], "seed": 0}
           for scale, cfg in ablation.CONFIGS.items()}


def runs(config):
    return [{"name": v, "variant": v, "seed": config["seed"]} for v in config["models"]]


def kmeans(curves: np.ndarray, k: int, rng, iterations: int = 50):
    """Plain Lloyd iterations: (centroids [k, T], label of each curve)."""
    k = min(k, len(curves))
    centroids = curves[rng.choice(len(curves), k, replace=False)]
    for _ in range(iterations):
        labels = ((curves[:, None] - centroids[None]) ** 2).sum(-1).argmin(1)
        centroids = np.stack([curves[labels == j].mean(0) if (labels == j).any() else centroids[j]
                              for j in range(k)])
    return centroids, labels


def run_one(params, config, device):
    model, _ = trained_model(config["models"][params["variant"]], device)
    curves = position_curves(model, params["variant"])             # [d, T]
    rng = np.random.default_rng([params["seed"], 7])
    centroids, labels = kmeans(curves, config["clusters"], rng)
    return {"variant": params["variant"], "curves": curves.tolist(),
            "centroids": centroids.tolist(),
            "cluster_sizes": np.bincount(labels, minlength=len(centroids)).tolist(),
            "end_abs_mean": float(np.abs(curves[:, -1]).mean())}


def data(records):
    """One row per curve and position: each coordinate's cumulative positional embedding
    (kind "curve", index = coordinate) and each k-means centroid (kind "centroid", index =
    cluster, with its size)."""
    rows = []
    for r in records:
        m = r["metrics"]
        base = {"variant": m["variant"], "seed": r["params"]["seed"]}
        for kind, curves, sizes in (("curve", m["curves"], None),
                                    ("centroid", m["centroids"], m["cluster_sizes"])):
            for index, curve in enumerate(curves):
                size = "" if sizes is None else sizes[index]
                rows += [{**base, "kind": kind, "index": index, "cluster_size": size,
                          "position": position, "value": value}
                         for position, value in enumerate(curve, start=1)]
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    order = {v: i for i, v in enumerate(MODELS)}
    records = sorted(records, key=lambda r: order.get(r["params"]["variant"], 99))
    fig, axes = plt.subplots(len(records), 1, figsize=(8, 3.2 * len(records)), squeeze=False)
    for ax, r in zip(axes[:, 0], records):
        m = r["metrics"]
        curves = np.array(m["curves"])
        x = np.arange(1, curves.shape[1] + 1)
        ax.plot(x, curves.T, color="grey", lw=0.4, alpha=0.4)
        colors = plt.cm.tab10(np.arange(len(m["centroids"])))
        for c, size, color in zip(m["centroids"], m["cluster_sizes"], colors):
            ax.plot(x, c, color=color, lw=2, label=f"{size} curves")
        ax.axhline(0, color="black", lw=0.5)
        ax.set(title=f"{m['variant']}: mean |end value| {m['end_abs_mean']:.2f}",
               xlabel="position r", ylabel="cumulative positional embedding")
        ax.legend(fontsize=6, ncol=4)
    fig.tight_layout()
    return fig
