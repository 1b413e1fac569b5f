"""Fig. 5 of Richard (2024): the value-times-output-projection matrix of the top layer.

For the single-word and the many-word models of Fig. 3 (right) (same specs, same weights) we
take M = W_O W_V of the last attention layer (d x d, heads merged) and report its singular
values and complex eigenvalues. The paper sees a low-rank M with a dominant negative real
eigenvalue in the model that generalizes better.
"""
import numpy as np

from lengthgen.experiments import richard_fig3_right_samples as samples_figure
from lengthgen.experiments.richard_dyck_training import trained_model, value_projection

FIGURE_ID = "richard-fig5-spectrum"
TITLE = "Spectrum of the top layer's value x projection matrix, single- vs many-word model"

CONFIGS = {scale: {"models": {"single": samples_figure.single_spec(cfg),
                              "many": samples_figure.many_spec(cfg)}, "seed": 0}
           for scale, cfg in samples_figure.CONFIGS.items()}


def runs(config):
    return [{"name": name, "model": name, "seed": config["seed"]} for name in config["models"]]


def run_one(params, config, device):
    spec = config["models"][params["model"]]
    model, _ = trained_model(spec, device)
    m = value_projection(model)
    eig = np.linalg.eigvals(m)
    order = np.argsort(-np.abs(eig))
    singular = np.linalg.svd(m, compute_uv=False)
    return {"train_size": spec["train_size"], "max_depth": spec["max_depth"],
            "matrix": m.tolist(), "singular_values": singular.tolist(),
            "eigenvalues_real": eig.real[order].tolist(),
            "eigenvalues_imag": eig.imag[order].tolist(),
            "top_singular_share": float(singular[0] ** 2 / (singular ** 2).sum())}


def data(records):
    """One row per plotted number of each model: the entries of W_O W_V (quantity "matrix",
    row i, column j), its singular values and its eigenvalues (index i, largest first; the
    eigenvalue's imaginary part in `imag`)."""
    rows = []
    for r in sorted(records, key=lambda r: r["metrics"]["train_size"]):
        m = r["metrics"]
        base = {"model": r["params"]["model"], "seed": r["params"]["seed"],
                "train_size": m["train_size"], "max_depth": m["max_depth"]}
        rows += [{**base, "quantity": "matrix", "i": i, "j": j, "value": value, "imag": 0.0}
                 for i, line in enumerate(m["matrix"]) for j, value in enumerate(line)]
        rows += [{**base, "quantity": "singular_value", "i": i, "j": "", "value": value,
                  "imag": 0.0} for i, value in enumerate(m["singular_values"])]
        rows += [{**base, "quantity": "eigenvalue", "i": i, "j": "", "value": re, "imag": im}
                 for i, (re, im) in enumerate(zip(m["eigenvalues_real"], m["eigenvalues_imag"]))]
    return rows


def figure(records):
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: r["metrics"]["train_size"])
    # one column per model, one row per view: two panels side by side fit the book's column
    fig, axes = plt.subplots(3, len(records), figsize=(3.7 * len(records), 10.5), squeeze=False)
    for row, r in zip(axes.T, records):
        m = r["metrics"]
        label = f"{m['train_size']} word(s), depth <= {m['max_depth']}"
        mat = np.array(m["matrix"])
        bound = np.abs(mat).max()
        im = row[0].imshow(mat, cmap="RdBu_r", vmin=-bound, vmax=bound)
        fig.colorbar(im, ax=row[0], fraction=0.046)
        row[0].set(title=f"W_O W_V, {label}", xlabel="input dimension", ylabel="output dimension")
        row[1].semilogy(np.arange(1, len(m["singular_values"]) + 1), m["singular_values"], "o-")
        row[1].set(title=f"singular values (top share {m['top_singular_share']:.0%})",
                   xlabel="index", ylabel="singular value")
        row[2].scatter(m["eigenvalues_real"], m["eigenvalues_imag"], s=12)
        row[2].scatter(m["eigenvalues_real"][:1], m["eigenvalues_imag"][:1], s=60, color="red",
                       label="largest |eigenvalue|")
        row[2].axhline(0, color="grey", lw=0.5)
        row[2].axvline(0, color="grey", lw=0.5)
        row[2].set(title="eigenvalues", xlabel="real part", ylabel="imaginary part")
        row[2].legend(fontsize=7)
    fig.tight_layout()
    return fig
