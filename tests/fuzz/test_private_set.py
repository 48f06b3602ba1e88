"""A private grading set (issue 24, item 1) and its drill: the lookup-table cheat.

The set is drawn from a secret seed with the fuzzer's strategies, its expectations are the
reference's, it lints clean and the reference passes it. A submission that only replays the
public fixtures' answers passes every public case and no private one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import parse_impl
from conformance.adapters.reference import create as create_reference
from conformance.authoring.lint import lint
from conformance.fuzz import private, private_files
from conformance.fuzz.emit import file_text
from conformance.fuzz.operations import lab_operations
from conformance.grading.chapter_scope import scope_of, scoped
from conformance.grading.grader import prepare
from conformance.grading.rubric import Rubric, load_rubric, parse_rubric
from conformance.grading.scoring import Score, score
from conformance.loading.loader import load_suite
from conformance.model.cases import LABS, Case
from conformance.running.engine import run_alone
from conformance.yamlio.canonical import inputs_key
from tests.support.cli_runner import cli
from tests.support.course_projects import chapter_06, chapter_07, chapter_09
from tests.support.fakes.lookup_table import LookupTable, record
from tests.support.private_sets import write_private_set
from tests.support.requirements import costly

SECRET = "staff only: tests/fuzz/test_private_set.py"


@pytest.fixture(scope="module")
def private_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default-size set for the default rubric, written once for the module."""
    return write_private_set(SECRET, tmp_path_factory.mktemp("private"))


@pytest.fixture(scope="module")
def private_cases(private_dir: Path) -> list[Case]:
    suite = load_suite(private_dir)
    assert not suite.broken
    return suite.cases


@pytest.fixture
def reference() -> Iterator[Adapter]:
    adapter = create_reference()
    yield adapter
    adapter.close()


def _inputs(cases: list[Case]) -> set[str]:
    return {inputs_key(case.operation, case.input, case.steps) for case in cases}


# -- the set -------------------------------------------------------------------------------


