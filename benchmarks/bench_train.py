"""Training speed and peak memory of our decoder against Hugging Face GPT-2 of the same shape.

    .venv/bin/python benchmarks/bench_train.py [--seconds 5] [--device cpu]

For each shape (layers, heads, width) it times full training steps (forward, backward, gradient
clipping, AdamW) at batch 64 and length 100 on random tokens: ours through the trainer's own
training_step, GPT-2 (transformers.GPT2LMHeadModel, SDPA attention, MLP 4d, no dropout) with
torch's AdamW as the Hugging Face Trainer uses it. A third column times our whole trainer loop
(sampling binary-majority batches of Len 90..100 online, APE offsets) to show the data cost.
Steps are timed by torch.utils.benchmark's Timer (benchmarks/timing.py: blocked_autorange with
min_run_time --seconds after 3 warm-up steps, the rate one over the median block; on a GPU the
Timer synchronises the card); the trainer loop is one timed call of `train`. Each measurement
runs in a fresh process, so peak memory (max RSS growth over the process's state just before
training) is its own; ours and GPT-2 alternate for a few rounds and the best rate of each is
shown, since load from other jobs only ever slows a run down. The load average is printed:
absolute numbers mean little on a busy machine. At the end, torch.utils.benchmark's Compare
table of the best rounds (time a step, shapes by model).
"""
import argparse
import json
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # timing.py, beside this file

SHAPES = ((1, 1, 16), (2, 4, 64), (4, 4, 256))
BATCH, LENGTH, VOCAB = 64, 100, 16


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def measure(kind: str, layers: int, heads: int, width: int, seconds: float, device: str,
            threads: int, loop_steps: int = 0) -> dict:
    import torch

    from timing import as_json, once, steady
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    where = ("{}L{}H d{}".format(layers, heads, width), {"ours": "ours", "hf": "GPT-2",
                                                        "loop": "trainer loop"}[kind])
    inputs = torch.randint(1, VOCAB, (BATCH, LENGTH), device=device)
    targets = torch.randint(1, VOCAB, (BATCH, LENGTH), device=device)
    mask = torch.ones(BATCH, LENGTH, dtype=torch.bool, device=device)
    if kind == "hf":
        from transformers import GPT2Config, GPT2LMHeadModel
        from transformers.utils import logging
        logging.set_verbosity_error()
        config = GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=width, n_layer=layers,
                            n_head=heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                            tie_word_embeddings=False, attn_implementation="sdpa")
        model = GPT2LMHeadModel(config).to(device).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(input_ids=inputs).logits
            loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1),
                                                     targets.flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    else:
        from lengthgen.models import Decoder, DecoderConfig
        from lengthgen.train import TrainConfig, make_optimizer, training_step
        cfg = DecoderConfig(vocab_size=VOCAB, n_classes=VOCAB, n_layers=layers, n_heads=heads,
                            d_model=width, n_positions=128)
        model = Decoder(cfg).to(device).train()
        optimizer = make_optimizer(model, TrainConfig(), device)
        offsets = torch.zeros(BATCH, dtype=torch.long, device=device)
        if kind == "ours":
            def step():
                training_step(model, optimizer, inputs, targets, mask, offsets, grad_clip=1.0)
        else:  # the whole trainer loop, data sampling included
            from lengthgen.tasks import get_task
            from lengthgen.train import train
            task = get_task("binary_majority")
            model = Decoder(DecoderConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                                          n_layers=layers, n_heads=heads, d_model=width,
                                          n_positions=task.max_tokens(100))).to(device)
            steps = loop_steps or 20
            tcfg = TrainConfig(steps=steps, min_len=90, max_len=100, eval_every=10 ** 6,
                               eval_samples=1, stop_accuracy=None)
            before = peak_rss_mb()
            elapsed = once(lambda: train(model, task, tcfg, device), "bench_train", *where)
            return {"steps_per_s": steps / elapsed, "peak_mb": peak_rss_mb() - before,
                    "params": model.num_parameters()}
    before = peak_rss_mb()
    measurement = steady(step, seconds, warmup=3, label="bench_train: a training step",
                         sub_label=where[0], description=where[1])
    peak = (torch.cuda.max_memory_allocated() / 2 ** 20 if device == "cuda"
            else peak_rss_mb() - before)
    return {"steps_per_s": 1.0 / measurement.median, "peak_mb": peak,
            "params": sum(p.numel() for p in model.parameters()),
            "measurement": as_json(measurement)}


def rate(measurement: dict) -> float:
    return measurement["steps_per_s"]


def run_isolated(kind, shape, args, steps: int = 0) -> dict:
    command = [sys.executable, __file__, "--one", kind, *map(str, shape), "--seconds",
               str(args.seconds), "--device", args.device, "--threads", str(args.threads),
               "--loop-steps", str(steps)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="timing window per cell")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating repeats per cell; the best of them is shown")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (1: on a shared machine more threads stall)")
    parser.add_argument("--loop-steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=4, metavar=("KIND", "L", "H", "D"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kind, *shape = args.one
        print(json.dumps(measure(kind, *map(int, shape), args.seconds, args.device, args.threads,
                                 args.loop_steps)))
        return
    import torch
    print(f"torch {torch.__version__}, {args.threads} thread(s), {os.cpu_count()} cores,"
          f" device {args.device}, batch {BATCH}, length {LENGTH}; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    header = (f"{'L,H,d':>9s} {'params':>8s} | {'ours step/s':>11s} {'GPT-2 step/s':>12s} "
              f"{'ratio':>6s} | {'ours MB':>8s} {'GPT-2 MB':>8s} | {'trainer step/s':>14s}")
    print(header)
    print("-" * len(header))
    from timing import compare, from_json
    measurements = []   # the best round of ours and of GPT-2 per shape, for the Compare table
    for shape in SHAPES:
        ours, hf = {"steps_per_s": 0.0}, {"steps_per_s": 0.0}
        for _ in range(args.rounds):  # alternate, keep each one's best: load spikes only slow
            ours = max(ours, run_isolated("ours", shape, args), key=rate)
            hf = max(hf, run_isolated("hf", shape, args), key=rate)
        measurements += [from_json(ours["measurement"]), from_json(hf["measurement"])]
        # the whole loop once, for about as long as one timing window of ours
        loop = run_isolated("loop", shape, args, steps=max(5, round(rate(ours) * args.seconds)))
        print(f"{','.join(map(str, shape)):>9s} {ours['params']:>8d} | "
              f"{ours['steps_per_s']:>11.2f} {hf['steps_per_s']:>12.2f} "
              f"{ours['steps_per_s'] / hf['steps_per_s']:>6.2f} | {ours['peak_mb']:>8.0f} "
              f"{hf['peak_mb']:>8.0f} | {loop['steps_per_s']:>14.2f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(compare(measurements))


if __name__ == "__main__":
    main()
