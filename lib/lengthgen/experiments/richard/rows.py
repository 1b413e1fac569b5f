"""The Boolean-simplification figure's rows (richard-fig1-boolean), which the chapter's sweep
numbers read too: below both the figure module and `richard.analysis_sweeps`, so the analysis
imports them instead of looking the figure module up by id.
"""
SPLITS = ("in_sample", "in_sample_nonconstant", "out_of_sample")
PAPER = {"in_sample_depth3": 0.68, "out_of_sample_depth3": 0.09}  # q = 3 model, Sec. 2.2


def boolean_data(records) -> list[dict]:
    """One row per plotted value: the model's and the baselines' accuracy per split."""
    rows = []
    for r in sorted(records, key=lambda r: r["params"]["train_depth"]):
        m = r["metrics"]
        for q in r["config"]["test_depths"]:
            for split in SPLITS:
                for predictor, key in (("model", f"{split}_depth{q}"),
                                       ("baseline", f"baseline_{split}_depth{q}")):
                    rows.append({"train_depth": m["train_depth"], "test_depth": q,
                                 "split": split, "predictor": predictor, "accuracy": m[key],
                                 "n": m[f"{split}_depth{q}_n"]})
    for split in ("in_sample", "out_of_sample"):  # the paper's q = 3 model (stars)
        rows.append({"train_depth": 3, "test_depth": 3, "split": split,
                     "predictor": "paper (1e8 parameters)",
                     "accuracy": PAPER[f"{split}_depth3"], "n": ""})
    return rows


def best_per_shape(trained: list[dict]) -> list[dict]:
    """The metrics of the most accurate model of each (d, layers, heads): with a search over
    learning rates, the shape's best performance, which is what the paper plots."""
    best = {}
    for m in trained:
        key = (m["d"], m["layers"], m["heads"])
        if key not in best or m["accuracy"] > best[key]["accuracy"]:
            best[key] = m
    return list(best.values())
