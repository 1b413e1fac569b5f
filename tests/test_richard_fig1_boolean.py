"""Fig. 1 (Boolean simplification): scoring by the paper's rule and the trivial baseline
(`richard.boolean_protocol`, shared by richard-fig1-boolean and richard-fig1-ladder)."""
import numpy as np
import torch

from lengthgen.experiments.richard import boolean_protocol as protocol
from lengthgen.tasks.boolean import END, TOKEN_ID, VOCAB, paper_answer, tokenize


def test_baseline_predictor_is_the_most_frequent_training_answer():
    pool = [(tokenize(e), tokenize(a)) for e, a in [
        ("p0 | ¬p0", "true"), ("p1 | ¬p1", "true"), ("p2 & ¬p2", "false"),
        ("(p0 & p1) | p0", "p0"), ("(p0 | p1) & p0", "p0"), ("p1 & p1", "p1")]]
    answers = protocol.baseline_answers(pool)
    assert answers["in_sample"] == ["true"] and answers["in_sample_nonconstant"] == ["p0"]
    tests = [tokenize(e) for e in ("p3 | ¬p3", "p0 & (p0 | p2)", "p2 & p1", "p2 | ¬p2")]
    right = protocol.score([paper_answer(["true", END], len(e)) for e in tests], tests)
    assert right == [True, False, False, True]
    right = protocol.score([paper_answer(["p0", END], len(e)) for e in tests], tests)
    assert right == [False, True, False, False]
    # the rule applies to the baseline too: a one-token expression leaves no room for "p0"
    assert protocol.score([paper_answer(["p0", END], 1)], [["p0"]]) == [False]


class Scripted(torch.nn.Module):
    """A stand-in decoder that, after '=', writes a fixed token script (then <end> forever)."""

    def __init__(self, scripts, prompt_lengths):
        super().__init__()
        self.scripts, self.prompts = scripts, prompt_lengths
        self.calls = 0

    def forward(self, tokens):
        self.calls += 1
        b, t = tokens.shape
        logits = torch.zeros(b, t, len(VOCAB))
        for i, (script, n) in enumerate(zip(self.scripts, self.prompts)):
            for p in range(t):
                j = p - (n - 1)
                token = script[j] if 0 <= j < len(script) else END
                logits[i, p, TOKEN_ID[token]] = 1.0
        return logits


def test_generation_gives_each_expression_its_own_room():
    long_e = tokenize("(p0 & p1) | (p0 & ¬p1)")       # 11 tokens, simplifies to p0
    short_e = tokenize("p1 & p1")                     # 3 tokens
    scripts = [["p0", END], ["p1", "&", "p1", END], ["(", "p0", ")"] * 4]
    exprs = [long_e, short_e, long_e]
    model = Scripted(scripts, [len(e) + 2 for e in exprs])
    answers = protocol.generate_answers(model, exprs, "cpu")
    # row 1: "p1 & p1" is not shorter than its 3-token LHS; row 2 never ends within 11 tokens
    assert answers == [["p0"], None, None]
    assert protocol.score(answers, exprs) == [True, False, False]
    assert model.calls == len(long_e)  # stops once every row has ended or used its room


def test_splits_partition_the_test_answers():
    held = {("p0",)}
    assert protocol.in_split("out_of_sample", ("p0",), held)
    assert not protocol.in_split("in_sample", ("p0",), held)
    assert protocol.in_split("in_sample", ("true",), held)
    assert not protocol.in_split("in_sample_nonconstant", ("true",), held)
    assert protocol.in_split("in_sample_nonconstant", ("p1",), held)
