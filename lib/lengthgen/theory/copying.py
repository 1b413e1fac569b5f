"""The compiled copy-unique program on inputs with a repeated token: where copying breaks.

copy_unique (crasp.library) makes an induction head's look-up: at the current token t it
predicts every x that followed t in the input. With distinct input tokens that is exactly one x, and the compiled
Limit Transformer copies at every length its vocabulary allows. A repeated token t, followed by
two different tokens, leaves two candidates: the model predicts both, and the copy breaks there.
This is the behaviour Corollary 13 forces on any Periodic and Local model: with a fixed
vocabulary, distinct inputs are at most as long as the vocabulary, and longer inputs must repeat.
"""
from dataclasses import dataclass

from lengthgen.crasp.compile import CompiledModel, compile_program
from lengthgen.crasp.library import EOS, NUMBERS, SEP, copy_unique_text
from lengthgen.crasp.syntax import parse_program
from lengthgen.errors import LengthgenError


def copy_model(vocab: int = 6) -> CompiledModel:
    """copy_unique over the numbers 0..vocab-1, compiled with Heaviside MLPs."""
    if not 1 <= vocab <= len(NUMBERS):
        raise LengthgenError(f"vocab must be in 1..{len(NUMBERS)}, got {vocab}")
    program = parse_program(copy_unique_text(NUMBERS[:vocab]), filename="<copy_unique>",
                            name="copy_unique")
    return compile_program(program, max_length=4 * vocab + 2)


@dataclass
class Step:
    position: int          # index in the sequence `input <sep> answer`
    current: str           # the token the model reads
    target: str            # the token that comes next in a correct copy
    predicted: list        # the tokens the model predicts

    @property
    def ok(self) -> bool:
        return self.predicted == [self.target]


def copy_steps(compiled: CompiledModel, input_tokens: list[str]) -> list[Step]:
    """Feed `input <sep> input` (the correct copy, teacher-forced) and read, from <sep> on, which
    tokens the compiled model predicts next at every position."""
    tokens = [str(t) for t in input_tokens]
    bad = [t for t in tokens if t not in compiled.program.alphabet or t == SEP]
    if bad:
        numbers = " ".join(a for a in compiled.program.alphabet if a != SEP)
        raise LengthgenError(f"token {bad[0]!r} is not an input number of this copy model "
                             f"(numbers: {numbers})")
    sequence = tokens + [SEP] + tokens
    values = compiled.run(sequence)
    outputs = compiled.program.token_outputs
    start = len(tokens)                   # index of <sep>
    steps = []
    for k, target in enumerate(tokens + [EOS]):
        position = start + k
        predicted = [t for t in outputs if values[outputs[t]][position]]
        steps.append(Step(position, sequence[position], target, predicted))
    return steps


def step_rows(steps: list[Step]) -> list[dict]:
    """The chapter's table of `copy_steps`: what the model reads, what should come next, what
    it predicts, and whether that is exactly the right token."""
    return [{"reads": s.current, "next should be": s.target,
             "model predicts": "{" + ", ".join(s.predicted) + "}", "ok": "yes" if s.ok else "NO"}
            for s in steps]


def first_break(steps: list[Step]) -> Step | None:
    return next((s for s in steps if not s.ok), None)
