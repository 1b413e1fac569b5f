"""C-RASP syntax, second stage: tokens -> syntax tree.

A recursive-descent parser, one method per precedence level (loosest first: conditional, or,
and, not, comparison, sum, count and unary minus, atom). It gives a Tree: the alphabet and the
statements, each expression a Node. Names are not resolved and sorts not checked here (that is
the lowering's work); the parser knows the tokens only.
"""
from dataclasses import dataclass

from lengthgen.crasp import ir
from lengthgen.crasp.syntax.tokens import KEYWORDS, Errors, Token

CMP_TOKENS = ir.COMPARISONS

# Limits that keep a program's cost in proportion to its text (each refused with its value):
MAX_PERIOD = 1_000_000          # K of `i mod K` (`i mod K != R` lists K - 1 residues)
MAX_LOCAL_DISTANCE = 1_000_000  # K of `i - j <= K` and friends (one offset per distance)
MAX_NESTING = 300               # brackets, `not` and `#` inside each other
INT = " integer"   # an integer in the shape of a relation (no token's text holds a space)


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
    """Recursive descent over the tokens, one method per precedence level."""

    def __init__(self, tokens: list[Token], errors: Errors):
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
    def program(self) -> "Tree":
        alphabet, defs, accept, nexts = None, [], None, {}
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
                alphabet = tuple(symbols)
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
        return Tree(alphabet, defs, accept, nexts)

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
        return self.chain("or", self.conjunction)

    def conjunction(self) -> Node:
        return self.chain("and", self.negation)

    def chain(self, word: str, operand) -> Node:
        """operand (word operand)*, grouped to the left: 'or' and 'and' alike."""
        node = operand()
        while self.is_word(word):
            op = self.advance()
            node = Node(word, (node, operand()), op.line, op.col)
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


@dataclass(frozen=True)
class Tree:
    """A parsed program: its statements in the order of the text (nothing resolved yet)."""
    alphabet: tuple | None          # None: the program has no 'alphabet' line
    defs: list[Definition]          # NAME := EXPR
    accept: Definition | None       # accept EXPR
    nexts: dict[str, Definition]    # next(SYM) := EXPR, by symbol


def parse(tokens: list[Token], errors: Errors) -> Tree:
    """The syntax tree of a program's tokens."""
    return _Parser(tokens, errors).program()
