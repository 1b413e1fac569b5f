"""Generated bad input on the command line: never a traceback, a hang or unbounded memory.

Hypothesis builds argument lists (nasty numbers: negative, huge, NaN, infinite, not numbers;
unknown ids; random text), stdin (random bytes, Latin-1, long lines) and C-RASP program texts
(random bytes, deep nesting, long sums, definition chains written backwards, huge literals,
periods and local windows, mutated valid programs), and drives the real entry point
`lengthgen.__main__.main` in-process. Every example must:
  * return 0 or 2 (1 only where a check may legitimately fail), with no exception escaping;
  * print no traceback, and on exit 2 only lines starting with `error:` on stderr;
  * stay within CPU_BUDGET seconds of CPU time, and the process within PEAK_RSS_MB.
stdout is a reader that stops after HEAD_CHARS characters, like `| head -c`: a command asked for
a huge output must stream it and end quietly when the reader stops. A few checks need a real
process (the pipe of `| head -1`, the bytes of a real stdin) and run as subprocesses.

Fixed seed (derandomize) and a fixed number of examples, so the file takes the same time and
finds the same cases on every run.
"""
import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lengthgen.__main__ import main

CPU_BUDGET = 20.0      # CPU seconds for one example (the slowest valid ones take about 2)
PEAK_RSS_MB = 3_000    # the test process's peak resident memory
HEAD_CHARS = 20_000    # stdout stops reading after this many characters


def settings_for(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ----------------------------------------------------------------------------- the driver
class HeadStdout(io.TextIOBase):
    """A stdout whose reader stops after HEAD_CHARS characters: then writing raises
    BrokenPipeError, as it does when `head` has exited."""

    def __init__(self):
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, text):
        if self.size >= HEAD_CHARS:
            raise BrokenPipeError(32, "Broken pipe")
        self.parts.append(text)
        self.size += len(text)
        return len(text)

    def getvalue(self):
        return "".join(self.parts)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def drive(argv, stdin: bytes = b"", env: dict | None = None, allowed=(0, 2)) -> str:
    """Run main(argv) in-process with this stdin and environment; check the properties;
    return stdout."""
    out, err = HeadStdout(), io.StringIO()
    saved_env = {k: os.environ.get(k) for k in (env or {})}
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    os.environ.update(env or {})
    start = _cpu_seconds()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as e:   # argparse's way out: fine, with its exit code
                code = e.code
    finally:
        sys.stdin = saved_stdin
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    cpu = _cpu_seconds() - start
    text = err.getvalue()
    shown = f"argv={argv!r} stdin={stdin[:80]!r} env={env!r}\nstderr:\n{text[-2000:]}"
    assert code in allowed, f"exit {code}; {shown}"
    assert "Traceback" not in text, shown
    lines = text.splitlines()
    if code == 2:
        assert lines and all(line.startswith("error:") for line in lines), shown
    elif out.size < HEAD_CHARS:   # (a reader that stopped early may have seen bad lines)
        assert not any(line.startswith("error:") for line in lines), shown
    assert cpu < CPU_BUDGET, f"{cpu:.1f} s of CPU; {shown}"
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert peak_mb < PEAK_RSS_MB, f"peak memory {peak_mb:.0f} MB; {shown}"
    return out.getvalue()


# ----------------------------------------------------------------------------- values
HUGE = [str(2 ** 31), str(2 ** 63), str(2 ** 64), str(10 ** 30), str(-10 ** 30), "99999999999"]
NOT_NUMBERS = ["", " ", "abc", "1e3", "0x10", "1.5", "nan", "inf", "-inf", "٣", "1_000", "--"]
INTEGERS = st.one_of(st.integers(-3, 25).map(str), st.sampled_from(HUGE + NOT_NUMBERS),
                     st.text(max_size=5))
FLOATS = st.one_of(st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e-320",
                                    "0", "-0", "abc", "", "1e400"]),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.floats(-3, 3).map(str))
