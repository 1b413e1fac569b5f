"""The task a C-RASP program defines (lengthgen.tasks.program, lengthgen.crasp.task): its labels
are the program's verdicts on every prefix, its sampler balances the verdict at the last
position, its baseline is the best constant predictor under Fig. 1's rule; and the prediction
read off a program's fragment."""
import re

import numpy as np
import pytest

from lengthgen.crasp import parse_program
from lengthgen.crasp.library import REFERENCES, get_program
from lengthgen.crasp.task import program_task
from lengthgen.errors import LengthgenError
from lengthgen.tasks.base import Batch
from lengthgen.tasks.languages import get_language
from lengthgen.tasks.program import BALANCED, UNIFORM, VerdictTask, constant_baseline

# three library programs, each with a verdict written independently of its C-RASP text
INDEPENDENT = {
    "majority_ab": REFERENCES["majority_ab"][1],
    "dyck1": REFERENCES["dyck1"][1],
    "tomita4": get_language("tomita4").accepts,
}


def strings_of(task, batch: Batch) -> list[str]:
    return ["".join(task.alphabet[c - 2] for c in row[1:n + 1])
            for row, n in zip(batch.inputs, batch.lengths)]


@pytest.mark.parametrize("name", sorted(INDEPENDENT))
def test_labels_are_the_verdicts_on_every_prefix_of_1000_sampled_strings(name):
    """Strings from the task's own sampler (so the pools' prefixes, their copying and the label
    alignment are what is checked): target t of each string is the reference's verdict on its
    prefix of length t, for every t = 0..n, and nothing past n is scored."""
    task = program_task(get_program(name))
    member = INDEPENDENT[name]
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(8):
        batch = task.sample(rng, 128, 1, 60)
        for w, targets, mask, n in zip(strings_of(task, batch), batch.targets,
                                       batch.loss_mask, batch.lengths):
            assert len(w) == n and mask[:n + 1].all() and not mask[n + 1:].any()
            want = [int(member(w[:t])) for t in range(n + 1)]
            assert targets[:n + 1].tolist() == want, (name, w)
            checked += 1
    assert checked >= 1000


def test_labels_agree_with_the_interpreter_one_string_at_a_time():
    """task.labels (prefix-wise, batched) equals the interpreter's verdict run on each prefix
    alone, for a program with local and periodic relations too."""
    from lengthgen.crasp.interpret import accepts
    program = parse_program("alphabet a b\nP := #[j = i - 1] Q(a) >= 1\n"
                            "accept (P and i mod 2 = 0) or #Q(b) > #Q(a)\n", name="mix")
    task = program_task(program)
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 2, size=(40, 25))
    labels = task.labels(codes)
    for row, got in zip(codes, labels):
        w = "".join("ab"[c] for c in row)
        assert got.tolist() == [int(accepts(program, w[:t])) for t in range(len(w) + 1)]


def test_the_balanced_sampler_reaches_half_where_uniform_strings_do_not():
    """Six more a's than b's is uncommon among uniform strings of length 20 to 50 (about one
    in six). Balanced: about half accepted at the last position; uniform: far fewer."""
    program = parse_program("alphabet a b\naccept #Q(a) >= #Q(b) + 6\n", name="six_more")
    rng = np.random.default_rng(3)
    shares = {}
    for sampler in (BALANCED, UNIFORM):
        task = program_task(program, sampler)
        lengths = rng.integers(20, 51, size=2000)
        _, labels = task.draw(rng, lengths)
        shares[sampler] = labels[np.arange(len(lengths)), lengths].mean()
    assert 0.45 < shares[BALANCED] < 0.55
    assert shares[UNIFORM] < 0.3


def test_an_impossible_verdict_falls_back_to_a_uniform_string():
    """Dyck words have even length: at odd lengths the wanted 'accepted' is never found, and
    the string is a uniform one (rejected), still of the requested length."""
    task = program_task(get_program("dyck1"))
    lengths = np.full(200, 7)
    codes, labels = task.draw(np.random.default_rng(4), lengths)
    assert codes.shape == (200, 7) and labels[:, 7].sum() == 0
    assert len({tuple(r) for r in codes.tolist()}) > 50   # uniform strings, not one repeated


def test_constant_baseline_is_the_share_of_strings_whose_verdict_never_changes():
    #  strings: always 1 | 0 then 1 | always 0 (padded) | always 0
    targets = np.array([[1, 1, 1], [0, 1, 1], [0, 0, 0], [0, 0, 0]])
    mask = np.array([[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 1, 1]], dtype=bool)
    batch = Batch(np.ones_like(targets), targets, mask, np.array([2, 2, 1, 2]))
    base = constant_baseline([batch])
    assert base["accuracy"] == 0.5 and base["constant"] == "rejected"
    assert base["accepted_share"] == 0.5   # the last position: 1, 1, 0, 0


