"""Every third-party package the project imports is declared, with one floor.

The imports are read with `ast` from every Python file of the library, the tests, the tools,
the benchmarks and the book's Sphinx extensions (inside functions too), and mapped to the
distributions that provide them (importlib.metadata.packages_distributions(); a module that is
not installed here, such as Ray, is taken to be its own distribution). Each must be declared in
requirements.txt, requirements-cluster.txt or pyproject.toml (its dependencies or an extra), so
that nothing arrives only because another package happens to pull it in. A declaration names a
floor (>=, or an == pin); a package declared in several places has the same floor everywhere,
but for an == pin (torch in requirements.txt), which must satisfy the other floors. Binder
installs the library without its dependencies, so binder/requirements.txt names every one of
pyproject's, with the same floor.
"""
import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["lib", "tests", "tools", "benchmarks", "book/_ext", "conftest.py"]
FIRST_PARTY = {"lengthgen"}
DECLARING = ["requirements.txt", "requirements-cluster.txt", "pyproject.toml"]
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;#]*)")


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them (Pillow, pillow and PIL-low alike)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


# ---- declarations -------------------------------------------------------------------------
def requirement(line: str) -> tuple[str, str, str] | None:
    """(normalized name, operator of its floor, floor) of one requirement (PEP 508, without
    URLs); None for a comment, an option (-e ., --extra-index-url) or a blank line. A
    requirement without a floor gives ("name", "", "")."""
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-"):
        return None
    match = REQUIREMENT.match(line)
    if not match:
        raise ValueError(f"not a requirement: {line!r}")
    name, specifiers = normalized(match.group(1)), match.group(2).replace(" ", "")
    floors = [(op, value) for op, value in re.findall(r"(>=|==|~=)([^,]+)", specifiers)]
    if len(floors) != 1:
        return name, "", ""
    return name, *floors[0]


def requirement_lists(root: Path = ROOT) -> dict[str, list[str]]:
    """{file (and pyproject section): [requirement strings]} for every declaring file."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
    lists = {}
    for name in DECLARING:
        path = root / name
        if name.endswith(".toml"):
            project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
            lists[f"{name} dependencies"] = project.get("dependencies", [])
            for extra, items in project.get("optional-dependencies", {}).items():
                lists[f"{name} [{extra}]"] = items
        elif path.exists():
            lists[name] = path.read_text(encoding="utf-8").splitlines()
    return lists


def declarations(lists: dict[str, list[str]]) -> dict[str, list[tuple[str, str, str]]]:
    """{normalized name: [(where, operator, floor)]} over all the lists."""
    found = {}
    for where, lines in lists.items():
        for line in lines:
            parsed = requirement(line)
            if parsed:
                name, op, floor = parsed
                found.setdefault(name, []).append((where, op, floor))
    return found


def floor_problems(declared: dict) -> list[str]:
    """A declaration without exactly one floor, or floors that disagree between places."""
    problems = []
    for name, places in sorted(declared.items()):
        for where, op, _ in places:
            if not op:
                problems.append(f"{name} in {where}: give it one floor (>= or ==)")
        floors = {floor for _, op, floor in places if op in (">=", "~=")}
        if len(floors) > 1:
            problems.append(f"{name}: floors differ: " + ", ".join(
                f"{op}{floor} in {where}" for where, op, floor in places))
        for where, op, pin in places:
            if op == "==" and any(version(pin) < version(floor) for floor in floors):
                problems.append(f"{name}: the pin =={pin} in {where} is below a floor "
                                f"({', '.join(sorted(floors))})")
    return problems


# ---- imports ------------------------------------------------------------------------------
def local_modules(path: Path) -> set[str]:
    """Modules importable as siblings of a script or test (test_languages_dfa, bench_engine)."""
    return {p.stem for p in path.parent.glob("*.py")} | {
        p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()}


def third_party_imports(root: Path = ROOT, scanned=SCANNED) -> dict[str, list[str]]:
    """{top-level module: ["file:line", ...]} of every import that is neither the standard
    library, nor lengthgen, nor a sibling module, in the scanned files and folders."""
    found = {}
    for entry in scanned:
        top = root / entry
        files = [top] if top.is_file() else sorted(top.rglob("*.py"))
        for path in files:
            if any(part in (".venv", "_build", "vendor") for part in path.parts):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            siblings = local_modules(path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    module = name.split(".")[0]
                    if module in sys.stdlib_module_names or module in FIRST_PARTY \
                            or module in siblings:
                        continue
                    found.setdefault(module, []).append(
                        f"{path.relative_to(root)}:{node.lineno}")
    return found


def undeclared(imports: dict[str, list[str]], declared: dict) -> list[str]:
    """One line per imported module that no declared distribution provides."""
    providers = importlib.metadata.packages_distributions()
    missing = []
    for module, places in sorted(imports.items()):
        distributions = {normalized(d) for d in providers.get(module, [module])}
        if not distributions & set(declared):
            missing.append(f"{module} (distribution {', '.join(sorted(distributions))}), "
                           f"imported at {', '.join(places[:3])}: declare it in "
                           f"requirements.txt or pyproject.toml")
    return missing


# ---- the checks ---------------------------------------------------------------------------
def test_every_imported_package_is_declared():
    imports = third_party_imports()
    assert {"torch", "numpy", "matplotlib", "PIL", "yaml"} <= set(imports)   # the walk sees them
    missing = undeclared(imports, declarations(requirement_lists()))
    assert not missing, "\n".join(missing)


def test_every_declaration_has_one_floor_that_agrees_everywhere():
    problems = floor_problems(declarations(requirement_lists()))
    assert not problems, "\n".join(problems)


def test_binder_installs_every_dependency_of_the_library():
    """Binder's postBuild installs the library with --no-deps, so its requirements name them."""
    lists = requirement_lists()
    library = declarations({"pyproject.toml": lists["pyproject.toml dependencies"]})
    binder = declarations({"binder": (ROOT / "binder/requirements.txt").read_text().splitlines()})
    missing = sorted(set(library) - set(binder))
    assert not missing, f"binder/requirements.txt lacks {missing}"
    problems = floor_problems({name: library[name] + binder[name] for name in library})
    assert not problems, "\n".join(problems)