LANGUAGES = ["d4", "tomita1", "tomita4", "ab_d_bc", "aa_star", "parity"]
TASKS = ["addition", "sort", "copy", "binary_majority", "majority", "parity"]
IDS = st.one_of(st.text(max_size=8), st.sampled_from(["nope", "", "D4", "../x", "tomita1\n"]))
# library programs small enough to compile in well under a second
SMALL_PROGRAMS = ["tomita1", "tomita4", "majority_ab", "dyck1", "aa_star", "anbncn", "d2"]
LINES = st.one_of(st.binary(max_size=300),
                  st.lists(st.text(alphabet="01ab()<> \r\t\x00é", max_size=30), max_size=8)
                  .map(lambda ls: "\n".join(ls).encode()),
                  st.sampled_from([b"0" * 50_000 + b"\n", "\xe9\n".encode("latin-1"),
                                   b"\xff\xfe0\x00\n", b"1\n\n1\r\n"]))


def options(**choices):
    """An argv tail: each option present or not, with a value from its strategy."""
    parts = [st.one_of(st.just([]), value.map(lambda v, name=name: [f"--{name}", v]))
             for name, value in choices.items()]
    return st.tuples(*parts).map(lambda ps: [x for p in ps for x in p])


@st.composite
def with_option(draw, base: dict, nasty: dict):
    """argv options from `base`, one or two of them replaced by a nasty value."""
    chosen = draw(st.lists(st.sampled_from(sorted(nasty)), min_size=1, max_size=2, unique=True))
    values = dict(base)
    for name in chosen:
        values[name] = draw(nasty[name])
    return [x for name, v in values.items() for x in ([f"--{name}", v] if v is not None else [])]


# ----------------------------------------------------------------------------- programs
NESTED = st.integers(1, 400).map(lambda n: "X := " + "(" * n + "#Q(a) > 0" + ")" * n)
NOTS = st.integers(1, 400).map(lambda n: "X := " + "not " * n + "Q(a)")
SUMS = st.integers(1, 3000).map(lambda n: "X := " + " + ".join(["#Q(a)"] * n) + " > 0")
CHAINS = st.integers(1, 1500).map(
    lambda n: "".join(f"B{k} := not B{k + 1}\n" for k in range(n)) + f"B{n} := Q(a)\naccept B0")
DOUBLINGS = st.integers(1, 80).map(
    lambda n: "C0 := #Q(a)\n" + "".join(f"C{k + 1} := C{k} + C{k}\n" for k in range(n))
    + f"X := C{n} > 1")
LITERALS = st.sampled_from(["2", str(2 ** 53), str(2 ** 53 + 1), str(2 ** 63), str(2 ** 64),
                            "9" * 40, "-" + str(2 ** 53)]).map(lambda v: f"X := #Q(a) > {v}")
PERIODS = st.sampled_from(["1", "7", "100000", "1000000", "1000001", str(2 ** 64)]).map(
    lambda k: f"X := i mod {k} != 0")
LOCALS = st.sampled_from(["0", "3", "1000", "1000000", "1000001", str(10 ** 20)]).map(
    lambda k: f"X := #[i - j <= {k}] Q(a) > 0")
ODD = st.sampled_from(["X := #Q()) > 0", "X := #Q(() > 0", "X := (#Q(a) > 0\nY := X",
                       "X := #Q(a) > 0 )", "X := Q(", "X := #Q(z) > 0", "X := 1 < 2 < 3",
                       "accept", "X := X", "next(a) := true", "X := i mod 0 = 0",
                       "X := #[i - j in {}] Q(a) > 0", "X := exists[j < i] Q(b)"])
BODIES = st.one_of(NESTED, NOTS, SUMS, CHAINS, DOUBLINGS, LITERALS, PERIODS, LOCALS, ODD)
ALPHABETS = st.sampled_from(["alphabet a b", "alphabet a,b", "alphabet ( ) a", "alphabet",
                             "alphabet a a", "alphabet a b <sep>", ""])


