"""How long each chapter's "At the paper's scale, on a GPU" section takes to compute when the
book is built (`lengthgen.viz.costs`): its cost table and the causes of the figures it does not
reproduce, in a fresh process per chapter as a notebook's kernel is (torch's import included in
the first number of each line).

    PYTHONPATH=lib python benchmarks/bench_chapter_costs.py
"""
import subprocess
import sys

CHAPTERS = ["limit_transformers", "ape_vs_nope", "quantitative_bounds", "dyck"]

ONE = """
import importlib, time
start = time.perf_counter()
import torch  # noqa: F401 (the kernel has it already when the section's cell runs)
loaded = time.perf_counter()
from lengthgen.viz import costs
facade = importlib.import_module("lengthgen.chapters.{chapter}")
table = costs.chapter_cost_table("{chapter}")
for figure_id in getattr(facade, "NOT_REPRODUCED", ()):
    costs.cause_numbers(figure_id)
done = time.perf_counter()
rows = len(costs.trained_figures("{chapter}"))
print(f"{chapter:22s} {{rows:2d}} figures  torch {{loaded - start:5.1f}} s  "
      f"section {{done - loaded:5.1f}} s")
"""

for chapter in CHAPTERS:
    subprocess.run([sys.executable, "-c", ONE.format(chapter=chapter)], check=True)
