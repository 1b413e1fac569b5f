"""Bad input on the command line, tried as a careful user would: prints what happened.

Each case runs what `python -m lengthgen ...` runs (lengthgen.__main__.main) in a forked child
of this process, with its stdin, environment, and limits on CPU time, address space and output,
and is classified:
  clean      a non-zero exit whose stderr has no traceback (a one-line `error: ...`, an argparse
             usage error, or exit 1 of a failed check), or exit 0 where a result is correct
  traceback  "Traceback" on stderr
  silent     exit 0 where the input is wrong (the case expects an error)
  hang       still running after CPU_LIMIT seconds of CPU time (or the wall-clock backstop)
  memory     a peak resident memory above MEMORY_REPORT (whatever the exit)
  long       stderr has lines other than `error: ...` but no traceback (reported, not failed)

A case may also set environment variables (LENGTHGEN_RESULTS at a prepared folder of records,
XDG_CACHE_HOME ...), a file-size limit, or read /dev/zero as its stdin.

A case may also run with its stdout at /dev/full (a full disk) or closed.

Usage: PYTHONPATH=$PWD/lib OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bad_input_sweep.py
       [--only SUBSTRING] [--round-two] [--round-three] [--round-four] [--memory-gib N]
       [--timeout SECONDS]
       [--verbose]
"""
import argparse
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ERROR, OK, EITHER = "error", "ok", "either"   # what a case expects
HEAD = "head"   # a huge output: read one line, then close the pipe as `| head -1` does
HUGE = "100000000"
BIG = str(10 ** 30)
MEMORY_LIMIT = 8 * 2 ** 30   # bytes of address space per case
CPU_LIMIT = 20               # CPU seconds per case: more is a hang (CPU time, not wall time, so
#                              that a loaded machine does not turn slow cases into hangs)
OUTPUT_LIMIT = 200 * 2 ** 20  # bytes of output per case: more is unbounded output, like a hang
MEMORY_REPORT = 2 * 2 ** 30   # peak resident bytes of a case above which it is a blow-up
DEV_ZERO = object()           # stdin: /dev/zero (endless bytes, no newline)
DEV_FULL, CLOSED = "full", "closed"   # stdout: /dev/full (every write fails), or closed
REPO = Path(__file__).resolve().parents[1]


