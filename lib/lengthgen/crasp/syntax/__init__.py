"""The text syntax of C-RASP programs, read in three stages, one module each.

A program is one statement per line (a line continues while a bracket is open); `//` starts a
comment. Example, MAJORITY over {a, b}:

    alphabet a b
    Ca := #Q(a)                  // number of a's among positions 1..i
    Cb := #Q(b)
    M  := Cb <= Ca               // the last Boolean definition decides acceptance

Statements
    alphabet SYM SYM ...         the input symbols (any text without spaces or commas)
    NAME := EXPR                 a named operation; names may be used before their definition
    accept EXPR                  the output (default: the last Boolean definition in the text)
    next(SYM) := EXPR            next-token programs: true where SYM may come next (SYM is a
                                 symbol of the alphabet or <eos>; `crasp run` asks such a
                                 program for an explicit `accept`)

Expressions (loosest first)
    P ? C1 : C2                  conditional count
    A or B,  A and B,  not A     Boolean operations
    C1 <= C2  (< <= = != >= >)   comparison of two counts
    C1 + C2,  C1 - C2            addition, subtraction; an integer is a constant count
    #P                           count of j <= i with P(j)
    #[REL, ...] P                count with relations: j <= i (always implied), j < i (strict),
                                 j = i, j = i - K, i - j = K, i - j <= K, i - j in {K, ...}
                                 (the last five are local relations of C-RASP[., local])
    exists P                     sugar for #P >= 1 (also exists[...] P)
    Q(SYM)                       the symbol at i is SYM (Q()) tests the symbol ')')
    i mod K = R, i mod K in {R, ...}, i mod K != R     periodic relations (C-RASP[periodic, .])
    true, false, NAME, (EXPR)

Every sub-expression becomes an operation of the ir named by its own text (e.g. "#Q(a)"), and
equal sub-expressions are shared. Errors (LengthgenError) read `file:line:col: message`.

The stages; each knows only those before it:

  tokens      program text -> tokens (the tokenizer; the language's keywords and punctuation)
  parser      tokens -> syntax tree (a recursive-descent parser; Tree, Node, Definition)
  lowering    syntax tree -> ir.Program (names, sorts, dependency order, shared operations)

`parse_program` runs the three; `load_program` reads a .crasp file first.

The site's C-RASP playground runs a second implementation of this language in the browser
(book/_static/crasp_engine.js, following this package, interpret.py and trace.py). The contract
between the two is tests/test_crasp_playground.py: on library, random and malformed programs they
must give identical verdicts, traces and error messages (line and column included). A change to
the language here is a change there too, or that test fails.
"""
import sys
from pathlib import Path

from lengthgen.crasp import ir
from lengthgen.crasp.syntax.lowering import MAX_NAME, lower
from lengthgen.crasp.syntax.parser import MAX_LOCAL_DISTANCE, MAX_NESTING, MAX_PERIOD, parse
from lengthgen.crasp.syntax.tokens import KEYWORDS, MAX_INT, PUNCT, Errors, tokenize
from lengthgen.errors import LengthgenError

__all__ = ["KEYWORDS", "MAX_INT", "MAX_LOCAL_DISTANCE", "MAX_NAME", "MAX_NESTING", "MAX_PERIOD",
           "PUNCT", "load_program", "parse_program"]

RECURSION_ROOM = 12 * MAX_NESTING + 2_000   # Python frames that parse_program makes room for


def parse_program(text: str, filename: str = "<string>", name: str = "") -> ir.Program:
    """Parse program text into an ir.Program; errors read `filename:line:col: message`."""
    # The parser recurses once per nesting level (about 8 frames each, MAX_NESTING levels at
    # most) and the lowering a few frames per level: give both room whatever the caller's depth.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_ROOM))
    try:
        errors = Errors(filename)
        return lower(parse(tokenize(text, errors), errors), errors, name)
    finally:
        sys.setrecursionlimit(limit)


def load_program(path) -> ir.Program:
    """Parse a .crasp file; the program is named after the file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise LengthgenError(f"cannot read program {path}: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise LengthgenError(f"{path}:{line}:{col}: not UTF-8 text (byte "
                             f"0x{data[e.start]:02x}); save the program as UTF-8") from None
    text = text.removeprefix("\ufeff")   # a byte-order mark some editors write first
    return parse_program(text, filename=str(path), name=path.stem)
