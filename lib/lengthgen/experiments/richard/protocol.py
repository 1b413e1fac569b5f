"""Shared by the trained-model Dyck figures of Richard (2024): models, training sets, scoring.

Not a figure itself. Figures that study the same trained model (Fig. 4, Table 1 and Fig. 5 use
one single-sequence and one many-sequence model; Fig. 7 reuses the largest-sample models of
Fig. 6) ask trained_model() for the same spec: the first caller trains it and saves its
weights in a cache folder keyed by the spec, the others load them.

Model variants (the ablation of App. 5.3.4): `lengthgen.models.dyck_variants` defines them
(VARIANTS, and STUDY_VARIANTS outside the Fig. 6 sweep). `job(spec)` is the one function from
a spec to the engine's typed Job (a "dyck" model of the spec's variant and size, its training
set and its TrainConfig): the weight cache, the cost and build_model all read it.

`planned_hooks` builds the planned figures' engine_job, shared_key, score and run_one from a
figure's run-to-spec and measurement: one home for what the nine planned Dyck figures share.

Also here: the configs of the models several figures study (SAMPLES_CONFIGS, the models of
Fig. 3 right; ABLATION_CONFIGS, the models of Fig. 6), so that no figure module imports
another, and the quantities two figures read off the same kind of model (value_projection for
Fig. 5 and its sign study, position_curves for Fig. 7 and its order study).

torch, the models and training are imported inside the functions that build, train or read a
model: the figures' runs() and data() (what `figure data` calls) need none of them.
"""
from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lengthgen.config import cache_dir as library_cache
from lengthgen.errors import LengthgenError
from lengthgen.models.dyck_variants import VARIANTS, DyckModelConfig, token_signs
from lengthgen.runs.cost import HOST_KEYS_KEPT
from lengthgen.runs.execute import preflight
from lengthgen.tasks.dyck import (DyckTask, deep_prefix, distinct_words, is_balanced,
                                  sample_words)
from lengthgen.tasks.dyck import drawing_seconds as dyck_drawing_seconds

if TYPE_CHECKING:   # annotations only
    import torch

    from lengthgen.engine.jobs import Job

CACHE_VERSION = 3   # 3: the key holds the torch thread count, device type and torch version


def cache_dir() -> Path:
    """Trained weights shared between figures (never committed): $XDG_CACHE_HOME, else
    ~/.cache."""
    return library_cache("richard-dyck")


@preflight
def check_cache_writable() -> None:
    """Before any run of a figure that trains Dyck models: the cache folder takes files."""
    from lengthgen.results import check_writable
    check_writable(cache_dir(), "the trained Dyck model cache (XDG_CACHE_HOME)")


# What the `paper` configs of the Dyck figures take from the paper (Sec. 4.2, App. 5.3) and
# what they choose (`figure cost --notes`; the contract's PAPER_SCALE, per figure module).
PAPER_SCALE_DYCK = (
    "From the paper (Sec. 4.2): GPT-2-like decoders (nanoGPT) with an MLP of 8d, batch 8, AdamW "
    "at 6e-6 to 6e-5, at most 10,000 iterations, dropout 0.1, words of D_32, 1024 test "
    "prefixes. Chosen here: one rate, 6e-5 (the top of the range), with 100 warm-up steps and a "
    "cosine decay, and one seed.")


def model_spec(config: dict, **settings) -> dict:
    """The full training spec of one model: the figure config's shared settings (model size,
    optimizer) plus what this run sets (variant, training set, seed). Two figures whose
    specs are equal share one trained model."""
    keys = ("n", "variant", "d", "layers", "heads", "steps", "batch_size", "lr", "dropout",
            "train_size", "max_depth", "seed")
    spec = {k: config[k] for k in keys if k in config}
    spec.update(settings)
    return spec


