"""The built site, shared by the build check (test_site.py) and the browser test.

The site is built once per test session, from the committed results, with the notebooks
executed at LENGTHGEN_SCALE=test (figures come from committed records, so test scale only makes
the few live computations small): the browser test needs real figure outputs.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """(completed build process, path of the HTML site)."""
    out = tmp_path_factory.mktemp("site")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "force"
    # Paths of local extensions are read relative to the config file: this one lives elsewhere.
    extensions = config["sphinx"].get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {name: str(ROOT / path)
                                            for name, path in extensions.items()}
    check_config = out / "_config.yml"
    check_config.write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).parent / "jupyter-book"
    env = dict(os.environ, LENGTHGEN_SCALE="test", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "--config", str(check_config), "--path-output", str(out),
         "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    return result, out / "_build" / "html"
