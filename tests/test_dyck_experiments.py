"""The Richard (2024) experiments run at test scale and write records with the right fields."""
import numpy as np
import pytest

from lengthgen.experiments.richard import protocol, rows
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import run_experiment

FIELDS = {
    "richard-thm41-closed-form": {"exhaustive": ["generalization_rate", "memorization_rate",
                                                 "repulsive_failure_rate", "no_pe_rate"]},
    "richard-fig3-left-capacity": {"trained": ["accuracy", "n_params", "d", "layers", "heads"]},
    "richard-fig3-right-samples": {"trained": ["in_sample", "out_of_sample", "train_size"]},
    "richard-fig4-completions": {None: ["contexts", "single_word", "order"]},
    "richard-table1-deepest": {None: ["balanced", "top", "paper_balanced_of_100"]},
    "richard-fig5-spectrum": {None: ["singular_values", "eigenvalues_real", "matrix"]},
    "richard-fig6-ablation": {None: ["in_sample", "out_of_sample", "trainable_parameters"]},
    "richard-fig7-learned-pe": {None: ["curves", "centroids", "cluster_sizes"]},
    "richard-fig7-order-study": {None: ["end_abs_mean", "end_relative", "amplitude",
                                        "readout_end", "token_weight"]},
    "richard-fig5-sign-study": {None: ["out_of_sample", "wo_wv_real", "wv_wot_real",
                                       "effective_real", "ln_gain_min"]},
    "richard-fig1-boolean": {None: ["in_sample_depth1", "out_of_sample_depth2", "n_params"]},
}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        return {fid: run_experiment(fid, "test", "cpu", root=root) for fid in FIELDS}


@pytest.mark.parametrize("figure_id", sorted(FIELDS))
def test_records_have_the_figure_fields(records, figure_id):
    recs = records[figure_id]
    assert recs and all(r["scale"] == "test" for r in recs)
    for r in recs:
        for kind, fields in FIELDS[figure_id].items():
            if kind is None or r["params"].get("kind") == kind:
                for field in fields:
                    assert field in r["metrics"], (figure_id, r["run_name"], field)
    fig = experiment(figure_id).figure(recs)
    assert all(ax.get_xlabel() or not ax.axison for ax in fig.axes if ax.get_label() != "<colorbar>")


def test_shared_models_are_the_same_weights(records):
    """Fig. 4, Table 1 and Fig. 5 study the models of Fig. 3 (right): equal specs."""
    from lengthgen.experiments.richard.protocol import many_spec, single_spec
    cfg = experiment("richard-fig3-right-samples").CONFIGS["test"]
    for fid in ("richard-fig4-completions", "richard-table1-deepest", "richard-fig5-spectrum"):
        models = experiment(fid).CONFIGS["test"]["models"]
        assert models["single"] == single_spec(cfg) and models["many"] == many_spec(cfg)
    single = [r for r in records["richard-fig3-right-samples"]
              if r["params"].get("train_size") == 1 and r["params"]["max_depth"] == 4]
    assert single and single[0]["metrics"]["train_size"] == 1


@pytest.mark.parametrize("scale", ["test", "book"])
def test_each_seed_studies_the_models_of_its_own_seed(scale):
    """Seed s of Fig. 4, Table 1 and Fig. 5 opens Fig. 3 (right)'s models of seed s, and seed s
    of Fig. 7 opens Fig. 6's largest-set models of seed s: equal specs, so the same weights."""
    from lengthgen.experiments.richard import richard_fig3_right_samples as right
    from lengthgen.experiments.richard import richard_fig6_ablation as ablation
    from lengthgen.experiments.spread import config_seeds, seeded_spec
    cfg = right.CONFIGS[scale]
    for fid in ("richard-fig4-completions", "richard-table1-deepest", "richard-fig5-spectrum"):
        config = experiment(fid).CONFIGS[scale]
        assert len(config_seeds(config)) >= 2
        for params in experiment(fid).runs(config):
            seed, depth = params["seed"], 4 if params["model"] == "single" else 8
            size = 1 if params["model"] == "single" else max(cfg["sizes"])
            assert seeded_spec(config, params["model"], seed) == protocol.model_spec(
                cfg, train_size=size, max_depth=depth, seed=seed)
    config, cfg = experiment("richard-fig7-learned-pe").CONFIGS[scale], ablation.CONFIGS[scale]
    runs = experiment("richard-fig7-learned-pe").runs(config)
    assert {p["seed"] for p in runs} == set(config_seeds(config)) and len(runs) == 3 * len(
        config_seeds(config))
    for params in runs:
        assert seeded_spec(config, params["variant"], params["seed"]) == protocol.ablation_spec(
            cfg, params["variant"], max(cfg["ks"]), params["seed"])


