"""A Job describes a run of every model kind, and each paper spells a model's size once.

Issue 52 (item 3): model sizes were built in 9 places with 4 spellings. Now a Job holds a model
kind and that kind's options (`lengthgen.engine.kinds`), beside its TrainConfig, and each
paper's protocol has one function from a figure's params to a Job. Checked here:

- a Job of each kind is plain data: through JSON and back it builds the same typed config and
  the same initial weights, and the model it builds is the one its config says;
- the only code under experiments/ and cli/ that spells a model's size (a keyword or dict key
  named as a size field, or a model config class built from positional sizes) is each
  family's one job function (the scan reads the source, as the step-cap tests do);
- train_jobs says in one line that it stacks decoders and limit-style models and trains Dyck
  models alone (a Dyck job trained alone is tested in test_queue.py, limit-style groups in
  test_engine_limit_style.py), and no other kind.
"""
import ast
import json
from pathlib import Path

import pytest
import torch

from lengthgen.engine import kinds
from lengthgen.engine.jobs import Job, train_jobs
from lengthgen.errors import LengthgenError
from lengthgen.train import TrainConfig

LIB = Path(__file__).resolve().parents[1] / "lib" / "lengthgen"


def _decoder_job():
    return Job("binary_majority", {"n_layers": 1, "n_heads": 2, "d_model": 8, "pe": "nope"},
               TrainConfig(steps=2, seed=3))


def _limit_style_job():
    from lengthgen.experiments.izzo.protocol import PAPER_PROTOCOL, job
    from lengthgen.tasks.izzo import ModPTask
    return job(ModPTask(2, 0, train_max=8), PAPER_PROTOCOL, 1, 8, pe="periodic", period=2)


def _dyck_job(variant="uniform-pm1-v"):
    from lengthgen.experiments.richard.protocol import ABLATION_CONFIGS, ablation_spec, job
    return job(ablation_spec(ABLATION_CONFIGS["test"], variant, 1))


def _token_mlp_job():
    from lengthgen.experiments.huang.sweep.protocol import baseline_job, configs
    return baseline_job("tomita2", configs(["tomita2"], ["tomita2"])["test"])


JOBS = {"decoder": _decoder_job, "limit-style": _limit_style_job, "dyck": _dyck_job,
        "token-mlp": _token_mlp_job}


def test_every_kind_has_a_job_here():
    assert set(JOBS) == set(kinds.KINDS)


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_a_job_round_trips_through_json_for_each_model_kind(kind):
    job = JOBS[kind]()
    assert job.kind == kind
    task = job.get_task()
    described = json.loads(json.dumps({"kind": job.kind, "model": job.model,
                                       "train": job.train.to_dict()}))
    again = Job(task, described["model"], TrainConfig(**described["train"]),
                kind=described["kind"])
    config = job.model_config()
    assert again.model_config() == config
    assert type(config)(**config.to_dict()) == config   # the typed config itself round-trips
    first, second = job.build_model(), again.build_model()
    assert type(first) is type(second)
    one, two = first.state_dict(), second.state_dict()
    assert one.keys() == two.keys() and all(torch.equal(one[k], two[k]) for k in one)
    if kind != "dyck":   # a Dyck variant is a Decoder or Eq. (1)'s head, configured from it
        assert first.cfg == config
    # another seed draws other weights: the job's seed reaches the build
    other = Job(task, job.model, TrainConfig(**{**described["train"], "seed": job.seed + 1}),
                kind=kind).build_model().state_dict()
    assert any(not torch.equal(one[k], other[k]) for k in one)


@pytest.mark.parametrize("variant", ["full", "nope", "uniform-pm1", "uniform-pm1-v", "eq1",
                                     "eq1-res"])
def test_a_dyck_job_makes_no_task_to_be_sized(variant):
    """A Dyck model is sized by its spec (a table of 2N rows): its config, its weights and the
    cost's count need no training set, which at paper scale is 4^12 distinct words."""
    job = _dyck_job(variant)
    made = []
    job.task = lambda: made.append(1)
    config = job.model_config()
    model = job.build_model()
    assert made == [] and config.variant == variant
    assert model.cfg.n_positions == 2 * 16 and model.cfg.d_model == config.d_model