def cases(tmp: Path) -> list[tuple[list[str], bytes, str, dict]]:
    """(argv, stdin, expected, options) of each case: every command group, every numeric option
    with the usual bad values, bad files and bad bytes; options: env (variables to set), fsize
    (a file-size limit in bytes)."""
    binary = tmp / "binary.crasp"
    binary.write_bytes(bytes(range(256)) * 4)
    latin1 = tmp / "latin1.crasp"
    latin1.write_bytes("alphabet \xe9 b\nX := #Q(\xe9) > 0\n".encode("latin-1"))
    a_file = tmp / "a_file"
    a_file.write_text("not a folder\n")
    deep = tmp / "deep.crasp"
    deep.write_text("alphabet a b\nX := " + "(" * 150 + "#Q(a) > 0" + ")" * 150 + "\n")
    long_sum = tmp / "sum.crasp"
    long_sum.write_text("alphabet a b\nX := " + " + ".join(["#Q(a)"] * 500) + " > 0\n")
    reverse = tmp / "reverse.crasp"
    reverse.write_text("alphabet a b\n" + "".join(f"B{k} := not B{k + 1}\n" for k in range(300))
                       + "B300 := Q(a)\naccept B0\n")
    big_int = tmp / "bigint.crasp"
    big_int.write_text(f"alphabet a b\nX := #Q(a) > {2 ** 64}\n")
    big_mod = tmp / "bigmod.crasp"
    big_mod.write_text("alphabet a b\nX := i mod 100000 = 5\n")
    big_local = tmp / "biglocal.crasp"
    big_local.write_text("alphabet a b\nX := #[i - j <= 1000000] Q(a) > 0\n")
    chain = tmp / "chain.crasp"
    chain.write_text("alphabet a b\nC0 := #Q(a)\n" + "".join(
        f"C{k + 1} := C{k} + 1\n" for k in range(1000)) + "X := C1000 > 3\n")
    paren_symbol = tmp / "paren.crasp"
    paren_symbol.write_text("alphabet ( )\nX := #Q()) <= #Q(()\n")
    comma = tmp / "comma.crasp"
    comma.write_text("alphabet a,b\nX := #Q(a) > 0\n")
    unclosed = tmp / "unclosed.crasp"
    unclosed.write_text("alphabet a b\nX := (#Q(a) > 0\nY := X\n")
    empty = tmp / "empty.crasp"
    empty.write_text("")
    missing = tmp / "missing.crasp"
    ok_prog = tmp / "ok.crasp"
    ok_prog.write_text("alphabet a b\nX := #Q(a) <= #Q(b)\n")
    out_in_file = str(a_file / "sub")
    tiny_train = ["--task", "binary_majority", "--dim", "8", "--steps", "1", "--samples", "2",
                  "--eval-every", "1", "--out", str(tmp / "runs")]

    c: list[tuple[list[str], bytes, str, dict]] = []

    def add(argv, expect=ERROR, stdin=b"", **options):
        c.append((list(argv), stdin, expect, options))

    # --- the top level and list
    for argv in ([], ["nope"], ["list", "nope"], ["--help-me"], ["list", ""]):
        add(argv)
    add(["list", "tasks"], OK)
    # --- language sample / accepts / next
    lang = ["language", "sample", "d4"]
    for value in ("-1", HUGE, BIG, "abc", "1.5", "nan"):
        add(lang + ["--length", value])
    for value in ("-1", "abc", "nan"):
        add(lang + ["--length", "6", "--count", value])
    add(lang + ["--length", "6", "--count", BIG], HEAD)   # a valid count: it must stream
    for value in ("-1", BIG, "abc"):
        add(lang + ["--length", "6", "--seed", value])
    add(["language", "sample", "nope", "--length", "3"])
    add(["language", "sample", "d4", "--length", "6", "--count", HUGE], HEAD)  # must stream
    add(["language", "sample", "tomita1", "--length", "5", "--count", "2"], OK)
    for sub in ("accepts", "next"):
        add(["language", sub, "tomita4"], ERROR, stdin=b"0012\n")
        add(["language", sub, "tomita4"], ERROR, stdin=bytes(range(256)))
        add(["language", sub, "tomita4"], ERROR, stdin="\xe9\n".encode("latin-1"))
        add(["language", sub, "nope"], ERROR, stdin=b"0\n")
        add(["language", sub, "tomita4"], OK, stdin=b"0101\n\n" + b"01" * 50000 + b"\n")
    # --- task sample
    task = ["task", "sample", "addition"]
    for value in ("-1", "0", HUGE, BIG, "abc", "nan"):
        add(task + ["--length", value])
    for value in ("-1", "abc"):
        add(task + ["--length", "5", "--count", value])
    add(task + ["--length", "5", "--count", BIG], HEAD)
    for value in ("-1", BIG, "abc"):
        add(task + ["--length", "5", "--seed", value])
    add(["task", "sample", "nope", "--length", "5"])
    add(["task", "sample", "sort", "--length", "151"])
    add(task + ["--length", "5", "--count", HUGE], HEAD)   # must stream
    add(["task", "sample", "sort", "--length", "5", "--count", "2"], OK)
    # --- crasp run / check / show / compile
    add(["crasp", "run", "tomita1"], ERROR, stdin=b"1\n2\n1\n")
    add(["crasp", "run", "tomita1"], ERROR, stdin=bytes(range(256)))
    add(["crasp", "run", "tomita1", "--trace"], ERROR, stdin=b"x\n")
    add(["crasp", "run", "tomita1"], OK, stdin=b"11\n\n" + b"1" * 100000 + b"\n")
    for path in (binary, latin1, a_file, missing, empty, tmp, comma, unclosed, big_int):
        add(["crasp", "run", str(path)], ERROR, stdin=b"ab\n")
        add(["crasp", "compile", str(path), "--verify-up-to", "5"])
    for path in (deep, long_sum, reverse, paren_symbol):
        add(["crasp", "run", str(path)], OK, stdin=b"\n")
    add(["crasp", "run", "nope"], ERROR, stdin=b"\n")
    add(["crasp", "show", "nope"])
    add(["crasp", "show", "../../etc/passwd"])
    chk = ["crasp", "check", "tomita1"]
    for option in ("--max-length", "--random", "--random-length"):
        for value in ("-1", "0", HUGE, "abc"):
            add(chk + [option, value], ERROR if value != "0" else EITHER)
    add(chk + ["--language", "d4"])
    add(chk + ["--language", "nope"])
    add(["crasp", "check", "sort", "--max-length", "0"], EITHER)
    comp = ["crasp", "compile", "tomita1"]
    for value in ("-1", "0", HUGE, BIG, "abc"):
        add(comp + ["--verify-up-to", value])
    for value in ("-1", "0", HUGE, "abc"):
        add(comp + ["--verify-up-to", "5", "--samples", value])
    for value in ("-1", BIG):
        add(comp + ["--verify-up-to", "5", "--seed", value])
    add(comp + ["--verify-up-to", "5", "--mlp", "tanh"])
    for path in (big_mod, big_local):
        add(["crasp", "compile", str(path), "--verify-up-to", "5"])
    for path in (deep, long_sum, reverse, chain):
        add(["crasp", "compile", str(path), "--verify-up-to", "5"], OK)
    # --- dyck complete
    dyck = ["dyck", "complete", "((", "--train-word", "(())"]
    for option in ("--gamma", "--v"):
        for value in ("nan", "inf", "-inf", "abc", "0", "1e308"):
            add(dyck + [option, value], EITHER if value in ("1e308",) else ERROR)
    for value in ("-1", "0", HUGE, "abc"):
        add(dyck + ["--samples", value])
    for value in ("-1", BIG):
        add(dyck + ["--seed", value])
    add(["dyck", "complete", "((", "--train-word", "(()"])
    add(["dyck", "complete", "", "--train-word", "(())"])
    add(["dyck", "complete", "ab", "--train-word", "(())"])
    add(["dyck", "complete", "(((((", "--train-word", "(())"])
    add(["dyck", "complete", "))", "--train-word", "(())"])
    add(["dyck", "complete", "((", "--train-word", "(" * 20000 + ")" * 20000], EITHER)
    add(dyck, OK)
    # --- train (bad values fail before any training step)
    for option, values in (("--lr", ("nan", "inf", "-1", "0", "abc")),
                           ("--mlp-ratio", ("nan", "inf", "-1", "0")),
                           ("--dim", ("-1", "0", BIG)), ("--layers", ("-1", "0", BIG)),
                           ("--heads", ("0", "3")), ("--steps", ("-1", "abc")),
                           ("--batch-size", ("0", "-1")), ("--seed", ("-1", BIG)),
                           ("--min-len", ("-1", BIG)), ("--max-len", ("0",)),
                           ("--samples", ("-1",)), ("--eval-every", ("0", "-1")),
                           ("--warmup", ("-1",)), ("--schedule", ("nope",)),
                           ("--device", ("cpu:abc", "gpu", "cuda:0")),
                           ("--out", (str(a_file), out_in_file)),
                           ("--checkpoint", (str(tmp), str(binary)))):
        for value in values:
            add(["train", *tiny_train, option, value])
    add(["train", "--task", "nope", "--steps", "1"])
    # --- figure and the device variable
    add(["figure", "run", "nope"])
    add(["figure", "run", "huang-fig5-6-positional", "--scale", "huge"])
    add(["figure", "run", "huang-fig5-6-positional", "--device", "cpu:abc"])
    add(["figure", "list"], OK)
    round_two(tmp, add, tiny_train)
    round_three(tmp, add)
    round_four(tmp, add, tiny_train)
    return c


