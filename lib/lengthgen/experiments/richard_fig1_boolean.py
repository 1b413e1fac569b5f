"""Fig. 1 of Richard (2024): simplifying nested Boolean expressions, in-sample vs out-of-sample.

A decoder is trained at one depth q on sequences <start> expression = simplified <end> (the
oracle is sympy's simplify_logic) and tested at depths 3 and 6. A fixed set of simplified forms
is held out of all training data: test expressions whose answer is held out are
out-of-sample, the others in-sample. An answer is right when sympy proves it equivalent.

The paper's model has about 1e8 parameters (d = 1024, 8 layers, 8 heads, 5 clauses, 1e5
steps). Ours is a small CPU decoder on fewer clauses, trained for a few hundred steps; the
constants true and false are never held out (about 40% of all answers, holding one out would
empty the training set of a whole class).

The `paper` config has the paper's size but not its training or decoding: the paper
trains on concatenated equalities in 1024-token windows (we: one padded equality, loss on
the answer only), its batch and rate are not given (16 and 3e-4 are ours), and it decodes
until <end>, scoring answers shorter than the left-hand side (we stop at 64 tokens).
"""
import numpy as np
import torch

from lengthgen.evaluate import greedy_predictions
from lengthgen.models.decoder import Decoder, DecoderConfig
from lengthgen.tasks.boolean import (END, EQUALS, START, TOKEN_ID, VOCAB, BooleanTask,
                                     equivalent, make_pool)
from lengthgen.train import TrainConfig, train

FIGURE_ID = "richard-fig1-boolean"
TITLE = "Boolean simplification: in-sample vs out-of-sample accuracy by training depth"

CONFIGS = {
    "test": {"clauses": 1, "train_depths": [1], "test_depths": [1, 2], "pool": 40,
             "test_pool": 40, "held_out": 4, "test_examples": 4, "answer_room": 12, "d": 16,
             "layers": 1, "heads": 1, "steps": 3, "batch_size": 4, "lr": 1e-3, "seed": 0},
    "book": {"clauses": 2, "train_depths": [1, 2, 3, 4], "test_depths": [3, 6], "pool": 1500,
             "test_pool": 400, "held_out": 32, "test_examples": 48, "answer_room": 24,
             "d": 64, "layers": 2, "heads": 4, "steps": 300, "batch_size": 32, "lr": 1e-3,
             "seed": 0},
    "paper": {"clauses": 5, "train_depths": [1, 2, 3, 4, 5, 6], "test_depths": [3, 6],
              "pool": 1000000, "test_pool": 20000, "held_out": 128, "test_examples": 10000,
              "answer_room": 64, "d": 1024, "layers": 8, "heads": 8, "steps": 100000,
              "batch_size": 16, "lr": 3e-4, "seed": 0},
}

CONSTANTS = (("true",), ("false",))


def runs(config):
    return [{"name": f"train-depth{q}", "train_depth": q, "seed": config["seed"]}
            for q in config["train_depths"]]


def test_pools(config) -> tuple[dict, set]:
    """Test examples per depth and the held-out answers (the same for every training depth)."""
    rng = np.random.default_rng([config["seed"], 1])
    pools = {q: make_pool(rng, config["test_pool"], config["clauses"], q)
             for q in config["test_depths"]}
    answers = sorted({tuple(a) for pool in pools.values() for _, a in pool} - set(CONSTANTS))
    picks = rng.choice(len(answers), min(config["held_out"], len(answers)), replace=False)
    return pools, {answers[i] for i in picks}


def generate_answers(model, examples, room: int, device) -> list[list[str]]:
    """Greedy answers after '=' (stopping at <end>), all examples in one batch."""
    prompts = [[START] + e + [EQUALS] for e, _ in examples]
    width = max(len(p) for p in prompts) + room
    inputs = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        inputs[i, : len(p)] = torch.tensor([TOKEN_ID[t] for t in p])
    lengths = torch.tensor([len(p) for p in prompts])
    model.eval()
    predicted = greedy_predictions(model, inputs.to(device), lengths.to(device)).cpu().numpy()
    answers = []
    for row, n in zip(predicted, lengths.tolist()):
        tokens = [VOCAB[t] for t in row[n - 1:]]
        answers.append(tokens[: tokens.index(END)] if END in tokens else tokens)
    return answers