# ---- the models several figures study (same specs, so the weight cache trains each once) ---
# Fig. 3 (right) trains them; Fig. 4, Table 1 and Fig. 5 (and its sign study) study its
# single-word model (k = 0, q <= 4) and its largest q <= 8 model.
# The `paper` config uses one learning rate, 6e-5, the top of the paper's range (AdamW at
# 6e-6 to 6e-5, Sec. 4.2); no other rate is searched. book/dyck.ipynb says so beside the figure.
_SAMPLES_SHARED = {"n": 16, "variant": "full", "test_depth": 13, "seed": 0}
SAMPLES_CONFIGS = {
    "test": {**_SAMPLES_SHARED, "depths": [4, 8], "sizes": [1, 10], "d": 4, "layers": 1,
             "heads": 1, "steps": 3, "batch_size": 4, "lr": 3e-3, "test_prefixes": 8},
    "book": {**_SAMPLES_SHARED, "depths": [4, 8, 12], "sizes": [1, 10, 1000], "d": 32,
             "layers": 2, "heads": 2, "steps": 400, "batch_size": 32, "lr": 3e-3,
             "test_prefixes": 128, "seeds": [0, 1, 2]},
    "paper": {**_SAMPLES_SHARED, "depths": [4, 8, 12], "sizes": [1, 10, 1000, 100000, 10000000],
              "d": 1024, "layers": 4, "heads": 4, "steps": 10000, "batch_size": 8, "lr": 6e-5,
              "dropout": 0.1, "test_prefixes": 1024},
}


def single_spec(config: dict) -> dict:
    """The model trained on one word of depth <= 4 (Fig. 4 top row, Table 1, Fig. 5)."""
    return model_spec(config, train_size=1, max_depth=min(config["depths"]))


def many_spec(config: dict) -> dict:
    """The model trained on the most words of depth <= 8 (Fig. 4 bottom row, Table 1, Fig. 5)."""
    return model_spec(config, train_size=max(config["sizes"]), max_depth=8)


def completion_configs(top: int) -> dict:
    """CONFIGS of the figures that sample completions from the two models of Fig. 3 (right)
    (Fig. 4 and Table 1): same models, so the weight cache trains them once."""
    return {scale: {"models": {"single": single_spec(cfg), "many": many_spec(cfg)},
                    "trials": {"test": 10, "book": 100, "paper": 100}[scale], "top": top,
                    "seed": 0}
            for scale, cfg in SAMPLES_CONFIGS.items()}


# Fig. 6 trains the variants on 4^k words; Fig. 7 (and its order study) opens up the
# largest-set models of the three uniform-attention variants (learned_pe_models).
_ABLATION_SHARED = {"n": 16, "variants": list(VARIANTS), "seed": 0}
ABLATION_CONFIGS = {
    "test": {**_ABLATION_SHARED, "ks": [1], "d": 4, "layers": 1, "heads": 1, "steps": 3,
             "batch_size": 4, "lr": 3e-3, "test_prefixes": 8},
    "book": {**_ABLATION_SHARED, "ks": [1, 3, 5], "d": 32, "layers": 2, "heads": 2,
             "steps": 400, "batch_size": 32, "lr": 3e-3, "test_prefixes": 128,
             "seeds": [0, 1, 2]},
    "paper": {**_ABLATION_SHARED, "ks": list(range(1, 13)), "d": 1024, "layers": 4, "heads": 4,
              "steps": 10000, "batch_size": 8, "lr": 6e-5, "dropout": 0.1,
              "test_prefixes": 1024},
}
VARIANT_COLORS = {"full": "red", "nope": "black", "uniform-pm1": "tab:blue",
                  "uniform-pm1-v": "limegreen", "eq1": "purple"}
LEARNED_PE_VARIANTS = ("uniform-pm1", "uniform-pm1-v", "eq1")   # the variants Fig. 7 opens up


def ablation_spec(config: dict, variant: str, k: int, seed: int | None = None) -> dict:
    seed = {} if seed is None else {"seed": seed}
    return model_spec(config, variant=variant, train_size=4 ** k, max_depth=None, **seed)


def learned_pe_models(scale: str) -> dict:
    """The specs of Fig. 7's models at a scale: Fig. 6's largest-set model of each
    LEARNED_PE_VARIANTS variant."""
    config = ABLATION_CONFIGS[scale]
    return {v: ablation_spec(config, v, max(config["ks"])) for v in LEARNED_PE_VARIANTS}


