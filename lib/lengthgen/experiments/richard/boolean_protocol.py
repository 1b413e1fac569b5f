"""The Boolean-simplification protocol of Richard (2024, Sec. 2.2), shared by the figures that
train on it (richard-fig1-boolean, one training per depth; richard-fig1-ladder, one depth along
a ladder of model sizes and steps): the test pools and held-out answers, the paper's decoding
rule, sympy's grading, the trivial predictors, and one training scored on every split.

`train_and_score(params, config, device)` reads a flat config: the task (clauses, window,
test_depths, test_pool, held_out, test_examples, seed), the model (d, layers, heads), the
training pool's size (pool) and the training settings (steps, batch_size, lr); params give
the run's train_depth and seed. `job` is its one training as the engine's typed Job, and
`score_trained` scores a trained model (a slice's too: richard-fig1-ladder is a planned figure).
torch is imported inside the functions that need it, so a figure's runs() and data() (what
`figure data` calls) import none.

Host work. The pools are sympy's work on the host (`simplify_logic` per expression: about 1.2 ms
a 5-clause expression at depth 3, `DRAW_SECONDS_PER_CLAUSE`), 2 minutes for 1e5 expressions: a
Job states it (`host_seconds`, `host_key`, `host_work`) so that the slices' planner counts it,
and its task draws its training pool at the first batch, not when the Job is built (a slice
builds the Job of every pending run to choose among them). The test pools and each training pool
are drawn once per process (the last HOST_KEYS_KEPT of each are kept), so a slice's training
and the scoring of its model share one draw, as `run_one`'s training and scoring do.
"""
import functools
from collections import Counter

import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.rows import SPLITS
from lengthgen.experiments.richard.protocol import decoder_sizes
from lengthgen.runs.cost import HOST_KEYS_KEPT
from lengthgen.tasks.boolean import (END, EQUALS, START, TOKEN_ID, VOCAB, BooleanWindowTask,
                                     equivalent, make_pool, paper_answer)

# host seconds of `make_pool` per expression and clause at depth 3: 1.10 to 1.12 ms a 5-clause
# expression (0.22 a clause) in three draws of 2,000, 0.55 to 0.58 ms a 2-clause one, 0.32 ms a
# 1-clause one (this library's CPU machine, 2026-11-28, one thread, time.process_time:
# benchmarks/bench_boolean_pool.py); an order of magnitude for other depths and cards' hosts
DRAW_SECONDS_PER_CLAUSE = 2.3e-4

CONSTANTS = (("true",), ("false",))


def decoder(config, n_positions: int) -> dict:
    """The decoder of a flat config as a Job's options (kind "decoder"): `decoder_sizes` over
    the Boolean vocabulary, with a table of n_positions rows. Sized by its window and
    vocabulary, not by a task, so a cost makes no training pool."""
    return {"vocab_size": len(VOCAB), "n_classes": len(VOCAB), "n_positions": n_positions,
            **decoder_sizes(config)}


def job(params, config, name: str = ""):
    """One training as the engine's typed Job: the `decoder` of the config (a position table of
    `table_rows`) on windows of config["window"] tokens cut from the run's training pool
    (`training_pool`, drawn at the first batch), a fixed budget with a cosine decay, evaluated
    once at the end (no early stop), seeded by the run; its host work is drawing the pools
    (`drawing_seconds`, once per process and pool: `host_key`)."""
    from lengthgen.engine.jobs import Job
    from lengthgen.train import TrainConfig
    key = _pool_key(params, config)
    return Job(_PoolAtFirstBatch(key, config["window"], params["train_depth"]),
               decoder(config, table_rows(config)),
               TrainConfig.from_config(config, warmup_steps=config["steps"] // 10,
                                       schedule="cosine", eval_every=config["steps"],
                                       eval_samples=16, stop_accuracy=None,
                                       seed=params["seed"]),
               name=name, host_seconds=drawing_seconds(config), host_key=key,
               host_work=functools.partial(_training_pool, key))


def drawing_seconds(config) -> float:
    """About the host seconds drawing a run's pools takes (its training pool and the test pools,
    at DRAW_SECONDS_PER_CLAUSE): an order of magnitude, for the planners."""
    count = config["pool"] + config["test_pool"] * len(config["test_depths"])
    return count * config["clauses"] * DRAW_SECONDS_PER_CLAUSE


def longest_expression(clauses: int, depth: int) -> int:
    """The most tokens an expression of `clauses` clauses of depth at most `depth` can have
    (`tasks.boolean.random_expression`): a clause of depth q is a literal (at most 2 tokens,
    a negated variable) or ( clause op clause ) of depth q - 1, 5 x 2^q - 3 tokens at most,
    and the clauses are joined by one token each."""
    return clauses * (5 * 2 ** depth - 3) + clauses - 1


