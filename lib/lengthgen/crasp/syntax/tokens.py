"""C-RASP syntax, first stage: program text -> tokens.

The tokenizer reads one statement per line (a line continues while a bracket is open) and drops
`//` comments. Symbols after `alphabet`, `Q(` and `next(` are read raw, as SYM tokens. Errors
(LengthgenError) read `file:line:col: message` (Errors). Knows nothing of the parser.
"""
from dataclasses import dataclass

from lengthgen.errors import LengthgenError

KEYWORDS = {"alphabet", "accept", "next", "not", "and", "or", "true", "false", "exists", "mod",
            "in", "i", "j", "Q"}
PUNCT = (":=", "<=", ">=", "!=", "<", ">", "=", "+", "-", "#", "(", ")", "[", "]", "{", "}",
         ",", "?", ":")
MAX_INT = 2 ** 53               # integer literals (exact in float64, the compiler's numbers)


@dataclass(frozen=True)
class Token:
    kind: str    # NAME, INT, SYM (a raw symbol), a punctuation string, NEWLINE or EOF
    text: str
    line: int
    col: int


class Errors:
    """Builds errors that point at a line and column of one file."""

    def __init__(self, filename: str):
        self.filename = filename

    def at(self, line: int, col: int, message: str) -> LengthgenError:
        return LengthgenError(f"{self.filename}:{line}:{col}: {message}")


def tokenize(text: str, errors: Errors) -> list[Token]:
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


def _raw_symbol(word: str, code: str, paren: int, lineno: int, errors: Errors) -> list[Token]:
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
