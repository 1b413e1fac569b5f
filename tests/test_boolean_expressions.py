"""Random Boolean expressions (Alg. 1 of Richard 2024), the sympy oracle and the grader."""
from itertools import product

import numpy as np
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.tasks.boolean import (LITERALS, VARIABLES, VOCAB, BooleanTask, clause_count,
                                     equivalent, expression_depth, make_pool, random_expression,
                                     simplify, tokenize)


def truth_table(tokens):
    """Evaluate by rewriting into a Python expression (independent of the library's parser)."""
    py = " ".join({"&": "and", "|": "or", "¬": "not", "true": "True", "false": "False"}.get(t, t)
                  for t in tokens)
    return [bool(eval(py, {}, dict(zip(VARIABLES, values))))
            for values in product([False, True], repeat=4)]


@pytest.mark.parametrize("clauses,depth", [(1, 0), (5, 1), (5, 3), (2, 5), (3, 6)])
def test_generator_has_requested_depth_and_clause_count(clauses, depth):
    rng = np.random.default_rng(depth)
    for _ in range(20):
        tokens = random_expression(rng, clauses, depth)
        assert expression_depth(tokens) == depth
        assert clause_count(tokens) == clauses
        assert set(tokens) <= set(VOCAB)


def test_depth_zero_clauses_are_literals():
    rng = np.random.default_rng(0)
    seen = {"".join(random_expression(rng, 1, 0)) for _ in range(300)}
    assert seen == set(LITERALS)


def test_oracle_answer_is_equivalent_by_truth_table():
    rng = np.random.default_rng(1)
    for depth in (1, 2, 3, 4):
        for _ in range(10):
            expression = random_expression(rng, 5, depth)
            answer = simplify(expression)
            assert truth_table(answer) == truth_table(expression)
            assert len(answer) <= len(expression)


def test_grader_accepts_equivalent_and_rejects_wrong_answers():
    expression = tokenize("(p0 & p1) | (p0 & ¬p1) | (p3 & ¬p3)")
    assert equivalent(["p0"], expression)
    assert equivalent(tokenize("p0 | (p2 & ¬p2)"), expression)  # extra irrelevant variable
    assert not equivalent(["p1"], expression)
    assert not equivalent(["p0", "&"], expression)                 # does not parse
    assert equivalent(["true"], tokenize("p2 | ¬p2"))


def test_tokenize_reads_sympy_output_and_rejects_junk():
    assert tokenize("(p1 & ~p0) | True") == ["(", "p1", "&", "¬", "p0", ")", "|", "true"]
    with pytest.raises(LengthgenError):
        tokenize("p7 & p0")


def test_task_masks_the_answer_and_end():
    rng = np.random.default_rng(2)
    task = BooleanTask(make_pool(rng, 12, 2, 2))
    batch = task.sample(rng, 6, 2, 2)
    for inp, tgt, mask, prompt in zip(batch.inputs, batch.targets, batch.loss_mask,
                                      batch.prompt_lengths):
        assert VOCAB[inp[prompt - 1]] == "="
        answer = [VOCAB[t] for t in tgt[mask]]
        assert answer[-1] == "<end>" and "=" not in answer


# ---- the paper's training windows and decoding rule ------------------------------------------
from lengthgen.tasks.boolean import (END, START, TOKEN_ID, BooleanWindowTask,  # noqa: E402
                                     example_tokens, paper_answer, window_starts)


def test_windows_begin_at_start_and_tile_the_stream():
    rng = np.random.default_rng(3)
    pool = make_pool(rng, 30, 2, 2)
    stream = [TOKEN_ID[t] for i in rng.integers(0, len(pool), 40)
              for t in example_tokens(*pool[i])]
    window = 48
    starts = window_starts(stream, window)
    assert len(starts) > 3 and starts[0] == 0
    for s, following in zip(starts, starts[1:]):
        assert stream[s] == TOKEN_ID[START]
        # the next window begins inside this one's targets: no token is skipped, and it begins
        # at the equality this window cut (no earlier <start> is re-read)
        assert s < following <= s + window
        assert TOKEN_ID[START] not in stream[following + 1: s + window + 1]
    last = starts[-1]
    assert last + window + 1 > len(stream) - window  # no further whole window fits after it
    covered = set().union(*(range(s, s + window + 1) for s in starts))
    assert covered == set(range(last + window + 1))


def test_equality_longer_than_the_window_is_refused():
    stream = [TOKEN_ID[t] for t in example_tokens(tokenize("(p0 & p1) | (p2 & p3)"), ["p0"])]
    with pytest.raises(LengthgenError):
        window_starts(stream * 3, 5)
    with pytest.raises(LengthgenError):
        BooleanWindowTask([(tokenize("(p0 & p1) | (p2 & p3)"), ["p0"])], window=5)


def test_window_batches_predict_every_next_token():
    rng = np.random.default_rng(4)
    pool = make_pool(rng, 25, 2, 1) + make_pool(rng, 25, 2, 3)
    task = BooleanWindowTask(pool, window=96)
    batch = task.sample(rng, 8, 3, 3)
    assert batch.inputs.shape == batch.targets.shape == (8, 96)
    assert batch.loss_mask.all() and (batch.inputs != 0).all()  # full windows, no PAD
    assert (batch.inputs[:, 0] == TOKEN_ID[START]).all()
    assert (batch.targets[:, :-1] == batch.inputs[:, 1:]).all()  # targets are the next tokens
    assert (batch.lengths == 3).all()
    # every whole equality in a window is one of the pool's depth-3 examples
    allowed = {tuple(example_tokens(e, a)) for e, a in pool if expression_depth(e) == 3}
    for row in batch.inputs:
        tokens = [VOCAB[t] for t in row]
        begins = [i for i, t in enumerate(tokens) if t == START]
        for b, e in zip(begins, begins[1:]):
            assert tuple(tokens[b:e]) in allowed


def test_paper_rule_needs_end_within_the_left_hand_side():
    lhs = tokenize("(p0 & p1) | p0")  # 7 tokens
    assert paper_answer(["p0", END, "p3"], len(lhs)) == ["p0"]
    # 6 answer tokens then <end> as the 7th: shorter than the LHS, kept
    six = ["(", "p0", "|", "p0", ")", "&"]
    assert paper_answer(six + [END], len(lhs)) == six
    # an answer as long as the LHS (the <end> would be the 8th token) is out of room: wrong,
    # even though it is sympy-equivalent to the expression
    assert equivalent(lhs, lhs) and paper_answer(lhs + [END], len(lhs)) is None
    # equivalent but cut off by the room limit without <end>
    assert equivalent(["p0"] + [AND_, "p0"] * 3, lhs)
    assert paper_answer(["p0"] + [AND_, "p0"] * 3, len(lhs)) is None


AND_ = "&"
