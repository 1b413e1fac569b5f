"""The C-RASP playground of the site: its engine (book/_static/crasp_engine.js) against the
Python interpreter, and its page at two widths.

THE CONTRACT between the two implementations of the language: in headless Chromium, on the
built site, the engine must give what `lengthgen.crasp` gives (`crasp run`, `crasp run
--trace`) on
  - every library program, on LIBRARY_STRINGS strings each;
  - RANDOM_PROGRAMS random programs of lengthgen.crasp.random_programs, RANDOM_STRINGS strings
    each;
  - the malformed programs of test_crasp_syntax.py, EDGE_PROGRAMS and MUTANTS mutated programs;
that is: the same error message (its line and column included) for a malformed program; for a
well-formed one the same operation names in the same order and the same output; for each
input the same verdict and the same trace (every value of every operation at every position:
a checksum of all values on every run, and, for programs of at most FULL_TEXT_OPS operations,
the whole `crasp run --trace` text on the first LIBRARY_TEXT_RUNS runs of a library program and
the first RANDOM_TEXT_RUNS of a random one), or the same error for a bad input. All cases run
in one page load, through one script call per group.

Without Chromium (and chromium-driver) the browser tests skip, as in test_site_browser.py.
"""
import json
import time
from pathlib import Path

import numpy as np
import pytest

from lengthgen.crasp.interpret import run_batch, run_program, tokens_of
from lengthgen.crasp.library import program_names, program_text
from lengthgen.crasp.random_programs import random_inputs, random_program
from lengthgen.crasp.syntax import parse_program
from lengthgen.crasp.trace import trace_text
from lengthgen.crasp.web import LIBRARY_SCRIPT, library_script
from lengthgen.errors import LengthgenError
from test_crasp_syntax import MALFORMED
from test_site_browser import browser, site  # noqa: F401  (fixtures: one site build per session)

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "book" / "_static" / "crasp_engine.js"
LIBRARY_STRINGS = 200
RANDOM_PROGRAMS = 500
RANDOM_STRINGS = 20
MUTANTS = 400
FULL_TEXT_OPS = 200           # programs up to this size compare the whole trace text
LIBRARY_TEXT_RUNS = 50        # ... on this many inputs of a library program
RANDOM_TEXT_RUNS = 5          # ... and of a random one (the checksum covers every run)
FILENAME = "program"          # the file name in error messages, on both sides
P = 2147483629                # the checksum's prime (below 2^31)

EDGE_PROGRAMS = [
    # counts that pass 2^53 (the engine switches to BigInt) and counts that could pass 2^62
    "alphabet a\nC0 := #Q(a)\n" + "".join(f"C{k + 1} := C{k} + C{k}\n" for k in range(58))
    + "X := C58 > 1\n",
    "alphabet a\nC0 := #Q(a)\n" + "".join(f"C{k + 1} := C{k} + C{k}\n" for k in range(61))
    + "X := C61 > 1\n",
    "alphabet a\nX := #Q(a) > 9007199254740992\nY := -9007199254740992 < #Q(a)\n",
    # line endings, tabs, comments, continued lines, unicode names and symbols
    "alphabet a b\r\nCa := #Q(a)\r\n\tCb := #Q(b) // b's\r\nM := (Cb\r\n <= Ca)\r\n",
    "alphabet é ß\nZähler := #Q(é)\nok := Zähler >= #Q(ß)\n",
    "alphabet ( ) a\nO := #Q(() - #Q())\nB := O >= 0 and #[j < i] Q(a) = 0\n",
    "alphabet 10 <sep> 7\nC := #Q(10)\nnext(7) := C = 2\naccept exists Q(<sep>)\n",
    "alphabet a\nX := i mod 7 != 3 and i mod 1 = 0\nY := #[i - j <= 4, j < i] X > 2\n",
    "alphabet a b\nA := B\nB := C\nC := #Q(a) - 007\nD := A < 2\n",
    "alphabet a\nX := " + " + ".join(["#Q(a)"] * 300) + " > 0\n",
    "alphabet a\nX := " + "(" * 300 + "Q(a)" + ")" * 300 + "\n",
    "alphabet a\nX := " + "(" * 301 + "Q(a)" + ")" * 301 + "\n",
    "alphabet a\nX := #[i - j in {3, 1, 2}, j = i - 2] Q(a) = 1\n",
    "alphabet a\nX := #Q(a) > 1 < 2\n", "alphabet a,b\nX := true\n", "alphabet a a\nX := true\n",
    "alphabet a\nX := i + 1\n", "alphabet a\nX := i mod 0 = 0\n", "alphabet a\nX := Q(\n",
    "alphabet a\nX := Q( a b)\n", "alphabet a\nX := Q()\n", "alphabet a\nX := #Q(a) ≥ 1\n",
    "alphabet a\nX := #[i - j in {}] Q(a) > 0\n", "alphabet a\nX := 99999999999999999999\n",
    "alphabet a\nX := true\nalphabet b\n", "alphabet a\naccept true\naccept false\n",
    "alphabet a\nnext(a) := true\nnext(a) := false\n", "alphabet a\nnext(a) := #Q(a)\n",
    "alphabet a\nX := #Q(a)\naccept X\n", "alphabet a\naccept Y\n", "alphabet a\nX := X\n",
    "alphabet a\nX := 1 ? 2 : 3\n", "alphabet a\nX := true ? 2 : false\n",
    "alphabet a\nX := #[j = i - 1000001] Q(a) > 0\n", "alphabet a\nX := true )\n",
    "alphabet a\n:= true\n", "alphabet a\nX = true\n", "", "// nothing\n",
    "alphabet a\nX := true // )\n", "alphabet a\nX := #[j <= i] not Q(a) = 0 or false\n",
    "alphabet a\nX := #[j = i - INT] Q(a) > 0\n", "alphabet a\nX := #Q(a) > ²\n",
    "alphabet a\nX := #Q(a) > ٣\nY := #[i - j = ٢] Q(a) = 1\n",
]
EDGE_INPUTS = ["", "a", "aaaa", "a a", "ab", "zz", "10 <sep> 7", "( ) a", "é ß é", "b" * 30]


