"""Strict figure configs: every top-level key of a figure's config is one its code reads.

`TrainConfig.from_config` skips keys it does not know (the rest belong to the figure), and a
figure reads its own keys with `config[key]` or `config.get(key, default)`. So a misspelled key
would run the default without a word. Here the keys a figure reads are derived from the source
of its module and of every module of `lengthgen.experiments` that it imports (its protocol,
analysis, ...), without running anything; a key of its CONFIGS outside them is refused with the
figure id, the key and the closest known name.

A key counts as read where the source
  - subscripts a name `config` with it (`config["steps"]`), asks `config.get("steps", ...)`
    (or pop, setdefault), or tests `"steps" in config`;
  - reads `config[k]` for k over a literal tuple of keys (`for k in ("n", "d")`, or a name
    assigned such a tuple in the same module: richard's `model_spec`);
  - passes `config` itself to `TrainConfig.from_config`: then every training setting (and
    alias) is read, but those the call fixes by keyword, which win over the dict.
A module may add keys that its source reads in a way this cannot see with CONFIG_KEYS (a tuple
of names). Only top-level keys are checked; nested blocks (a baseline's own settings, a model
spec) are the figure's to read.
"""
import ast
import difflib
from functools import lru_cache
from pathlib import Path

from lengthgen.errors import LengthgenError

FIGURES_PACKAGE = "lengthgen.experiments"
READERS = ("get", "pop", "setdefault")


@lru_cache(maxsize=1)
def _modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the figures package (listed once per process,
    as the registry lists the figure modules once)."""
    from importlib.util import find_spec
    folder = Path(find_spec(FIGURES_PACKAGE).origin).parent
    found = {}
    for path in folder.rglob("*.py"):
        parts = [*FIGURES_PACKAGE.split("."), *path.relative_to(folder).with_suffix("").parts]
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(name: str, path: Path, tree: ast.Module, known: dict) -> set[str]:
    """The figures package's modules that a module imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = package.split(".")
                base = parts[:len(parts) - node.level + 1]
                source = ".".join(base + ([source] if source else []))
            found |= {source} | {f"{source}.{alias.name}" for alias in node.names}
    return {module for module in found if module in known}


def _is_config(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "config"


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _strings(node, tuples: dict) -> list[str]:
    """The keys of a literal tuple or list of strings, or of a name assigned one."""
    if isinstance(node, ast.Name):
        return tuples.get(node.id, [])
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [_string(e) for e in node.elts]
        return values if all(v is not None for v in values) else []
    return []


@lru_cache(maxsize=1)
def _train_settings() -> tuple[frozenset, dict]:
    """(TrainConfig's field names, CONFIG_ALIASES), read from engine/settings.py's source: the
    registry checks keys where torch is not imported (`figure data`, `figure list`), and the
    settings module imports it through the models."""
    path = Path(__file__).resolve().parents[1] / "engine" / "settings.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names, aliases = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TrainConfig":
            names = {n.target.id for n in node.body
                     if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name)
                                                  and t.id == "CONFIG_ALIASES"
                                                  for t in node.targets):
            aliases = ast.literal_eval(node.value)
    return frozenset(names), aliases


def _train_keys(call: ast.Call) -> set[str]:
    """The training settings a `from_config(config, **fixed)` call reads from the dict."""
    fields, aliases = _train_settings()
    fixed = {kw.arg for kw in call.keywords if kw.arg}
    names = set(fields) - fixed
    return names | {alias for alias, name in aliases.items() if name in names}


def keys_read(tree: ast.Module) -> set[str]:
    """The config keys one module's source reads (see the module's docstring)."""
    tuples = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and _strings(node.value, {}):
            tuples[node.targets[0].id] = _strings(node.value, {})
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_config(node.value) and _string(node.slice):
            keys.add(_string(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in READERS and _is_config(node.func.value) and node.args \
                    and _string(node.args[0]):
                keys.add(_string(node.args[0]))
            elif node.func.attr == "from_config" and node.args and _is_config(node.args[0]):
                keys |= _train_keys(node)
        elif isinstance(node, ast.Compare) and _string(node.left) and _is_config(
                node.comparators[0]) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            keys.add(_string(node.left))
        elif isinstance(node, ast.For):
            keys |= _looped(node, [node], tuples)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            keys |= _looped(node, node.generators, tuples)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CONFIG_KEYS"
                                                  for t in node.targets):
            keys |= set(_strings(node.value, {}))
    return keys


def _looped(scope, loops, tuples: dict) -> set[str]:
    """Keys of `config[k]` inside `scope`, for each loop k over a literal tuple of keys."""
    keys = set()
    for loop in loops:
        if not isinstance(loop.target, ast.Name):
            continue
        if any(isinstance(n, ast.Subscript) and _is_config(n.value)
               and isinstance(n.slice, ast.Name) and n.slice.id == loop.target.id
               for n in ast.walk(scope)):
            keys |= set(_strings(loop.iter, tuples))
    return keys


@lru_cache(maxsize=None)
def _reading(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the config keys one module's source reads, the figures package's modules it imports),
    parsed once per module: a shared module (a paper's protocol) serves every figure's check."""
    modules = _modules()
    tree = ast.parse(modules[name].read_text(encoding="utf-8"))
    return frozenset(keys_read(tree)), frozenset(_imported(name, modules[name], tree, modules))


@lru_cache(maxsize=None)
def known_keys(module_name: str) -> frozenset[str]:
    """The config keys a figure module and the figures package's modules it imports read."""
    modules = _modules()
    seen, todo, keys = set(), [module_name], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        read, imported = _reading(name)
        keys |= read
        todo += sorted(imported - seen)
    return frozenset(keys)


def check_config_keys(figure_id: str, module) -> None:
    """Refuse a key of the figure's CONFIGS (any scale) that no code of the figure reads."""
    configs = getattr(module, "CONFIGS", None)
    if not isinstance(configs, dict):
        return   # a figure drawing SOURCE's records has no configs of its own
    known = known_keys(module.__name__)
    for scale, config in configs.items():
        for key in config:
            if key not in known:
                closest = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.0)
                hint = f"; the closest known key is {closest[0]!r}" if closest else ""
                raise LengthgenError(
                    f"figure {figure_id}: its {scale!r} config has the key {key!r}, which no "
                    f"code of the figure reads (it would be ignored){hint}")
