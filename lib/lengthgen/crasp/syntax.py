"""The text syntax of C-RASP programs: a tokenizer and a recursive-descent parser.

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

The site's C-RASP playground runs a second implementation of this language in the browser
(book/_static/crasp_engine.js, following this module, interpret.py and trace.py). The contract
between the two is tests/test_crasp_playground.py: on library, random and malformed programs they
must give identical verdicts, traces and error messages (line and column included). A change to
the language here is a change there too, or that test fails.
"""
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from lengthgen.crasp import ir
from lengthgen.crasp.interpret import shown_alphabet
from lengthgen.errors import LengthgenError

END_TOKEN = "<eos>"   # the one next(...) token that is not an input symbol: the answer's end
KEYWORDS = {"alphabet", "accept", "next", "not", "and", "or", "true", "false", "exists", "mod",
            "in", "i", "j", "Q"}
PUNCT = (":=", "<=", ">=", "!=", "<", ">", "=", "+", "-", "#", "(", ")", "[", "]", "{", "}",
         ",", "?", ":")
CMP_TOKENS = ir.COMPARISONS

# Limits that keep a program's cost in proportion to its text (each refused with its value):
MAX_INT = 2 ** 53               # integer literals (exact in float64, the compiler's numbers)
MAX_PERIOD = 1_000_000          # K of `i mod K` (`i mod K != R` lists K - 1 residues)
MAX_LOCAL_DISTANCE = 1_000_000  # K of `i - j <= K` and friends (one offset per distance)
MAX_NESTING = 300               # brackets, `not` and `#` inside each other
MAX_NAME = 100                  # a generated operation name longer than this is abbreviated
RECURSION_ROOM = 12 * MAX_NESTING + 2_000   # Python frames that parse_program makes room for
INT = " integer"   # an integer in the shape of a relation (no token's text holds a space)


@dataclass(frozen=True)
class Token:
    kind: str    # NAME, INT, SYM (a raw symbol), a punctuation string, NEWLINE or EOF
    text: str
    line: int
    col: int


class _Errors:
    """Builds errors that point at a line and column of one file."""

    def __init__(self, filename: str):
        self.filename = filename

    def at(self, line: int, col: int, message: str) -> LengthgenError:
        return LengthgenError(f"{self.filename}:{line}:{col}: {message}")


# ----- tokenizer ------------------------------------------------------------------------------
def tokenize(text: str, errors: _Errors) -> list[Token]:
    """Tokens of a program; symbols after `alphabet`, `Q(` and `next(` are read raw."""
    tokens: list[Token] = []
    open_brackets: list[Token] = []   # unclosed (, [, { so far: a line continues while any is
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        code = line.split("//", 1)[0]
        col = 0
        stripped = code.lstrip()
        if stripped.startswith("alphabet") and (len(stripped) == 8 or stripped[8].isspace()):
            start = len(code) - len(stripped)
            tokens.append(Token("NAME", "alphabet", lineno, start + 1))
            col = start + 8
            while col < len(code):
                if code[col].isspace():
                    col += 1
                    continue
                end = col
                while end < len(code) and not code[end].isspace():
                    end += 1
                if "," in code[col:end]:
                    raise errors.at(lineno, col + 1, f"symbol {code[col:end]!r} holds a comma; "
                                                     "separate symbols with spaces: 'alphabet a b'")
                tokens.append(Token("SYM", code[col:end], lineno, col + 1))
                col = end
            tokens.append(Token("NEWLINE", "", lineno, len(code) + 1))
            continue
        while col < len(code):
            ch = code[col]
            if ch.isspace():
                col += 1
            elif ch.isalpha() or ch == "_":
                end = col
                while end < len(code) and (code[end].isalnum() or code[end] == "_"):
                    end += 1
                word = code[col:end]
                tokens.append(Token("NAME", word, lineno, col + 1))
                col = end
                while word in ("Q", "next") and end < len(code) and code[end] == " ":
                    end += 1
                if word in ("Q", "next") and end < len(code) and code[end] == "(":
                    tokens += _raw_symbol(word, code, end, lineno, errors)
                    col = tokens[-1].col
            elif ch.isdecimal():   # not isdigit(): int() refuses digits such as '²'
                end = col
                while end < len(code) and code[end].isdecimal():
                    end += 1
                if end - col > len(str(MAX_INT)) or int(code[col:end]) > MAX_INT:
                    raise errors.at(lineno, col + 1, f"integer {code[col:end][:30]}"
                                                     f"{'...' if end - col > 30 else ''} is "
                                                     f"larger than {MAX_INT} (2^53)")
                tokens.append(Token("INT", code[col:end], lineno, col + 1))
                col = end
            else:
                for p in PUNCT:
                    if code.startswith(p, col):
                        tok = Token(p, p, lineno, col + 1)
                        tokens.append(tok)
                        if p in "([{":
                            open_brackets.append(tok)
                        elif p in ")]}" and open_brackets:
                            open_brackets.pop()
                        col += len(p)
                        break
                else:
                    raise errors.at(lineno, col + 1, f"unexpected character {ch!r}")
        if not open_brackets:
            tokens.append(Token("NEWLINE", "", lineno, len(code) + 1))
    if open_brackets:   # report the bracket, not the end of the file where it was missed
        tok = open_brackets[-1]
        raise errors.at(tok.line, tok.col, f"'{tok.text}' is not closed")
    tokens.append(Token("NEWLINE", "", len(lines) + 1, 1))
    tokens.append(Token("EOF", "", len(lines) + 1, 1))
    return tokens