# ----- the cases and what Python says about them ----------------------------------------------
def library_cases() -> list[dict]:
    rng = np.random.default_rng(27)
    cases = []
    for name in program_names():
        text = program_text(name)
        longest = 8 if len(text) > 5000 else 16
        cases.append({"name": name, "text": text, "text_runs": LIBRARY_TEXT_RUNS,
                      "inputs": random_inputs(rng, text, LIBRARY_STRINGS, longest)})
    return cases


def random_cases() -> list[dict]:
    rng = np.random.default_rng(2027)
    cases = []
    for k in range(RANDOM_PROGRAMS):
        text = random_program(rng)
        cases.append({"name": f"random {k}", "text": text, "text_runs": RANDOM_TEXT_RUNS,
                      "inputs": random_inputs(rng, text, RANDOM_STRINGS)})
    return cases


def mutate(rng, text: str) -> str:
    """One or two random edits: delete, insert a tricky character, or duplicate a slice."""
    for _ in range(int(rng.integers(1, 3))):
        at = int(rng.integers(0, len(text) + 1))
        kind = int(rng.integers(3))
        if kind == 0:
            text = text[:at] + text[at + int(rng.integers(1, 4)):]
        elif kind == 1:
            text = text[:at] + str(rng.choice(list("()[]{}#:=<>!,?-+ \n\tQijé0x/"))) + text[at:]
        else:
            text = text[:at] + text[at:at + int(rng.integers(1, 8))] + text[at:]
    return text


def malformed_cases() -> list[dict]:
    rng = np.random.default_rng(7)
    texts = [text for text, _, _ in MALFORMED] + EDGE_PROGRAMS
    sources = [program_text(n) for n in program_names() if len(program_text(n)) < 5000]
    sources += [random_program(rng) for _ in range(50)]
    texts += [mutate(rng, sources[int(rng.integers(len(sources)))]) for _ in range(MUTANTS)]
    return [{"name": f"malformed {k}", "text": t, "inputs": EDGE_INPUTS, "text_runs": len(EDGE_INPUTS)}
            for k, t in enumerate(texts)]


def checksums(rows: np.ndarray) -> np.ndarray:
    """rows int64 [operations, B, n + 1] -> the checksum of each input's values, int64 [B]."""
    ops, _, width = rows.shape
    r = np.arange(1, ops + 1, dtype=np.int64)[:, None]
    c = np.arange(1, width + 1, dtype=np.int64)[None, :]
    weight = 1 + (r * 40503 + c * 65599 + r * c * 7) % 2097143
    terms = (np.mod(rows, P) * weight[:, None, :]) % P
    return terms.sum(axis=(0, 2)) % P


