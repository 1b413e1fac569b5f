"""The site builds with warnings as errors (nbmake executes the notebooks, so execution is off)."""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_without_warnings(tmp_path):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    check_config = tmp_path / "_config.yml"
    check_config.write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "--config", str(check_config), "--path-output",
         str(tmp_path), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    intro = (tmp_path / "_build" / "html" / "book" / "intro.html").read_text()
    assert "math notranslate" in intro, "math did not render in the introduction"
    assert 'href="references.html#' in intro, "citations did not resolve to the bibliography"
