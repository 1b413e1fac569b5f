"""Measured message length of the Theorem 12 protocol against the N/2 bits that copying needs.

Huang et al. (2025, Thm. 12) show that when the input of a Periodic and Local Limit Transformer
is split in two, Alice can tell Bob everything he needs about her half in O(log N) bits; copying
a string with repeats needs N/2 bits (string equality), so no such model copies at every length
(Cor. 13). Here every program of the C-RASP library is compiled into a Limit Transformer and the
protocol of lengthgen.theory.protocol is played on inputs of length N: Alice holds the start
symbol and the first floor(N/2) symbols. The bits are counted in the message Alice actually
writes (the maximum over a few inputs of different kinds per N), and Bob's activations are
compared with the model's forward pass wherever that fits in memory. Each program's bits are
fitted by a + b log2 N; where that line meets N/2 is the length from which the model provably
cannot copy (its message is too short to carry Alice's half).

Feeds: book/communication.ipynb, {numref}`fig-comm-bits`
"""
import numpy as np

from lengthgen.config import one_thread
from lengthgen.crasp import library
from lengthgen.crasp.library import SMALL_VOCAB
from lengthgen.experiments.huang.comm.analysis import bit_rows
from lengthgen.experiments.huang.comm.drawing import bits_figure
from lengthgen.experiments.huang.comm.protocol import load, measure

FIGURE_ID = "comm-protocol-bits"
TITLE = ("Alice's message in the protocol of Theorem 12 grows like log N for every compiled "
         "C-RASP program, far below the N/2 bits that copying needs")

_BOOK_NS = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
CONFIGS = {
    "test": {"programs": ["majority_ab", "dyck1", "tomita4", "binary_majority_interleave"],
             "ns": [8, 32, 128, 512], "inputs": 2, "check_up_to": 128, "vocab": SMALL_VOCAB,
             "seed": 0},
    "book": {"programs": "all", "ns": _BOOK_NS, "inputs": 5, "check_up_to": 1000,
             "vocab": SMALL_VOCAB, "seed": 0},
    "paper": {"programs": "all", "ns": _BOOK_NS + [50000], "inputs": 10, "check_up_to": 2000,
              "vocab": SMALL_VOCAB, "seed": 0},
}


def runs(config: dict) -> list[dict]:
    names = library.program_names() if config["programs"] == "all" else config["programs"]
    return [{"name": name, "program": name, "seed": config["seed"]} for name in names]


def run_one(params: dict, config: dict, device) -> dict:
    from lengthgen.crasp.compile import sample_strings
    compiled = load(params["program"], config["vocab"], max(config["ns"]))
    rng = np.random.default_rng(params["seed"])
    rows = []
    with one_thread():
        for n in config["ns"]:
            strings = sample_strings(compiled.program.alphabet, [n] * config["inputs"], rng)
            rows.append(measure(compiled, n, strings, n <= config["check_up_to"]))
    size = compiled.size()
    return {"fragment": compiled.program.fragment(), "layers": size["layers"],
            "heads": sum(size["heads_per_layer"]), "width": size["width"],
            "period": size["period"], "tau": size["tau"], "by_n": rows}


def data(records: list[dict]) -> list[dict]:
    """Tidy rows: one per program and N, with the measured bits and the program's fit."""
    return bit_rows(records)


def figure(records: list[dict]):
    return bits_figure(records)
