"""The protocol of Theorem 12 on a model whose keys take many values, with exact and rounded
keys (the communication chapter's rounding study; not a figure of the paper).

Huang et al.'s proof counts the distinct values a layer's keys can take; a compiled C-RASP
program has few, but a Limit Transformer with random weights (`analysis.random_model`) has
about one per position from its second layer on, and Alice's message grows with them. Rounding
the keys to a few bits (LimitTransformer.key_bits) caps the classes. Each run plays the protocol
for one key precision at every N of the config (`analysis.rounding_rows`); the records keep
the rows, so the chapter is built from them instead of computing them at every build.

Feeds: book/communication.ipynb, {numref}`fig-comm-rounding`
"""
from lengthgen.config import one_thread
from lengthgen.experiments.huang.comm.analysis import rounding_rows
from lengthgen.experiments.huang.comm.drawing import rounding_figure

FIGURE_ID = "comm-rounding"
TITLE = ("Alice's message on a random Limit Transformer with exact keys and with keys rounded "
         "to 4 and 8 bits")

CONFIGS = {
    "test": {"ns": [16, 64, 256], "key_bits": [None, 4, 8], "inputs": 1, "seed": 0,
             "check_up_to": 400},
    "book": {"ns": [16, 64, 256, 1024, 4096], "key_bits": [None, 4, 8], "inputs": 2,
             "seed": 0, "check_up_to": 400},
    "paper": {"ns": [16, 64, 256, 1024, 4096, 16384], "key_bits": [None, 4, 8], "inputs": 4,
              "seed": 0, "check_up_to": 400},
}


def _name(bits) -> str:
    return "exact" if bits is None else f"{bits}-bit"


def runs(config: dict) -> list[dict]:
    return [{"name": _name(bits), "key_bits": bits, "seed": config["seed"]}
            for bits in config["key_bits"]]


def run_one(params: dict, config: dict, device) -> dict:
    with one_thread():
        rows = rounding_rows(config["ns"], [params["key_bits"]], seed=params["seed"],
                             inputs=config["inputs"], check_up_to=config["check_up_to"])
    return {"rows": rows}


def data(records: list[dict]) -> list[dict]:
    """The rows of `analysis.rounding_rows`, exact keys first, then by precision and N."""
    order = {_name(bits): i for i, bits in enumerate([None, 4, 8])}
    chosen = sorted(records, key=lambda r: (order.get(r["run_name"], 99), r["run_name"]))
    return [row for r in chosen for row in r["metrics"]["rows"]]


def figure(records: list[dict]):
    return rounding_figure(data(records))