def _records_for_round_two(tmp: Path) -> dict:
    """Results folders the round-two cases point LENGTHGEN_RESULTS at (made here with the
    library's own writer, at test scale)."""
    from lengthgen.runs.runner import run_experiment
    from lengthgen.results import _digest, record_path, write_record
    figure = "crasp-long-unary"
    folders = {name: tmp / f"results-{name}" for name in ("empty", "zero", "nan", "nokeys",
                                                         "lock")}
    for folder in folders.values():
        folder.mkdir()
    good = run_experiment(figure, "test", "cpu", root=tmp / "results-good")
    (folders["zero"] / figure / "test").mkdir(parents=True)
    os.symlink("/dev/zero", record_path(figure, "test", good[0]["run_name"], folders["zero"]))
    nan = {k: v for k, v in good[0].items() if k != "digest"}
    nan["wall_time_s"] = float("nan")
    nan["digest"] = _digest(nan)
    path = record_path(figure, "test", nan["run_name"], folders["nan"])
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(nan))
    for record in good:
        write_record({**{k: v for k, v in record.items() if k != "digest"}, "metrics": {}},
                     folders["nokeys"])
    (folders["lock"] / figure / "test" / ".lock").mkdir(parents=True)
    return folders


def round_two(tmp: Path, add, tiny_train) -> None:
    """The cases of issue 26 (faults, round two): costs inside the documented caps, endless
    stdin, records that are devices or lie, folders that cannot be written, absurd threads."""
    folders = _records_for_round_two(tmp)
    plain = add

    def add(argv, expect=ERROR, stdin=b"", **options):   # noqa: F811  (marks each case)
        plain(argv, expect, stdin, **options, round_two=True)
    train = ["train", "--task", "binary_majority", "--steps", "1", "--out", str(tmp / "runs")]
    # estimates before allocating
    add(["crasp", "check", "majority_ab", "--random", "1", "--random-length", "20000000"])
    add(["dyck", "complete", "(", "--train-word", "()", "--samples", "4000000"])
    add(["crasp", "compile", "sort", "--verify-up-to", "5000", "--samples", "3"])
    for extra in (["--dim", "8500"], ["--layers", "1000", "--dim", "8"],
                  ["--samples", "1000000000"], ["--batch-size", "1000000000"],
                  ["--mlp-ratio", "1e6", "--dim", "8"], ["--mlp-ratio", "1e6"],
                  ["--mlp-ratio", "1e308"], ["--lr", "-1e-3"]):
        add(train + extra)
    add(["dyck", "complete", "((", "--train-word", "(())", "--gamma", "-1e-3"], OK)
    add(["dyck", "complete", "((", "--train-word", "(())", "--v", "-2.5E+1"], OK)
    # stdin by bounded lines
    for argv in (["language", "accepts", "tomita1"], ["crasp", "run", "tomita1"],
                 ["language", "next", "tomita1"]):
        add(argv, ERROR, stdin=DEV_ZERO)
        add(argv, ERROR, stdin=b"1" * 20_000_000 + b"\n")
    add(["crasp", "run", "sort"], ERROR, stdin=b"1 " * 400_000 + b"\n",
        env={"LENGTHGEN_MEMORY_LIMIT": "512M"})   # about 0.9 GB estimated
    # records that vanish, lie, or are not files
    for name in ("empty", "zero", "nan", "nokeys"):
        add(["figure", "data", "crasp-long-unary"], env={"LENGTHGEN_RESULTS": str(folders[name])})
    add(["figure", "data", "huang-table2-languages"],
        env={"LENGTHGEN_RESULTS": str(folders["empty"])})
    add(["figure", "run", "crasp-long-unary", "--scale", "test"],
        env={"LENGTHGEN_RESULTS": str(folders["lock"])})
    add(["figure", "run", "crasp-long-unary", "--scale", "test"],
        env={"LENGTHGEN_RESULTS": str(tmp / ("r" * 300))})
    add(["figure", "run", "richard-fig6-ablation", "--scale", "test", "--force"],
        env={"XDG_CACHE_HOME": "/proc/sys/x", "LENGTHGEN_RESULTS": str(tmp / "results-xdg")})
    add(["train", *tiny_train[:-2], "--out", str(REPO / "results" / "foo")])
    add(["train", *tiny_train], fsize=2000)
    add(["figure", "run", "crasp-long-unary", "--scale", "test"], fsize=100_000,
        env={"LENGTHGEN_RESULTS": str(tmp / "results-fsize")})
    for threads in ("100000", "2147483648", "0"):
        add(["figure", "run", "crasp-long-unary", "--scale", "test", "--threads", threads])
    junk = tmp / "junk.pt"
    junk.write_bytes(b"PK\x03\x04" + bytes(range(256)))
    add(["train", *tiny_train, "--checkpoint", str(junk)])
    add(["train", *tiny_train, "--checkpoint", "/dev/zero"])


