"""Trained figures draw the mean and the min-max range over seeds when records have several
seeds per setting, and stay the plain picture with one seed. The committed records have one
seed for some figures and three for others: the tests make both cases from them."""
import copy

import matplotlib
import pytest
from matplotlib.collections import PolyCollection

from lengthgen.runs.records import committed_records
from lengthgen.runs.registry import experiment
from lengthgen.experiments.spread import spread

matplotlib.use("Agg")

TRAINED = ("richard-fig1-boolean", "richard-fig3-left-capacity", "richard-fig3-right-samples",
           "richard-fig6-ablation", "limit-inference-procedure", "huang-fig5-6-positional")


def _scaled(value, factor):
    """Every float of a metrics tree times `factor` (a second 'seed' with other values)."""
    if isinstance(value, dict):
        return {k: _scaled(v, factor) for k, v in value.items()}
    if isinstance(value, list):
        return [_scaled(v, factor) for v in value]
    if isinstance(value, float):
        return value * factor
    return value


def _one_seed(records):
    """Seed 0's records (and the closed-form ones): one seed per setting."""
    return [r for r in records if r["params"].get("kind") == "closed-form"
            or r["params"].get("seed", r.get("seed", 0)) == 0]


def _seeds_of(records) -> set:
    return {r["params"].get("seed", r.get("seed", 0)) for r in records
            if r["params"].get("kind") != "closed-form"}


def _with_seeds(records):
    """Three seeds per setting: the records themselves when they have several, else seed 0's
    records with two scaled twins."""
    if len(_seeds_of(records)) > 1:
        return records
    out = []
    for r in records:
        out.append(r)
        if r["params"].get("kind") == "closed-form":
            continue
        for seed, factor in ((1, 0.9), (2, 0.8)):
            twin = copy.deepcopy(r)
            twin["params"]["seed"], twin["seed"] = seed, seed
            twin["run_name"] += f"-s{seed}"
            twin["metrics"] = _scaled(r["metrics"], factor)
            out.append(twin)
    return out


def _shaded(fig) -> int:
    shaded = sum(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)
    bars = sum(len(ax.containers) for ax in fig.axes)  # errorbar containers
    return shaded + bars


def test_spread_of_values():
    assert spread([1.0, None, 3.0]) == (2.0, 1.0, 3.0, 2)
    assert spread([None])[3] == 0


@pytest.mark.parametrize("figure_id", TRAINED)
def test_one_seed_draws_no_range_and_several_seeds_do(figure_id):
    import matplotlib.pyplot as plt
    found = committed_records(figure_id)
    if found is None:
        pytest.skip(f"{figure_id}: no committed records")
    records = found[1]
    module = experiment(figure_id)
    single = module.figure(_one_seed(records))
    several = module.figure(_with_seeds(records))
    try:
        assert _shaded(single) == 0, "one seed per setting: nothing to shade"
        assert _shaded(several) > 0, "three seeds per setting: the min-max range is drawn"
    finally:
        plt.close(single)
        plt.close(several)


SUMMARIZED = ("richard-fig1-boolean", "richard-fig3-left-capacity", "richard-fig3-right-samples",
              "richard-fig6-ablation", "limit-inference-procedure", "huang-fig5-6-positional")


@pytest.mark.parametrize("figure_id", SUMMARIZED)
def test_figure_data_over_seeds_gives_mean_and_range(figure_id):
    """data() has one row per seed; over_seeds (`figure data ID --over-seeds`) one row per
    setting with the mean, min, max and number of seeds."""
    from lengthgen.runs.records import figure_data
    from lengthgen.experiments.spread import over_seeds
    found = committed_records(figure_id)
    if found is None:
        pytest.skip(f"{figure_id}: no committed records")
    by = experiment(figure_id).SPREAD_BY
    one = over_seeds(figure_data(figure_id, _one_seed(found[1])), by)
    three = over_seeds(figure_data(figure_id, _with_seeds(found[1])), by)
    assert len(one) == len(three), "one row per setting, whatever the number of seeds"
    assert {r["seeds"] for r in one} == {1}
    assert max(r["seeds"] for r in three) == 3
    values = [k[:-4] for k in three[0] if k.endswith("_min")]
    assert values
    for row in three:
        for name in values:
            if row[name] is not None and row[name] == row[name]:  # not NaN
                assert row[f"{name}_min"] <= row[name] + 1e-12 <= row[f"{name}_max"] + 2e-12
    assert any(r[f"{v}_min"] < r[f"{v}_max"] for r in three for v in values)


