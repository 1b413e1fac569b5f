"""The 8 algorithmic tasks: format, masks, constraints of the paper, reference solvers."""
from collections import Counter

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.tasks import get_task, task_ids
from lengthgen.tasks.algorithmic import TASKS, get_algorithmic
from lengthgen.tasks.metadata import algorithmic_ids, info

IDS = ["binary_majority", "binary_majority_interleave", "majority", "sort", "copy_unique",
       "copy_repeat", "parity_task", "addition"]


def test_all_eight_registered():
    assert sorted(TASKS) == sorted(IDS)
    assert set(IDS) <= set(task_ids())


@pytest.mark.parametrize("task_id", IDS)
def test_vocab_layout(task_id):
    task = get_task(task_id)
    assert task.vocab[:4] == ("<pad>", "<bos>", "<sep>", "<eos>")
    assert task.n_classes == len(task.vocab) == len(set(task.vocab))
    assert task.train_range[1] == 50 and task.test_bins[1:] == ((51, 100), (101, 150))


@pytest.mark.parametrize("task_id", IDS)
def test_batch_is_the_formatted_sequence_with_answer_mask(task_id):
    task = get_task(task_id)
    lo, hi = task.train_range[0], 20
    batch = task.sample(np.random.default_rng(1), 64, lo, hi)
    assert batch.inputs.shape[1] <= task.max_tokens(int(batch.lengths.max()))
    for row in range(64):
        n = int((batch.inputs[row] != 0).sum())  # real positions (no token id 0 inside)
        assert not batch.inputs[row, n:].any() and not batch.loss_mask[row, n:].any()
        last = task.vocab[batch.targets[row, n - 1]]
        seq = [task.vocab[i] for i in batch.inputs[row, :n]] + [last]
        assert seq[0] == "<bos>" and seq[-1] == "<eos>"
        length, prompt = int(batch.lengths[row]), int(batch.prompt_lengths[row])
        assert lo <= length <= hi
        x = seq[1:1 + length]
        assert seq == task.format(x)  # the answer is the reference solver's
        assert prompt == length + (1 if task_id != "addition" else 0) + 1
        assert seq[prompt - 1] in ("<sep>", "=")
        np.testing.assert_array_equal(batch.targets[row, :n - 1], batch.inputs[row, 1:n])
        assert batch.loss_mask[row, :n].tolist() == [t >= prompt for t in range(1, n + 1)]


@pytest.mark.parametrize("task_id", IDS)
def test_max_tokens_is_attained(task_id):
    task = get_algorithmic(task_id)
    length = 6
    rng = np.random.default_rng(2)
    widths = {len(task.format(x)) - 1 for x in task.sample_instances(rng, length, 3000)}
    assert max(widths) == task.max_tokens(length)


def test_sampling_is_deterministic_for_a_seed():
    for task_id in IDS:
        task = get_algorithmic(task_id)
        a = task.sample_instances(np.random.default_rng(5), 9, 4)
        b = task.sample_instances(np.random.default_rng(5), 9, 4)
        assert a == b


def test_binary_majority_has_no_ties_and_is_uniform():
    task = get_algorithmic("binary_majority")
    xs = task.sample_instances(np.random.default_rng(3), 4, 5000)
    assert all(x.count("0") != x.count("1") for x in xs)
    counts = Counter("".join(x) for x in xs)
    assert len(counts) == 16 - 6  # every untied string of length 4 occurs
    assert max(counts.values()) / min(counts.values()) < 1.35
    assert task.solve(list("10011")) == ["1"] and task.solve(list("0")) == ["0"]


def test_interleave_lengths_and_three_untied_strands():
    task = get_algorithmic("binary_majority_interleave")
    assert task.feasible_lengths(3, 13) == [3, 6, 9, 12]
    for x in task.sample_instances(np.random.default_rng(4), 12, 500):
        assert all(x[j::3].count("0") != x[j::3].count("1") for j in range(3))
    strands = ("100", "111", "001")
    interleaved = [s[i] for i in range(3) for s in strands]
    assert task.solve(interleaved) == ["0", "1", "0"]


def test_majority_answer_is_unique():
    task = get_algorithmic("majority")
    for length in (2, 3, 10, 150):
        for x in task.sample_instances(np.random.default_rng(length), length, 200):
            top = Counter(x).most_common()
            assert len(top) == 1 or top[0][1] > top[1][1]
            assert task.solve(x) == [top[0][0]]


@pytest.mark.parametrize("task_id", ["sort", "copy_unique"])
def test_numbers_are_distinct_and_bounded(task_id):
    task = get_algorithmic(task_id)
    for x in task.sample_instances(np.random.default_rng(6), 150, 20):
        assert sorted(map(int, x)) == list(range(150))
    with pytest.raises(LengthgenError):
        task.sample_instances(np.random.default_rng(0), 151, 1)
    assert get_algorithmic("sort").solve(["14", "23", "6", "9"]) == ["6", "9", "14", "23"]


def test_parity_number_of_ones_is_uniform_given_len():
    task = get_algorithmic("parity_task")
    xs = task.sample_instances(np.random.default_rng(7), 4, 5000)
    ones = Counter(x.count("1") for x in xs)
    assert sorted(ones) == [0, 1, 2, 3, 4]
    assert all(abs(c - 1000) < 150 for c in ones.values())
    assert all(task.solve(x) == ["eo"[x.count("1") % 2]] for x in xs[:100])


def test_addition_operand_lengths_and_sums():
    task = get_algorithmic("addition")
    xs = task.sample_instances(np.random.default_rng(8), 10, 4000)
    first = Counter(x.index("+") for x in xs)
    assert sorted(first) == list(range(1, 8))  # |a| uniform in [1, Len - 3], |b| >= 1
    assert all(abs(c - 4000 / 7) < 120 for c in first.values())
    for x in xs[:300]:
        assert x[-1] == "=" and x.count("+") == 1 and x.count("=") == 1
        a, b = "".join(x[:-1]).split("+")
        assert "".join(task.solve(x)) == format(int(a, 2) + int(b, 2), "b")
    assert task.solve(list("101+10=")) == list("111")
    assert task.solve(list("00+0=")) == ["0"]
    with pytest.raises(LengthgenError):
        task.sample(np.random.default_rng(0), 4, 1, 3)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(LengthgenError, match="binary_majority"):
        get_task("binary_majorty")
    with pytest.raises(LengthgenError):
        get_algorithmic("copy_repeat").format(["a", "c"])
    with pytest.raises(LengthgenError):
        get_task("binary_majority_interleave").sample(np.random.default_rng(0), 2, 4, 5)


def test_metadata_rows_match_the_tasks():
    assert algorithmic_ids() == IDS
    for task_id in IDS:
        row = info(task_id)
        assert row.kind == "algorithmic"
        assert set(row.alphabet) <= set(get_algorithmic(task_id).symbols)
        assert row.crasp in ("yes", "no", "none found")