def python_results(case: dict) -> dict:
    """What lengthgen.crasp says about a case, in the form the page returns."""
    try:
        program = parse_program(case["text"], filename=FILENAME)
    except LengthgenError as e:
        return {"error": str(e)}
    names = list(program.ops)
    full = len(names) <= FULL_TEXT_OPS
    runs: list = [None] * len(case["inputs"])
    by_length: dict[int, list[int]] = {}
    for k, s in enumerate(case["inputs"]):
        symbols = tokens_of(program, s)
        if all(x in program.alphabet for x in symbols):
            by_length.setdefault(len(symbols), []).append(k)
        else:
            runs[k] = _error_of(lambda: run_program(program, s))
    for group in by_length.values():
        try:
            values = run_batch(program, [case["inputs"][k] for k in group])
        except LengthgenError as e:
            for k in group:
                runs[k] = {"error": str(e)}
            continue
        rows = np.stack([values[n].astype(np.int64) for n in names])
        sums = checksums(rows)
        for b, k in enumerate(group):
            run = [int(values[program.output][b, -1]), int(sums[b])]
            if full and k < case["text_runs"]:
                run.append(trace_text(program, case["inputs"][k]))
            runs[k] = run
    return {"names": "\n".join(names), "output": program.output, "runs": runs}


def _error_of(call) -> dict:
    try:
        call()
    except LengthgenError as e:
        return {"error": str(e)}
    raise AssertionError("expected an error")


# The page side: the engine on every case of a group, in one call.
RUN_JS = """
const cases = arguments[0], FULL = arguments[1], P = %d;
function checksum(values, names) {
  let acc = 0;
  names.forEach((name, r) => {
    values.get(name).forEach((x, c) => {
      let v = typeof x === 'boolean' ? (x ? 1 : 0) : x;
      v = typeof v === 'bigint' ? Number(((v %% BigInt(P)) + BigInt(P)) %% BigInt(P)) : ((v %% P) + P) %% P;
      const w = 1 + ((r + 1) * 40503 + (c + 1) * 65599 + (r + 1) * (c + 1) * 7) %% 2097143;
      acc += (v * w) %% P;
    });
    acc %%= P;
  });
  return acc;
}
const out = [];
for (const c of cases) {
  let program;
  try { program = CRASP.parseProgram(c.text, 'program'); }
  catch (e) { if (!(e instanceof CRASP.CraspError)) throw e; out.push({error: e.message}); continue; }
  const names = [...program.ops.keys()];
  const runs = c.inputs.map((s, k) => {
    try {
      const values = CRASP.runProgram(program, s);
      const o = values.get(program.output);
      const run = [o[o.length - 1] ? 1 : 0, checksum(values, names)];
      if (names.length <= FULL && k < c.text_runs) run.push(CRASP.traceText(program, s));
      return run;
    } catch (e) { if (!(e instanceof CRASP.CraspError)) throw e; return {error: e.message}; }
  });
  out.push({names: names.join('\\n'), output: program.output, runs});
}
return out;
""" % P


def differences(cases, got, want) -> list[str]:
    problems = []
    for case, g, w in zip(cases, got, want):
        if g == w:
            continue
        if "error" in g or "error" in w or g["names"] != w["names"] or g["output"] != w["output"]:
            problems.append(f"{case['name']}: page {_short(g)} but python {_short(w)}\n"
                            f"{case['text'][:300]}")
            continue
        for s, gr, wr in zip(case["inputs"], g["runs"], w["runs"]):
            if gr != wr:
                problems.append(f"{case['name']} on {s!r}: page {gr} but python {wr}\n"
                                f"{case['text'][:300]}")
                break
    return problems


def _short(result) -> str:
    return json.dumps({k: v for k, v in result.items() if k != "runs"})[:300]


# ----- tests without a browser ----------------------------------------------------------------
def test_library_script_is_in_sync_with_the_library():
    """The programs the playground offers are the library's (regenerate with
    `python -m lengthgen.crasp.web`)."""
    assert (ROOT / LIBRARY_SCRIPT).read_text() == library_script(), \
        f"{LIBRARY_SCRIPT} is stale: run `python -m lengthgen.crasp.web` and commit it"