@pytest.mark.parametrize("figure_id", ["richard-fig4-completions", "richard-table1-deepest",
                                       "richard-fig5-spectrum", "richard-fig7-learned-pe"])
def test_committed_seeds_are_drawn_and_summarized(figure_id):
    """The book records of the figures that open trained models have every registered seed of
    every model; `figure data --over-seeds` gives one row per setting with that many seeds;
    the figures that summarize seeds draw a min-max bar, and every seed's own values."""
    import matplotlib.pyplot as plt

    from lengthgen.experiments.spread import config_seeds, over_seeds
    from lengthgen.runs.records import committed_records, figure_data
    module = experiment(figure_id)
    scale, records = committed_records(figure_id)
    seeds = config_seeds(module.CONFIGS[scale])
    assert len(seeds) >= 3 and sorted({r["params"]["seed"] for r in records}) == seeds
    rows = figure_data(figure_id, records)
    assert sorted({row["seed"] for row in rows}) == seeds
    summary = over_seeds(rows, module.SPREAD_BY)
    firsts = [row for row in summary if row.get("rank", 1) == 1 and row.get("position", 1) == 1]
    assert firsts and all(row["seeds"] == len(seeds) for row in firsts)
    fig = module.figure(records)
    try:
        if figure_id != "richard-fig5-spectrum":   # Fig. 5 overlays the seeds, no summary
            assert sum(len(ax.containers) for ax in fig.axes) > 0, "no min-max bar drawn"
        text = fig._suptitle.get_text()
        assert f"{len(seeds)} seeds" in text
    finally:
        plt.close(fig)


def test_closed_form_beats_nothing_less_than_all(records):
    closed = [r["metrics"] for r in records["richard-fig3-left-capacity"]
              if r["params"]["kind"] == "closed-form"]
    assert closed[0]["accuracy"] == 1.0 and closed[0]["n_params"] == 35
    thm = [r["metrics"] for r in records["richard-thm41-closed-form"]
           if r["params"]["kind"] == "exhaustive"]
    assert all(m["generalization_rate"] == 1.0 and m["no_pe_rate"] == 1.0 for m in thm)
    assert np.isclose(min(m["memorization_rate"] for m in thm), 1.0)


def test_fig3_left_paper_config_searches_the_papers_learning_rates(monkeypatch, tmp_path):
    """Paper scale: one model per rate of the paper's range for every shape, trained at that
    rate, and the figure keeps each shape's best; book and test keep one model per shape."""
    from lengthgen.experiments.richard import richard_fig3_left_capacity as fig3

    paper = fig3.CONFIGS["paper"]
    trained = [p for p in fig3.runs(paper) if p["kind"] == "trained"]
    shapes = {(p["d"], p["layers"], p["heads"]) for p in trained}
    assert len(trained) == len(shapes) * len(paper["lrs"])
    assert min(paper["lrs"]) == 6e-6 and max(paper["lrs"]) == 6e-5 and "lr" not in paper
    for scale in ("test", "book"):
        assert all("lr" not in p for p in fig3.runs(fig3.CONFIGS[scale]))

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    seen = []
    real = protocol.trained_model
    monkeypatch.setattr(protocol, "trained_model", lambda spec, device: seen.append(spec["lr"]) or
                        real(spec, device))
    config = {**{k: v for k, v in fig3.CONFIGS["test"].items() if k != "lr"}, "dims": [2],
              "lrs": [1e-3, 5e-2]}
    for params in fig3.runs(config)[1:]:
        fig3.run_one(params, config, "cpu")
    assert seen == [1e-3, 5e-2]

    metrics = [{"d": 2, "layers": 1, "heads": 1, "accuracy": a} for a in (0.2, 0.7, 0.4)]
    metrics.append({"d": 4, "layers": 1, "heads": 1, "accuracy": 0.1})
    assert sorted(m["accuracy"] for m in rows.best_per_shape(metrics)) == [0.1, 0.7]


