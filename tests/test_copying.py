"""The compiled copy-unique model copies distinct tokens and breaks on a repeated one."""
import pytest

from lengthgen.errors import LengthgenError
from lengthgen.theory.copying import copy_model, copy_steps, first_break


@pytest.fixture(scope="module")
def model():
    return copy_model(6)


def test_distinct_tokens_are_copied_to_the_end(model):
    steps = copy_steps(model, ["3", "1", "4", "0", "5", "2"])
    assert all(s.ok for s in steps) and first_break(steps) is None
    assert [s.target for s in steps] == ["3", "1", "4", "0", "5", "2", "<eos>"]


def test_a_repeated_token_breaks_the_copy_next_to_it(model):
    steps = copy_steps(model, ["3", "1", "4", "1", "5", "2"])
    broken = [s for s in steps if not s.ok]
    assert first_break(steps).current == "3"       # the token before the first repeat
    assert {s.current for s in broken} == {"3", "1", "4"}  # around both copies of 1
    assert steps[-1].ok                             # far from the repeat it still copies


def test_foreign_tokens_are_refused(model):
    with pytest.raises(LengthgenError, match="not an input number"):
        copy_steps(model, ["3", "9"])
    with pytest.raises(LengthgenError, match="vocab"):
        copy_model(0)