def test_next_token_programs_and_bad_samplers_are_refused():
    with pytest.raises(LengthgenError, match="next-token program"):
        program_task(get_program("induction_head"))
    with pytest.raises(LengthgenError, match="unknown sampler"):
        VerdictTask("x", "ab", lambda ids: np.zeros((len(ids), ids.shape[1] + 1)), "lucky")


def test_prediction_follows_the_fragment():
    from lengthgen.experiments.try_program import prediction_lines, predictions
    plain = parse_program("alphabet a b\naccept #Q(a) > #Q(b)\n")
    local = parse_program("alphabet a b\naccept #[j = i - 1] Q(a) >= 1\n")
    periodic = parse_program("alphabet a b\naccept Q(a) and i mod 3 = 0\n")
    assert predictions(plain) == {"ape": "yes", "nope": "yes"}
    assert predictions(local) == predictions(periodic) == {"ape": "yes", "nope": "none found"}
    text = "\n".join(prediction_lines(local))
    assert "C-RASP[local]" in text and re.search("only positive predictions", text)


def test_the_agreement_rule_reads_the_seeds_that_fit():
    from lengthgen.experiments.try_program import summarize
    bins = ["1-50", "51-100"]
    seeds = [{"accuracy": {"1-50": 1.0, "51-100": 0.9}},
             {"accuracy": {"1-50": 0.5, "51-100": 0.1}}]   # did not fit: not read
    out = summarize(seeds, bins, {"1-50": 0.2, "51-100": 0.1}, "yes")
    assert out["fit"] == 1 and out["bins"]["51-100"]["agrees"] == "yes"
    assert out["bins"]["51-100"]["min"] == 0.1 and out["bins"]["51-100"]["max"] == 0.9
    assert summarize(seeds, bins, {"1-50": 0.2, "51-100": 0.8}, "yes")["bins"]["51-100"][
        "agrees"] == "no"   # 90% is not 20 points above a baseline of 80%
    assert summarize(seeds, bins, {"1-50": 0.2, "51-100": 0.1}, "none found")["bins"][
        "51-100"]["agrees"] == "n/a"


def test_pools_with_their_own_frequencies_balance_rare_verdicts_at_long_lengths():
    """Twice as many a's as b's (and some c) is about 1 in 1,000 among uniform strings of
    length 120 to 150, too rare for rejection from uniform strings alone; the pools' rows with
    frequencies of their own make it common enough to reach about half."""
    program = parse_program("alphabet a b c\naccept #Q(a) > #Q(b) + #Q(b) and exists Q(c)\n")
    task = program_task(program)
    lengths = np.random.default_rng(5).integers(120, 151, size=1000)
    codes, labels = task.draw(np.random.default_rng(6), lengths)
    assert 0.4 < labels[np.arange(1000), lengths].mean() < 0.6
    assert codes.min() >= 0 and codes.max() <= 2


def test_a_job_given_a_task_object_trains_as_the_job_given_its_id():
    """The engine's Job takes a Task that no registry holds; for a registered task the object
    and the id give the same training (the same batches, steps and weights)."""
    import torch

    from lengthgen.engine.jobs import Job, train_jobs
    from lengthgen.tasks import get_task
    from lengthgen.train import TrainConfig
    model = {"n_layers": 1, "n_heads": 1, "d_model": 8, "pe": "nope"}

    def job(task):
        return Job(task, model, TrainConfig(steps=3, batch_size=4, eval_every=3, eval_samples=4,
                                            max_len=8, seed=7))
    by_id, by_object = train_jobs([job("tomita1"), job(get_task("tomita1"))], "cpu",
                                  sampler="host")
    assert by_id.result.steps == by_object.result.steps == 3
    for a, b in zip(by_id.model.state_dict().values(), by_object.model.state_dict().values()):
        assert torch.allclose(a, b)


def test_a_seed_fits_only_at_100_percent_on_the_training_bin():
    from lengthgen.experiments.try_program import summarize
    seeds = [{"accuracy": {"1-50": 0.998, "51-100": 0.2}}, {"accuracy": {"1-50": 1.0,
                                                                         "51-100": 0.9}}]
    out = summarize(seeds, ["1-50", "51-100"], {"1-50": 0.1, "51-100": 0.1}, "yes")
    assert out["fit"] == 1 and out["bins"]["51-100"]["mean_accuracy"] == 0.9