def test_the_engine_is_small_and_states_the_contract():
    text = ENGINE.read_text()
    assert len(text.encode()) < 100_000
    assert "tests/test_crasp_playground.py" in text and "CONTRACT" in text


def test_random_programs_parse_and_use_every_construct():
    from lengthgen.crasp import ir
    rng = np.random.default_rng(0)
    kinds, local, strict_text = set(), 0, 0
    for _ in range(200):
        text = random_program(rng)
        program = parse_program(text)
        kinds |= {type(op) for op in program.ops.values()}
        local += program.uses_local()
        strict_text += "j < i" in text
    assert kinds == set(ir.BOOL_OPS + ir.COUNT_OPS)
    assert local > 20 and strict_text > 5


# ----- the differential test in the browser -----------------------------------------------------
@pytest.fixture(scope="module")
def playground(browser, site):  # noqa: F811
    url, html = site
    page = next(html.rglob("crasp.html"))
    browser.get(f"{url}/{page.relative_to(html)}")
    # the engine is a plain <script> of the page, run before its load event; once (of many
    # runs) it was still undefined here on a loaded machine, so it is waited for (briefly),
    # and a page without it names what the page fetched
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(browser, 20, poll_frequency=0.1).until(
            lambda b: b.execute_script("return typeof CRASP") == "object")
    except Exception:
        fetched = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        pytest.fail(f"the engine did not load; the page fetched {fetched}")
    return browser


def test_the_engine_has_the_constants_of_the_python_syntax(playground):
    from lengthgen.crasp import interpret, ir, syntax
    got = playground.execute_script("return CRASP.constants")
    assert sorted(got["KEYWORDS"]) == sorted(syntax.KEYWORDS)
    assert tuple(got["PUNCT"]) == syntax.PUNCT and tuple(got["COMPARISONS"]) == ir.COMPARISONS
    for name in ("MAX_INT", "MAX_PERIOD", "MAX_LOCAL_DISTANCE", "MAX_NESTING", "MAX_NAME"):
        assert got[name] == getattr(syntax, name), name
    assert float(got["INT64_SAFE"]) == float(interpret.INT64_SAFE)   # 2^62 prints rounded in JS


@pytest.mark.parametrize("group", ["library", "random", "malformed"])
def test_the_engine_agrees_with_python(playground, group):
    cases = {"library": library_cases, "random": random_cases, "malformed": malformed_cases}[group]()
    started = time.perf_counter()
    want = [python_results(c) for c in cases]
    python_s = time.perf_counter() - started
    started = time.perf_counter()
    got = playground.execute_script(RUN_JS, cases, FULL_TEXT_OPS)
    page_s = time.perf_counter() - started
    problems = differences(cases, got, want)
    runs = sum(len(c["inputs"]) for c in cases)
    print(f"{group}: {len(cases)} programs, {runs} runs; python {python_s:.1f} s, "
          f"page {page_s:.1f} s")
    assert not problems, f"{len(problems)} of {len(cases)} programs differ:\n" + \
        "\n".join(problems[:5])
    if group == "library":
        assert len(cases) == len(program_names()) and runs == len(cases) * LIBRARY_STRINGS
    if group == "random":
        assert len(cases) >= 500 and all(len(c["inputs"]) == RANDOM_STRINGS for c in cases)
    if group == "malformed":
        errors = sum("error" in w for w in want)
        assert errors >= len(MALFORMED) + 30, errors


