"""The built site, shared by the build check (test_site.py) and the browser test.

The site is built once per test session, from the committed results, at LENGTHGEN_SCALE=test
(figures come from committed records, so test scale only makes the few live computations
small): the browser test needs real figure outputs. A chapter that nbmake has already executed
in this session is rendered from that run (the root conftest.py keeps it; the site tests run
after the notebooks); any other chapter is executed by the build. Either way each chapter runs
once per session.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def site_source(folder: Path, executed: dict) -> tuple[Path, list[str]]:
    """A copy of the book's sources in `folder` with the executed chapters in place of the
    stored ones; (its config file, the chapters the build is not to execute)."""
    shutil.copytree(ROOT / "book", folder / "book",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT / "_toc.yml", folder / "_toc.yml")
    (folder / "lib").symlink_to(ROOT / "lib")   # book/code.md includes the library's source
    reused = []
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        ran = executed.get(notebook.resolve())
        if ran is not None:
            nbformat.write(ran, folder / "book" / notebook.name)
            reused.append(f"book/{notebook.name}")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "force"
    config["execute"]["exclude_patterns"] = reused
    # Paths of local extensions are read relative to the config file: keep them at the root.
    extensions = config["sphinx"].get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {name: str(ROOT / path)
                                            for name, path in extensions.items()}
    (folder / "_config.yml").write_text(yaml.safe_dump(config))
    return folder / "_config.yml", reused


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, executed_notebooks):
    """(completed build process, path of the HTML site); the build's `reused` attribute lists
    the chapters rendered from nbmake's runs.

    LENGTHGEN_BUILT_SITE=path/to/_build/html tests a site built before instead (for iterating
    on the site's CSS and JavaScript without a build per run); the result then has `prebuilt`
    set, and the checks of the build itself skip."""
    prebuilt = os.environ.get("LENGTHGEN_BUILT_SITE")
    if prebuilt:
        result = subprocess.CompletedProcess([], 0, stdout="", stderr="")
        result.reused, result.prebuilt = [], True
        return result, Path(prebuilt)
    out = tmp_path_factory.mktemp("site")
    config, reused = site_source(out / "source", executed_notebooks)
    jb = Path(sys.executable).parent / "jupyter-book"
    env = dict(os.environ, LENGTHGEN_SCALE="test", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [str(jb), "build", str(config.parent), "--config", str(config), "--path-output",
         str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    result.reused, result.prebuilt = reused, False
    return result, out / "_build" / "html"
