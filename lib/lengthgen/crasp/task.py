"""The task a C-RASP program defines (lengthgen.tasks.program.VerdictTask), with the interpreter's
per-prefix verdicts as its labels: one vectorized run of the program per batch of strings of one
length (`accept_batch`: counts are cumulative sums, so every prefix's verdict comes at once)."""
from lengthgen.crasp.interpret import accept_batch
from lengthgen.crasp.ir import Program
from lengthgen.errors import LengthgenError
from lengthgen.tasks.program import BALANCED, VerdictTask


def program_task(program: Program, sampler: str = BALANCED) -> VerdictTask:
    """The per-position verdict task of an accepting program (not a next-token one)."""
    if program.output in program.token_outputs.values():
        raise LengthgenError(f"{program.name or 'the program'} is a next-token program with no "
                             f"'accept' line; its verdicts would say whether one token comes "
                             f"next, not whether a string is accepted; add 'accept EXPR'")
    name = program.name or "program"
    return VerdictTask(f"crasp:{name}", program.alphabet,
                       lambda ids: accept_batch(program, ids), sampler=sampler)
