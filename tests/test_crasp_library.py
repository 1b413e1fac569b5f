"""Every library program against its language (DFA), task (solver) or reference function,
and the fragment of each program against the table column it backs."""
import pytest

from lengthgen.crasp.check import all_instances, check_instances, check_language, \
    check_next_reference, check_task
from lengthgen.crasp.library import REFERENCES, copy_unique_text, get_program, majority_text, \
    program_names, sort_text
from lengthgen.crasp.lemmas import APE, COLUMNS, NOPE, claim
from lengthgen.crasp.syntax import parse_program
from lengthgen.tasks.algorithmic import get_algorithmic
from lengthgen.tasks.metadata import LANGUAGES, TABLE

LANGUAGE_PROGRAMS = [i.id for i in LANGUAGES if i.id in program_names()]


@pytest.mark.parametrize("name", LANGUAGE_PROGRAMS + sorted(REFERENCES))
def test_language_program_matches_its_language(name):
    report = check_language(get_program(name), name, max_length=10, n_random=2000,
                            max_random_length=300)
    assert report.ok, report.disagreements
    assert report.exhaustive_length >= 7


@pytest.mark.parametrize("task_id", ["binary_majority", "binary_majority_interleave",
                                     "majority", "sort"])
def test_task_program_matches_the_solver(task_id):
    report = check_task(get_program(task_id), task_id, n_random=1000, n_lengths=25)
    assert report.ok, report.disagreements


def test_copy_unique_at_full_vocabulary():
    report = check_task(get_program("copy_unique"), "copy_unique", n_random=100, n_lengths=6)
    assert report.ok, report.disagreements


@pytest.mark.parametrize("text, task_id, symbols, longest", [
    (majority_text(("a", "b", "c")), "majority", "abc", 7),
    (sort_text(("0", "1", "2", "3", "4")), "sort", "01234", 5),
    (copy_unique_text(("0", "1", "2", "3", "4")), "copy_unique", "01234", 5),
])
def test_generated_programs_exhaustively_at_a_small_vocabulary(text, task_id, symbols, longest):
    task = get_algorithmic(task_id)

    def valid(x):
        if task_id == "majority":
            counts = sorted((x.count(s) for s in set(x)), reverse=True)
            return len(counts) == 1 or counts[0] > counts[1]
        return len(set(x)) == len(x)
    instances = list(all_instances(symbols, valid, longest))
    report = check_instances(parse_program(text), instances, task.solve, against=task_id)
    assert report.ok, report.disagreements
    assert report.checked == len(instances) > 300


def test_induction_head_matches_its_reference():
    report = check_next_reference(get_program("induction_head"), "induction_head",
                                  max_length=7, n_random=100)
    assert report.ok, report.disagreements


def test_a_wrong_program_is_caught():
    wrong = parse_program("alphabet a b\nD := #Q(a) - #Q(b)\naccept D = 0\n", name="wrong")
    report = check_language(wrong, "d2", n_random=100)
    assert not report.ok and report.n_disagreements > 0
    assert all(e.endswith("program accepts") for e in report.disagreements)  # too deep or "ba"


@pytest.mark.parametrize("task_id", sorted(TABLE))
def test_programs_lie_in_the_fragment_of_the_column_they_back(task_id):
    info = TABLE[task_id]
    for column, paper in ((NOPE, info.crasp), (APE, info.crasp_periodic_local)):
        ours, backing = claim(task_id, column)
        assert ours == paper, (task_id, column, ours, paper)
        if ours == "yes":
            fragment = get_program(backing).fragment()
            assert fragment == NOPE or column == APE
    assert set(COLUMNS) == {NOPE, APE}


def test_programs_without_positions_use_none():
    for name in ["majority_ab", "dyck1", "anbncn", "piecewise_abc", "tomita7", "sort"]:
        p = get_program(name)
        assert not p.uses_periodic() and not p.uses_local(), name
    assert get_program("tomita4").fragment() == "C-RASP[local]"
    assert get_program("aa_star").fragment() == "C-RASP[periodic]"


def test_a_task_whose_input_ends_with_its_own_separator():
    # addition: the prompt ends with "=", no <sep>; a program that always predicts <eos>
    # right after "=" is right exactly when the answer is empty, i.e. never
    program = parse_program("alphabet 0 1 + =\nnext(<eos>) := Q(=)\n", name="eos-only")
    report = check_task(program, "addition", n_random=20, max_length=8, n_lengths=2)
    assert report.checked > 0 and report.n_disagreements >= report.checked
    first = report.disagreements[0]
    assert first.split(":")[0].endswith("=") and "predicts {<eos>}" in first  # scored from "="