def test_the_check_catches_an_undeclared_import_and_a_second_floor(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "helper.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "mod.py").write_text(
        "import os, yaml\nimport helper\n\ndef f():\n    from notinstalled_xyz.sub import g\n")
    imports = third_party_imports(tmp_path, ["pkg"])
    assert set(imports) == {"yaml", "notinstalled_xyz"}   # not os (stdlib), not helper (sibling)
    assert imports["notinstalled_xyz"] == ["pkg/mod.py:5"]
    declared = declarations({"requirements.txt": ["PyYAML>=5.1  # comment", "-e ."]})
    missing = undeclared(imports, declared)
    assert len(missing) == 1 and missing[0].startswith("notinstalled_xyz")
    assert undeclared({"PIL": ["x.py:1"]}, declarations({"r": ["pillow>=9"]})) == []
    two = declarations({"a": ["numpy>=2.0,<3"], "b": ["numpy>=1.26"], "c": ["tqdm"],
                        "d": ["torch==2.1.0"], "e": ["torch>=2.2"]})
    problems = floor_problems(two)
    assert any(p.startswith("numpy: floors differ") for p in problems)
    assert any(p.startswith("tqdm in c") for p in problems)
    assert any(p.startswith("torch: the pin ==2.1.0") for p in problems)
    assert floor_problems(declarations({"a": ["torch==2.13.0"], "b": ["torch>=2.2"]})) == []


@pytest.mark.parametrize("line, parsed", [
    ("numpy>=2.0,<3", ("numpy", ">=", "2.0")), ("torch==2.13.0", ("torch", "==", "2.13.0")),
    ("Pillow >= 9 ; python_version >= '3.10'", ("pillow", ">=", "9")),
    ("sphinx_proof>=0.2,<0.5", ("sphinx-proof", ">=", "0.2")), ("-e .", None), ("# x", None),
    ("tqdm", ("tqdm", "", "")),
])
def test_requirement_lines_parse(line, parsed):
    assert requirement(line) == parsed
