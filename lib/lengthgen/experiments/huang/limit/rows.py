"""The positional-fit figure's summary rows (huang-fig5-6-positional), which the chapter's
analysis reads too: below both the figure module and `huang.limit.analysis`, so the analysis
imports them instead of looking the figure module up by id; and the chapter's table of them.
"""
from lengthgen.theory.positional_targets import TARGETS


def ratio(error: float, baseline: float) -> float | None:
    """error / baseline, or None where the baseline is exact (a constant target band)."""
    return error / baseline if baseline > 1e-12 else None


def summary(records: list[dict], n: int | None = None) -> list[dict]:
    """Per target and width (mean over seeds), at test length n (default: the longest):
    errors, the ratios to both baselines, the unseen band, and the ratio after fewer steps."""
    config = records[0]["config"]
    n = str(n or max(config["test_lengths"]))
    rows = []
    for target in config["targets"]:
        for width in config["widths"]:
            group = [r for r in records if r["params"]["target"] == target
                     and r["params"]["width"] == width]
            if not group:
                continue
            mean = lambda f: sum(f(r) for r in group) / len(group)  # noqa: E731
            whole = lambda key: mean(lambda r: r["metrics"]["bands"]["all"][n][key])  # noqa: E731
            unseen = lambda key: (  # noqa: E731  (no unseen distances at the training length)
                mean(lambda r: r["metrics"]["bands"]["unseen"][n][key])
                if n in group[0]["metrics"]["bands"]["unseen"] else None)
            row = {"target": target, "kind": TARGETS[target][0], "width": width,
                   "seeds": len(group), "n": int(n), "mse": whole("model"),
                   "zero_mse": whole("zero"), "constant_mse": whole("constant"),
                   "ratio_to_zero": ratio(whole("model"), whole("zero")),
                   "ratio_to_constant": ratio(whole("model"), whole("constant")),
                   "unseen_mse": unseen("model"), "unseen_zero_mse": unseen("zero")}
            for step in config["checkpoints"][:-1]:
                early = mean(lambda r: r["metrics"]["test_mse_by_steps"][str(step)][n])
                row[f"ratio_to_constant_at_{step}_steps"] = ratio(early, whole("constant"))
            rows.append(row)
    return rows


def positional_table(records: list[dict]) -> list[dict]:
    """The book's table: per target and width, the error relative to the best constant at the
    middle and the longest test length, after the first checkpoint and at the end, and the
    error at the distances no training window contains (at the longest length)."""
    config = records[0]["config"]
    lengths = sorted(config["test_lengths"])  # twice the training length, if it was tested
    middle = (2 * config["train_length"] if 2 * config["train_length"] in lengths
              else lengths[len(lengths) // 2])
    longest = max(config["test_lengths"])
    first = config["checkpoints"][0]
    at_middle = {(r["target"], r["width"]): r for r in summary(records, middle)}
    rows = []
    for r in summary(records, longest):
        key = (r["target"], r["width"])
        rows.append({"target": r["target"], "kind": r["kind"], "d": r["width"],
                     f"MSE n={longest}": r["mse"],
                     f"best constant n={longest}": r["constant_mse"],
                     f"ratio n={middle}": at_middle[key]["ratio_to_constant"],
                     f"ratio n={longest}, {first} steps": r[f"ratio_to_constant_at_{first}_steps"],
                     f"ratio n={longest}": r["ratio_to_constant"],
                     f"unseen MSE n={longest}": r["unseen_mse"],
                     "unseen, always 0": r["unseen_zero_mse"]})
    return rows