@pytest.mark.parametrize("scale", ["test", "book", "paper"])
def test_studies_start_from_the_models_of_the_figures_they_study(scale):
    """The base setting with seed 0 is the very spec (so the very weights) of Fig. 5 / Fig. 7,
    and every other setting changes only what it names."""
    from lengthgen.experiments.richard import richard_fig5_sign_study as sign
    from lengthgen.experiments.richard import richard_fig7_order_study as order
    fig7 = experiment("richard-fig7-learned-pe").CONFIGS[scale]["models"]
    cfg = order.CONFIGS[scale]
    for variant, spec in fig7.items():
        assert protocol.order_study_spec(cfg, "base", variant, 0) == spec
        for setting, changes in cfg["settings"].items():
            other = protocol.order_study_spec(cfg, setting, variant, 1)
            assert {k for k in spec if spec[k] != other.get(k)} == set(changes) | {"seed"}
    assert protocol.order_study_spec(cfg, "base", "eq1-res", 0)["layers"] == 1
    many = experiment("richard-fig5-spectrum").CONFIGS[scale]["models"]["many"]
    cfg = sign.CONFIGS[scale]
    assert protocol.sign_study_spec(cfg, "base", 0) == many
    for setting, changes in cfg["settings"].items():
        other = protocol.sign_study_spec(cfg, setting, 2)
        assert {k for k in many if many[k] != other.get(k)} == set(changes) | {"seed"}


def test_dominant_eigenvalue_finds_a_known_negative_one():
    from lengthgen.experiments.richard.protocol import dominant_eigenvalue
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(4, 4))
    matrix = basis @ np.diag([0.5, -3.0, 2.0, 1.0]) @ np.linalg.inv(basis)  # not symmetric
    top = dominant_eigenvalue(matrix)
    assert np.isclose(top["real"], -3.0) and top["imag"] == 0.0
    assert np.isclose(top["modulus"], 3.0) and np.isclose(top["gap"], 1.5)
    rotation = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    top = dominant_eigenvalue(rotation)                       # +-2i dominates: no sign
    assert np.isclose(top["real"], 0.0) and np.isclose(abs(top["imag"]), 2.0)


def test_effective_map_carries_the_layernorm_gain_and_the_centring():
    from lengthgen.experiments.richard.protocol import dominant_eigenvalue, effective_map
    d = 5
    m = 2.0 * np.eye(d)
    assert np.isclose(dominant_eigenvalue(effective_map(m, np.ones(d)))["real"], 2.0)
    assert np.isclose(dominant_eigenvalue(effective_map(m, -np.ones(d)))["real"], -2.0)
    # the all-ones direction is removed by LayerNorm's centring
    assert np.allclose(effective_map(m, np.ones(d)) @ np.ones(d), 0.0)


def test_the_two_readings_of_value_times_projection_differ(tmp_path, monkeypatch):
    """W_O W_V and W_V W_O^T of the same layer have different spectra in general."""
    from lengthgen.experiments.richard import richard_fig5_sign_study as sign
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = protocol.sign_study_spec(sign.CONFIGS["test"], "base", 0)
    model, _ = protocol.trained_model(spec, "cpu")
    matrices, gain = protocol.value_readings(model)
    attn = model.blocks[-1].attn
    d = model.cfg.d_model
    w_v = attn.in_proj.weight[-d:].detach().double().numpy()
    w_o = attn.out_proj.weight.detach().double().numpy()
    assert np.allclose(matrices["wo_wv"], w_o @ w_v) and np.allclose(matrices["wv_wot"], w_v @ w_o.T)
    assert len(gain) == d
    a, b = (np.sort_complex(np.linalg.eigvals(matrices[k])) for k in ("wo_wv", "wv_wot"))
    assert not np.allclose(a, b)


def test_end_statistics_on_hand_made_curves():
    from lengthgen.experiments.richard.protocol import end_statistics
    curves = np.array([[1.0, 1.0, 1.0, 1.0],      # ends at 1, RMS 1
                       [0.0, 2.0, -2.0, 0.0],     # ends at 0, RMS sqrt(2)
                       [3.0, 3.0, 3.0, -3.0]])    # ends at 3 (sign ignored), RMS 3
    stats = end_statistics(curves)
    assert np.isclose(stats["end_abs_mean"], 4.0 / 3.0)
    assert np.isclose(stats["amplitude"], (1.0 + np.sqrt(2.0) + 3.0) / 3.0)
    assert np.isclose(stats["end_relative"], 4.0 / (4.0 + np.sqrt(2.0)))
    scaled = end_statistics(10.0 * curves)   # a variant whose table is 10x larger
    assert np.isclose(scaled["end_abs_mean"], 10.0 * stats["end_abs_mean"])
    assert np.isclose(scaled["end_relative"], stats["end_relative"])