def _raw_symbol(word: str, code: str, paren: int, lineno: int, errors: _Errors) -> list[Token]:
    """The tokens `( SYM )` of Q(SYM) or next(SYM), with code[paren] == '('.

    A symbol is at least one character, so the closing bracket is the first ')' after the
    symbol's first character: Q()) tests the symbol ')', Q(() the symbol '('."""
    start = paren + 1
    while start < len(code) and code[start] == " ":
        start += 1
    close = code.find(")", start + 1)
    symbol = code[start:close].rstrip() if close >= 0 else ""
    if close < 0 and (start >= len(code) or code[start] != ")"):
        raise errors.at(lineno, paren + 1, f"'{word}(' is not closed by ')'")
    if not code.startswith("))", start) and (start >= len(code) or code[start] == ")"):
        raise errors.at(lineno, paren + 2, f"missing symbol in '{word}()'")
    if any(c.isspace() for c in symbol):
        raise errors.at(lineno, start + 1, f"{word}({symbol}): a symbol holds no spaces")
    return [Token("(", "(", lineno, paren + 1), Token("SYM", symbol, lineno, start + 1),
            Token(")", ")", lineno, close + 1)]


# ----- syntax tree ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    """One expression: kind names the construct, args its children or literal values."""
    kind: str      # name, sym, bool, int, not, and, or, cmp, add, sub, count, cond, periodic
    args: tuple
    line: int
    col: int


@dataclass(frozen=True)
class Definition:
    name: str
    expr: Node
    line: int
    col: int


