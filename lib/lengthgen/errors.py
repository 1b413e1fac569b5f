"""The one exception type that the command line turns into a clean message (no traceback)."""
import difflib


class LengthgenError(ValueError):
    """A user-facing error: bad input, an unknown name, an impossible setting."""


def unknown_name(kind: str, name: str, valid) -> LengthgenError:
    """An error for an unknown id that names the closest valid ones."""
    valid = sorted(valid)
    close = difflib.get_close_matches(str(name), valid, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return LengthgenError(f"unknown {kind} {name!r}.{hint} Valid: {', '.join(valid)}")


def check_choice(owner: str, what: str, value, valid) -> None:
    """A setting that must be one of a few names: refused in one line that lists them."""
    if value not in valid:
        raise LengthgenError(f"{owner}: unknown {what} {value!r}; valid: {', '.join(valid)}")
