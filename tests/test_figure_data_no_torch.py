"""`figure data ID` reads committed records and tidies them: it needs no torch (about 1.5 s of
start-up), for any figure id. One child process runs `figure data` for every id with `import
torch` made to fail, so each id that reaches torch (at the top of its module or of a module it
imports) is named with the module that imported it, and the ids after it are still checked."""
import json
import os
import subprocess
import sys
from pathlib import Path

from lengthgen.runs.registry import EXPERIMENTS

ROOT = Path(__file__).resolve().parents[1]
# Figure ids whose module still imports torch at the top, and why (none now). Checked both
# ways: an id here that stops importing torch fails too, so the entry is removed with its cause.
STILL_IMPORT_TORCH: dict[str, str] = {}

CHILD = r"""
import contextlib, io, json, sys, traceback

attempts = []

class NoTorch:
    # every attempt to import torch fails, and is noted even if the importer catches it
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            lib = [f.filename for f in traceback.extract_stack() if "lengthgen" in f.filename]
            attempts.append(lib[-1] if lib else "?")
            raise ImportError("torch is blocked here")
        return None

sys.meta_path.insert(0, NoTorch())
from lengthgen.__main__ import main
outcome = {}
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    attempts.clear()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        outcome[" ".join(argv)] = {"code": code, "lines": len(out.getvalue().splitlines()),
                                   "err": err.getvalue()}
        if attempts:
            outcome[" ".join(argv)] = {"torch_from": attempts[0]}
    except ImportError as e:
        frames = [f.filename for f in traceback.extract_tb(e.__traceback__)]
        lib = [f for f in frames if "lengthgen" in f]
        outcome[" ".join(argv)] = {"torch_from": lib[-1] if lib else frames[-1]}
print(json.dumps(outcome))
"""


def test_figure_data_list_and_help_import_no_torch():
    commands = [["--help"], ["figure", "list"], ["figure", "data", "--help"]] + \
        [["figure", "data", figure_id] for figure_id in sorted(EXPERIMENTS)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "LENGTHGEN_SCALE": "test",
           "MPLBACKEND": "Agg"}
    env.pop("LENGTHGEN_RESULTS", None)   # the committed records
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(commands)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    needing_torch = {command.removeprefix("figure data "): o.pop("torch_from")
                     for command, o in list(outcome.items()) if "torch_from" in o}
    needing_torch = {k: v.split("/lib/")[-1] for k, v in needing_torch.items()}
    assert set(needing_torch) == set(STILL_IMPORT_TORCH), \
        f"these import torch (first import from): {needing_torch}"
    outcome = {command: o for command, o in outcome.items() if o}
    for command, o in outcome.items():   # the numbers, or one line (no records, stale records)
        assert (o["code"] == 0 and o["lines"] > 1) or \
            (o["code"] == 2 and o["err"].startswith("error: ") and o["err"].count("\n") == 1), \
            (command, o)
    assert len(outcome) == len(commands) - len(STILL_IMPORT_TORCH) and len(EXPERIMENTS) >= 25
