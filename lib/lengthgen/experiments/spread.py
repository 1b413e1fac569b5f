"""Several seeds per setting: draw their mean and their range (min to max).

A trained figure groups its records by setting (everything but the seed), plots the mean of
each group and, where a group has more than one seed, shades (or bars) the range from its
smallest to its largest value. With one seed per setting (most committed book-scale records
today) the drawing is the plain line it was, with nothing shaded: the range is only drawn
where there is one.

A single seed's accuracy on n test strings is itself an estimate: `wilson_interval` gives its
confidence interval (Wilson's score interval, which stays inside [0, 1] and is sensible at 0 and
n successes, where the normal approximation's collapses to a point).
"""
import math
from statistics import NormalDist, mean

from lengthgen.errors import LengthgenError


def group_by(records: list[dict], key, value=None) -> dict:
    """{key(record): [records]} in first-seen order; key maps a record to its setting, and
    `value`, if given, what each group keeps of a record (e.g. `metrics`)."""
    groups = {}
    for r in records:
        groups.setdefault(key(r), []).append(r if value is None else value(r))
    return groups


def metrics(record: dict) -> dict:
    """A record's metrics (for group_by's value)."""
    return record["metrics"]


def spread(values) -> tuple[float, float, float, int]:
    """(mean, min, max, count) of the values that are not None (NaN if none are)."""
    values = [v for v in values if v is not None]
    if not values:
        return float("nan"), float("nan"), float("nan"), 0
    return mean(values), min(values), max(values), len(values)


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval (Wilson 1927) for a success probability, from k successes in n
    trials, at confidence `level`: the p whose score test |k/n - p| / sqrt(p(1 - p)/n) <= z
    does not reject, with z the normal quantile at 1 - (1 - level) / 2 (the standard library's
    NormalDist, which agrees with scipy.stats.norm.ppf to a unit in the last place; importing
    scipy.stats took about 2 s of a process's start, for this one number)."""
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise LengthgenError(f"wilson_interval: {name} must be an integer, got {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise LengthgenError(f"wilson_interval: need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise LengthgenError(f"wilson_interval: level must be in (0, 1), got {level!r}")
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    share, z2 = k / n, z * z
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at k = 0 (or n) the bound is exactly 0 (or 1); rounding may leave it a hair off
    low = 0.0 if k == 0 else max(0.0, centre - half)
    return low, (1.0 if k == n else min(1.0, centre + half))


def line(ax, xs, groups, fmt, color, label=None, alpha=0.18, **kwargs):
    """Plot the means of `groups` (one list of values per x) and shade their min-max range
    where any group has several values. Returns the (mean, min, max, count) per x."""
    stats = [spread(g) for g in groups]
    ax.plot(xs, [s[0] for s in stats], fmt, color=color, label=label, **kwargs)
    if any(s[3] > 1 for s in stats):
        ax.fill_between(xs, [s[1] for s in stats], [s[2] for s in stats], color=color,
                        alpha=alpha, lw=0)
    return stats


def points(ax, xs, groups, color, **kwargs):
    """Scatter the means of `groups` with min-max bars where a group has several values."""
    stats = [spread(g) for g in groups]
    ax.scatter(xs, [s[0] for s in stats], color=color, **kwargs)
    several = [(x, s) for x, s in zip(xs, stats) if s[3] > 1]
    if several:
        ax.errorbar([x for x, _ in several], [s[0] for _, s in several],
                    yerr=[[s[0] - s[1] for _, s in several], [s[2] - s[0] for _, s in several]],
                    fmt="none", ecolor=color, elinewidth=1, capsize=2)
    return stats


def key_row(fig, ax, handles, labels, **kwargs):
    """A figure's key in one row, centred across the figure on `ax` (an axes turned off, a row
    of the figure's grid of its own, at the top of a phone's rendition, say): a legend of
    the figure, not of `ax`, as the phone's layout (`viz.phone.legend_below`) moves an axes'
    own legend under it, in one column. Returns the legend."""
    from matplotlib.transforms import blended_transform_factory
    ax.axis("off")
    return fig.legend(handles, labels, loc="center", bbox_to_anchor=(0.5, 0.5),
                      bbox_transform=blended_transform_factory(fig.transFigure, ax.transAxes),
                      ncols=len(labels), frameon=False, fontsize=10.5,
                      **{"handlelength": 2.0, "columnspacing": 1.0, **kwargs})


def seeds_label(records: list[dict], key) -> str:
    """'1 seed' / 'n seeds' / 'n to m seeds' per setting, for a title."""
    counts = sorted({len(g) for g in group_by(records, key).values()})
    text = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return text + (" seed" if counts == [1] else " seeds") + " per setting" + (
        ", mean and min-max" if counts[-1] > 1 else "")


def summarize(rows: list[dict], by: list[str], values: list[str]) -> list[dict]:
    """Tidy rows over seeds: one row per setting (`by`), with the mean of each of `values`, its
    min and max (`NAME_min`, `NAME_max`) and the number of seeds (`seeds`)."""
    out = []
    for key, group in group_by(rows, lambda r: tuple(r[k] for k in by)).items():
        row = dict(zip(by, key))
        for name in values:
            m, lo, hi, _ = spread([r.get(name) for r in group])
            row.update({name: m, f"{name}_min": lo, f"{name}_max": hi})
        row["seeds"] = len(group)
        out.append(row)
    return out


def config_seeds(config: dict) -> list[int]:
    """The seeds a config trains: its "seeds" list if it has one, else its one "seed". A
    figure whose registered configs have one "seed" keeps its run names; a config with "seeds"
    (several seeds per setting) names each run with a -s<seed> suffix (`run_suffix`)."""
    return list(config["seeds"]) if "seeds" in config else [config["seed"]]


def run_suffix(config: dict, seed: int) -> str:
    return f"-s{seed}" if "seeds" in config else ""


def over_seeds(rows: list[dict], by) -> list[dict]:
    """`figure data` rows (one per seed) summarized per setting: the columns `by` name the
    setting; every other numeric column (not the seed or the run name) is a value, given as its
    mean, min, max; text and true/false columns that are not in `by` are left out."""
    if not rows:
        return []
    skip = set(by) | {"seed", "run"}
    values = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in skip and all(
        r.get(k) is None or (isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool))
        for r in rows)]
    return summarize(rows, list(by), values)


def model_runs(config: dict, key: str = "model") -> list[dict]:
    """The runs of a figure that studies the trained models named in config["models"] (specs of
    seed 0): one run per model and seed of the config (`config_seeds`), the model under `key`.
    Each seed studies its own models (`seeded_spec`)."""
    return [{"name": name + run_suffix(config, seed), key: name, "seed": seed}
            for name in config["models"] for seed in config_seeds(config)]


def seeded_spec(config: dict, name: str, seed: int) -> dict:
    """The spec of model `name` of config["models"] trained with `seed` (the seed is part of
    the spec, so each seed trains, and caches, a model of its own)."""
    return {**config["models"][name], "seed": seed}