class _Parser:
    def __init__(self, tokens: list[Token], errors: _Errors):
        self.tokens = tokens
        self.pos = 0
        self.err = errors
        self.depth = 0   # expressions open inside each other (recursion of the parser)

    # --- helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def is_word(self, word: str) -> bool:
        return self.tok.kind == "NAME" and self.tok.text == word

    def describe(self, tok: Token) -> str:
        return {"NEWLINE": "end of line", "EOF": "end of file"}.get(tok.kind, repr(tok.text))

    def expect(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            raise self.err.at(self.tok.line, self.tok.col,
                              f"expected {what}, found {self.describe(self.tok)}")
        return self.advance()

    def expect_int(self, what: str) -> int:
        return int(self.expect("INT", what).text)

    def nested(self, tok: Token, parse):
        """parse() one level deeper, refusing more than MAX_NESTING levels."""
        if self.depth >= MAX_NESTING:
            raise self.err.at(tok.line, tok.col, f"expressions nest more than {MAX_NESTING} "
                                                 "deep; name some parts with ':='")
        self.depth += 1
        try:
            return parse()
        finally:
            self.depth -= 1

    # --- statements
    def program(self):
        alphabet, alphabet_at, defs, accept, nexts = None, None, [], None, {}
        while self.tok.kind != "EOF":
            if self.tok.kind == "NEWLINE":
                self.advance()
                continue
            start = self.tok
            if self.is_word("alphabet"):
                self.advance()
                if alphabet is not None:
                    raise self.err.at(start.line, start.col, "a second 'alphabet' line")
                symbols = []
                while self.tok.kind == "SYM":
                    symbols.append(self.advance().text)
                if not symbols:
                    raise self.err.at(start.line, start.col, "'alphabet' lists no symbols")
                if len(set(symbols)) != len(symbols):
                    raise self.err.at(start.line, start.col, "'alphabet' repeats a symbol")
                alphabet, alphabet_at = tuple(symbols), start
            elif self.is_word("accept"):
                self.advance()
                if accept is not None:
                    raise self.err.at(start.line, start.col, "a second 'accept' line")
                accept = Definition("accept", self.expr(), start.line, start.col)
            elif self.is_word("next"):
                self.advance()
                self.expect("(", "'(' after 'next'")
                symbol = self.expect("SYM", "a symbol").text
                self.expect(")", "')'")
                self.expect(":=", "':='")
                if symbol in nexts:
                    raise self.err.at(start.line, start.col, f"next({symbol}) is defined twice")
                nexts[symbol] = Definition(f"next({symbol})", self.expr(), start.line, start.col)
            elif self.tok.kind == "NAME":
                if start.text in KEYWORDS:
                    raise self.err.at(start.line, start.col,
                                      f"'{start.text}' is a keyword and cannot name an operation")
                self.advance()
                self.expect(":=", f"':=' after the name '{start.text}'")
                defs.append(Definition(start.text, self.expr(), start.line, start.col))
            else:
                raise self.err.at(start.line, start.col,
                                  f"expected a definition 'NAME := ...', found {self.describe(start)}")
            if self.tok.kind not in ("NEWLINE", "EOF"):
                raise self.err.at(self.tok.line, self.tok.col,
                                  f"unexpected {self.describe(self.tok)} after the statement")
        return alphabet, alphabet_at, defs, accept, nexts

    # --- expressions
    def expr(self) -> Node:
        cond = self.disjunction()
        if self.tok.kind != "?":
            return cond
        q = self.advance()
        then = self.disjunction()
        self.expect(":", "':' of the conditional")
        otherwise = self.disjunction()
        return Node("cond", (cond, then, otherwise), q.line, q.col)

    def disjunction(self) -> Node:
        node = self.conjunction()
        while self.is_word("or"):
            op = self.advance()
            node = Node("or", (node, self.conjunction()), op.line, op.col)
        return node

    def conjunction(self) -> Node:
        node = self.negation()
        while self.is_word("and"):
            op = self.advance()
            node = Node("and", (node, self.negation()), op.line, op.col)
        return node

    def negation(self) -> Node:
        if self.is_word("not"):
            op = self.advance()
            return Node("not", (self.nested(op, self.negation),), op.line, op.col)
        return self.comparison()

    def comparison(self) -> Node:
        node = self.sum()
        if self.tok.kind in CMP_TOKENS:
            op = self.advance()
            node = Node("cmp", (node, op.text, self.sum()), op.line, op.col)
            if self.tok.kind in CMP_TOKENS:
                raise self.err.at(self.tok.line, self.tok.col,
                                  "comparisons do not chain; combine them with 'and'")
        return node

    def sum(self) -> Node:
        node = self.unary()
        while self.tok.kind in ("+", "-"):
            op = self.advance()
            kind = "add" if op.text == "+" else "sub"
            node = Node(kind, (node, self.unary()), op.line, op.col)
        return node

    def unary(self) -> Node:
        tok = self.tok
        if tok.kind == "#" or self.is_word("exists"):
            self.advance()
            offsets, strict = self.relations() if self.tok.kind == "[" else (None, False)
            if self.is_word("not"):  # #not P counts where P is false
                neg = self.advance()
                arg = Node("not", (self.nested(neg, self.unary),), neg.line, neg.col)
            else:
                arg = self.nested(tok, self.unary)
            node = Node("count", (arg, offsets, strict), tok.line, tok.col)
            if tok.kind == "#":
                return node
            return Node("cmp", (node, ">=", Node("int", (1,), tok.line, tok.col)), tok.line, tok.col)
        if tok.kind == "-" and self.tokens[self.pos + 1].kind == "INT":
            self.advance()
            return Node("int", (-self.expect_int("an integer"),), tok.line, tok.col)
        return self.atom()

    def relations(self) -> tuple[frozenset | None, bool]:
        """The bracket of a count: the local offsets i - j allowed (None: all) and strictness."""
        self.expect("[", "'['")
        offsets, strict = None, False
        while True:
            start = self.tok
            found = self.relation()
            if found == "strict":
                strict = True
            elif found is not None:
                offsets = found if offsets is None else offsets & found
            if self.tok.kind == "]":
                self.advance()
                break
            if self.tok.kind != ",":
                raise self.err.at(start.line, start.col, self.unknown_relation())
            self.advance()
        if offsets is not None and strict:
            offsets, strict = offsets - {0}, False
        return offsets, strict

    def unknown_relation(self) -> str:
        return ("unknown relation; a count allows j <= i, j < i, j = i, j = i - K, i - j = K, "
                "i - j <= K or i - j in {K, ...} (K a non-negative integer)")

    def relation(self):
        """One relation inside #[...]: 'strict', a frozenset of offsets, or None (j <= i)."""
        start = self.tok
        words, braces = [], 0
        while self.tok.kind not in ("]", "NEWLINE", "EOF") and (braces or self.tok.kind != ","):
            braces += {"{": 1, "}": -1}.get(self.tok.kind, 0)
            words.append(self.advance())
        text = " ".join(t.text for t in words)
        kinds = [INT if t.kind == "INT" else t.text for t in words]   # a name spelled INT is no int
        ints = [int(t.text) for t in words if t.kind == "INT"]
        if any(k > MAX_LOCAL_DISTANCE for k in ints):
            raise self.err.at(start.line, start.col, f"a local relation reaches distances up to "
                                                     f"{MAX_LOCAL_DISTANCE}, not {max(ints)}")
        shapes = {
            ("j", "<=", "i"): lambda: None,
            ("j", "<", "i"): lambda: "strict",
            ("j", "=", "i"): lambda: frozenset({0}),
            ("j", "=", "i", "-", INT): lambda: frozenset({ints[0]}),
            ("i", "-", "j", "=", INT): lambda: frozenset({ints[0]}),
            ("i", "-", "j", "<=", INT): lambda: frozenset(range(ints[0] + 1)),
        }
        if tuple(kinds) in shapes:
            return shapes[tuple(kinds)]()
        if tuple(kinds[:5]) == ("i", "-", "j", "in", "{") and kinds[-1] == "}" and ints:
            if all(k in (INT, ",") for k in kinds[5:-1]):
                return frozenset(ints)
        where = start if words else self.tok
        raise self.err.at(where.line, where.col,
                          f"{self.unknown_relation()}; found {text or 'nothing'!r}")

    def atom(self) -> Node:
        tok = self.tok
        if tok.kind == "INT":
            self.advance()
            return Node("int", (int(tok.text),), tok.line, tok.col)
        if tok.kind == "(":
            self.advance()
            node = self.nested(tok, self.expr)
            self.expect(")", "')'")
            return node
        if tok.kind == "NAME":
            if tok.text in ("true", "false"):
                self.advance()
                return Node("bool", (tok.text == "true",), tok.line, tok.col)
            if tok.text == "Q":
                self.advance()
                self.expect("(", "'(' after Q")
                symbol = self.expect("SYM", "a symbol").text
                self.expect(")", "')'")
                return Node("sym", (symbol,), tok.line, tok.col)
            if tok.text == "i":
                return self.periodic()
            if tok.text not in KEYWORDS:
                self.advance()
                return Node("name", (tok.text,), tok.line, tok.col)
        raise self.err.at(tok.line, tok.col, f"expected an operand, found {self.describe(tok)}")

    def periodic(self) -> Node:
        tok = self.advance()
        if not self.is_word("mod"):
            raise self.err.at(self.tok.line, self.tok.col,
                              "the position i appears only in 'i mod K = R' (periodic relations) "
                              "and inside #[...]")
        self.advance()
        period = self.expect_int("a period after 'mod'")
        if not 1 <= period <= MAX_PERIOD:
            raise self.err.at(tok.line, tok.col, f"the period must be in 1..{MAX_PERIOD}")
        op = self.tok
        if op.kind in ("=", "!="):
            self.advance()
            residues = {self.expect_int("a residue")}
        elif self.is_word("in"):
            self.advance()
            self.expect("{", "'{'")
            residues = {self.expect_int("a residue")}
            while self.tok.kind == ",":
                self.advance()
                residues.add(self.expect_int("a residue"))
            self.expect("}", "'}'")
        else:
            raise self.err.at(op.line, op.col, "expected '=', '!=' or 'in' after 'i mod K'")
        if any(r >= period for r in residues):
            raise self.err.at(tok.line, tok.col, f"residues must lie in 0..{period - 1}")
        if op.kind == "!=":
            residues = set(range(period)) - residues
        return Node("periodic", (period, frozenset(residues)), tok.line, tok.col)


# ----- from syntax tree to ir -----------------------------------------------------------------
SORT_WORD = {ir.Sort.BOOL: "Boolean", ir.Sort.COUNT: "Count"}
# binary node kind -> the sort of its operands, its word, its operation
BINARY = {"and": (ir.Sort.BOOL, "and", ir.And), "or": (ir.Sort.BOOL, "or", ir.Or),
          "add": (ir.Sort.COUNT, "+", ir.Add), "sub": (ir.Sort.COUNT, "-", ir.Sub)}


class _Lowering:
    """Checks sorts and names, orders definitions by dependency and emits ir operations."""

    def __init__(self, defs: dict[str, Definition], alphabet, errors: _Errors):
        self.defs = defs
        self.alphabet = alphabet
        self.err = errors
        self.ops: dict[str, object] = {}
        self.where: dict[str, ir.Where] = {}
        self.done: set[str] = set()   # definitions emitted

    def order(self) -> list[str]:
        """Every definition after the definitions it reads (a depth-first search with an
        explicit stack, so a long chain of definitions written in reverse needs no recursion)."""
        done, order = set(), []
        for root in self.defs:
            if root in done:
                continue
            path, on_path = [(root, iter(self.references(root)))], {root}
            while path:
                name, todo = path[-1]
                ref = next(todo, None)
                if ref is None:
                    path.pop()
                    on_path.discard(name)
                    done.add(name)
                    order.append(name)
                elif ref in on_path:
                    names = [n for n, _ in path]
                    cycle = names[names.index(ref):] + [ref]
                    d = self.defs[cycle[0]]
                    raise self.err.at(d.line, d.col, f"cyclic definition: {' -> '.join(cycle)}")
                elif ref not in done:
                    path.append((ref, iter(self.references(ref))))
                    on_path.add(ref)
        return order

    def references(self, name: str) -> list[str]:
        """The defined names that a definition reads, in the order they appear."""
        refs, stack = [], [self.defs[name].expr]
        while stack:
            node = stack.pop()
            if node.kind == "name" and node.args[0] in self.defs:
                refs.append(node.args[0])
            stack += reversed([a for a in node.args if isinstance(a, Node)])
        return refs

    def define(self, name: str) -> ir.Sort:
        """Emit a named definition and return its sort; the definitions it reads come first
        (parse_program defines names in the order of order())."""
        if name not in self.done:
            d = self.defs[name]
            self.lower(d.expr, name)
            self.done.add(name)
            self.where[name] = ir.Where(d.line, d.col)
        return ir.sort_of(self.ops[name])

    def operand(self, node: Node, sort: ir.Sort, role: str, name: str | None = None) -> str:
        """The name of the op computing node (lowered here unless `name` is given), checked to
        have the sort the context needs."""
        name = name or self.lower(node)
        got = ir.sort_of(self.ops[name])
        if got != sort:
            raise self.err.at(node.line, node.col,
                              f"{role} must be {SORT_WORD[sort]}, but {name!r} is {SORT_WORD[got]}")
        return name

    def emit(self, name: str | None, text: str, op, node: Node) -> str:
        name = name or _abbreviate(text)
        if name in self.ops and name not in self.defs:
            return name  # an equal sub-expression was emitted before: share it
        self.ops[name] = op
        self.where.setdefault(name, ir.Where(node.line, node.col))
        return name

    def binary(self, node: Node, name: str | None, left: str | None) -> str:
        """and, or, +, -: `left` is the already lowered left operand (None: lower it here)."""
        k, a = node.kind, node.args
        sort, word, cls = BINARY[k]
        x = self.operand(a[0], sort, f"the left operand of '{word}'", left)
        y = self.operand(a[1], sort, f"the right operand of '{word}'")
        return self.emit(name, f"{_wrap(x)} {word} {_wrap(y)}", cls(x, y), node)

    def lower(self, node: Node, name: str | None = None) -> str:
        """Emit the ops of an expression; the top one is called `name` (else its own text)."""
        k, a = node.kind, node.args
        if k == "name":
            ref = a[0]
            if ref not in self.defs:
                raise self.err.at(node.line, node.col, f"undefined name {ref!r}")
            sort = self.define(ref)
            if name is None:
                return ref
            # an alias: a one-op copy (x and x, or x + 0) so that every name is an operation
            if sort == ir.Sort.BOOL:
                return self.emit(name, "", ir.And(ref, ref), node)
            zero = self.emit(None, "0", ir.CountConst(0), node)
            return self.emit(name, "", ir.Add(ref, zero), node)
        if k == "sym":
            if self.alphabet is not None and a[0] not in self.alphabet:
                raise self.err.at(node.line, node.col,
                                  f"symbol {a[0]!r} is not in the alphabet {shown_alphabet(self.alphabet)}")
            return self.emit(name, f"Q({a[0]})", ir.Initial(a[0]), node)
        if k == "bool":
            return self.emit(name, "true" if a[0] else "false", ir.BoolConst(a[0]), node)
        if k == "int":
            return self.emit(name, str(a[0]), ir.CountConst(a[0]), node)
        if k == "periodic":
            period, residues = a
            text = f"i mod {period} in {{{', '.join(map(str, sorted(residues)))}}}"
            return self.emit(name, text, ir.Periodic(period, residues), node)
        if k == "not":
            x = self.operand(a[0], ir.Sort.BOOL, "the operand of 'not'")
            return self.emit(name, f"not {_wrap(x)}", ir.Not(x), node)
        if k in BINARY and a[0].kind in BINARY:   # a long sum: lower its left spine in a loop
            spine = [node]
            while spine[-1].args[0].kind in BINARY:
                spine.append(spine[-1].args[0])
            left = None
            for part in reversed(spine):
                left = self.binary(part, name if part is node else None, left)
            return left
        if k in BINARY:
            return self.binary(node, name, None)
        if k == "cmp":
            x = self.operand(a[0], ir.Sort.COUNT, f"the left side of '{a[1]}'")
            y = self.operand(a[2], ir.Sort.COUNT, f"the right side of '{a[1]}'")
            return self.emit(name, f"{_wrap(x)} {a[1]} {_wrap(y)}", ir.Compare(x, a[1], y), node)
        if k == "cond":
            c = self.operand(a[0], ir.Sort.BOOL, "the condition of '?'")
            t = self.operand(a[1], ir.Sort.COUNT, "the first branch of '?'")
            o = self.operand(a[2], ir.Sort.COUNT, "the second branch of '?'")
            return self.emit(name, f"{_wrap(c)} ? {_wrap(t)} : {_wrap(o)}", ir.Cond(c, t, o), node)
        if k == "count":
            arg, offsets, strict = a
            p = self.operand(arg, ir.Sort.BOOL, "what '#' counts")
            if offsets is not None:
                rel = ", ".join(map(str, sorted(offsets)))
                return self.emit(name, f"#[i-j in {{{rel}}}] {_wrap(p)}", ir.Count(p, offsets), node)
            if not strict:
                return self.emit(name, f"#{_wrap(p)}", ir.Count(p), node)
            # #[j < i] P  =  #P - (P ? 1 : 0)
            total = self.emit(None, f"#{_wrap(p)}", ir.Count(p), node)
            one = self.emit(None, "1", ir.CountConst(1), node)
            zero = self.emit(None, "0", ir.CountConst(0), node)
            here = self.emit(None, f"{_wrap(p)} ? 1 : 0", ir.Cond(p, one, zero), node)
            return self.emit(name, f"#[j<i] {_wrap(p)}", ir.Sub(total, here), node)
        raise AssertionError(f"unknown node kind {k}")


def _abbreviate(text: str) -> str:
    """A generated name: the expression's text, shortened with a digest of the whole beyond
    MAX_NAME characters (so names, and the texts built from them, stay short)."""
    if len(text) <= MAX_NAME:
        return text
    digest = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
    return f"{text[:MAX_NAME - 16]}...#{digest}"


def _wrap(name: str) -> str:
    """Parenthesize a generated name inside a bigger expression's text."""
    simple = name.isidentifier() or name.lstrip("-").isdigit() or name.startswith("Q(")
    return name if simple else f"({name})"


# ----- entry points ---------------------------------------------------------------------------
def parse_program(text: str, filename: str = "<string>", name: str = "") -> ir.Program:
    """Parse program text into an ir.Program; errors read `filename:line:col: message`."""
    # The parser recurses once per nesting level (about 8 frames each, MAX_NESTING levels at
    # most) and the lowering a few frames per level: give both room whatever the caller's depth.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_ROOM))
    try:
        return _parse(text, filename, name)
    finally:
        sys.setrecursionlimit(limit)


def _parse(text: str, filename: str, name: str) -> ir.Program:
    errors = _Errors(filename)
    alphabet, alphabet_at, defs, accept, nexts = _Parser(tokenize(text, errors), errors).program()
    if alphabet is None:
        raise errors.at(1, 1, "the program has no 'alphabet' line")
    for symbol, d in nexts.items():   # a next token is read as input later, or ends the answer
        if symbol not in alphabet and symbol != END_TOKEN:
            raise errors.at(d.line, d.col, f"next({symbol}): {symbol!r} is neither in the "
                                           f"alphabet {shown_alphabet(alphabet)} nor {END_TOKEN}")
    named_accept = accept is not None and accept.expr.kind == "name"  # `accept M`: no new op
    table: dict[str, Definition] = {}
    for d in [*defs, *([accept] if accept and not named_accept else []), *nexts.values()]:
        if d.name in table:
            first = table[d.name]
            raise errors.at(d.line, d.col, f"redefinition of {d.name!r} "
                                           f"(first defined at {first.line}:{first.col})")
        table[d.name] = d
    low = _Lowering(table, alphabet, errors)
    for definition in low.order():
        low.define(definition)
    for symbol, d in nexts.items():
        if ir.sort_of(low.ops[d.name]) != ir.Sort.BOOL:
            raise errors.at(d.line, d.col, f"next({symbol}) must be Boolean, not a Count")
    if accept is not None:
        output = accept.expr.args[0] if named_accept else accept.name
        if output not in low.ops:
            raise errors.at(accept.expr.line, accept.expr.col, f"undefined name {output!r}")
        if ir.sort_of(low.ops[output]) != ir.Sort.BOOL:
            raise errors.at(accept.line, accept.col, "'accept' needs a Boolean expression")
    else:
        in_order = sorted(table.values(), key=lambda d: (d.line, d.col))
        bools = [d.name for d in in_order if ir.sort_of(low.ops[d.name]) == ir.Sort.BOOL]
        if not bools:
            raise errors.at(1, 1, "the program defines no Boolean operation to accept with")
        output = bools[-1]
    return ir.Program(alphabet=alphabet, ops=low.ops, output=output, where=low.where,
                      token_outputs={s: d.name for s, d in nexts.items()}, name=name)


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