def test_the_dyck_job_builds_what_the_figures_train():
    """protocol.build_model (the figures' and tests' model) is the job's; its training set is
    made once, when the task is first asked for."""
    from lengthgen.experiments.richard.protocol import build_model, training_words
    from lengthgen.experiments.richard.protocol import ABLATION_CONFIGS, ablation_spec
    spec = ablation_spec(ABLATION_CONFIGS["test"], "full", 1)
    job = _dyck_job("full")
    a, b = build_model(spec).state_dict(), job.build_model().state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    task = job.get_task()
    assert job.get_task() is task and task.words == training_words(spec)


def test_an_unknown_kind_is_one_line():
    job = Job("binary_majority", {}, TrainConfig(), kind="decodr")
    with pytest.raises(LengthgenError, match="unknown model kind 'decodr'.*'decoder'"):
        job.build_model()


def test_train_jobs_stacks_decoders_and_trains_only_dyck_models_alone():
    assert not _decoder_job().alone and _dyck_job().alone and not _limit_style_job().alone
    assert kinds.kind("limit-style").stacks and not kinds.kind("token-mlp").stacks
    with pytest.raises(LengthgenError, match="train_jobs stacks decoders and limit-style models "
                                             "and trains Dyck models alone; a token-mlp model "
                                             "trains with"):
        train_jobs([_decoder_job(), _token_mlp_job()])
    with pytest.raises(LengthgenError, match="a dyck model has no decoder config"):
        _dyck_job().decoder_config()


# ---- sizes spelled once per family -----------------------------------------------------
# a model's size, by the names of the model configs' fields
SIZE_FIELDS = {"n_layers", "n_heads", "d_model", "mlp_ratio", "mlp_width"}
# calls that only label a cost estimate (lengthgen.runs.cost), not a model
COST_LABELS = {"decoder_training", "Training", "shape_label"}
# (file under lengthgen/, function): each family's one job function, and nothing else
ONE_PLACE = {
    ("experiments/huang/sweep/protocol.py", "job_for"),       # APE vs NoPE: a Setting's size
    ("experiments/huang/sweep/protocol.py", "baseline_job"),  # its MLP baseline
    ("experiments/izzo/protocol.py", "job"),                  # Izzo et al.: the limit-style model
    ("experiments/richard/protocol.py", "decoder_sizes"),     # Richard: Dyck and Boolean models
    ("cli/train.py", "job"),                                  # `train`'s flags
}


def size_spellings(tree: ast.Module) -> set[str]:
    """The functions of a module that spell a model's size: a call with a size keyword (not a
    cost label), a dict display with a size key whose value is read from something (a dict of
    numbers is a registered config, data rather than a reading of it), or a model config class
    (a name ending in Config, TrainConfig aside) called with positional arguments."""
    found = set()

    def read(value) -> bool:
        return not isinstance(value, ast.Constant)

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef,
                                                      ast.AsyncFunctionDef)) else function
            if function is not None and isinstance(child, ast.Call):
                name = getattr(child.func, "id", getattr(child.func, "attr", ""))
                if name not in COST_LABELS and (
                        any(k.arg in SIZE_FIELDS for k in child.keywords)
                        or (name.endswith("Config") and name != "TrainConfig" and child.args)):
                    found.add(function)
            if function is not None and isinstance(child, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value in SIZE_FIELDS and read(v)
                    for k, v in zip(child.keys, child.values)):
                found.add(function)
            visit(child, inner)
    visit(tree, None)
    return found


def test_model_sizes_are_spelled_once_per_family():
    found = {(str(path.relative_to(LIB)), function)
             for folder in ("experiments", "cli") for path in sorted((LIB / folder).rglob("*.py"))
             for function in size_spellings(ast.parse(path.read_text(encoding="utf-8")))}
    assert found == ONE_PLACE, ("a model's size is spelled outside its family's job function: "
                                "build the model through that function's Job")


def test_the_scan_finds_each_way_of_spelling_a_size():
    source = '''
CONFIGS = {"test": {"d_model": 16}}          # a registered config: data
def configs(): return {"baseline": {"d_model": 64, "hidden": 256}}
def by_keyword(task): return decoder_for_task(task, n_layers=2)
def by_key(config): return Job("t", {"d_model": config["d"]}, None)
def by_position(task): return TokenMLPConfig(4, 2, 64, 256)
def a_cost(cfg): return decoder_training(build, layers=1, d_model=cfg.d_model)
def from_the_job(job): return DecoderConfig(**job.model)
def training(config): return TrainConfig(16, 0.1)
'''
    assert size_spellings(ast.parse(source)) == {"by_keyword", "by_key", "by_position"}