def _records_for_round_three(tmp: Path) -> dict:
    """Results folders for the round-three cases: records that break the JSON reader or hold
    impossible numbers under a recomputed digest, a folder missing a record, a lock file that
    takes no byte."""
    from lengthgen.runs.runner import run_experiment
    from lengthgen.results import _digest, record_path
    figure = "crasp-long-unary"
    good = run_experiment(figure, "test", "cpu", root=tmp / "results3-good")
    folders = {"good": tmp / "results3-good"}

    def folder(name):
        folders[name] = tmp / f"results3-{name}"
        (folders[name] / figure / "test").mkdir(parents=True)
        return folders[name]
    for name, text in (("deep", "[" * 200_000), ("digits", '{"seed": ' + "7" * 5000 + "}")):
        record_path(figure, "test", good[0]["run_name"], folder(name)).write_text(text)
    for name, value in (("nan-accuracy", float("nan")), ("negative-accuracy", -0.5)):
        edited = {k: v for k, v in good[0].items() if k != "digest"}
        edited["metrics"] = {**edited["metrics"], "accuracy": value}
        edited["digest"] = _digest(edited)   # resealed, as anyone with the code can
        record_path(figure, "test", edited["run_name"], folder(name)).write_text(
            json.dumps(edited))
    partial = folder("partial")
    for record in good[1:]:
        source = record_path(figure, "test", record["run_name"], tmp / "results3-good")
        record_path(figure, "test", record["run_name"], partial).write_text(source.read_text())
    os.symlink("/dev/full", folder("full-lock") / figure / "test" / ".lock")
    return folders