@costly
def test_the_set_lints_clean_and_every_case_passes_the_reference(private_dir: Path, private_cases: list[Case], reference: Adapter) -> None:
    # Every lab of the course has a strategy (issue 32), the Agent's labs 9.2-9.5 included; a set
    # is extra cases to lint.
    assert set(private.LAB_OPERATIONS) == set(LABS)
    assert [str(problem) for problem in lint(private_dir, extra=True)] == []
    outcomes = [run_alone(reference, case) for case in private_cases]
    assert [(outcome.case_id, outcome.message) for outcome in outcomes if outcome.status != "passed"] == []
    result = cli("run", "--impl", "reference", "--fixtures", str(private_dir), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "100 total, 100 passed" in result.stdout


@costly
def test_every_lab_gets_its_share_and_lab_3_1_every_operation(private_cases: list[Case]) -> None:
    # Every lab the default rubric grades, chapters 05 to 09 included, the Agent's 9.2-9.5 too
    # (issue 32): 100 cases over twenty labs of equal weight, 5 each.
    shares = dict.fromkeys(load_rubric().labs, 5)
    assert len(shares) == 20 and Counter(case.lab for case in private_cases) == shares
    assert {case.chapter for case in private_cases if case.lab.startswith("6.")} == {"06"}
    assert {case.chapter for case in private_cases if case.lab.startswith("7.")} == {"07"}
    assert {(case.operation, case.chapter) for case in private_cases if case.lab == "9.1"} == {("reduce_agent_state", "09")}
    # Lab 3.1's 5 cases go to 5 of its 7 operations, one each (earlier operations first): a
    # lookup table still earns nothing there, as the lookup-table drills below show.
    operations = Counter(case.operation for case in private_cases if case.lab == "3.1")
    assert set(operations) <= set(private.LAB_OPERATIONS["3.1"])
    assert len(operations) == min(5, len(private.LAB_OPERATIONS["3.1"])) and set(operations.values()) == {1}


def test_every_case_says_what_it_is(private_dir: Path, private_cases: list[Case]) -> None:
    rubric = load_rubric()
    for case in private_cases:
        assert "-private-" in case.id, case.id
        assert "secret seed" in case.description
        assert case.clauses, case.id
        assert rubric.labs[case.lab].case_weight(case) > 0, case.id  # no chapter-02 generic stream case
    for path in sorted(private_dir.rglob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0] == private_files.HEADER
        assert lines[1] == f"# {private_files.GENERATED_MARK}"
        assert SECRET not in path.read_text(encoding="utf-8")


def test_no_case_repeats_a_public_input_or_one_drawn_for_any_seed(private_cases: list[Case]) -> None:
    assert not _inputs(private_cases) & _inputs(load_suite().cases)
    assert not _inputs(private_cases) & private.predictable_inputs()
    simplest = '{"input":{"message":{"content":[],"role":"user","timestamp":0}},"operation":"text_of","steps":[]}'
    assert simplest in private.predictable_inputs()  # Hypothesis's first draw for every seed
    assert len(_inputs(private_cases)) == len(private_cases)


@costly
def test_the_same_seed_writes_the_same_bytes_in_another_process_and_another_seed_other_inputs(tmp_path: Path) -> None:
    first, again, other = tmp_path / "first", tmp_path / "again", tmp_path / "other"
    for out, seed in ((first, "seed one"), (again, "seed one"), (other, "seed two")):
        result = cli("private-set", "--seed", seed, "--out", str(out), "--cases", "40", timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        shares = ", ".join(f"{lab}: 2" for lab in load_rubric().labs)  # twenty labs of equal weight
        assert f"40 cases ({shares})" in result.stdout
    files = sorted(path.relative_to(first) for path in first.rglob("*.yaml"))
    # One file per lab, and one more per other id prefix of the lab (fixtures lint wants a file's ids alike).
    drawn = {lab for lab in load_rubric().labs if lab in lab_operations()}
    assert {private_files.file_name(lab) for lab in drawn} <= {name.as_posix() for name in files}
    assert files == sorted(path.relative_to(again) for path in again.rglob("*.yaml"))
    for name in files:
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    # Every search starts with its simplest programs (an empty message, an empty script), whatever
    # the seed: without the probe seeds' exclusion these two sets shared 17 of their 40 inputs.
    # With it, 2 (two small ScriptedModel scripts); 15 other pairs of seeds shared 0 or 1.
    first_inputs, other_inputs = _inputs(load_suite(first).cases), _inputs(load_suite(other).cases)
    assert len(first_inputs & other_inputs) <= 2


def test_cases_follow_the_rubrics_lab_weights() -> None:
    rubric = parse_rubric({"version": 1, "labs": {"3.1": {"weight": 10}, "3.2": {"weight": 20}, "4.2": {"weight": 70}}})
    assert private.quotas(rubric, 10) == {"3.1": 1, "3.2": 2, "4.2": 7}
    assert private.quotas(rubric, 3) == {"3.1": 1, "3.2": 1, "4.2": 1}  # every graded lab gets a case
    assert sum(private.quotas(load_rubric(), 20).values()) == 20  # the default rubric's twenty labs, one case each
    with pytest.raises(private.PrivateSetError, match="grades 20 labs"):
        private.quotas(load_rubric(), 10)
    with pytest.raises(private.PrivateSetError):
        private.quotas(rubric, 2)


def test_a_lab_whose_cases_all_weigh_0_is_reported_not_drawn_forever(reference: Adapter) -> None:
    rubric = parse_rubric({"version": 1, "labs": {"3.2": {"weight": 25, "scoring": "by-tag", "tags": {"stream": 0}}}})
    with pytest.raises(private.PrivateSetError, match=r"lab 3\.2 event_stream: 0 of 2"):
        private.generate(reference, rubric, SECRET, 2)


@costly
def test_hand_written_cases_are_kept_and_their_inputs_never_drawn(tmp_path: Path, private_cases: list[Case]) -> None:
    # Staff add a case by hand whose inputs are those of a case the seed draws; regenerating
    # keeps their file and draws another case instead of repeating those inputs.
    out = tmp_path / "set"
    taken = next(case for case in private_cases if case.operation == "text_of")
    hand = out / "ch03" / "staff.yaml"
    hand.parent.mkdir(parents=True)
    # Written as fixtures are (a drawn text may hold characters flow JSON cannot carry in YAML, NEL say).
    staff = replace(
        taken, id="text-of-staff-1", clauses=("IR-TEXT-1",), description="written by hand.", expect={"value": {"$type": "string"}}
    )
    hand.write_text(file_text("03", "hand-written private cases", [staff], [], header=private_files.HEADER), encoding="utf-8")
    before = hand.read_bytes()
    result = cli("private-set", "--seed", SECRET, "--out", str(out), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert hand.read_bytes() == before
    regenerated = load_suite(out).cases
    assert [case.id for case in regenerated].count("text-of-staff-1") == 1
    assert taken.id not in {case.id for case in regenerated}
    assert len(regenerated) == 101
    assert [str(problem) for problem in lint(out, extra=True)] == []


def test_a_file_it_did_not_write_is_never_overwritten(tmp_path: Path) -> None:
    target = tmp_path / private_files.file_name("3.1")
    target.parent.mkdir(parents=True)
    target.write_text("# my own notes\n", encoding="utf-8")
    result = cli("private-set", "--seed", SECRET, "--out", str(tmp_path), "--cases", "20", timeout=120)
    assert result.returncode == 2
    assert "was not written by private-set" in result.stderr
    assert target.read_text(encoding="utf-8") == "# my own notes\n"


# -- the drill: a lookup table of the public fixtures ---------------------------------------


@pytest.fixture(scope="module")
def lookup_table() -> LookupTable:
    return LookupTable(record(load_suite().cases))


def _score(adapter: Adapter, cases: list[Case], rubric: Rubric) -> Score:
    return score(rubric, [(case, run_alone(adapter, case)) for case in cases if rubric.selects(case)])


def _skeleton() -> Adapter:
    # The course's starting point throws "not implemented" everywhere: every case is skipped.
    skeleton = Adapter()
    skeleton.name = "skeleton"
    return skeleton


def test_the_lookup_table_passes_every_public_case(lookup_table: LookupTable) -> None:
    public = _score(lookup_table, load_suite().cases, load_rubric())
    assert public.passed == public.total
    assert public.points == pytest.approx(load_rubric().max_score)


def test_the_lookup_table_passes_no_private_case(lookup_table: LookupTable, private_cases: list[Case]) -> None:
    rubric = load_rubric()
    recognised = lookup_table.recognised
    cheat = _score(lookup_table, private_cases, rubric)
    skeleton = _score(_skeleton(), private_cases, rubric)
    assert lookup_table.recognised == recognised, "the table knew a private input"
    assert cheat.passed <= skeleton.passed == 0
    # What passing earns (attribution aside, see below): nothing, like the skeleton.
    assert sum(case.points for case in cheat.cases if case.passed) == 0


#: A course repository at each chapter the drill grades, and the labs the default rubric grades it on.
CHAPTERS: dict[str, tuple[Callable[[Path], Path], set[str]]] = {
    "06": (chapter_06, {"3.1", "3.2", "4.1", "4.2", "5.1", "5.2", "5.3", "6.1", "6.2", "6.3"}),
    "07": (chapter_07, {"3.1", "3.2", "4.1", "4.2", "5.1", "5.2", "5.3", "6.1", "6.2", "6.3", "7.1", "7.2", "7.3", "7.4", "7.5"}),
    "09": (chapter_09, set(load_rubric().labs)),
}


def _chapter_scores(chapter: str, lookup_table: LookupTable, private_dir: Path, tmp_path: Path) -> tuple[Rubric, Score, Score, list[Case]]:
    """The table's and the skeleton's scores as a course repository at ``chapter``, with the private set held out."""
    project, labs = CHAPTERS[chapter]
    scope = scope_of(parse_impl(f"pi-course:{project(tmp_path / 'project')}"))
    assert scope.chapter == chapter
    context, _ = scoped(prepare(load_rubric(), held_out=private_dir), scope)
    rubric, everything = context.rubric, list(context.cases)
    assert set(rubric.labs) == labs
    assert rubric.public_cases == "confirmed"  # the default
    return rubric, _score(lookup_table, everything, rubric), _score(_skeleton(), everything, rubric), everything


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_with_the_private_set_graded_too_the_lookup_table_earns_nothing_in_a_lab_it_reaches(
    chapter: str, lookup_table: LookupTable, private_dir: Path, tmp_path: Path
) -> None:
    # A course repository is graded on the labs up to its chapter (from its files: nothing is
    # built or run). On main the table earned 66/100 at chapter 06 when 248 public cases carried
    # the points; with labs 3.1-6.3 confirmed by private cases it still earned the labs no
    # strategy drew: 125/375 at chapter 07 and 150/400 at chapter 09 (labs 7.1-7.5 and 9.1,
    # unconfirmed; the private-set summary line said so). Now every lab has private cases.
    rubric, cheat, skeleton, everything = _chapter_scores(chapter, lookup_table, private_dir, tmp_path)
    assert skeleton.points == 0
    for lab in rubric.labs:  # every public case passed, nothing earned
        assert any(graded.held_out for graded in cheat.cases if graded.case.lab == lab), lab
        assert all(graded.passed for graded in cheat.cases if graded.case.lab == lab and not graded.held_out)
        assert next(graded for graded in cheat.labs if graded.lab == lab).points == 0, lab
    # What students see before publication still shows every public case passed, with its points.
    assert all(graded.visible_points == graded.max_points for graded in cheat.cases if not graded.held_out)
    # A plain weighting is the staff's choice, and then the table earns the public cases' worth.
    plain = _score(lookup_table, everything, replace(rubric, public_cases="plain"))
    public_worth = sum(graded.max_points for graded in plain.cases if not graded.held_out)
    assert plain.points == pytest.approx(public_worth) and rubric.max_score / 3 < public_worth < rubric.max_score


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_with_the_private_set_graded_too_the_lookup_table_earns_no_more_than_the_skeleton(
    chapter: str, lookup_table: LookupTable, private_dir: Path, tmp_path: Path
) -> None:
    # Issue 32's "done when", at each chapter a repository can be at.
    _, cheat, skeleton, _ = _chapter_scores(chapter, lookup_table, private_dir, tmp_path)
    assert cheat.points <= skeleton.points


def test_on_the_private_set_the_lookup_table_scores_no_more_than_the_skeleton(lookup_table: LookupTable, private_cases: list[Case]) -> None:
    rubric = load_rubric()
    assert _score(lookup_table, private_cases, rubric).points <= _score(_skeleton(), private_cases, rubric).points
