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