def table_rows(config) -> int:
    """The decoder's position table: the window, or room for the longest test prompt plus as
    many generated tokens as its expression has where that is longer. Without drawing the
    test pools where no expression of the test depths could outgrow the window (every config
    of the ladder): the bound above decides; otherwise the drawn pools' longest."""
    bound = 2 * longest_expression(config["clauses"], max(config["test_depths"])) + 2
    if bound <= config["window"]:
        return config["window"]
    pools, _ = test_pools(config)
    return max(config["window"], max(2 * len(e) + 2 for pool in pools.values() for e, _ in pool))


def training(config, count: int):
    """For `figure cost`: `count` trainings of the decoder a flat config names, on windows of
    config["window"] tokens (its position table taken as the window: the longest test prompt
    adds a few rows, nothing to the cost)."""
    from lengthgen.models.decoder import Decoder, DecoderConfig
    from lengthgen.runs.cost import decoder_training, shape_label
    cfg = DecoderConfig(**decoder(config, config["window"]))
    return decoder_training(lambda: Decoder(cfg),
                            shape=shape_label(cfg.n_layers, cfg.n_heads, cfg.d_model),
                            layers=cfg.n_layers, d_model=cfg.d_model,
                            batch=config["batch_size"], tokens=config["window"],
                            steps=config["steps"], count=count)


def test_pools(config) -> tuple[dict, set]:
    """Test examples per depth and the held-out answers (the same for every training depth),
    drawn once per process (read them, do not change them)."""
    return _test_pools(_test_key(config))


def _test_key(config) -> tuple:
    return (config["seed"], tuple(config["test_depths"]), config["test_pool"],
            config["clauses"], config["held_out"])


@functools.lru_cache(maxsize=HOST_KEYS_KEPT)
def _test_pools(key: tuple) -> tuple[dict, set]:
    seed, depths, size, clauses, held_out = key
    rng = np.random.default_rng([seed, 1])
    pools = {q: make_pool(rng, size, clauses, q) for q in depths}
    answers = sorted({tuple(a) for pool in pools.values() for _, a in pool} - set(CONSTANTS))
    picks = rng.choice(len(answers), min(held_out, len(answers)), replace=False)
    return pools, {answers[i] for i in picks}


def training_pool(params, config) -> list:
    """The run's training expressions: config["pool"] drawn at its depth and seed, less those
    whose answer is held out; drawn once per process (read it, do not change it)."""
    return _training_pool(_pool_key(params, config))


def _pool_key(params, config) -> tuple:
    """What names a run's training pool (`Job.host_key`: runs of one key share one draw)."""
    return (_test_key(config), params["seed"], params["train_depth"], config["pool"])


@functools.lru_cache(maxsize=HOST_KEYS_KEPT)
def _training_pool(key: tuple) -> list:
    test_key, seed, depth, size = key
    _, held_out = _test_pools(test_key)
    rng = np.random.default_rng([seed, depth])
    return [ex for ex in make_pool(rng, size, test_key[3], depth)
            if tuple(ex[1]) not in held_out]


class _PoolAtFirstBatch(BooleanWindowTask):
    """The windows task of a run, its training pool drawn when first read (at the first batch)
    rather than when the Job is built: what sizes and groups a Job (the window, the vocabulary,
    the depth it trains at) is known without the pool."""
    _DRAWN = ("pool", "depths", "sequences", "longest")

    def __init__(self, key: tuple, window: int, depth: int):
        self._key, self.window = key, window
        self.id, self.vocab, self.n_classes = "boolean-windows", VOCAB, len(VOCAB)
        self.train_range = (depth, depth)   # every expression of the pool has its run's depth
        self.test_bins = (self.train_range,)

    def __getattr__(self, name):   # only for what is not set yet: the pool and its views
        if name not in _PoolAtFirstBatch._DRAWN or "_key" not in self.__dict__:
            raise AttributeError(name)
        BooleanWindowTask.__init__(self, _training_pool(self._key), self.window)
        return self.__dict__[name]


def in_split(split: str, answer: tuple, held_out: set) -> bool:
    if split == "out_of_sample":
        return answer in held_out
    return answer not in held_out and (split == "in_sample" or answer not in CONSTANTS)


