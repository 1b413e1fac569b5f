"""requirements.lock pins the full CPU package set, inside requirements.txt's ranges.

`make book` and `make test` install from the lock (tools/lock.sh writes it with uv); a reader's
plain `pip install -r requirements.txt` takes any versions inside the ranges. So every package
that requirements.txt, the library's pyproject dependencies and Binder's requirements name must
be pinned in the lock at a version its range allows, every line of the lock must be one exact
pin (Binder reads the lock as pip constraints, which take nothing else), and the Makefile must
rebuild the environment when the lock changes.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)$")


def pins(text: str) -> dict[str, str]:
    """{normalized name: version} of a lock; a line that is not one exact pin is an error."""
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"lock line {number} is not one exact pin: {line!r}")
        found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def requirement_lines(text: str) -> list[str]:
    """The requirements of a requirements file: no comments, options (-e ., -c, --index-url)."""
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("-")]


def uncovered(requirements: list[str], locked: dict[str, str]) -> list[str]:
    """One line per requirement the lock does not pin, or pins outside its range (an
    environment marker that does not hold on the lock's platform leaves a line out)."""
    problems = []
    for line in requirements:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(
                {"python_version": "3.11", "python_full_version": "3.11.5",
                 "sys_platform": "linux", "platform_system": "Linux"}):
            continue
        name = canonicalize_name(req.name)
        if name not in locked:
            problems.append(f"{req.name}: not in requirements.lock (run tools/lock.sh)")
        elif not req.specifier.contains(Version(locked[name]), prereleases=True):
            problems.append(f"{req.name}: the lock's {locked[name]} is outside {req.specifier}")
    return problems


def declared_requirements() -> dict[str, list[str]]:
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        "requirements.txt": requirement_lines((ROOT / "requirements.txt").read_text()),
        "pyproject.toml": project["dependencies"],
        "binder/requirements.txt": requirement_lines(
            (ROOT / "binder/requirements.txt").read_text()),
    }


def test_the_lock_pins_every_requirement_inside_its_range():
    locked = pins(LOCK.read_text(encoding="utf-8"))
    assert {"torch", "numpy", "jupyter-book", "pytest"} <= set(locked)
    assert "lengthgen" not in locked   # the library is installed from the checkout (-e .)
    problems = [f"{where}: {problem}" for where, lines in declared_requirements().items()
                for problem in uncovered(lines, locked)]
    assert not problems, "\n".join(problems)


def test_the_lock_takes_torch_cpu_build():
    """The CPU wheel, not PyPI's CUDA build (which pulls GBs of nvidia packages)."""
    locked = pins(LOCK.read_text(encoding="utf-8"))
    assert Version(locked["torch"]).local == "cpu"
    assert not any(name.startswith("nvidia-") for name in locked)


def test_the_check_sees_a_missing_pin_and_one_out_of_range():
    locked = pins("numpy==2.4.6\n    # via x\ntorch==2.13.0+cpu\nscipy==1.12.0\n")
    assert uncovered(["numpy>=2.0,<3", "torch==2.13.0", "pyyaml>=5.1", "scipy>=1.13",
                      "pywin32>=300; sys_platform == 'win32'"], locked) == [
        "pyyaml: not in requirements.lock (run tools/lock.sh)",
        "scipy: the lock's 1.12.0 is outside >=1.13"]
    for line in ("numpy>=2.0", "-e .", "torch @ https://example.org/torch.whl"):
        with pytest.raises(ValueError, match="not one exact pin"):
            pins(line)


def test_binder_installs_within_the_lock():
    """Binder installs a reader's kernel only, each package at the lock's version (the lock as
    constraints; pip reads -c relative to the file), torch from PyTorch's CPU index."""
    text = (ROOT / "binder/requirements.txt").read_text()
    assert re.search(r"^-c \.\./requirements\.lock$", text, re.M)
    assert re.search(r"^--extra-index-url https://download\.pytorch\.org/whl/cpu$", text, re.M)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_installs_from_the_lock_and_again_when_it_changes(tmp_path):
    for name in ("Makefile", "requirements.txt", "requirements.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    venv = tmp_path / ".venv"
    venv.mkdir()
    (venv / ".installed").touch()
    make = lambda *args: subprocess.run(["make", *args], cwd=tmp_path, capture_output=True,
                                        text=True, timeout=60)
    assert make("-q", "venv").returncode == 0          # installed after the lock: up to date
    lock = tmp_path / "requirements.lock"
    lock.write_text(lock.read_text() + "\n")           # a newer lock
    assert make("-q", "venv").returncode == 1
    dry = make("-n", "venv").stdout                    # what it would run, run nothing
    assert "-r requirements.lock" in dry
    assert re.search(r"--no-index 'torch==[^']+\+cpu'", dry)
