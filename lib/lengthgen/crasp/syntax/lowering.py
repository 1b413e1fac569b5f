"""C-RASP syntax, third stage: syntax tree -> the ir (lengthgen.crasp.ir).

Checks names and sorts, orders definitions by dependency and emits ir operations. Every
sub-expression becomes an operation named by its own text (e.g. "#Q(a)", abbreviated beyond
MAX_NAME characters), and equal sub-expressions are shared. Knows the tree and the errors'
format, nothing of how the text was read.
"""
import hashlib

from lengthgen.crasp import ir
from lengthgen.crasp.interpret import shown_alphabet
from lengthgen.crasp.syntax.parser import Definition, Node, Tree
from lengthgen.crasp.syntax.tokens import Errors

END_TOKEN = "<eos>"   # the one next(...) token that is not an input symbol: the answer's end
MAX_NAME = 100        # a generated operation name longer than this is abbreviated

SORT_WORD = {ir.Sort.BOOL: "Boolean", ir.Sort.COUNT: "Count"}
# binary node kind -> the sort of its operands, its word, its operation
BINARY = {"and": (ir.Sort.BOOL, "and", ir.And), "or": (ir.Sort.BOOL, "or", ir.Or),
          "add": (ir.Sort.COUNT, "+", ir.Add), "sub": (ir.Sort.COUNT, "-", ir.Sub)}


class _Lowering:
    """Checks sorts and names, orders definitions by dependency and emits ir operations."""

    def __init__(self, defs: dict[str, Definition], alphabet, errors: Errors):
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


def lower(tree: Tree, errors: Errors, name: str = "") -> ir.Program:
    """The ir.Program of a syntax tree, called `name`."""
    alphabet, defs, accept, nexts = tree.alphabet, tree.defs, tree.accept, tree.nexts
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