def run_one(params, config, device):
    pools, held_out = test_pools(config)
    rng = np.random.default_rng([params["seed"], params["train_depth"]])
    train_pool = [ex for ex in make_pool(rng, config["pool"], config["clauses"],
                                         params["train_depth"]) if tuple(ex[1]) not in held_out]
    longest = max(len(e) + len(a) + 3 for pool in pools.values() for e, a in pool)
    cfg = DecoderConfig(vocab_size=len(VOCAB), n_classes=len(VOCAB), n_layers=config["layers"],
                        n_heads=config["heads"], d_model=config["d"],
                        n_positions=longest + config["answer_room"])
    torch.manual_seed(params["seed"])
    model = Decoder(cfg)
    train(model, BooleanTask(train_pool), TrainConfig(
        steps=config["steps"], batch_size=config["batch_size"], lr=config["lr"],
        warmup_steps=config["steps"] // 10, schedule="cosine", eval_every=config["steps"],
        eval_samples=16, stop_accuracy=None, seed=params["seed"]), device)
    metrics = {"train_depth": params["train_depth"], "train_examples": len(train_pool),
               "n_params": model.num_parameters(), "held_out_answers": len(held_out)}
    splits = {"in_sample": lambda a: a not in held_out, "out_of_sample": lambda a: a in held_out,
              "in_sample_nonconstant": lambda a: a not in held_out and a not in CONSTANTS}
    for q, pool in pools.items():
        for split, keep in splits.items():
            chosen = [ex for ex in pool if keep(tuple(ex[1]))][: config["test_examples"]]
            answers = generate_answers(model, chosen, config["answer_room"], device) if chosen else []
            right = [equivalent(a, e) for a, (e, _) in zip(answers, chosen)]
            metrics[f"{split}_depth{q}"] = float(np.mean(right)) if right else None
            metrics[f"{split}_depth{q}_n"] = len(right)
    return metrics


PAPER = {"in_sample_depth3": 0.68, "out_of_sample_depth3": 0.09}  # q = 3 model, Sec. 2.2


def figure(records):
    import matplotlib.pyplot as plt

    records = sorted(records, key=lambda r: r["params"]["train_depth"])
    depths = [r["params"]["train_depth"] for r in records]
    cfg = records[0]["config"]
    fig, axes = plt.subplots(1, len(cfg["test_depths"]), figsize=(5.5 * len(cfg["test_depths"]), 4),
                             squeeze=False)
    for ax, q in zip(axes[0], cfg["test_depths"]):
        for split, color, style in (("in_sample", "tab:red", "o-"),
                                    ("in_sample_nonconstant", "tab:red", "s:"),
                                    ("out_of_sample", "tab:blue", "o-")):
            values = [r["metrics"][f"{split}_depth{q}"] for r in records]
            ax.plot(depths, [np.nan if v is None else v for v in values], style, color=color,
                    label=split.replace("_", "-").replace("-nonconstant", ", answers other "
                                                          "than true/false"))
        if q == 3:
            ax.scatter([3], [PAPER["in_sample_depth3"]], marker="*", s=120, color="tab:red",
                       edgecolor="black", label="paper, in-sample (1e8 params)")
            ax.scatter([3], [PAPER["out_of_sample_depth3"]], marker="*", s=120, color="tab:blue",
                       edgecolor="black", label="paper, out-of-sample")
        ax.set(xlabel="training depth q", ylabel="accuracy (sympy-equivalent answer)",
               title=f"tested at depth {q} ({cfg['clauses']} clauses)", ylim=(-0.05, 1.05))
        ax.set_xticks(depths)
        ax.legend(fontsize=7)
    fig.suptitle(f"Decoder d={cfg['d']}, L={cfg['layers']}, h={cfg['heads']}, "
                 f"{records[0]['metrics']['n_params']} parameters, {cfg['steps']} steps", fontsize=9)
    fig.tight_layout()
    return fig
