"""Random C-RASP programs and inputs, for differential tests of the language's implementations.

`random_program(rng)` writes the text of a well-formed program that uses every construct of
the syntax (lengthgen.crasp.syntax) at random: counts with and without relations (`#[...]`,
`exists`, `#not`), comparisons, Boolean operations, conditionals, sums and differences,
negative constants, periodic relations, names used before their definition, `accept` or the
default output, `next(...)` outputs, comments, lines continued inside brackets, symbols such
as `(` and `)` and symbols of several characters. Operators are written with as few brackets
as the precedence allows (and sometimes more), so the text exercises the parser's precedence,
not only its brackets. `random_inputs` draws strings for it, a few with a symbol outside the
alphabet.

The browser playground's engine (book/_static/crasp_engine.js) is held to this interpreter by
tests/test_crasp_playground.py on such programs.
"""
import numpy as np

# Precedence levels of the grammar, loosest first (see syntax/parser.py).
COND, OR, AND, NOT, CMP, SUM, UNARY, ATOM = range(8)
ALPHABETS = [("a", "b"), ("a", "b", "c"), ("0", "1"), ("(", ")", "a"), ("x", "yy", "<s>"),
             ("a",), ("é", "b")]
NAMES = ["A", "B", "Cnt", "x1", "ok", "Zä", "long_name_", "p", "Q1", "n_b"]
RELATIONS = ["j <= i", "j < i", "j = i", "j = i - {k}", "i - j = {k}", "i - j <= {k}",
             "i - j in {{{ks}}}"]


class _Writer:
    def __init__(self, rng, alphabet, names):
        self.rng = rng
        self.alphabet = alphabet
        self.names = names        # name -> sort ("B" or "C") of the definitions it may read

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def wrap(self, text: str, level: int, need: int) -> str:
        """Bracket a text of precedence `level` where the context needs `need` or tighter."""
        if level < need or self.chance(0.08):
            if self.chance(0.1):
                return "(\n  " + text + "\n)"     # a line continued inside brackets
            return "(" + text + ")"
        return text

    def boolean(self, depth: int) -> tuple[str, int]:
        """(text, precedence level) of a Boolean expression."""
        names = [n for n, s in self.names.items() if s == "B"]
        leaf = depth <= 0 or self.chance(0.25)
        kinds = ["sym", "const", "periodic"] + (["name"] * 3 if names else [])
        if not leaf:
            kinds = ["not", "and", "or", "cmp", "cmp", "exists"]
        kind = self.pick(kinds)
        if kind == "sym":
            return f"Q({self.pick(self.alphabet)})", ATOM
        if kind == "const":
            return self.pick(["true", "false"]), ATOM
        if kind == "name":
            return self.pick(names), ATOM
        if kind == "periodic":
            k = int(self.rng.integers(1, 6))
            form = self.pick(["=", "!=", "in"])
            if form == "in":
                rs = sorted({int(r) for r in self.rng.integers(0, k, size=int(self.rng.integers(1, 4)))})
                return f"i mod {k} in {{{', '.join(map(str, rs))}}}", ATOM
            return f"i mod {k} {form} {int(self.rng.integers(0, k))}", ATOM
        if kind == "not":
            text, level = self.boolean(depth - 1)
            return "not " + self.wrap(text, level, NOT), NOT
        if kind in ("and", "or"):
            level = AND if kind == "and" else OR
            left, ll = self.boolean(depth - 1)
            right, rl = self.boolean(depth - 1)
            return f"{self.wrap(left, ll, level)} {kind} {self.wrap(right, rl, level + 1)}", level
        if kind == "cmp":
            left, ll = self.count(depth - 1)
            right, rl = self.count(depth - 1)
            op = self.pick(["<", "<=", "=", "!=", ">=", ">"])
            return f"{self.wrap(left, ll, SUM)} {op} {self.wrap(right, rl, SUM)}", CMP
        text, level = self.boolean(depth - 1)   # exists
        return f"exists{self.relations()} {self.wrap(text, level, UNARY)}", UNARY

    def relations(self) -> str:
        if self.chance(0.5):
            return ""
        parts = []
        for _ in range(int(self.rng.integers(1, 3))):
            ks = sorted({int(k) for k in self.rng.integers(0, 5, size=int(self.rng.integers(1, 4)))})
            parts.append(self.pick(RELATIONS).format(k=int(self.rng.integers(0, 4)),
                                                     ks=", ".join(map(str, ks))))
        return "[" + self.pick([", ", ","]).join(parts) + "]"

    def count(self, depth: int) -> tuple[str, int]:
        """(text, precedence level) of a Count expression."""
        names = [n for n, s in self.names.items() if s == "C"]
        leaf = depth <= 0 or self.chance(0.2)
        kinds = ["int", "count"] + (["name"] * 3 if names else [])
        if not leaf:
            kinds = ["count", "count", "add", "sub", "cond"]
        kind = self.pick(kinds)
        if kind == "int":
            value = int(self.rng.integers(-3, 6))
            return str(value), (UNARY if value < 0 else ATOM)
        if kind == "name":
            return self.pick(names), ATOM
        if kind == "count":
            text, level = self.boolean(depth - 1)
            rel = self.relations()
            if self.chance(0.15):                    # `#not P`, the special form
                return f"#{rel}not {self.wrap(text, level, UNARY)}", UNARY
            return f"#{rel}{self.pick(['', ' '])}{self.wrap(text, level, UNARY)}", UNARY
        if kind in ("add", "sub"):
            left, ll = self.count(depth - 1)
            right, rl = self.count(depth - 1)
            op = "+" if kind == "add" else "-"
            return f"{self.wrap(left, ll, SUM)} {op} {self.wrap(right, rl, UNARY)}", SUM
        c, cl = self.boolean(depth - 1)   # conditional
        t, tl = self.count(depth - 1)
        o, ol = self.count(depth - 1)
        return f"{self.wrap(c, cl, OR)} ? {self.wrap(t, tl, OR)} : {self.wrap(o, ol, OR)}", COND