@st.composite
def program_files(draw):
    """The bytes of a program file: mostly a program of a stress shape, sometimes mutated,
    sometimes random bytes or another encoding."""
    kind = draw(st.sampled_from(["program", "program", "program", "mutated", "bytes", "latin-1"]))
    if kind == "bytes":
        return draw(st.binary(max_size=500))
    text = draw(ALPHABETS) + "\n" + draw(BODIES) + "\n"
    if kind == "latin-1":
        return ("alphabet \xe9 b\n" + draw(BODIES).replace("Q(a)", "Q(\xe9)")).encode("latin-1")
    if kind == "mutated" and text:
        at = draw(st.integers(0, len(text) - 1))
        insert = draw(st.text(max_size=3))
        text = text[:at] + insert + text[at + draw(st.integers(0, 3)):]
    return text.encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def folder():
    """Files the examples need: written once for the module (hypothesis runs many examples
    in one test function, so a function-scoped tmp_path would be shared anyway)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a_file").write_text("not a folder\n")
        (root / "garbage.pt").write_bytes(bytes(range(256)))
        (root / "a_folder").mkdir()
        yield root


def write_program(folder: Path, data: bytes) -> str:
    path = folder / "generated.crasp"
    path.write_bytes(data)
    return str(path)


# ----------------------------------------------------------------------------- the tests
@settings_for(40)
@given(argv=st.one_of(
    st.lists(st.text(max_size=12), max_size=4),
    st.tuples(st.just(["language", "sample"]), st.sampled_from(LANGUAGES) | IDS,
              options(length=INTEGERS, count=INTEGERS, seed=INTEGERS))
    .map(lambda t: t[0] + [t[1]] + t[2]),
    st.tuples(st.just(["task", "sample"]), st.sampled_from(TASKS) | IDS,
              options(length=INTEGERS, count=INTEGERS, seed=INTEGERS))
    .map(lambda t: t[0] + [t[1]] + t[2]),
    st.tuples(st.sampled_from([["list"], ["crasp", "show"], ["crasp", "list"],
                               ["figure", "list"]]), st.lists(IDS, max_size=1))
    .map(lambda t: t[0] + t[1]),
))
def test_sampling_and_listing_commands(argv):
    drive(argv)


@settings_for(25)
@given(command=st.sampled_from([["language", "accepts"], ["language", "next"]]),
       language=st.sampled_from(LANGUAGES) | IDS, stdin=LINES)
def test_commands_reading_stdin(command, language, stdin):
    drive(command + [language], stdin)


@settings_for(30)
@given(data=program_files(), stdin=LINES, trace=st.booleans())
def test_crasp_run_on_generated_programs(folder, data, stdin, trace):
    drive(["crasp", "run", write_program(folder, data)] + (["--trace"] if trace else []), stdin)


@settings_for(25)
@given(data=program_files(),
       tail=with_option({"verify-up-to": "6", "samples": "3"},
                        {"verify-up-to": INTEGERS, "samples": INTEGERS, "seed": INTEGERS,
                         "mlp": st.sampled_from(["heaviside", "relu", "tanh", ""])}))
def test_crasp_compile_on_generated_programs(folder, data, tail):
    # exit 1 would be a compiled model that disagrees with the interpreter: a compiler bug
    drive(["crasp", "compile", write_program(folder, data)] + tail)


@settings_for(15)
@given(program=st.sampled_from(SMALL_PROGRAMS) | IDS,
       tail=with_option({"max-length": "4", "random": "20", "random-length": "20"},
                        {"max-length": INTEGERS, "random": INTEGERS, "random-length": INTEGERS,
                         "language": st.sampled_from(LANGUAGES + TASKS) | IDS}))
def test_crasp_check(program, tail):
    drive(["crasp", "check", program] + tail, allowed=(0, 1, 2))   # 1: the check failed


@settings_for(25)
@given(prefix=st.text(alphabet="()a ", max_size=10), word=st.text(alphabet="()a", max_size=12),
       tail=options(gamma=FLOATS, v=FLOATS, samples=INTEGERS, seed=INTEGERS))
def test_dyck_complete(prefix, word, tail):
    drive(["dyck", "complete", prefix, "--train-word", word] + tail)


TINY_TRAIN = {"task": "binary_majority", "dim": "8", "steps": "1", "samples": "2",
              "eval-every": "1"}


@settings_for(12)
@given(data=st.data())
def test_train_rejects_bad_settings_before_training(folder, data):
    paths = st.sampled_from([str(folder / "a_file"), str(folder / "a_file" / "sub"),
                             str(folder / "a_folder"), str(folder / "garbage.pt"), ""])
    nasty = {"lr": FLOATS, "mlp-ratio": FLOATS, "dim": st.sampled_from(HUGE + NOT_NUMBERS),
             "layers": st.sampled_from(HUGE + NOT_NUMBERS + ["0", "-1", "1001"]),
             "heads": st.sampled_from(["0", "3", "-1"] + HUGE), "seed": INTEGERS,
             "batch-size": st.sampled_from(["0", "-1"] + NOT_NUMBERS),
             "min-len": st.sampled_from(HUGE + NOT_NUMBERS), "max-len": INTEGERS,
             "device": st.sampled_from(["cpu:abc", "cpu:", "gpu", "cuda:0", "CPU:-1", ""]) | IDS,
             "out": paths, "checkpoint": paths,
             "schedule": st.sampled_from(["nope", "", "cosine "])}
    base = {**TINY_TRAIN, "out": str(folder / "runs")}
    tail = data.draw(with_option(base, nasty))
    env = data.draw(st.sampled_from([{}, {"LENGTHGEN_DEVICE": "cpu:abc"},
                                     {"LENGTHGEN_SCALE": "huge"}, {"LENGTHGEN_DEVICE": "gpu"}]))
    drive(["train"] + tail, env=env)


# ----------------------------------------------------------------------------- real processes
def _run_head(argv, env) -> tuple[int, bytes, str]:
    """`python -m lengthgen ARGV | head -1` with a CPU-time limit: exit code and stderr."""
    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (int(CPU_BUDGET), int(CPU_BUDGET) + 5))
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "lengthgen", *argv],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                env=env, preexec_fn=limits)
        first = proc.stdout.readline()
        proc.stdout.close()
        code = proc.wait(timeout=120)
        err.seek(0)
        return code, first, err.read().decode("utf-8", "replace")


@pytest.mark.parametrize("argv", [
    ["language", "sample", "d4", "--length", "10000", "--count", "100000000"],
    ["task", "sample", "addition", "--length", "5", "--count", "100000000"],
])
def test_huge_outputs_stream_and_stop_with_the_reader(argv):
    code, first, err = _run_head(argv, {**os.environ, "OMP_NUM_THREADS": "1"})
    assert code == 0 and first.strip(), (code, err)
    assert err == "", err   # no traceback, no "Exception ignored ... BrokenPipeError"


def test_real_stdin_bytes():
    """sys.stdin of a real process: bytes through its buffer, a bad line in the middle."""
    result = subprocess.run([sys.executable, "-m", "lengthgen", "crasp", "run", "tomita1"],
                            input=b"11\n\xff\xfe\n1x1\n1\n", capture_output=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    err = result.stderr.decode()
    assert result.returncode == 2 and result.stdout == b"1\n\n\n1\n", (result, err)
    assert err.splitlines()[0].startswith("error: line 2: not UTF-8")
    assert err.splitlines()[1].startswith("error: line 3: ") and "Traceback" not in err
