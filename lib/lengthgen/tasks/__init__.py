"""Tasks: the algorithmic tasks, the regular languages, Dyck words and Boolean expressions.

get_task(id) is the one way in; an unknown id names the closest valid ones.
"""
from lengthgen.errors import unknown_name
from lengthgen.tasks.base import PAD, Batch, Task

# id -> zero-argument factory returning a Task (each task module adds its own entries)
_REGISTRY: dict = {}


def register(task_id: str, factory) -> None:
    _REGISTRY[task_id] = factory


def task_ids() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get_task(task_id: str) -> Task:
    _load_all()
    if task_id not in _REGISTRY:
        raise unknown_name("task or language", task_id, _REGISTRY)
    return _REGISTRY[task_id]()


def _load_all() -> None:
    """Import every module of this package once, so that the task modules register themselves
    (derived from the package's files: a new task module needs no list to be kept)."""
    import importlib
    import pkgutil
    if _LOADED:
        return
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    _LOADED.append(True)


_LOADED: list = []  # non-empty once every task module is imported


__all__ = ["PAD", "Batch", "Task", "get_task", "task_ids", "register"]