def generate_answers(model, expressions: list[list[str]], device) -> list[list[str] | None]:
    """Greedy decoding by the paper's rule (`paper_answer`): each expression gets as many
    generated tokens as it has, and its answer is what precedes <end> among them, or None
    (wrong) when no <end> comes. All expressions in one batch; decoding stops early once
    every row has produced its <end> or used its room."""
    import torch
    with torch.no_grad():
        prompts = [[START] + e + [EQUALS] for e in expressions]
        rooms = torch.tensor([len(e) for e in expressions], device=device)
        lengths = torch.tensor([len(p) for p in prompts], device=device)
        width = int((lengths + rooms).max())
        tokens = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        for i, p in enumerate(prompts):
            tokens[i, : len(p)] = torch.tensor([TOKEN_ID[t] for t in p])
        generated = torch.zeros_like(tokens)  # generated[i, j]: the j-th token after '='
        finished = torch.zeros(len(prompts), dtype=torch.bool, device=device)
        model.eval()
        for j in range(int(rooms.max())):
            # row i reads its prompt and its first j generated tokens: positions < lengths + j
            logits = model(tokens[:, : int(lengths.max()) + j])
            next_tokens = logits[torch.arange(len(prompts)), lengths - 1 + j].argmax(-1)
            generated[:, j] = next_tokens
            rows = torch.arange(len(prompts), device=device)
            write = lengths + j < width
            tokens[rows[write], (lengths + j)[write]] = next_tokens[write]
            finished |= (next_tokens == TOKEN_ID[END]) | (j + 1 >= rooms)
            if bool(finished.all()):
                break
        return [paper_answer([VOCAB[t] for t in row.tolist()], len(e))
                for row, e in zip(generated.cpu(), expressions)]


def score(answers, expressions) -> list[bool]:
    """Right iff the paper's rule kept an answer and sympy proves it equivalent."""
    return [a is not None and equivalent(a, e) for a, e in zip(answers, expressions)]


def baseline_answers(train_pool) -> dict:
    """The trivial predictors: per split, always give the most frequent training answer that the
    split can contain (a constant for in-sample; the most frequent other answer for the
    non-constant split; out-of-sample answers are never in training, so its baseline is the most
    frequent answer too, and scores 0 unless that answer happens to be equivalent)."""
    counts = Counter(tuple(a) for _, a in train_pool)
    top = counts.most_common(1)[0][0]
    others = [a for a, _ in counts.most_common() if a not in CONSTANTS]
    return {"in_sample": list(top), "out_of_sample": list(top),
            "in_sample_nonconstant": list(others[0]) if others else list(top)}


def train_and_score(params, config, device):
    """Train one decoder at params' depth and seed as the paper does (`job`, by `train()`), and
    score it (`score_trained`)."""
    from lengthgen.train import train
    run = job(params, config)
    task, model = run.build()
    return score_trained(model, train(model, task, run.train, device), params, config, device)


def score_trained(model, result, params, config, device) -> dict:
    """The metrics of one record: a model trained on the run's pool (by `train_and_score`, or
    by a slice) and the trivial predictors, scored on every test depth and split."""
    pools, held_out = test_pools(config)
    train_pool = training_pool(params, config)
    model = model.to(device)   # a slice hands back its models on the CPU
    baselines = baseline_answers(train_pool)
    metrics = {"train_depth": params["train_depth"], "train_examples": len(train_pool),
               "n_params": model.num_parameters(), "held_out_answers": len(held_out),
               "train_loss": result.history[-1]["train_loss"],
               "train_wall_time_s": round(result.wall_time_s, 1),
               "baseline_answers": {k: " ".join(v) for k, v in baselines.items()}}
    for q, pool in pools.items():
        for split in SPLITS:
            chosen = [e for e, a in pool if in_split(split, tuple(a), held_out)]
            chosen = chosen[: config["test_examples"]]
            right = score(generate_answers(model, chosen, device), chosen) if chosen else []
            base = score([paper_answer(baselines[split] + [END], len(e)) for e in chosen], chosen)
            metrics[f"{split}_depth{q}"] = float(np.mean(right)) if right else None
            metrics[f"{split}_depth{q}_n"] = len(right)
            metrics[f"baseline_{split}_depth{q}"] = float(np.mean(base)) if base else None
    return metrics


# the compute ladder (richard-fig1-ladder): a config with "rungs", each a model, steps and pool
RUNG_KEYS = ("d", "layers", "heads", "steps", "pool")   # what a rung sets


def rung_config(config: dict, rung: int) -> dict:
    """The flat config of one rung that `train_and_score` reads: the task and training
    settings of the config with the rung's model, steps and pool."""
    spec = config["rungs"][rung]
    flat = {k: v for k, v in config.items() if k not in ("rungs", "seeds", "train_depth")}
    return {**flat, **{k: spec[k] for k in RUNG_KEYS}}


def ladder_trainings(config) -> list:
    """One decoder per rung, trained once per seed (for `figure cost`)."""
    seeds = len(spread.config_seeds(config))
    return [training(rung_config(config, i), count=seeds) for i in range(len(config["rungs"]))]


def rung_flops(config) -> list[float]:
    """The training operations of one model of each rung (`runs.cost`'s estimate: FLOPs per
    step times steps), the ladder's x-axis: each rung about twice the one before."""
    return [t.flops_per_step() * t.steps for t in ladder_trainings(config)]