def round_three(tmp: Path, add) -> None:
    """The cases of issue 39 (faults, round three): records that break the reader or lie under
    a recomputed digest, partial data, a stdout that takes nothing, absurd worker counts, other
    checkouts' results, program files that are no files, next() outside the alphabet."""
    import subprocess
    folders = _records_for_round_three(tmp)
    plain = add

    def add(argv, expect=ERROR, stdin=b"", **options):   # noqa: F811  (marks each case)
        plain(argv, expect, stdin, **options, round_three=True)
    data = ["figure", "data", "crasp-long-unary"]
    for name in ("deep", "digits", "nan-accuracy", "negative-accuracy"):
        add(data, env={"LENGTHGEN_RESULTS": str(folders[name])})
    add(data + ["--complete"], env={"LENGTHGEN_RESULTS": str(folders["partial"])})
    add(data, OK, env={"LENGTHGEN_RESULTS": str(folders["partial"])})   # with a warning
    for stdout in (DEV_FULL, CLOSED):
        for argv, stdin in ((["figure", "list"], b""), (data, b""),
                            (["language", "sample", "d4", "--length", "6", "--count", "3"], b""),
                            (["crasp", "run", "tomita1"], b"11\n10\n")):
            add(argv, stdin=stdin, stdout=stdout,
                env={"LENGTHGEN_RESULTS": str(folders["good"])})
    add(["figure", "run", "crasp-long-unary", "--scale", "test", "--workers", BIG])
    add(["figure", "run", "crasp-long-unary", "--scale", "test", "--workers", "100000"])
    add(["figure", "run", "crasp-long-unary", "--scale", "test"],
        env={"LENGTHGEN_RESULTS": str(folders["full-lock"])})
    add(["figure", "run", "crasp-long-unary", "--scale", "test", "--device", "mps"],
        env={"LENGTHGEN_RESULTS": str(tmp / "results3-refused")})
    other = tmp / "other-checkout"
    (other / "results").mkdir(parents=True)
    (other / "results" / "record.json").write_text("{}\n")
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "add", "results"], check=True)
    add(["train", "--task", "binary_majority", "--steps", "1", "--dim", "8", "--out",
         str(other / "results" / "mine")])
    fifo, zero, loop = tmp / "fifo.crasp", tmp / "zero.crasp", tmp / "loop.crasp"
    os.mkfifo(fifo)
    os.symlink("/dev/zero", zero)
    os.symlink(tmp / "loop2.crasp", loop)
    os.symlink(loop, tmp / "loop2.crasp")
    next_z, next_only, bom = tmp / "nextz.crasp", tmp / "nextonly.crasp", tmp / "bom.crasp"
    next_z.write_text("alphabet a b\nnext(z) := true\naccept #Q(a) > 0\n")
    next_only.write_text("alphabet a b\nnext(a) := true\n")
    bom.write_bytes("\ufeffalphabet a b\naccept #Q(a) > 0\n".encode("utf-8"))
    for path in (fifo, zero, loop, next_z):
        add(["crasp", "run", str(path)], stdin=b"ab\n")
        add(["crasp", "compile", str(path), "--verify-up-to", "5"])
    add(["crasp", "run", str(next_only)], stdin=b"ab\nb\n")
    add(["crasp", "run", str(bom)], OK, stdin=b"ab\nb\n")
    add(["crasp", "compile", "dyck1", "--verify-up-to", "5000", "--samples", "1000"])


# ---- issue 50 (faults, round four), outside `budget slice`: devices, forged records, damaged
# checkpoints (the budget slice's own cases are in their block) ---------------------------------
def _records_for_round_four(tmp: Path) -> dict:
    """Results folders for the round-four cases: a committed paper-budget record and a Fig. 1
    record, each forged (content edited, digest resealed as anyone can) in one way."""
    import shutil

    from lengthgen.results import _digest
    committed = REPO / "results"
    budget = sorted((committed / "huang-fig1-budget" / "gpu").glob("*.json"))
    fig1 = committed / "huang-fig1-languages" / "book"
    fig1_seeded = next(p for p in sorted(fig1.glob("*.json"))
                       if json.loads(p.read_text())["metrics"].get("seeds"))
    forgeries = {
        "budget-no-fit": (budget[0], lambda m: m.pop("fit")),
        "budget-no-bin": (budget[0], lambda m: m["bins"].pop("101-150")),
        "budget-42": (budget[0], lambda m: m["bins"].update({"101-150": 42})),
        "budget-nan": (budget[0], lambda m: m["bins"].update({"101-150": float("nan")})),
        "fig1-4200": (fig1_seeded, lambda m: m["seeds"][0]["bins"].update({"101-150": 42.0})),
        "fig1-no-fit": (fig1_seeded, lambda m: m["seeds"][0].pop("fit")),
    }
    folders = {}
    for name, (source, edit) in forgeries.items():
        root = folders[name] = tmp / f"results4-{name}"
        target = root / source.parent.parent.name / source.parent.name
        shutil.copytree(source.parent, target)
        record = json.loads(source.read_text())
        edit(record["metrics"])
        record.pop("digest")
        record["digest"] = _digest(record)
        (target / source.name).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return folders


