"""A plain sweep (`figure run`) takes the runs that share host work one after another, and to
one worker (`lengthgen.runs.execute.host_units`, `lengthgen.runs.pool.spread`): Fig. 6 of
Richard cycles through 12 sets of Dyck words a variant in its runs' order, more than a process
keeps (runs.cost.HOST_KEYS_KEPT), and a sweep in that order drew each set once per variant
(issue 53). Only the order changes: every run's params, name and metrics stay as they were."""
import functools

import pytest

from lengthgen.runs.execute import host_units, plan
from lengthgen.runs.pool import spread
from lengthgen.runs.registry import experiment
from lengthgen.runs.runner import run_experiment

FIG6 = "richard-fig6-ablation"


def test_fig6s_paper_runs_go_set_by_set_in_units_of_one_set():
    """60 runs at paper scale: 12 units, one per set of words (k), each with its 5 variants,
    the sets in the runs' first order; no run is lost, added or changed."""
    specs = plan(FIG6, "paper")
    units = host_units(specs)
    assert len(specs) == 60 and [len(u) for u in units] == [5] * 12
    assert [{s.params["k"] for s in u} for u in units] == [{k} for k in range(1, 13)]
    assert sorted(s.name for u in units for s in u) == sorted(s.name for s in specs)
    flat = {s.name: s for u in units for s in u}
    assert all(flat[s.name] is s for s in specs)   # the very specs, params untouched
    # a figure with no host_key keeps its runs' order, each run a unit of its own
    other = plan("richard-fig1-boolean", "test")
    assert host_units(other) == [[s] for s in other]


def test_units_are_spread_over_the_workers_only_where_too_few():
    a, b, c, d, e = "abcde"
    assert spread([[a, b, c], [d]], 2) == [[a, b, c], [d]]       # a set to one worker
    assert spread([[a, b, c, d]], 2) == [[a, b], [c, d]]          # else no worker idles
    assert spread([[a, b, c, d, e]], 3) == [[a, b], [c], [d, e]]   # the largest halved
    assert spread([[a], [b]], 4) == [[a], [b]]                    # a run is never split
    assert spread([[a, b, c, d]], 1) == [[a, b, c, d]]


def _sweep(root, monkeypatch, ordered: bool) -> tuple[list, list]:
    """A Fig. 6 sweep at test scale on 3 sets (k = 1, 2, 3) in one process that keeps 2 sets
    (its drawn words' cache made that small): its records, and the size of each set drawn."""
    from lengthgen.experiments.richard import protocol
    module = experiment(FIG6)
    monkeypatch.setitem(module.CONFIGS, "test", {**module.CONFIGS["test"], "ks": [1, 2, 3]})
    monkeypatch.setattr(protocol, "_words",
                        functools.lru_cache(maxsize=2)(protocol._words.__wrapped__))
    drawn, real = [], protocol.training_words

    def counted(spec):
        drawn.append(spec["train_size"])
        return real(spec)
    monkeypatch.setattr(protocol, "training_words", counted)
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
    if not ordered:   # the runs' own order (the old runner)
        monkeypatch.delattr(module, "host_key")
    records = run_experiment(FIG6, "test", "cpu", root=root / "results")
    monkeypatch.undo()
    return records, drawn


def test_a_fig6_sweep_draws_each_set_of_words_once(tmp_path, monkeypatch):
    """Runs of one set one after another: 3 draws for 3 sets, where the runs' own order (5
    variants, each through k = 1, 2, 3) drew 15 in a process keeping 2; the records are the
    same, returned in the runs' order."""
    records, drawn = _sweep(tmp_path / "ordered", monkeypatch, ordered=True)
    assert len(records) == 15 and sorted(drawn) == [4, 16, 64]
    old, old_drawn = _sweep(tmp_path / "config-order", monkeypatch, ordered=False)
    assert len(old_drawn) == 15   # each set once per variant
    assert [r["run_name"] for r in records] == [r["run_name"] for r in old]
    for new, before in zip(records, old):
        for field in ("params", "config", "metrics", "seed", "scale"):
            assert new[field] == before[field], (new["run_name"], field)


@pytest.fixture(autouse=True)
def _fresh_words_cache():
    """The process's cache of drawn words, cleared around each test (other tests draw too)."""
    from lengthgen.experiments.richard import protocol
    protocol._words.cache_clear()
    yield
    protocol._words.cache_clear()
