"""C-RASP: programs as text (syntax), their representation (ir), an interpreter (interpret),
a library of programs (library), traces for the book (trace) and the compiler to transformers.

The usual entry points:
    parse_program(text) / load_program(path) -> Program
    run_program(program, input) -> {operation: values at positions 0..n}
    accepts(program, input) -> bool
"""
from lengthgen.crasp.interpret import accepts, run_batch, run_program
from lengthgen.crasp.ir import Program
from lengthgen.crasp.syntax import load_program, parse_program

__all__ = ["Program", "accepts", "load_program", "parse_program", "run_batch", "run_program"]