def _checkpoints_for_round_four(tmp: Path, tiny_train) -> dict:
    """A real checkpoint of tiny_train, and copies damaged in each way issue 50 names."""
    import torch

    from lengthgen.__main__ import main as lengthgen
    good = tmp / "ck4-good.pt"
    pid = os.fork()   # trained in a child, so that this process's torch state stays as it was
    if pid == 0:
        code = 1
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            code = lengthgen(["train", *tiny_train, "--checkpoint", str(good), "--out",
                              str(tmp / "ck4")])
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    state = torch.load(good, weights_only=True)
    damaged = {"tensor": torch.zeros(3), "list": [1, 2],
               "no-rng": {k: v for k, v in state.items() if k != "feed"},
               "wrong-weights": {**state, "model": {k: torch.zeros(1) for k in state["model"]}},
               "no-weights": {**state, "model": {}},
               "foreign-optimizer": {**state, "adam": {"state": {}, "param_groups": []}},
               "bad-rng": {**state, "feed": {"numpy": 3, "torch": torch.zeros(2)}},
               "older-format": {**state, "rng": {"numpy": {}, "torch": torch.zeros(2)}},
               "text-step": {**state, "step": "x"},
               "step-past-the-end": {**state, "step": 10 ** 9},
               "bad-history": {**state, "history": 5}}
    paths = {"good": good}
    for name, value in damaged.items():
        paths[name] = tmp / f"ck4-{name}.pt"
        torch.save(value, paths[name])
    return paths


def round_four(tmp: Path, add, tiny_train) -> None:
    """The cases of issue 50 (faults, round four) outside the budget slice loop: one device
    check for every command, forged records of the budget folder and of Fig. 1 (a bin at 42 or
    NaN, a missing `fit` or bin), damaged `train --checkpoint` files. (Planted figure modules,
    the contract's cases, need a copy of the library: tests/test_faults_round_four.py.)"""
    import torch
    folders = _records_for_round_four(tmp)
    checkpoints = _checkpoints_for_round_four(tmp, tiny_train)
    plain = add

    def add(argv, expect=ERROR, stdin=b"", **options):   # noqa: F811  (marks each case)
        plain(argv, expect, stdin, **options, round_four=True)
    has_cuda = torch.cuda.is_available()
    commands = {
        "budget": ["budget", "slice", "--scale", "test", "--root", str(tmp / "results4-slice"),
                   "--minutes", "0.05"],
        "figure": ["figure", "run", "crasp-long-unary", "--scale", "test"],
        "train": ["train", *tiny_train, "--out", str(tmp / "runs4")],
    }
    for command in commands.values():
        for device, expect in (("bogus", ERROR), ("cuda:x", ERROR), ("cuda:99", ERROR),
                               ("CPU", OK), ("cuda", EITHER if has_cuda else ERROR)):
            add(command + ["--device", device], expect,
                env={"LENGTHGEN_RESULTS": str(tmp / "results4-devices")})
    add(commands["budget"], ERROR, env={"LENGTHGEN_DEVICE": "bogus"})
    for name in ("budget-no-fit", "budget-no-bin", "budget-42", "budget-nan"):
        add(["budget", "plan", "--scale", "gpu", "--root", str(folders[name])])
    for name in ("fig1-4200", "fig1-no-fit"):
        add(["figure", "data", "huang-fig1-languages"],
            env={"LENGTHGEN_RESULTS": str(folders[name])})
    for name, path in checkpoints.items():
        add(["train", *tiny_train, "--checkpoint", str(path), "--out", str(tmp / "runs4-ck")],
            OK if name == "good" else ERROR)


def _limits(fsize=OUTPUT_LIMIT):
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))


def _child(argv, env, fsize=OUTPUT_LIMIT) -> int:
    """What `python -m lengthgen ARGV` does, in a forked copy of this process (the imports are
    already done, so a case costs its own work, not 2 s of starting Python and torch)."""
    from lengthgen.__main__ import main
    _limits(fsize)
    os.environ.clear()
    os.environ.update(env)
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:       # what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
    except OSError as e:        # as the interpreter reports a failed flush at exit
        print(f"Exception ignored on flushing sys.stdout: {e.__class__.__name__}",
              file=sys.stderr)
        code = 120
    sys.stderr.flush()
    return code if isinstance(code, int) else 1