# ----- the page itself ----------------------------------------------------------------------------
def test_the_playground_works_from_the_keyboard_at_420_px(playground, site):
    """At 420 px the page does not scroll sideways; the dropdown fills the editor; the trace
    text is Python's; Tab walks the controls in order; Ctrl+Enter and Enter run; an error names
    its line and column; a shared link brings the program and the input back."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    from lengthgen.crasp.library import get_program
    browser, (url, html) = playground, site
    page = f"{url}/{next(html.rglob('crasp.html')).relative_to(html)}"
    result_js = "return document.querySelector('.crasp-pg-result').innerText"
    text_js = "return (document.querySelector('.crasp-pg-text pre') || {}).textContent"
    browser.set_window_size(420, 900)
    try:
        browser.get(page)
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"), \
            "the page scrolls sideways at 420 px"
        fetched = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        assert any("crasp_engine.js" in f for f in fetched)
        assert all(f.startswith(url) for f in fetched), "the page fetches from outside the site"
        editor = browser.find_element(By.ID, "crasp-pg-program")
        box = browser.find_element(By.ID, "crasp-pg-input")
        Select(browser.find_element(By.ID, "crasp-pg-library")).select_by_value("tomita4")
        assert editor.get_property("value") == program_text("tomita4")
        word = box.get_property("value")
        assert browser.execute_script(text_js) == trace_text(get_program("tomita4"), word)

        order = []
        browser.execute_script("document.getElementById('crasp-pg-library').focus()")
        for _ in range(5):
            active = browser.switch_to.active_element
            order.append(active.get_attribute("id") or active.get_attribute("class"))
            ActionChains(browser).send_keys(Keys.TAB).perform()
        assert order == ["crasp-pg-library", "crasp-pg-program", "crasp-pg-input",
                         "crasp-pg-run", "crasp-pg-share"], order

        editor.clear()
        editor.send_keys("alphabet a b\nP := #Q(a) <=")
        editor.send_keys(Keys.CONTROL, Keys.ENTER)
        assert "Error at line 2, column 14: expected an operand" in browser.execute_script(result_js)
        editor.send_keys(" #Q(b)")
        box.clear()
        box.send_keys("aab", Keys.ENTER)
        assert browser.execute_script(result_js).startswith("Rejected")
        box.send_keys(Keys.BACK_SPACE, Keys.BACK_SPACE, "bb", Keys.ENTER)
        assert browser.execute_script(result_js).startswith("Accepted")

        browser.find_element(By.CLASS_NAME, "crasp-pg-share").click()
        link = browser.execute_script("return location.href")
        assert "#crasp=" in link
        browser.get("about:blank")
        browser.get(link)
        assert browser.find_element(By.ID, "crasp-pg-program").get_property("value") == \
            "alphabet a b\nP := #Q(a) <= #Q(b)"
        assert browser.find_element(By.ID, "crasp-pg-input").get_property("value") == "abb"
        assert browser.execute_script(result_js).startswith("Accepted")
    finally:
        browser.set_window_size(1400, 1000)


def _playground_page(site):
    url, html = site
    return f"{url}/{next(html.rglob('crasp.html')).relative_to(html)}"


# Where the playground is in the window, polled until it has stopped moving (the page above it
# may still be typesetting its math): its top edge in CSS px, and the window's height.
LANDED_JS = """
const done = arguments[arguments.length - 1];
const root = document.querySelector('.crasp-playground');
let last = null, still = 0, tries = 0;
(function poll() {
  const top = Math.round(root.getBoundingClientRect().top);
  still = top === last ? still + 1 : 0;
  last = top;
  if (still >= 5 || ++tries > 100) done({top, height: window.innerHeight, y: window.scrollY});
  else setTimeout(poll, 50);
})();
"""


@pytest.mark.parametrize("width", [1400, 420])
def test_a_shared_link_lands_on_the_playground(playground, site, width):
    """A link made by **Copy a link** opens the page at the playground (not at the top of the
    page, thousands of pixels above it), with the program, the input and the result restored."""
    from urllib.parse import quote

    from selenium.webdriver.common.by import By
    from test_site_browser import MATHJAX_JS
    browser, page = playground, _playground_page(site)
    program, word = "alphabet a b\nP := #Q(a) <= #Q(b)", "abb"
    browser.set_window_size(width, 900)
    try:
        browser.get("about:blank")
        browser.get(f"{page}#crasp={quote(program, safe='')}&input={quote(word, safe='')}")
        browser.execute_async_script(MATHJAX_JS)
        landed = browser.execute_async_script(LANDED_JS)
        assert browser.find_element(By.ID, "crasp-pg-program").get_property("value") == program
        assert browser.find_element(By.ID, "crasp-pg-input").get_property("value") == word
        assert browser.execute_script(
            "return document.querySelector('.crasp-pg-result').innerText").startswith("Accepted")
    finally:
        browser.set_window_size(1400, 1000)
    assert landed["y"] > 2000, f"the page opened near its top: {landed}"
    assert 0 <= landed["top"] < landed["height"] / 3, f"the playground is not in view: {landed}"


def test_next_token_programs_say_what_they_predict(playground, site):
    """A next-token program (majority, sort) has no accept line, so a verdict would mean
    nothing: its default input is a prompt ending in <sep>, and the result line says which
    symbols it predicts after the input (as the Python interpreter computes) and what that
    means, instead of "Rejected: next(<eos>) is 0"."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from lengthgen.crasp.library import get_program
    browser = playground
    browser.get(_playground_page(site))
    verdict_js = "return document.querySelector('.crasp-pg-verdict').innerText"
    for name in ("majority", "sort", "binary_majority", "induction_head"):
        Select(browser.find_element(By.ID, "crasp-pg-library")).select_by_value(name)
        program = get_program(name)
        word = browser.find_element(By.ID, "crasp-pg-input").get_property("value")
        assert word.endswith("<sep>") == ("<sep>" in program.alphabet), (name, word)
        values = run_program(program, word)
        want = [s for s, op in program.token_outputs.items() if values[op][-1]]
        shown = browser.execute_script(verdict_js)
        assert shown.startswith(f"Next: {', '.join(want) or 'no symbol'}. A next-token program "
                                "accepts no language"), (name, shown)
        assert "Rejected" not in shown, shown
    # with an accept line the verdict is a verdict, and the prediction is said as well
    editor = browser.find_element(By.ID, "crasp-pg-program")
    browser.execute_script("arguments[0].value = arguments[1]", editor,
                           "alphabet a b\nnext(a) := #Q(a) < 2\nnext(b) := true\naccept #Q(a) > 0\n")
    box = browser.find_element(By.ID, "crasp-pg-input")
    box.clear()
    box.send_keys("ab\n")
    shown = browser.execute_script(verdict_js)
    assert shown.startswith("Accepted") and "it predicts a, b" in shown, shown


