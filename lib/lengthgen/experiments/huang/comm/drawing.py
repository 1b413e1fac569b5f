"""The communication chapter's pictures: the measured message length against N/2
(`bits_figure`, the figure comm-protocol-bits), the rounding study and the communication
matrices."""
import matplotlib.pyplot as plt
import numpy as np

from lengthgen.experiments.huang.comm.analysis import bit_rows


def bits_figure(records: list[dict]):
    rows = bit_rows(records)
    programs = sorted({r["program"] for r in rows})
    ns = sorted({r["n"] for r in rows})
    # Stacked: the book's column is narrow, and the right panel names every program, a row
    # each, far enough apart that the names (at the book's 10.5 pt) do not touch.
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7.4, 6.5 + 0.3 * len(programs)),
                                 gridspec_kw={"height_ratios": [1, 0.07 * len(programs) + 0.2]})
    cmap = plt.get_cmap("tab20", max(len(programs), 2))
    grid = np.geomspace(min(ns), max(ns) * 4, 200)
    for k, program in enumerate(programs):
        mine = [r for r in rows if r["program"] == program]
        color = cmap(k)
        ax.plot([r["n"] for r in mine], [r["bits"] for r in mine], "o", ms=3, color=color,
                label=program)
        ax.plot(grid, mine[0]["fit_a"] + mine[0]["fit_b"] * np.log2(grid), "-", lw=0.8,
                color=color, alpha=0.7)
    ax.plot(grid, grid / 2, "k-", lw=2, label="N/2: equality (copying) needs this")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("input length N (Alice holds the first N/2 symbols)")
    ax.set_ylabel("bits Alice sends (max over the inputs tried)")
    ax.set_title("measured message length; lines: a + b log2 N")
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    summary = sorted(((r["crossing_n"], r["fit_b"], r["program"]) for r in
                      {r["program"]: r for r in rows}.values()))
    y = np.arange(len(summary))
    bx.scatter([s[0] for s in summary], y, color=[cmap(programs.index(s[2])) for s in summary],
               zorder=3)
    for yy, (cross, slope, program) in zip(y, summary):
        bx.text(cross * 1.15, yy, f"{cross:,}  (b = {slope:.1f})", va="center", fontsize=6)
    bx.set_yticks(y, [s[2] for s in summary], fontsize=7)
    bx.set_xscale("log")
    bx.set_xlim(min(s[0] for s in summary) / 2, max(s[0] for s in summary) * 10)
    bx.grid(axis="x", which="major", alpha=0.3)
    bx.set_xlabel("N* where the fit meets N/2: no copying for N > N*")
    bx.set_title("from which length on each model cannot copy")
    fig.tight_layout()
    return fig


def rounding_figure(rows):
    """Left: the longest message against N per key precision, with N/2 for reference. Right:
    the key classes of the last layer against N."""
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.3))
    options = list(dict.fromkeys(r["key_bits"] for r in rows))
    for i, option in enumerate(options):
        pts = [r for r in rows if r["key_bits"] == option]
        label = "exact keys" if option == "exact" else f"keys at {option} bits"
        ns = [r["n"] for r in pts]
        axes[0].plot(ns, [r["bits"] for r in pts], "o-", ms=3, color=f"C{i}", label=label)
        axes[1].plot(ns, [r["classes_layer_2"] for r in pts], "o-", ms=3, color=f"C{i}",
                     label=label)
    ns = sorted({r["n"] for r in rows})
    axes[0].plot(ns, [n / 2 for n in ns], "k--", lw=1, label="N/2")
    axes[0].set(xscale="log", yscale="log", xlabel="N", ylabel="bits of Alice's message",
                title="message length")
    axes[1].set(xscale="log", yscale="log", xlabel="N", ylabel="key classes (layer 2)",
                title="classes Alice sends")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def matrix_figure(names: list[str], m: int):
    """The communication matrices of named problems side by side (black = 1), with their
    distinct rows and exact rank in the titles. Rows and columns are sorted by their entries,
    so equal rows sit together (sorting changes neither count)."""
    from lengthgen.theory.communication import distinct_rows, exact_rank, problem_matrix
    fig, axes = plt.subplots(1, len(names), figsize=(3.1 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        mat, rows, columns = problem_matrix(name, m)
        mat = mat[np.lexsort(mat.T[::-1])[::-1]]
        mat = mat[:, np.lexsort(mat[::-1])[::-1]]
        ax.imshow(mat, cmap="Greys", interpolation="nearest", aspect="auto")
        ax.set_title(f"{name}, m = {m}\n{distinct_rows(mat)} distinct rows, rank "
                     f"{exact_rank(mat)}", fontsize=9)
        ax.set_xlabel(f"Bob's part ({len(columns)})", fontsize=8)
        ax.set_ylabel(f"Alice's part ({len(rows)})", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return fig