def test_figure_data_over_seeds_on_the_command_line(capsys):
    from lengthgen.__main__ import main
    assert main(["figure", "data", "richard-fig3-right-samples", "--over-seeds"]) in (0, None)
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header[:3] == ["kind", "max_depth", "train_size"] and "out_of_sample_max" in header
    assert header[-1] == "seeds"
    # a figure without seeds to summarize: one line, exit 2
    assert main(["figure", "data", "richard-fig2-closed-form-paths", "--over-seeds"]) == 2
    assert "--over-seeds" in capsys.readouterr().err


@pytest.mark.parametrize("figure_id", ("richard-fig1-boolean", "richard-fig3-left-capacity",
                                       "richard-fig3-right-samples", "richard-fig6-ablation"))
def test_a_seeds_list_names_each_run_by_its_seed_and_multiplies_the_trained_runs(figure_id):
    module = experiment(figure_id)
    for scale, config in module.CONFIGS.items():
        single = {k: v for k, v in config.items() if k != "seeds"}
        names = [p["name"] for p in module.runs(single)]
        assert not any(n.endswith("-s0") for n in names), "one seed: the names carry no seed"
        seeded = {**single, "seeds": [0, 1, 2]}
        runs = module.runs(seeded)
        trained = [p for p in runs if p.get("kind", "trained") == "trained"]
        assert len({p["name"] for p in runs}) == len(runs)
        assert sorted({p["seed"] for p in trained}) == [0, 1, 2]
        assert all(p["name"].endswith(f"-s{p['seed']}") for p in trained)
        assert len(trained) == 3 * len([p for p in module.runs(single)
                                        if p.get("kind", "trained") == "trained"])


# ---- Wilson intervals for one seed's accuracy ------------------------------------------------
def test_wilson_interval_matches_published_values():
    """Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (the Wilson score
    interval without continuity correction), to the 4 decimals printed there."""
    from lengthgen.experiments.spread import wilson_interval
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                             (0, 20): (0.0, 0.1611), (1, 29): (0.0061, 0.1718)}.items():
        got = wilson_interval(k, n)
        assert got == pytest.approx((lo, hi), abs=5e-5), (k, n, got)


def test_wilson_interval_properties_and_coverage():
    from scipy.stats import binom
    from lengthgen.experiments.spread import wilson_interval
    assert wilson_interval(500, 500)[1] == 1.0 and wilson_interval(0, 500)[0] == 0.0
    lo, hi = wilson_interval(500, 500)
    assert lo == pytest.approx(1 - 3.8415 / (500 + 3.8415), abs=1e-4)   # z^2 / (n + z^2)
    lo, hi = wilson_interval(37, 100)
    assert lo < 0.37 < hi
    assert wilson_interval(63, 100) == pytest.approx((1 - hi, 1 - lo))   # symmetric in k, n - k
    assert wilson_interval(37, 100, level=0.99)[0] < lo                  # wider at 99%
    assert wilson_interval(370, 1000)[1] - wilson_interval(370, 1000)[0] < hi - lo
    # exact coverage (binomial sum over k) is near the nominal 95% for n = 500
    for p in (0.1, 0.5, 0.9):
        covered = sum(binom.pmf(k, 500, p) for k in range(501)
                      if wilson_interval(k, 500)[0] <= p <= wilson_interval(k, 500)[1])
        assert 0.93 < covered < 0.97, (p, covered)


@pytest.mark.parametrize("args", [(3, 0), (5, 4), (-1, 4), (1.5, 4), (True, 4), (1, 4, 1.0),
                                  (1, 4, 0)])
def test_wilson_interval_refuses_bad_input(args):
    from lengthgen.errors import LengthgenError
    from lengthgen.experiments.spread import wilson_interval
    with pytest.raises(LengthgenError, match="wilson_interval"):
        wilson_interval(*args)