def decoder_sizes(config: dict) -> dict:
    """A decoder's size in DecoderConfig's names, from a config's or spec's "layers", "heads"
    and "d" (the one place this chapter's spelling of a size is read: the Dyck models, Fig. 1's
    Boolean decoder and their costs)."""
    return {"n_layers": config["layers"], "n_heads": config["heads"], "d_model": config["d"]}


def job(spec: dict, name: str = "") -> Job:
    """The training of a spec as the engine's typed Job: its "dyck" model (the spec's variant
    at `decoder_sizes`, a table of 2N rows, its dropout), its training set (drawn at the run's
    first batch, once per process: up to 4^12 distinct words, which neither the cost nor a
    slice choosing among its pending jobs needs) and `train_config`. The engine trains it
    alone (lengthgen.engine.jobs, "Alone": the stacked forward holds none of these models: the
    uniform variants freeze their token embeddings, and uniform-pm1-v its projections, eq1 is
    not a Decoder, and every paper config has dropout 0.1), so a slice's trajectory is
    `trained_model`'s. name: the caller's name for it (a planned figure's records). Its
    `host_seconds`: drawing its training set (`drawing_seconds`), for the planners; its
    `host_work` draws it (`drawn_words`), for a slice that times the drawing apart."""
    from lengthgen.engine.jobs import Job
    model = DyckModelConfig(variant=spec["variant"], n_positions=2 * spec["n"],
                            dropout=spec.get("dropout", 0.0), **decoder_sizes(spec))
    words = words_key(spec)   # None: fresh words at every step, nothing drawn up front
    return Job(lambda: _WordsAtFirstBatch(spec), model.to_dict(), train_config(spec),
               name=name, kind="dyck", host_seconds=drawing_seconds(spec),
               host_key=words or (),
               host_work=None if words is None else functools.partial(drawn_words, spec))


def drawing_seconds(spec: dict) -> float:
    """About the host seconds drawing a spec's finite training set takes (0 for fresh words
    at every step): `lengthgen.tasks.dyck.drawing_seconds`, measured and scaled there."""
    if spec.get("train_size") is None:
        return 0.0
    return dyck_drawing_seconds(spec["n"], spec["train_size"], 0, spec.get("max_depth"))


def build_model(spec: dict) -> torch.nn.Module:
    """A freshly initialized (seeded) model of the spec (`job`'s) for D_2N with <bos>."""
    return job(spec).build_model()


def training_words(spec: dict) -> list[str] | None:
    """The finite training set (train_size distinct words of depth <= max_depth), or None for
    fresh words at every step (the paper's 2.4e7 words are as good as unlimited here)."""
    if spec.get("train_size") is None:
        return None
    rng = np.random.default_rng([spec["seed"], 1])
    return distinct_words(rng, spec["n"], spec["train_size"], 0, spec.get("max_depth"))


def cache_key(spec: dict, device) -> dict:
    """Everything that changes the trained weights: the spec, and where it trains (the torch
    thread count and the device type change float rounding, so the trajectory; the torch
    version changes the kernels). A record then never states settings its model did not have."""
    import torch
    return {**spec, "version": CACHE_VERSION, "torch_threads": torch.get_num_threads(),
            "device": torch.device(device).type, "torch_version": torch.__version__}


def _cached(path: Path) -> dict | None:
    """The cached weights at path, unless missing, unreadable (a killed or foreign file: it is
    trained again and replaced), or older than a --force sweep."""
    from lengthgen.runs.execute import cache_fresh_after
    from lengthgen.train import load_checkpoint
    try:
        if not path.is_file():
            return None
        fresh_after = cache_fresh_after()
        if fresh_after is not None and path.stat().st_mtime < fresh_after:
            return None
        return load_checkpoint(path)
    except (OSError, LengthgenError):
        return None


