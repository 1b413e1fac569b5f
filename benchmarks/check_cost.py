"""The GPU cost estimate (`lengthgen.runs.cost`) against the GPU's own clock.

Every record of the paper-budget sweep trained on the card the rates were measured on
(results/huang-fig1-budget/gpu/, gpu_model as in data/h200_rates.json: the records of the same
H200 run as the benchmark; older records name no card) says its setting, steps, the size of
the stacked group it trained in and the group's wall time.
For each group this prints the estimate's seconds (max steps x group size / the estimated
model-steps per second at that group size) beside the measured ones, and the seconds the
slices' planner gives the group before it has measured the shape (`runs.planner.Planner`: the
same rate, with its margin and a group's overhead, as it plans a job whose state can be handed
on: one process's rate, though 3 workers shared the card), so that the planner's
errors on the card's own clock are in view: a group measured longer than planned is one the
planner would start with too little time left. The measured time also
holds what the estimate leaves out: evaluations every 3,000 steps, the start of a group, and
the other worker processes sharing the card.

    PYTHONPATH=lib python benchmarks/check_cost.py
"""
import statistics
from pathlib import Path

from lengthgen.experiments.huang.sweep.budget import budget_configs, card_groups, load_job_records
from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID as RECORDS_ID
from lengthgen.runs import cost
from lengthgen.runs.rates import H200
from lengthgen.runs.planner import Planner

ROOT = Path(__file__).resolve().parents[1] / "results" / RECORDS_ID / "gpu"


def main():
    config, card = budget_configs()["gpu"], cost.rate_table()["card"]
    print(f"{card}, the paper-budget sweep's groups\n")
    print("| setting | group | steps | measured s | estimated s | measured / estimated "
          "| planner s | measured / planner |")
    print("|---|---|---|---|---|---|---|---|")
    ratios, planned = [], []
    for g in card_groups(load_job_records(ROOT), config, card):
        flops, steps, size, wall = g["flops"], g["steps"], g["size"], g["seconds"]
        estimate = steps * size / cost.h200_steps_per_s(flops, group=size)
        plan = Planner(H200, g["graphs"]).seconds(g["shape"], size, steps, flops=flops)
        ratios.append(wall / estimate)
        planned.append(wall / plan)
        layers, heads, width = g["shape"]
        print(f"| {layers}L{heads}H d{width} | {size} | {steps:,} | {wall:.1f} | "
              f"{estimate:.1f} | {wall / estimate:.2f} | {plan:.1f} | {wall / plan:.2f} |")
    if ratios:
        print(f"\n{len(ratios)} groups: measured / estimated, median "
              f"{statistics.median(ratios):.2f}, from {min(ratios):.2f} to {max(ratios):.2f}; "
              f"measured / planner, median {statistics.median(planned):.2f}, from "
              f"{min(planned):.2f} to {max(planned):.2f}, longer than planned in "
              f"{sum(r > 1 for r in planned)}")


if __name__ == "__main__":
    main()
