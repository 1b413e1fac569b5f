"""Compile a C-RASP program into a Limit Transformer with explicit weights.

The construction of Huang et al. (2025, Thm. 9, App. B.6), after Yang and Chiang (2024). The
input is prefixed with a start symbol at position 0 (token id 0), where every predicate is false.
The compiler is a pipeline of named stages, one module each; a stage knows only those before it:

  check_program   the program is well formed (here)
  blocks          what each operation writes: attention heads or MLP units, by dimension name
  schedule        the blocks stacked greedily into layers; the residual stream's dimensions
  weights         the layers written down as float64 tensors (size checked before allocating)
  model           CompiledModel: run strings through the transformer, decode every operation
  verify          the compiled model against the interpreter on random strings

`compile_program` runs the pipeline up to the model; `compile_and_verify` adds the check.
"""
import math
import operator
from dataclasses import dataclass
from functools import reduce

from lengthgen.crasp import ir
from lengthgen.crasp.compile import blocks
from lengthgen.crasp.compile.blocks import (COMPARE_UNITS, LOCAL_MARGIN, LOCAL_PEAK, START_BOOST,
                                            START_TOKEN, Head, Stage, Unit, footprint,
                                            program_stages, step)
from lengthgen.crasp.compile.model import CompiledModel
from lengthgen.crasp.compile.schedule import Schedule, schedule
from lengthgen.crasp.compile.verify import (MAX_VERIFY_LENGTH, MAX_VERIFY_SAMPLES, Verification,
                                            check_verify_range, sample_strings, verify,
                                            verify_up_to)
from lengthgen.crasp.compile.weights import MAX_PARAMETERS, check_size, materialize
from lengthgen.crasp.interpret import shown_alphabet
from lengthgen.crasp.limits import MLP_MODES
from lengthgen.errors import LengthgenError

__all__ = ["COMPARE_UNITS", "LOCAL_MARGIN", "LOCAL_PEAK", "MAX_PARAMETERS", "MAX_VERIFY_LENGTH",
           "MAX_VERIFY_SAMPLES", "MLP_MODES", "START_BOOST", "START_TOKEN", "CompileReport",
           "CompiledModel", "Head", "Schedule", "Stage", "Unit", "Verification", "check_program",
           "compile_and_verify", "compile_program", "sample_strings", "step", "verify",
           "verify_up_to"]


def check_program(program: ir.Program) -> None:
    """Raise LengthgenError unless every operation reads only earlier ones, of a known kind."""
    names = set()
    for name, op in program.ops.items():
        if name.startswith("@"):
            raise LengthgenError(f"operation name {name!r}: names starting with '@' are reserved "
                                 "for the compiler's helper dimensions")
        if not isinstance(op, ir.BOOL_OPS + ir.COUNT_OPS):
            raise LengthgenError(f"operation {name!r} has an unknown kind {type(op).__name__}")
        for arg in ir.operands(op):
            if arg not in names:
                raise LengthgenError(f"operation {name!r} reads {arg!r}, which is not defined "
                                     "before it")
        if isinstance(op, ir.Initial) and op.symbol not in program.alphabet:
            raise LengthgenError(
                f"operation {name!r} tests symbol {op.symbol!r}, which is not in the alphabet "
                f"{shown_alphabet(program.alphabet)} of program {program.name!r}")
        if isinstance(op, ir.Count) and op.offsets is not None and (
                not op.offsets or min(op.offsets) < 0):
            raise LengthgenError(f"local count {name!r} needs a non-empty set of distances >= 0")
        names.add(name)
    if program.output not in names or ir.sort_of(program.ops[program.output]) is not ir.Sort.BOOL:
        raise LengthgenError(f"output {program.output!r} is not a Boolean operation of the program")


def compile_program(program: ir.Program, max_length: int, mlp: str = "heaviside") -> CompiledModel:
    """The Limit Transformer computing every operation of `program` at every position.

    mlp="heaviside": exact at every input length (max_length is then only a declared range);
    mlp="relu": ReLU units only, exact for inputs of length <= max_length.
    """
    if mlp not in MLP_MODES:
        raise LengthgenError(f"unknown MLP mode {mlp!r}; valid: {', '.join(MLP_MODES)}")
    try:
        max_length = operator.index(max_length)
    except TypeError:
        max_length = 0
    if max_length < 1:
        raise LengthgenError(f"max_length must be a positive integer, got {max_length!r}")
    check_program(program)
    bounds = ir.count_bounds(program)
    periods = [op.period for op in program.ops.values() if isinstance(op, ir.Periodic)]
    delta = reduce(math.lcm, periods, 1) if periods else None
    width, heads = footprint(program, delta)
    check_size(program, width * (1 + len(program.alphabet) + (delta or 0) + 4 * heads),
               width, delta)

    inputs = ["@one", "@start", *(f"@pos{r}" for r in range(delta or 0)),
              *(name for name, op in program.ops.items() if isinstance(op, blocks.EMBEDDED))]
    plan = schedule(inputs, program_stages(program, bounds, max_length, mlp, delta or 1))
    model = materialize(program, plan, delta)
    return CompiledModel(program, model, plan.dims(), max_length, mlp, bounds)


@dataclass
class CompileReport:
    """What a notebook cell shows: the model's size and its agreement with the interpreter."""
    compiled: CompiledModel
    verification: Verification

    @property
    def ok(self) -> bool:
        return self.verification.ok

    def __str__(self) -> str:
        return f"{self.compiled.summary()}\n{self.verification}"


def compile_and_verify(program: ir.Program, max_length: int, mlp: str = "heaviside",
                       samples: int = 20, seed: int = 0) -> CompileReport:
    """Compile, then check against the interpreter on random strings up to max_length."""
    check_verify_range(max_length, samples)
    compiled = compile_program(program, max_length, mlp)
    return CompileReport(compiled, verify_up_to(program, compiled, max_length, samples, seed))