def trained_model(spec: dict, device) -> tuple[torch.nn.Module, list[str] | None]:
    """Train (or load from the cache) the model of a spec; returns it and its training words.
    The cache folder is checked for writing before training, not after it."""
    from lengthgen.results import check_writable
    from lengthgen.train import save_checkpoint, train
    key = hashlib.sha256(json.dumps(cache_key(spec, device),
                                    sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir() / f"{key}.pt"
    run = job(spec)
    state = _cached(path)
    if state is not None:   # no task to make: its words are all the caller needs of it
        model = run.build_model()
        model.load_state_dict(state)
        return model.to(device), training_words(spec)
    check_writable(path.parent, "the trained Dyck model cache (XDG_CACHE_HOME)")
    task, model = run.build()
    train(model, task, run.train, device)
    try:
        save_checkpoint(path, model.state_dict())
    except OSError as e:   # the model is trained: use it; only the next run trains it again
        print(f"warning: the trained Dyck model could not be cached in {path.parent} "
              f"({e.strerror or e.__class__.__name__})", file=sys.stderr)
    return model, task.words


def train_config(spec: dict):
    """How a Dyck model of a spec trains: a fixed budget with a short warmup and a cosine
    decay, evaluated once at the end (`trained_model` and the slices' jobs)."""
    from lengthgen.engine.settings import TrainConfig
    return TrainConfig.from_config(spec, warmup_steps=min(100, spec["steps"] // 10),
                                   schedule="cosine", eval_every=spec["steps"], eval_samples=32,
                                   stop_accuracy=None)


class _WordsAtFirstBatch(DyckTask):
    """The task `trained_model` trains a spec on, its finite training set drawn when first
    read (at the first batch) rather than when the job is built: a slice builds the job of
    every pending run to choose among them, and 4^12 distinct words take minutes on the host.
    Runs of one seed, n, size and depth share one draw per process (`_words`)."""

    def __init__(self, spec: dict):
        self._spec = spec if spec.get("train_size") is not None else None
        super().__init__(spec["n"], max_depth=spec.get("max_depth"))

    @property
    def words(self) -> list[str] | None:
        if self._spec is not None:
            self._words, self._spec = list(drawn_words(self._spec)), None
        return self._words

    @words.setter
    def words(self, value) -> None:   # DyckTask's own (None here: drawn when first read)
        self._words = value


def drawn_words(spec: dict) -> tuple:
    """`training_words` of a spec with a finite training set, drawn once per process: a
    slice's job and the scoring of its model share one draw."""
    return _words(_words_key(spec))


def words_key(spec: dict) -> tuple | None:
    """The key of a spec's set of training words (None: fresh words at every step, nothing
    drawn up front): runs of one key share one draw in a process (`Job.host_key`, and a
    figure's `host_key` for the runner, lengthgen.runs.contract)."""
    return _words_key(spec) if spec.get("train_size") is not None else None


def _words_key(spec: dict) -> tuple:
    """What names a spec's set of training words: specs of equal keys share one draw (`_words`;
    `Job.host_key`, by which the planners count the draw once)."""
    return (spec["seed"], spec["n"], spec["train_size"], spec.get("max_depth"))


@functools.lru_cache(maxsize=HOST_KEYS_KEPT)
def _words(key: tuple) -> tuple:
    seed, n, train_size, max_depth = key
    return tuple(training_words({"seed": seed, "n": n, "train_size": train_size,
                                 "max_depth": max_depth}))


def shared_key(spec: dict) -> str:
    """The training of a spec, as the figures that study its model name it: the key of their
    planned figures' `shared_key` (the GPU slices' store of trained weights, lengthgen.runs.
    trained, which adds how and where it trained) and of their `trainings` (`figure cost` and
    the GPU queue count a key once)."""
    return "richard/" + json.dumps(spec, sort_keys=True)


def planned_hooks(model_spec, measure, *, to_device: bool = True, words: bool = False):
    """The hooks of a planned Dyck figure (lengthgen.runs.planned) whose every run studies one
    model, built from the figure's `model_spec(params, config)` (the run's spec, or None for a
    run that trains nothing: a closed-form reference) and `measure(model, params, config,
    device)` (its metrics; the model None where the spec is): (engine_job, shared_key, score,
    run_one), which a figure module assigns at its top level. A run's model trains alone
    (`job`) under the key its figures share it by (`shared_key`: a GPU queue's slices train it
    once, lengthgen.runs.trained), and `score` measures a model a slice trained as `run_one`
    measures the one `trained_model` trains or loads. to_device: `score` moves the model to
    the device first (a slice hands its models back on the CPU; a figure that only reads the
    weights leaves it there). words: `measure` takes the model's training words after the
    model (`run_one`'s, from `trained_model`; `score`'s drawn once per process, as the slice's
    job drew them; None for a run that trains nothing)."""
    def engine_job(planned, config):
        spec = model_spec(planned.params(), config)
        return None if spec is None else job(spec, planned.name)

    def figures_key(planned, config):
        spec = model_spec(planned.params(), config)
        return None if spec is None else shared_key(spec)

    def score(model, planned, result, config, device, group_size):
        params = planned.params()
        spec = model_spec(params, config)
        if model is not None and to_device:
            model = model.to(device)
        drawn = () if not words else (None if spec is None else drawn_words(spec),)
        return measure(model, *drawn, params, config, device)

    def run_one(params, config, device):
        spec = model_spec(params, config)
        model, drawn = (None, None) if spec is None else trained_model(spec, device)
        return measure(model, *((drawn,) if words else ()), params, config, device)
    return engine_job, figures_key, score, run_one


def spec_trainings(specs: list[dict]) -> list:
    """For `figure cost` (`lengthgen.runs.cost`): one training per distinct spec, keyed by the
    spec as the weight cache is, so the figures that study one model count it once. A
    sequence is a D_2N word: 2N tokens. Each trains alone, as `job` trains it (`job_training`
    of its engine Job), after drawing its training words on the host: counted once per set of
    words (`Job.host_key`: specs of one seed, N, size and depth share one draw in a process,
    `drawn_words`), with the first spec that needs it, as a slice's planner counts it."""
    from dataclasses import replace

    from lengthgen.runs.cost import job_training
    out, seen, drawn = [], set(), set()
    for spec in specs:
        key = shared_key(spec)
        if key in seen:
            continue
        seen.add(key)
        run = job(spec)
        training = job_training(run, key=key)   # "eq1": one head of width d
        if run.host_key and run.host_key in drawn:
            training = replace(training, host_s=0.0)
        drawn.add(run.host_key)
        out.append(training)
    return out


def deep_test_prefixes(n: int, count: int, min_depth: int, rng) -> list[str]:
    """Prefixes that already reach min_depth (cut at a random later point)."""
    return [deep_prefix(w, min_depth, rng) for w in sample_words(rng, n, count, min_depth)]


def random_prefixes(words: list[str], count: int, rng) -> list[str]:
    """Prefixes of the given words (drawn with replacement), cut at a random point."""
    picks = rng.integers(0, len(words), count)
    return [words[i][: int(rng.integers(1, len(words[i])))] for i in picks]


def completion_rate(model, prefixes: list[str], n: int, rng, device) -> float:
    """Fraction of sampled completions that make a balanced word of length 2n."""
    from lengthgen.models.dyck import complete_with_model
    completions = complete_with_model(model, prefixes, n, rng, device=device)
    return float(np.mean([is_balanced(p + c, n) for p, c in zip(prefixes, completions)]))


def trainable_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _value_and_output_weights(model) -> tuple[torch.Tensor, torch.Tensor]:
    """(W_V, W_O) of the last block, heads merged (softmax attention: the value rows of
    in_proj; uniform attention has only values there)."""
    attn = model.blocks[-1].attn
    d = model.cfg.d_model
    w_v = attn.in_proj.weight[-d:] if model.cfg.attention == "softmax" else attn.in_proj.weight
    return w_v, attn.out_proj.weight


def value_and_output(model) -> tuple[np.ndarray, np.ndarray]:
    """(W_V, W_O) of the last block as float64 arrays."""
    import torch
    with torch.no_grad():
        return tuple(w.double().cpu().numpy() for w in _value_and_output_weights(model))


def value_projection(model) -> np.ndarray:
    """W_O W_V of the last block (multiplied in the model's own precision, as recorded)."""
    import torch
    w_v, w_o = _value_and_output_weights(model)
    with torch.no_grad():
        return (w_o @ w_v).double().cpu().numpy()


def position_curves(model, variant: str) -> np.ndarray:
    """The cumulative sums r -> sum_{i<=r} B_i of each coordinate of the learned positional
    table, [d, T]. In the decoder variants coordinate j is multiplied by the sign u_j of the
    frozen '(' embedding, so that up means "towards '('" in every curve (eq1's '(' is +1 in
    every coordinate already)."""
    table = model.pos if hasattr(model, "pos") else model.position_table()
    table = table.detach().double().cpu().numpy()
    if variant != "eq1":
        table = table * token_signs(table.shape[1]).double().numpy()
    return np.cumsum(table, axis=0).T


def setting_label(changes: dict) -> str:
    """What a study setting changes in a spec, for axis labels: 'base' for nothing, 'fresh
    words' for train_size None, 'N words' for another train_size, else 'key value'."""
    if not changes:
        return "base"
    return ", ".join("fresh words" if k == "train_size" and v is None else
                     f"{v} words" if k == "train_size" else f"{k} {v}" for k, v in changes.items())


def registered_settings(records: list[dict], configs: dict) -> list[str]:
    """The settings of a study's records in their registered order (a record's config comes
    back from JSON with its keys sorted)."""
    order = configs.get(records[0]["scale"], records[0]["config"])["settings"]
    return [s for s in order if any(r["params"]["setting"] == s for r in records)]


# the sign study (richard-fig5-sign-study): the model of a run, and what it reads off it
def sign_study_spec(config: dict, setting: str, seed: int) -> dict:
    """The model of one run: the base spec, the setting's changes, the seed."""
    return {**config["base_spec"], **config["settings"][setting], "seed": seed}


def dominant_eigenvalue(matrix: np.ndarray) -> dict:
    """The eigenvalue of largest modulus: real and imaginary part, modulus, and how far it
    stands out (modulus over the second largest modulus)."""
    eig = np.linalg.eigvals(np.asarray(matrix, dtype=float))
    order = np.argsort(-np.abs(eig))
    top = eig[order[0]]
    second = abs(eig[order[1]]) if len(eig) > 1 else 0.0
    return {"real": float(top.real), "imag": float(top.imag), "modulus": float(abs(top)),
            "gap": float(abs(top) / second) if second > 0 else float("inf")}


def effective_map(w_o_w_v: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """W_O W_V diag(g) P: what the attention layer does to the (centred, rescaled) residual
    stream through the LayerNorm in front of it (P = I - 11^T/d removes the mean)."""
    d = len(gain)
    centre = np.eye(d) - np.full((d, d), 1.0 / d)
    return w_o_w_v @ np.diag(gain) @ centre


def value_readings(model) -> dict:
    """The three readings of the top block's value map (richard-fig5-sign-study: W_O W_V,
    W_V W_O^T and W_O W_V diag(g) P), and the gain g of the LayerNorm in front of it."""
    import torch
    m = value_projection(model)
    w_v, w_o = value_and_output(model)
    with torch.no_grad():
        gain = model.blocks[-1].ln_attn.weight.double().cpu().numpy()
    return {"wo_wv": m, "wv_wot": w_v @ w_o.T, "effective": effective_map(m, gain)}, gain


# the order study (richard-fig7-order-study): the model of a run, and what it reads off it
def order_study_spec(config: dict, setting: str, variant: str, seed: int) -> dict:
    """The model of one run: the variant's base spec, the setting's changes, the seed."""
    return {**config["base_specs"][variant], **config["settings"][setting], "seed": seed}


def end_statistics(curves: np.ndarray) -> dict:
    """How far curves [d, T] end from 0, absolute and relative to their typical size."""
    curves = np.asarray(curves, dtype=float)
    end_abs = float(np.abs(curves[:, -1]).mean())
    amplitude = float(np.sqrt((curves ** 2).mean(axis=1)).mean())
    return {"end_abs_mean": end_abs, "amplitude": amplitude,
            "end_relative": end_abs / amplitude if amplitude > 0 else float("nan")}


def readout(value_weight: np.ndarray, curves: np.ndarray) -> dict:
    """eq1: the curve its output reads, w^T c(r) / (1^T V 1) with w = V^T 1 (V acts as
    x -> V x; the tied unembedding of '(' is the all-ones vector), and the token weight."""
    value_weight = np.asarray(value_weight, dtype=float)
    w = value_weight.sum(axis=0)                     # V^T 1
    token_weight = float(w.sum())                    # 1^T V 1
    curve = w @ np.asarray(curves, dtype=float) / token_weight
    return {"readout_end": float(curve[-1]), "token_weight": token_weight}
