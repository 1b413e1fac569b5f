"""Strict configs: every key of every registered figure config is read by the figure or by its
training settings, and a key that nothing reads (a typo) is refused when the registry loads the
figure, with the figure id, the key and the closest known key (lengthgen.runs.config_keys)."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import lengthgen
from lengthgen.errors import LengthgenError
from lengthgen.runs.config_keys import keys_read, known_keys
from lengthgen.runs.contract import top_level_names
from lengthgen.runs.registry import EXPERIMENTS, experiment

FIGURES = Path(lengthgen.__file__).parent / "experiments"
# the figures that run their own configs (not those drawing another figure's records)
OWN_CONFIGS = sorted(f for f in EXPERIMENTS if "CONFIGS" in top_level_names(ast.parse(
    FIGURES.joinpath(*EXPERIMENTS[f].split(".")).with_suffix(".py").read_text(encoding="utf-8"))))


def read(source: str) -> set[str]:
    return keys_read(ast.parse(source))


@pytest.mark.parametrize("figure_id", OWN_CONFIGS)
def test_every_key_of_every_registered_config_is_read(figure_id):
    module = experiment(figure_id)   # refuses an unread key: passing is the check
    known = known_keys(module.__name__)
    for scale, config in module.CONFIGS.items():
        assert set(config) <= known, (scale, sorted(set(config) - known))


def test_the_sweep_covers_the_figures_that_own_configs():
    assert len(OWN_CONFIGS) >= 30 and "huang-fig1-languages" in OWN_CONFIGS
    assert "huang-fig2-dotdepth" not in OWN_CONFIGS   # draws another figure's records


def test_a_misspelled_key_is_refused_with_the_figure_the_key_and_the_closest_name(monkeypatch):
    module = experiment("huang-fig1-languages")   # loaded (and checked) once already
    config = dict(module.CONFIGS["test"])
    config["bach_size"] = config.pop("batch_size")
    monkeypatch.setitem(module.CONFIGS, "test", config)
    with pytest.raises(LengthgenError) as refused:
        experiment("huang-fig1-languages")        # an edit since the first load is seen
    message = str(refused.value)
    assert "huang-fig1-languages" in message and "'test'" in message
    assert "'bach_size'" in message and "closest known key is 'batch_size'" in message


def test_a_training_setting_the_figure_fixes_itself_is_refused(monkeypatch):
    """The APE vs NoPE sweep takes each run's learning rate from its setting (`from_config(
    config, lr=setting.lr, ...)`), so an "lr" in its config would be ignored: refused. Izzo's
    figures fix weight decay to 0 (the paper's plain Adam) and read "max_steps" (an alias)."""
    sweep = experiment("huang-fig1-languages")
    assert "lr" not in known_keys(sweep.__name__)
    assert {"batch_size", "weight_decay", "grad_clip"} <= known_keys(sweep.__name__)
    monkeypatch.setitem(sweep.CONFIGS, "book", {**sweep.CONFIGS["book"], "lr": 1e-3})
    with pytest.raises(LengthgenError, match="'lr'"):
        experiment("huang-fig1-languages")
    izzo = known_keys(experiment("izzo-fig2-modp").__name__)
    assert "weight_decay" not in izzo and {"max_steps", "steps", "batch_size"} <= izzo


def test_keys_read_from_source():
    assert read('def f(config):\n    return config["a"], config.get("b", 1), "c" in config\n') \
        == {"a", "b", "c"}
    assert read('def f(params, cfg):\n    return params["a"], cfg.get("b")\n') == set()
    assert read('KEYS = ("n", "d")\n'
                'def f(config):\n    return {k: config[k] for k in KEYS if k in config}\n') \
        == {"n", "d"}
    assert read('def f(config):\n    for k in ("x", "y"):\n        print(config[k])\n') \
        == {"x", "y"}
    assert read('def f(config):\n    return [k for k in ("x", "y")]\n') == set()
    keys = read('def f(config):\n    return TrainConfig.from_config(config, lr=1, seed=2)\n')
    assert {"batch_size", "steps", "max_steps"} <= keys and not {"lr", "seed"} & keys
    keys = read('def f(config):\n    return TrainConfig.from_config(config, steps=10)\n')
    assert "steps" not in keys and "max_steps" not in keys   # the alias of a fixed setting
    assert read('CONFIG_KEYS = ("odd",)\n') == {"odd"}


def test_the_cli_refuses_a_planted_figure_with_a_misspelled_key_in_one_line(tmp_path):
    copy = tmp_path / "lengthgen"
    shutil.copytree(Path(lengthgen.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "experiments" / "izzo" / "izzo_planted.py").write_text(
        'FIGURE_ID = "izzo-planted"\nTITLE = "t"\n'
        'CONFIGS = {s: {"seed": 0, "stpes": 5} for s in ("test", "book", "paper")}\n\n\n'
        'def runs(config):\n    return [{"name": "a", "seed": config["seed"]}]\n\n\n'
        'def run_one(params, config, device):\n    return {"steps": config.get("steps", 1)}\n\n\n'
        'def figure(records):\n    pass\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "lengthgen", "figure", "run", "izzo-planted",
                           "--scale", "test"], capture_output=True, text=True, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: figure izzo-planted: its 'test' config has the key 'stpes', which no code of "
        "the figure reads (it would be ignored); the closest known key is 'steps'"]


def test_the_training_settings_read_from_source_are_trainconfigs_fields():
    """config_keys reads TrainConfig's fields from the settings module's source (no torch at
    `figure data`): they are the dataclass's own, aliases included."""
    from dataclasses import fields

    from lengthgen.engine.settings import CONFIG_ALIASES, TrainConfig
    from lengthgen.runs.config_keys import _train_settings
    names, aliases = _train_settings()
    assert names == {f.name for f in fields(TrainConfig)}
    assert aliases == CONFIG_ALIASES
