"""A reader can grep from a number in the prose to the code that makes it (issue 52, item 5).

Every glue key a page pastes ({glue:md}`key`, {glue:text}`key`, {glue:figure} key, ...) is
either written out as a string literal in the code that glues it (under lib/lengthgen, or in
the page's own code cells), or belongs to a family that the producing code documents in one
greppable comment, such as

    # glue keys: dyck-sign-<setting>-{real,oos,negative}

where `<name>` stands for a generated part (a setting, a task, an encoding) and `{a,b}` for
literal alternatives. A family starts with a literal word (the chapter's prefix), so a pattern
cannot vouch for a key of another chapter. KEY-provenance, which `book_figure` and
`book_table` glue beside KEY (`lengthgen.viz.book.PROVENANCE`), is traced through KEY.
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "lengthgen"
PAGES = sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md"))

ROLE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")
DIRECTIVE = re.compile(r"^\s*(?:`{3,}|~{3,}|:{3,})\{glue(?::\w+)?\}\s+([\w-]+)", re.MULTILINE)
FAMILY = re.compile(r"#\s*glue keys:\s*(.+)")
PLACEHOLDER = r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"


def _cells(path: Path, kind: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == kind]


def prose_keys(text: str) -> set[str]:
    """The glue keys a page's Markdown pastes ({glue:text}`key:.2f` has the key before ':')."""
    return ({m.group(1).split(":")[0] for m in ROLE.finditer(text)}
            | {m.group(1) for m in DIRECTIVE.finditer(text)})


def book_keys() -> dict[str, list[str]]:
    """{key: the pages that paste it}."""
    keys: dict[str, list[str]] = {}
    for path in PAGES:
        text = ("\n".join(_cells(path, "markdown")) if path.suffix == ".ipynb"
                else path.read_text(encoding="utf-8"))
        for key in prose_keys(text):
            keys.setdefault(key, []).append(path.name)
    return keys


def code_text() -> str:
    """Where a literal key may stand: the library's source and the pages' code cells."""
    return "\n".join([p.read_text(encoding="utf-8") for p in sorted(LIB.rglob("*.py"))]
                     + [c for p in PAGES if p.suffix == ".ipynb" for c in _cells(p, "code")])


def family_regex(pattern: str) -> re.Pattern:
    """`dyck-sign-<setting>-{real,oos}` as a regular expression for a whole key."""
    out, i = "", 0
    for m in re.finditer(r"<[\w-]+>|\{[\w,-]+\}", pattern):
        out += re.escape(pattern[i:m.start()])
        token = m.group(0)
        out += (f"(?:{PLACEHOLDER})" if token.startswith("<") else
                "(?:" + "|".join(map(re.escape, token[1:-1].split(","))) + ")")
        i = m.end()
    return re.compile(out + re.escape(pattern[i:]))


def patterns_of(comment: str) -> list[str]:
    """The patterns after "glue keys:", separated by spaces, up to the first word of prose."""
    out = []
    for token in comment.split():
        if not re.fullmatch(r"[\w<>{},-]+", token):
            break
        out.append(token.rstrip(","))
    return out


def families(text: str | None = None) -> list[tuple[str, re.Pattern]]:
    """Every documented family (pattern, regex) in the library's comments (or in `text`)."""
    sources = [text] if text is not None else \
        [p.read_text(encoding="utf-8") for p in sorted(LIB.rglob("*.py"))]
    return [(pattern, family_regex(pattern)) for source in sources
            for comment in FAMILY.findall(source) for pattern in patterns_of(comment)]


def is_literal(key: str, code: str) -> bool:
    """Whether the code spells the key between quotes ("key", 'key'; what the regex
    ["']key["'] finds), by plain substring tests: called for every key in every function."""
    return key in code and any(f"{a}{key}{b}" in code for a in "\"'" for b in "\"'")


def untraced(keys, code: str, patterns) -> list[str]:
    from lengthgen.viz.book import PROVENANCE
    return sorted(k for k in keys if not is_literal(k.removesuffix(PROVENANCE), code)
                  and not any(r.fullmatch(k.removesuffix(PROVENANCE)) for _, r in patterns))


def test_every_glue_key_of_the_prose_is_a_literal_or_a_documented_family():
    keys = book_keys()
    assert len(keys) > 400, "the book's glue keys were not found"
    missing = untraced(keys, code_text(), families())
    assert not missing, ("glue keys pasted by the prose that no code spells out and no "
                         "`# glue keys:` family documents:\n"
                         + "\n".join(f"{k} ({', '.join(keys[k])})" for k in missing))


def test_every_documented_family_is_anchored_and_names_keys_the_book_pastes():
    """A family starts with a literal word and a hyphen (`huang-`, `dyck-sign-`), and at least
    one key of the prose belongs to it (a family whose keys all left the book goes too)."""
    keys = [k.removesuffix("-provenance") for k in book_keys()]
    found = families()
    assert found, "no `# glue keys:` family found under lib/lengthgen"
    for pattern, regex in found:
        assert re.match(r"[a-z]+-", pattern), f"family {pattern!r} does not start with a word"
        assert any(regex.fullmatch(k) for k in keys), f"family {pattern!r} names no book key"


def test_the_check_catches_an_untraced_key_and_reads_families_exactly():
    code = ('book_text("huang-line", x)\n'
            "# glue keys: dyck-sign-<setting>-{real,oos} cost-x-y (prose after the patterns)\n")
    patterns = families(code)
    assert [p for p, _ in patterns] == ["dyck-sign-<setting>-{real,oos}", "cost-x-y"]
    assert untraced(["huang-line", "huang-line-provenance", "dyck-sign-fewer-words-real",
                     "dyck-sign-base-oos", "cost-x-y"], code, patterns) == []
    # a typo, a suffix the family does not list, another chapter's key: not traced
    assert untraced(["huang-lines", "dyck-sign-base-imag", "dyck-sign--real", "crasp-base-real"],
                    code, patterns) == ["crasp-base-real", "dyck-sign--real", "dyck-sign-base-imag",
                                        "huang-lines"]
    assert prose_keys("{glue:text}`a-b:.2f` and {glue:md}`c-d`\n```{glue:figure} e-f\n") == \
        {"a-b", "c-d", "e-f"}