def random_program(rng: np.random.Generator, max_definitions: int = 6, max_depth: int = 4) -> str:
    """The text of a random well-formed program (see the module docstring)."""
    alphabet = ALPHABETS[int(rng.integers(len(ALPHABETS)))]
    n = int(rng.integers(1, max_definitions + 1))
    names = list(rng.permutation(NAMES)[:n])
    sorts = ["B" if rng.random() < 0.5 else "C" for _ in names]
    sorts[-1] = "B"                                      # at least one Boolean definition
    lines = []
    for k, (name, sort) in enumerate(zip(names, sorts)):
        # a definition reads only definitions made before it: no cycles
        w = _Writer(rng, alphabet, dict(zip(names[:k], sorts[:k])))
        depth = int(rng.integers(0, max_depth + 1)) + (3 if rng.random() < 0.1 else 0)
        text, _ = w.boolean(depth) if sort == "B" else w.count(depth)
        lines.append(f"{name} := {text}" + (" // " + name if rng.random() < 0.2 else ""))
    order = rng.permutation(len(lines)) if rng.random() < 0.5 else range(len(lines))
    body = [lines[k] for k in order]                    # names may be used before defined
    w = _Writer(rng, alphabet, dict(zip(names, sorts)))
    if rng.random() < 0.4:
        body.append("accept " + w.boolean(int(rng.integers(0, 3)))[0])
    if rng.random() < 0.15:
        for s in rng.permutation(list(alphabet))[:2]:
            body.append(f"next({s}) := " + w.boolean(int(rng.integers(0, 3)))[0])
    head = ["// a random program"] if rng.random() < 0.3 else []
    return "\n".join(head + ["alphabet " + " ".join(alphabet)] + body) + "\n"


def random_inputs(rng: np.random.Generator, program_text: str, count: int, max_length: int = 12
                  ) -> list[str]:
    """Strings over the alphabet of a program's text (its `alphabet` line), of lengths
    0..max_length; about one in twenty holds a symbol outside the alphabet."""
    alphabet = next(line.split()[1:] for line in program_text.splitlines()
                    if line.startswith("alphabet"))
    sep = "" if all(len(s) == 1 for s in alphabet) else " "
    out = []
    for _ in range(count):
        n = int(rng.integers(0, max_length + 1))
        symbols = [alphabet[int(k)] for k in rng.integers(0, len(alphabet), size=n)]
        if n and rng.random() < 0.05:
            symbols[int(rng.integers(n))] = "z"
        if sep == "" and n and rng.random() < 0.1:
            symbols.insert(int(rng.integers(n)), " ")   # spaces between symbols are ignored
        out.append(sep.join(symbols))
    return out
