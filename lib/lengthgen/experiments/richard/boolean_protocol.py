"""The Boolean-simplification protocol of Richard (2024, Sec. 2.2), shared by the figures that
train on it (richard-fig1-boolean, one training per depth; richard-fig1-ladder, one depth along
a ladder of model sizes and steps): the test pools and held-out answers, the paper's decoding
rule, sympy's grading, the trivial predictors, and one training scored on every split.

`train_and_score(params, config, device)` reads a flat config: the task (clauses, window,
test_depths, test_pool, held_out, test_examples, seed), the model (d, layers, heads), the
training pool's size (pool) and the training settings (steps, batch_size, lr); params give
the run's train_depth and seed. `job` is its one training as the engine's typed Job. torch is imported inside the functions that need it, so a
figure's runs() and data() (what `figure data` calls) import none.
"""
from collections import Counter

import numpy as np

from lengthgen.experiments import spread
from lengthgen.experiments.richard.rows import SPLITS
from lengthgen.experiments.richard.protocol import decoder_sizes
from lengthgen.tasks.boolean import (END, EQUALS, START, TOKEN_ID, VOCAB, BooleanWindowTask,
                                     equivalent, make_pool, paper_answer)

CONSTANTS = (("true",), ("false",))


def decoder(config, n_positions: int) -> dict:
    """The decoder of a flat config as a Job's options (kind "decoder"): `decoder_sizes` over
    the Boolean vocabulary, with a table of n_positions rows. Sized by its window and
    vocabulary, not by a task, so a cost makes no training pool."""
    return {"vocab_size": len(VOCAB), "n_classes": len(VOCAB), "n_positions": n_positions,
            **decoder_sizes(config)}


def job(params, config, train_pool, n_positions: int):
    """One training as the engine's typed Job: the `decoder` of the config on windows of
    config["window"] tokens cut from train_pool, a fixed budget with a cosine decay,
    evaluated once at the end (no early stop), seeded by the run."""
    from lengthgen.engine.jobs import Job
    from lengthgen.train import TrainConfig
    return Job(BooleanWindowTask(train_pool, config["window"]), decoder(config, n_positions),
               TrainConfig.from_config(config, warmup_steps=config["steps"] // 10,
                                       schedule="cosine", eval_every=config["steps"],
                                       eval_samples=16, stop_accuracy=None,
                                       seed=params["seed"]))


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
    """Test examples per depth and the held-out answers (the same for every training depth)."""
    rng = np.random.default_rng([config["seed"], 1])
    pools = {q: make_pool(rng, config["test_pool"], config["clauses"], q)
             for q in config["test_depths"]}
    answers = sorted({tuple(a) for pool in pools.values() for _, a in pool} - set(CONSTANTS))
    picks = rng.choice(len(answers), min(config["held_out"], len(answers)), replace=False)
    return pools, {answers[i] for i in picks}


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
    """Train one decoder at params' depth and seed as the paper does, and score it and the
    trivial predictors on every test depth and split (the metrics of one record)."""
    from lengthgen.train import train
    pools, held_out = test_pools(config)
    rng = np.random.default_rng([params["seed"], params["train_depth"]])
    train_pool = [ex for ex in make_pool(rng, config["pool"], config["clauses"],
                                         params["train_depth"]) if tuple(ex[1]) not in held_out]
    # room for the longest test prompt plus as many generated tokens as its expression has
    longest = max(2 * len(e) + 2 for pool in pools.values() for e, _ in pool)
    run = job(params, config, train_pool, max(longest, config["window"]))
    task, model = run.build()
    result = train(model, task, run.train, device)
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
