"""The Richard (2024) experiments run at test scale and write records with the right fields."""
import numpy as np
import pytest

from lengthgen.experiments import experiment, run_experiment

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
    from lengthgen.experiments import richard_fig3_right_samples as right
    cfg = right.CONFIGS["test"]
    for fid in ("richard-fig4-completions", "richard-table1-deepest", "richard-fig5-spectrum"):
        models = experiment(fid).CONFIGS["test"]["models"]
        assert models["single"] == right.single_spec(cfg) and models["many"] == right.many_spec(cfg)
    single = [r for r in records["richard-fig3-right-samples"]
              if r["params"].get("train_size") == 1 and r["params"]["max_depth"] == 4]
    assert single and single[0]["metrics"]["train_size"] == 1


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
    from lengthgen.experiments import richard_fig3_left_capacity as fig3

    paper = fig3.CONFIGS["paper"]
    trained = [p for p in fig3.runs(paper) if p["kind"] == "trained"]
    shapes = {(p["d"], p["layers"], p["heads"]) for p in trained}
    assert len(trained) == len(shapes) * len(paper["lrs"])
    assert min(paper["lrs"]) == 6e-6 and max(paper["lrs"]) == 6e-5 and "lr" not in paper
    for scale in ("test", "book"):
        assert all("lr" not in p for p in fig3.runs(fig3.CONFIGS[scale]))

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    seen = []
    real = fig3.trained_model
    monkeypatch.setattr(fig3, "trained_model", lambda spec, device: seen.append(spec["lr"]) or
                        real(spec, device))
    config = {**{k: v for k, v in fig3.CONFIGS["test"].items() if k != "lr"}, "dims": [2],
              "lrs": [1e-3, 5e-2]}
    for params in fig3.runs(config)[1:]:
        fig3.run_one(params, config, "cpu")
    assert seen == [1e-3, 5e-2]

    metrics = [{"d": 2, "layers": 1, "heads": 1, "accuracy": a} for a in (0.2, 0.7, 0.4)]
    metrics.append({"d": 4, "layers": 1, "heads": 1, "accuracy": 0.1})
    assert sorted(m["accuracy"] for m in fig3.best_per_shape(metrics)) == [0.1, 0.7]