def test_every_state_of_the_playground_is_readable_in_both_modes(playground, site):
    """Accepted, rejected, a next-token prediction, an error, a shared link: in each state every
    text of the playground has contrast at least MIN_CONTRAST against what is behind it, in the
    theme's light and in its dark mode."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from test_site_browser import CONTRAST_ONLY_JS, MIN_CONTRAST

    browser = playground
    browser.get(_playground_page(site))
    editor = browser.find_element(By.ID, "crasp-pg-program")
    box = browser.find_element(By.ID, "crasp-pg-input")
    run = browser.find_element(By.CLASS_NAME, "crasp-pg-run")

    def set_and_run(program=None, word=None):
        if program is not None:
            browser.execute_script("arguments[0].value = arguments[1]", editor, program)
        if word is not None:
            browser.execute_script("arguments[0].value = arguments[1]", box, word)
        run.click()

    states = {
        "accepted": lambda: set_and_run(word="aabb"),
        "rejected": lambda: set_and_run(word="abba"),
        "next-token": lambda: Select(browser.find_element(By.ID, "crasp-pg-library"))
        .select_by_value("majority"),
        "error": lambda: set_and_run(program="alphabet a b\nP := #Q(a) <=\n"),
        "shared": lambda: (set_and_run(program="alphabet a b\nP := #Q(a) <= #Q(b)\n", word="ab"),
                           browser.find_element(By.CLASS_NAME, "crasp-pg-share").click()),
    }
    problems, lowest = [], {}
    for state, act in states.items():
        Select(browser.find_element(By.ID, "crasp-pg-library")).select_by_value("dyck1")
        act()
        classes = browser.execute_script(
            "return Array.from(document.querySelectorAll('.crasp-pg-result *, .crasp-pg-link'))"
            ".filter(e => e.checkVisibility()).map(e => e.className).join(' ')")
        want = {"accepted": "crasp-pg-accept", "rejected": "crasp-pg-reject",
                "next-token": "crasp-pg-next", "error": "crasp-pg-error",
                "shared": "crasp-pg-link"}[state]
        assert want in classes, (state, classes)
        found = browser.execute_script(CONTRAST_ONLY_JS, MIN_CONTRAST,
                                       ".crasp-playground, .crasp-playground *")
        for mode, seen in found.items():
            lowest[mode] = min(lowest.get(mode, 99), seen["min"])
            problems += [f"{state}, {mode} mode: {low['what']} {low['text']!r}: {low['fg']} on "
                         f"{low['bg']} is {low['ratio']:.2f}:1" for low in seen["low"]]
    print("lowest contrast in the playground's states: " +
          ", ".join(f"{mode} {ratio:.2f}:1" for mode, ratio in lowest.items()))
    assert not problems, "\n".join(problems)
