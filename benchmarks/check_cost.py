"""The GPU cost estimate (`lengthgen.runs.cost`) against the GPU's own clock.

Every record of the paper-budget sweep trained on the card the rates were measured on
(results/huang-fig1-budget/gpu/, gpu_model as in data/h200_rates.json: the records of the same
H200 run as the benchmark; older records name no card) says its setting, steps, the size of
the stacked group it trained in and the group's wall time.
For each group this prints the estimate's seconds (max steps x group size / the estimated
model-steps per second at that group size) beside the measured ones. The measured time also
holds what the estimate leaves out: evaluations every 3,000 steps, the start of a group, and
the other worker processes sharing the card.

    PYTHONPATH=lib python benchmarks/check_cost.py
"""
import json
import statistics
from pathlib import Path

from lengthgen.experiments.huang.sweep import protocol
from lengthgen.experiments.huang.sweep.budget import budget_configs
from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID as RECORDS_ID
from lengthgen.runs import cost

ROOT = Path(__file__).resolve().parents[1] / "results" / RECORDS_ID / "gpu"


def main():
    config, card = budget_configs()["gpu"], cost.rate_table()["card"]
    groups: dict = {}
    for path in sorted(ROOT.glob("*.json")):
        record = json.loads(path.read_text())
        m, p = record["metrics"], record["params"]
        if record.get("gpu_model") != card or not m.get("group_size"):
            continue
        key = (tuple(m["setting"][:3]), m["group_size"], m["train_wall_time_s"])
        job = protocol.job_for(p["task"], p["encoding"], m["setting"], p["seed"], config)
        groups.setdefault(key, []).append((cost.job_training(job), m["steps"]))
    print(f"{card}, the paper-budget sweep's groups\n")
    print("| setting | group | steps | measured s | estimated s | measured / estimated |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for (setting, size, wall), members in sorted(groups.items()):
        flops = max(t.flops_per_step() for t, _ in members)
        steps = max(s for _, s in members)
        estimate = steps * size / cost.h200_steps_per_s(flops, group=size)
        ratios.append(wall / estimate)
        layers, heads, width = setting
        print(f"| {layers}L{heads}H d{width} | {size} | {steps:,} | {wall:.1f} | "
              f"{estimate:.1f} | {wall / estimate:.2f} |")
    if ratios:
        print(f"\n{len(ratios)} groups: measured / estimated, median "
              f"{statistics.median(ratios):.2f}, from {min(ratios):.2f} to {max(ratios):.2f}")


if __name__ == "__main__":
    main()
