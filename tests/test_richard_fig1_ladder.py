"""The compute ladder toward Richard's Fig. 1 (richard-fig1-ladder): each rung costs more than
the one before (about twice at book scale), rung 0 is the book's setting of
richard-fig1-boolean, the top paper rung is the paper's model, and a rung's run trains what its
rung names."""
import pytest

from lengthgen.experiments.richard.boolean_protocol import RUNG_KEYS, rung_config, rung_flops
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import run_experiment

LADDER = experiment("richard-fig1-ladder")
BOOLEAN = experiment("richard-fig1-boolean")
SHARED = ("clauses", "window", "batch_size", "lr", "test_pool", "held_out", "test_examples")


@pytest.mark.parametrize("scale", ["test", "book", "paper"])
def test_each_rung_takes_more_training_operations_than_the_one_before(scale):
    flops = rung_flops(LADDER.CONFIGS[scale])
    assert len(flops) == len(LADDER.CONFIGS[scale]["rungs"]) >= 2
    assert all(b > a for a, b in zip(flops, flops[1:])), flops


def test_the_book_ladder_doubles_its_operations_rung_by_rung():
    flops = rung_flops(LADDER.CONFIGS["book"])
    ratios = [b / a for a, b in zip(flops, flops[1:])]
    assert all(1.8 <= r <= 2.2 for r in ratios), ratios


def test_rung_flops_is_the_cost_estimate_of_the_rung():
    """FLOPs per step (6 x parameters x tokens plus attention, `runs.cost`) times steps, for the
    model the rung builds: a wider rung counts its own parameters, not rung 0's."""
    config = LADDER.CONFIGS["book"]
    trainings = LADDER.trainings(config)
    assert [t.count for t in trainings] == [len(config["seeds"])] * len(config["rungs"])
    for t, spec, flops in zip(trainings, config["rungs"], rung_flops(config)):
        assert (t.d_model, t.layers, t.steps) == (spec["d"], spec["layers"], spec["steps"])
        assert flops == t.flops_per_step() * spec["steps"]
        per_token = 6 * t.n_params + 6 * t.layers * config["window"] * t.d_model
        assert flops == per_token * config["batch_size"] * config["window"] * spec["steps"]
    assert trainings[1].n_params > 2 * trainings[0].n_params   # d 64 -> 96


def test_rung_zero_is_the_books_boolean_setting_and_the_top_paper_rung_the_papers():
    """The ladder starts where richard-fig1-boolean's book config stands (its model, steps,
    pool and task, at its depth q = 3) and its paper config ends at that figure's paper
    config, the paper's model."""
    for scale, rung in (("book", 0), ("paper", -1)):
        ladder, boolean = LADDER.CONFIGS[scale], BOOLEAN.CONFIGS[scale]
        flat = rung_config(ladder, rung if rung >= 0 else len(ladder["rungs"]) - 1)
        for key in RUNG_KEYS + SHARED:
            assert flat[key] == boolean[key], (scale, key)
        assert ladder["train_depth"] == 3 and ladder["train_depth"] in boolean["train_depths"]
        assert "rungs" not in flat and "seeds" not in flat


def test_runs_name_rung_and_seed():
    config = LADDER.CONFIGS["book"]
    names = [p["name"] for p in LADDER.runs(config)]
    assert names == [f"rung{i}-s{s}" for i in range(3) for s in (0, 1, 2)]
    assert [p["name"] for p in LADDER.runs(LADDER.CONFIGS["paper"])] == \
        [f"rung{i}" for i in range(5)]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return run_experiment("richard-fig1-ladder", "test", "cpu",
                          root=tmp_path_factory.mktemp("results"))


def test_a_run_trains_the_model_and_steps_its_rung_names(records):
    config = LADDER.CONFIGS["test"]
    flops = rung_flops(config)
    for r in sorted(records, key=lambda r: r["params"]["rung"]):
        m, spec = r["metrics"], config["rungs"][r["params"]["rung"]]
        assert {k: m[k] for k in RUNG_KEYS} == spec
        assert m["train_flops"] == flops[m["rung"]]
        assert m["train_tokens"] == spec["steps"] * config["batch_size"] * config["window"]
        assert m["train_depth"] == config["train_depth"]
        # the pool it trained on: the rung's size, less the expressions whose answer is held out
        assert 0 < m["train_examples"] <= spec["pool"]
        for split in ("in_sample", "out_of_sample", "in_sample_nonconstant"):
            assert f"{split}_depth1" in m and f"baseline_{split}_depth1" in m
    bigger = [r["metrics"]["train_examples"] for r in records]
    assert len(set(bigger)) == 2   # rung 1's pool is twice rung 0's


def test_the_chapter_shows_a_note_until_records_exist_then_the_figure(records, monkeypatch):
    """The appendix's ladder cell (`chapters.dyck.show_ladder`): without paper- or book-scale
    records, a one-line note with the command in the figure's place and as the result; with
    them, the figure from its records and the numbers of `ladder_numbers`."""
    from lengthgen.chapters import dyck
    from lengthgen.runs import records as readers
    shown = []
    monkeypatch.setattr(dyck, "book_figure", lambda key, *content, **kw: shown.append(
        (key, content, kw)))
    monkeypatch.setattr(readers, "figure_records", lambda figure_id, scale, root=None: [])
    numbers = dyck.show_ladder()
    [(key, content, kw)] = shown
    assert key == "richard-fig1-ladder" and dyck.LADDER_COMMAND in content[0].data
    assert numbers["result"].startswith("Not yet run at book scale") and \
        dyck.LADDER_COMMAND in numbers["result"]
    assert numbers["plan-rungs"] == "3" and numbers["plan-seeds"] == "3"
    shown.clear()
    monkeypatch.setattr(readers, "figure_records",
                        lambda figure_id, scale, root=None: records if scale == "book" else [])
    numbers = dyck.show_ladder()
    assert shown == [("richard-fig1-ladder", (), {})]   # drawn from its records
    assert numbers["rungs"] == "2" and numbers["result"].startswith("Over 1 seed")
    assert {"in", "base", "oos", "beat", "in-steps", "loss", "loss-steps"} <= set(numbers)


def test_ladder_numbers_beat_only_where_the_ranges_over_seeds_are_apart(records):
    """A rung beats the trivial predictor only where its worst seed's right answers lie above
    the predictor's best seed's (Fig. 1's rule); in-sample accuracy 'rises' only likewise."""
    import copy

    from lengthgen.experiments.richard.analysis_sweeps import ladder_numbers
    seeds = []
    for seed, (model, base) in enumerate([(0.75, 0.25), (0.5, 0.5)]):
        for r in copy.deepcopy(records):
            m = r["metrics"]
            r["params"]["seed"] = seed
            m["in_sample_depth1"], m["baseline_in_sample_depth1"] = \
                (model, base) if m["rung"] == 1 else (0.25, 0.25)
            seeds.append(r)
    numbers = ladder_numbers(seeds)
    assert numbers["beat"] == "none"                 # seed 1 of rung 1 ties its predictor
    assert numbers["in-steps"] == "rises from rung 0 to 1"   # rung 1's range above rung 0's
    seeds[-1]["metrics"]["in_sample_depth1"] = 0.75  # now both seeds of rung 1 are above
    assert ladder_numbers(seeds)["beat"] == "rung 1"