def _wait(pid, timeout):
    """(exit code (negative: killed by that signal) or None after `timeout` wall seconds, peak
    resident bytes)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            return None, usage.ru_maxrss * 1024
        time.sleep(0.02)


def run_case(argv, stdin, timeout, env, head=False, fsize=OUTPUT_LIMIT, stdout=None):
    """(hang, memory or None, exit code, stderr, seconds); head: read one line of stdout, then
    close it, as `| head -1` does; stdout: DEV_FULL or CLOSED instead of a file."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        if stdin is DEV_ZERO:
            zero = os.open("/dev/zero", os.O_RDONLY)
            os.dup2(zero, inp.fileno())
            os.close(zero)
        else:
            inp.write(stdin)
            inp.seek(0)
        read_end, write_end = os.pipe() if head else (None, None)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:   # the child: never returns
            try:
                os.dup2(inp.fileno(), 0)
                os.dup2(write_end if head else out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                if head:
                    os.close(read_end)
                    os.close(write_end)
                if stdout == DEV_FULL:
                    full = os.open("/dev/full", os.O_WRONLY)
                    os.dup2(full, 1)
                    os.close(full)
                elif stdout == CLOSED:
                    os.close(1)
                code = _child(argv, env, fsize)
            finally:
                os._exit(locals().get("code", 1))
        if head:
            os.close(write_end)
            with os.fdopen(read_end, "rb") as reader:
                reader.readline()
        code, peak = _wait(pid, timeout)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    seconds = time.perf_counter() - start
    hung = code is None or code in (-signal.SIGXCPU, -signal.SIGKILL, -signal.SIGXFSZ)
    verdict = "hang" if hung else "memory" if peak > MEMORY_REPORT else None
    return verdict, code, text, seconds


def classify(expect, rc, err) -> str:
    if "Traceback" in err or "Exception ignored" in err:
        return "traceback"
    if expect == HEAD:
        return "clean"      # it stopped when the reader did, quietly
    if rc == 0:
        return "silent" if expect == ERROR else "clean"
    if expect == OK:
        return "failed"     # a valid input that did not give a result
    lines = [line for line in err.splitlines() if line.strip()]
    if rc == 2 and lines and lines[0].startswith("usage:"):
        return "clean"      # argparse: usage line and one error line
    # one line, or one `error: line N: ...` per bad line of stdin
    return "clean" if lines and all(line.startswith("error:") for line in lines) else "long"


def main():
    global MEMORY_LIMIT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="run only cases whose argv contains this")
    parser.add_argument("--timeout", type=float, default=180.0,
                        help="wall-clock seconds per case (a backstop; hangs are found by CPU "
                             "time, CPU_LIMIT)")
    parser.add_argument("--round-two", action="store_true",
                        help="only the cases of issue 26 (faults, round two)")
    parser.add_argument("--round-three", action="store_true",
                        help="only the cases of issue 39 (faults, round three)")
    parser.add_argument("--round-four", action="store_true",
                        help="only the cases of issue 50 (faults, round four) outside the "
                             "budget slice loop")
    parser.add_argument("--memory-gib", type=float, default=MEMORY_LIMIT / 2 ** 30,
                        help="address space per case, GiB (default 8)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    MEMORY_LIMIT = int(args.memory_gib * 2 ** 30)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "LENGTHGEN_SCALE": "test"}
    # import once here, so that every forked case starts warm (the CLI imports some lazily)
    import lengthgen.runs.runner  # noqa: F401
    import lengthgen.train  # noqa: F401
    from lengthgen.__main__ import build_parser
    build_parser()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        env["LENGTHGEN_RESULTS"] = str(Path(tmp) / "results")
        all_cases = cases(Path(tmp))
        # the device variable: every command that picks a device reads it
        all_cases.append((["train", "--task", "binary_majority", "--steps", "1"], b"", ERROR,
                          {"env": {"LENGTHGEN_DEVICE": "cpu:abc"}}))
        counts = Counter()
        for argv, stdin, expect, options in all_cases:
            if args.only and args.only not in " ".join(argv):
                continue
            if args.round_two and not options.get("round_two"):
                continue
            if args.round_three and not options.get("round_three"):
                continue
            if args.round_four and not options.get("round_four"):
                continue
            case_env = {**env, **options.get("env", {})}
            hang, rc, err, seconds = run_case(argv, stdin, args.timeout, case_env,
                                              head=expect == HEAD,
                                              fsize=options.get("fsize", OUTPUT_LIMIT),
                                              stdout=options.get("stdout"))
            verdict = hang or classify(expect, rc, err)
            counts[verdict] += 1
            shown = " ".join(a if len(a) < 40 else a[:37] + "..." for a in argv) + \
                {DEV_FULL: " >/dev/full", CLOSED: " >&-"}.get(options.get("stdout"), "")
            if verdict != "clean" or args.verbose:
                last = err.strip().splitlines()[-1] if err.strip() else ""
                print(f"{verdict:9s} rc={rc} {seconds:5.1f}s  {shown}  | {last[:150]}",
                      flush=True)
    tried = sum(counts.values())
    print(f"tried {tried}: clean {counts['clean']}, traceback {counts['traceback']}, "
          f"silent {counts['silent']}, hang {counts['hang']}, memory {counts['memory']}, "
          f"long {counts['long']}, failed {counts['failed']} "
          f"({time.perf_counter() - start:.0f} s)")


# ==== budget: the GPU slices (issue 50, faults round four; `--only budget` runs just these) ====
_BUDGET_LOCK = []   # the lock a "first slice" holds while the cases run (this process holds it)


def _states_for_budget(tmp: Path) -> dict:
    """Folders for the budget cases: states a slice stopped at step 15 left, one of them at its
    step cap, damaged, foreign and typeless ones, a FIFO and a killed save's temp file; a
    records folder whose lock this process holds; a bench file without engine rows."""
    import fcntl
    import time as clock

    import torch

    from lengthgen.experiments.huang.sweep import budget
    from lengthgen.experiments.huang.sweep.huang_fig1_budget import FIGURE_ID
    from lengthgen.runs import planned, slices
    stopped = tmp / "budget-stopped"
    planned.run_slice(FIGURE_ID, "test", stopped, "cpu", clock.time() + 300, until_step=15,
                      states_out=stopped / "states", log=lambda *a, **k: None)
    states = budget.load_states(stopped / "states")
    config = budget.budget_configs()["test"]
    first = next(j for j in budget.plan(config, {}) if j.name in states)
    names = [j.name for j in budget.plan(config, {})]
    folders = {"good": stopped / "states"}
    for name in ("cap", "bad", "locked"):
        folders[name] = tmp / f"budget-{name}"
        folders[name].mkdir()
    cap = budget.to_engine_job(first, config).train.steps
    slices.keep_state(folders["cap"], first.name, {**states[first.name], "step": cap})
    (folders["bad"] / f"{names[0]}.pt").write_bytes(b"PK\x03\x04 damaged")
    torch.save([1, 2], folders["bad"] / f"{names[1]}.pt")
    torch.save({"model": {}}, folders["bad"] / f"{names[2]}.pt")
    os.mkfifo(folders["bad"] / f"{names[3]}.pt")
    (folders["bad"] / ".tmp-killed.pt").write_bytes(b"half a state")
    (folders["bad"] / "a_folder.pt").mkdir()
    lock = folders["locked"] / FIGURE_ID / "test" / ".lock"
    lock.parent.mkdir(parents=True)
    handle = open(lock, "a+")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _BUDGET_LOCK.append(handle)
    (tmp / "budget-dir-lock" / FIGURE_ID / "test" / ".lock").mkdir(parents=True)
    folders["dir-lock"] = tmp / "budget-dir-lock"
    (tmp / "bench-none.jsonl").write_text('{"header": {}}\n{"kind": "train()"}\n')
    return folders


def budget_cases(tmp: Path) -> list:
    """Slices on a locked folder, outputs that cannot be written, states at their cap or bad,
    rates that are no rates, absurd chained minutes, packs into a file."""
    folders = _states_for_budget(tmp)
    c: list = []

    def add(argv, expect=ERROR, stdin=b"", **options):
        c.append((list(argv), stdin, expect, {**options, "budget": True}))
    a_file = tmp / "budget-a-file"
    a_file.write_text("not a folder\n")
    fresh = str(tmp / "budget-fresh")
    base = ["budget", "slice", "--scale", "test", "--minutes", "0.05"]
    add(base + ["--root", str(folders["locked"])])
    add(base + ["--root", str(folders["locked"]), "--workers", "2"])
    add(base + ["--root", str(folders["dir-lock"])])
    add(base + ["--root", str(a_file)])
    add(base + ["--root", fresh, "--states", str(a_file / "states")])
    add(base + ["--root", fresh, "--states-out", str(a_file / "states")])
    add(base + ["--root", fresh + "-cap", "--states-in", str(folders["cap"])], OK)
    add(base + ["--root", fresh + "-bad", "--states-in", str(folders["bad"])], OK)
    add(base + ["--root", fresh + "-bad2", "--states", str(folders["bad"])], OK)
    for value in ("-1", "nan", "inf", "abc", "601"):
        add(base + ["--root", fresh, "--then-minutes", value])
    add(base + ["--root", fresh, "--then-minutes", "5"])   # without --states: nowhere to chain
    # files limited to 2,000 bytes (ulimit -f): the records cannot be written once trained
    add(["budget", "slice", "--scale", "test", "--minutes", "0.5", "--root", fresh + "-fsize"],
        fsize=2000)
    for rates in (str(tmp / "bench-none.jsonl"), str(tmp / "missing.jsonl"), "/dev/zero",
                  str(a_file.parent)):
        add(base + ["--root", fresh, "--rates", rates])
        add(["budget", "plan", "--estimate", "--rates", rates])
    add(["budget", "plan", "--estimate"], OK)
    pack = ["budget", "pack", "--scale", "test", "--root", fresh]
    add(pack + ["--states", str(folders["good"]), "--out", str(a_file)])
    add(pack + ["--states", str(folders["good"]), "--out", "/dev/full"])
    add(pack + ["--states", str(folders["bad"]), "--out", str(tmp / "budget-packs")], OK)
    add(pack + ["--states", str(a_file), "--out", str(tmp / "budget-packs2")], OK)
    return c


_cases_before_budget = cases


def cases(tmp: Path) -> list:   # noqa: F811  (every case above, then the budget cases)
    return _cases_before_budget(tmp) + budget_cases(tmp)



if __name__ == "__main__":
    main()