def test_eq1_res_is_one_uniform_head_with_residual_layernorm_and_tied_frozen_tokens():
    from lengthgen.experiments.richard.protocol import build_model, position_curves
    from lengthgen.experiments.richard.protocol import order_study_spec
    from lengthgen.experiments.richard.richard_fig7_order_study import CONFIGS
    model = build_model(order_study_spec(CONFIGS["test"], "base", "eq1-res", 0))
    assert len(model.blocks) == 1 and model.blocks[0].mlp is None
    assert model.cfg.attention == "uniform" and model.cfg.n_heads == 1
    assert model.unembed.weight is model.token_embeddings.weight
    assert not model.token_embeddings.weight.requires_grad
    assert model.position_table().requires_grad and model.blocks[0].attn.in_proj.weight.requires_grad
    # curves are read towards '(' in every coordinate: u_j * cumulative sum
    table = model.position_table().detach().double().numpy()
    u = np.array([1.0 if j % 2 == 0 else -1.0 for j in range(table.shape[1])])
    assert np.allclose(position_curves(model, "eq1-res"), np.cumsum(table * u, axis=0).T)


def test_unknown_variant_is_one_clear_error():
    from lengthgen.errors import LengthgenError
    from lengthgen.experiments.richard.protocol import build_model
    with pytest.raises(LengthgenError, match="unknown Dyck model variant"):
        build_model({"variant": "ful", "n": 4, "d": 4, "layers": 1, "heads": 1, "seed": 0})


def test_eq1_readout_ignores_coordinates_the_output_does_not_read():
    """eq1's output reads the curves only through w = V^T 1; in d = 1 with V = v the readout is
    the closed form's own curve, whatever v is; a coordinate with w_j = 0 ends anywhere."""
    from lengthgen.experiments.richard.protocol import readout
    from lengthgen.models.dyck import ClosedFormHead
    head = ClosedFormHead("(()(()))()")
    curve = np.cumsum(head.positions[:, 0])
    out = readout(np.array([[head.v]]), curve[None, :])
    assert np.isclose(out["readout_end"], curve[-1]) and out["token_weight"] == head.v < 0
    value = np.array([[2.0, 1.0], [-1.0, -1.0]])           # w = V^T 1 = (1, 0)
    curves = np.array([[0.5, -0.5], [3.0, 100.0]])         # coordinate 2 ends far away
    out = readout(value, curves)
    assert np.isclose(out["token_weight"], 1.0) and np.isclose(out["readout_end"], -0.5)


def test_model_cache_is_keyed_by_thread_count_and_force_retrains(tmp_path, monkeypatch):
    """A record states the thread count its model was trained with: a cache from another thread
    count is not reused, and a --force sweep (fresh_after) trains again."""
    import time

    from lengthgen.config import torch_threads
    from lengthgen.experiments.richard.protocol import (SAMPLES_CONFIGS, cache_dir, single_spec,
                                                        trained_model)
    from lengthgen.runs.execute import _freshness
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = single_spec(SAMPLES_CONFIGS["test"])
    with torch_threads(1):
        trained_model(spec, "cpu")
    (first,) = cache_dir().glob("*.pt")
    with torch_threads(2):
        trained_model(spec, "cpu")
    assert len(list(cache_dir().glob("*.pt"))) == 2, "another thread count: its own model"
    stamp = first.stat().st_mtime_ns
    with torch_threads(1):
        trained_model(spec, "cpu")
    assert first.stat().st_mtime_ns == stamp, "same settings: the cache is reused"
    time.sleep(0.05)
    with torch_threads(1), _freshness(time.time()):
        trained_model(spec, "cpu")
    assert first.stat().st_mtime_ns > stamp, "--force: trained again, not loaded"


def test_an_unwritable_model_cache_fails_before_training(tmp_path, monkeypatch):
    import time

    from lengthgen.errors import LengthgenError
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/sys/x")
    start = time.perf_counter()
    with pytest.raises(LengthgenError, match=r"^cannot write the trained Dyck model cache"):
        run_experiment("richard-fig6-ablation", "test", "cpu", root=tmp_path)
    assert time.perf_counter() - start < 20, "refused before training, not after"
    assert not list((tmp_path / "richard-fig6-ablation" / "test").glob("*.json"))
