"""The HTML reports, built in process from Python variants of the reference (no Node.js, no browser).

Checks what a reader relies on: the highlighted row is the first differing event, untrusted
text (a submission's name, its output) is escaped, held-out cases follow the Gradescope rule,
every link resolves, and no page refers to anything outside itself.
"""

from __future__ import annotations

import html
import re
import types
from pathlib import Path
from typing import Any

import pytest

import reference_impl
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.reference import create as reference_adapter
from conformance.common.jsontypes import JsonValue
from conformance.grading.grader import GradingContext, SubmissionResult, prepare
from conformance.grading.rubric import load_rubric, parse_rubric
from conformance.grading.scoring import score
from conformance.judging.feedback import event_types, first_difference
from conformance.reports.html.class_site import write_class_site
from conformance.reports.html.layout import anchor, slugs
from conformance.reports.html.matrix_site import ImplRun, write_matrix_site
from conformance.reports.html.run_site import RunPage, write_run_site
from conformance.reports.html.svg import bins, histogram
from conformance.running.engine import run_alone
from tests.support.html_pages import check_site, diverged_rows
from tests.support.variants import VARIANTS

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'
BY_NAME = {variant.name: variant for variant in VARIANTS}
# One pytest-xdist worker runs the module (``--dist loadgroup``): its fixtures grade a small class,
# which every worker that ran one of its tests would otherwise grade again.
pytestmark = pytest.mark.xdist_group("html-pages")

CLASS = ("partials-shared-between-events", "exhaustion-throws-synchronously", "stream-result-is-a-copy", "textof-mixes-in-tool-names")


def _evil_binding() -> Any:
    namespace = {name: getattr(reference_impl, name) for name in reference_impl.__all__}
    namespace["text_of"] = lambda message: EVIL
    return types.SimpleNamespace(**namespace)


def _grade(name: str, adapter: Any, context: GradingContext) -> SubmissionResult:
    outcomes = [run_alone(adapter, case) for case in context.cases]
    graded = score(context.rubric, zip(context.cases, outcomes, strict=True))
    return SubmissionResult(name, "python:x", name, "ok", "", graded, context.rubric, 1.0)


@pytest.fixture(scope="module")
def context() -> GradingContext:
    return prepare(load_rubric())


@pytest.fixture(scope="module")
def results(context: GradingContext) -> list[SubmissionResult]:
    missing = [name for name in CLASS if name not in BY_NAME]
    assert not missing, f"tests/support/variants.py has no variant {missing}"
    graded = [_grade("correct", reference_adapter(), context)]
    graded += [_grade(name, BindingAdapter(BY_NAME[name].binding, name=name), context) for name in CLASS]
    graded.append(_grade(EVIL, BindingAdapter(_evil_binding(), name="evil"), context))
    return graded


@pytest.fixture(scope="module")
def site(results: list[SubmissionResult], context: GradingContext, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    stats = write_class_site(folder, results, context.clauses)
    assert stats.pages == len(results) + 1
    return folder


def test_the_highlighted_row_is_the_first_differing_event(results: list[SubmissionResult], site: Path) -> None:
    checked = 0
    for result in results[1:]:
        text = (site / f"s-{result.name}.html").read_text(encoding="utf-8") if result.name in CLASS else ""
        if not text:
            continue
        rows = diverged_rows(text)
        for graded in result.score.cases:
            divergence = graded.outcome.divergence
            match = re.match(r"steps\[(\d+)\]\.events(?:\[(\d+)\])?", divergence.path) if divergence else None
            if graded.outcome.status != "failed" or match is None:
                continue
            if match[2] is not None:
                expected_row = int(match[2])
            else:
                step = int(match[1])
                case_steps: Any = graded.case.steps  # parsed JSON, walked key by key
                observation: Any = graded.outcome.observation
                expected = event_types(case_steps[step]["expect"]["events"])
                actual = event_types(observation["steps"][step]["events"])
                expected_row = first_difference(expected, actual)  # type: ignore[assignment]
            assert rows.get(anchor(graded.case.id)) == expected_row, (result.name, graded.case.id, divergence)
            checked += 1
    assert checked >= 20


def test_the_shared_partial_case_highlights_the_partial_field(site: Path) -> None:
    text = (site / "s-partials-shared-between-events.html").read_text(encoding="utf-8")
    section = text[text.index(f'id="{anchor("sm-text-three-blocks-partials-not-shared")}"') :]
    start = section.index('class="diverged"')
    row = section[start : section.index("</tr>", start)]
    assert "▶ first difference" in row
    assert re.search(r'<details open><summary><mark class="field"[^>]*><code>partial</code>', row)
    assert "SM-PLAY-3" in section[: section.index("</section>")]
    assert "If an early event&#x27;s partial already shows blocks played later" in section[: section.index("</section>")]


def test_untrusted_text_is_escaped(site: Path) -> None:
    for path in site.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "<script" not in text and "<img" not in text, path.name
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in (site / "index.html").read_text(encoding="utf-8")


def test_the_site_is_self_contained_and_its_links_resolve(site: Path) -> None:
    check_site(site)


def test_the_overview_names_each_bug_once_with_its_students(site: Path) -> None:
    text = (site / "index.html").read_text(encoding="utf-8")
    groups = text[text.index('id="groups"') : text.index('id="submissions"')]
    for cause in ("steps[*].events[*].partial.content: ", "steps[*].threw: threw", "steps[*].same_object_as: expected ", "text_of value: "):
        assert f"<code>{cause}" in groups
    # One histogram per lab: the python: ports say nothing about chapters, so all twelve are graded.
    assert groups.count("<svg") == 0 and text.count("<svg") == 12
    assert "<td>" in groups and "partials-shared-between-events" in groups


def test_inherited_cases_are_shown_under_the_lab_that_owns_the_bug(results: list[SubmissionResult], site: Path) -> None:
    shared = next(result for result in results if result.name == "partials-shared-between-events")
    inherited = [graded for graded in shared.score.cases if graded.inherited is not None]
    assert inherited, "the shared partial fails lab 4.2 cases because of lab 4.1"
    text = (site / "s-partials-shared-between-events.html").read_text(encoding="utf-8")
    assert 'id="inherited"' in text and "because of lab 4.1" in text
    for graded in inherited:
        assert f'id="{anchor(graded.case.id)}"' in text


def test_held_out_cases_are_marked_for_staff_and_left_out_for_students(tmp_path: Path) -> None:
    held = "sm-text-three-blocks-partials-not-shared"
    rubric = parse_rubric(
        {"version": 1, "name": "held", "labs": {lab: {"weight": 25} for lab in ("3.1", "3.2", "4.1", "4.2")}, "held_out": [held]}
    )
    context = prepare(rubric)
    result = _grade("shared", BindingAdapter(BY_NAME["partials-shared-between-events"].binding, name="x"), context)
    staff = write_class_site(tmp_path / "staff", [result], context.clauses).folder
    students = write_class_site(tmp_path / "students", [result], context.clauses, for_students=True).folder
    staff_text = (staff / "s-shared.html").read_text(encoding="utf-8")
    assert held in staff_text and "held out: students see it after_published" in staff_text
    for path in students.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert held not in text, path.name
        assert " / 25.00" not in text, "no points: they would tell how the held-out cases did"
    check_site(students)


def test_a_students_site_shows_each_student_only_themselves(
    results: list[SubmissionResult], context: GradingContext, tmp_path: Path
) -> None:
    stats = write_class_site(tmp_path / "students", results, context.clauses, for_students=True)
    assert not (stats.folder / "index.html").exists() and "no class overview" in stats.line()
    pages = sorted(stats.folder.glob("*.html"))
    assert len(pages) == len(results)
    files = slugs([result.name for result in results], prefix="s-")
    for result in results:
        text = (stats.folder / files[result.name]).read_text(encoding="utf-8")
        assert 'href="index.html"' not in text and html.escape(result.name) in text
        others = [other.name for other in results if other.name != result.name and html.escape(other.name) in text]
        assert all(other in result.name for other in others), (result.name, others)  # only as part of its own name


def test_run_and_matrix_sites(results: list[SubmissionResult], context: GradingContext, tmp_path: Path) -> None:
    shared = next(result for result in results if result.name == "partials-shared-between-events")
    pairs = [(graded.case, graded.outcome) for graded in shared.score.cases]
    run = write_run_site(tmp_path / "run", RunPage("shared <b>", pairs, context.clauses))
    text = (run.folder / "index.html").read_text(encoding="utf-8")
    assert "shared &lt;b&gt;" in text and "Failures by cause" in text
    assert diverged_rows(text)[anchor("sm-text-three-blocks-partials-not-shared")] == 0
    check_site(run.folder)
    cases = list(context.cases)
    runs = []
    for result in results[:3]:  # score.cases is in rubric lab order: put the outcomes in the cases' order
        by_id = {graded.case.id: graded.outcome for graded in result.score.cases}
        runs.append(ImplRun(result.name, [by_id[case.id] for case in cases]))
    matrix = write_matrix_site(tmp_path / "matrix", cases, runs, context.clauses)
    check_site(matrix.folder)
    index = (matrix.folder / "index.html").read_text(encoding="utf-8")
    assert index.count("<tr>") == 1 + len({clause for case in cases for clause in case.clauses}) + 1
    clause_page = (matrix.folder / "c-SM-PLAY-3.html").read_text(encoding="utf-8")
    assert f'href="i-partials-shared-between-events.html#{anchor("sm-text-three-blocks-partials-not-shared")}"' in clause_page


def test_histogram_bins_and_text_equivalent() -> None:
    assert bins([0, 2.4, 2.5, 24.9, 25], 25) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    svg = histogram([25, 25, 0], 25, "lab 3.1")
    assert 'role="img"' in svg and "lab 3.1: 0 to 2.5: 1" in svg and "22.5 to 25: 2" in svg


def test_the_command_lines(tmp_path: Path) -> None:
    from tests.support.cli_runner import cli

    (tmp_path / "subs").mkdir()
    refused = cli("grade-batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--for-students")
    assert refused.returncode == 2 and "--for-students goes with --html" in refused.stderr
    (tmp_path / "file").write_text("x", encoding="utf-8")
    refused = cli("run", "--lab", "3.1", "--html", str(tmp_path / "file"))
    assert refused.returncode == 2 and "is a file, but a folder is meant" in refused.stderr
    run = cli("run", "--lab", "3.1", "--html", str(tmp_path / "run"))
    assert run.returncode == 0 and "html report: 1 pages" in run.stdout, run.stdout[-2000:]
    assert "No failures." in (tmp_path / "run" / "index.html").read_text(encoding="utf-8")
    matrix = cli("matrix", "--impl", "reference", "--impl", "reference", "--lab", "3.1", "--html", str(tmp_path / "matrix"))
    assert matrix.returncode == 0, matrix.stderr
    index = (tmp_path / "matrix" / "index.html").read_text(encoding="utf-8")
    assert "i-reference.html" in index and "i-reference__2.html" in index and "✗" not in index.split("</p>", 2)[-1]
    check_site(tmp_path / "matrix")


def test_a_perfect_submission_has_no_empty_failures_section(
    results: list[SubmissionResult], context: GradingContext, tmp_path: Path
) -> None:
    correct = results[0]
    assert correct.name == "correct" and correct.score.passed == correct.score.total
    for folder, for_students in (("staff", False), ("students", True)):
        write_class_site(tmp_path / folder, [correct], context.clauses, for_students=for_students)
        page = (tmp_path / folder / "s-correct.html").read_text(encoding="utf-8")
        assert "Failures by cause" not in page and 'id="failures"' not in page
        assert "<p>No failures.</p>" in page
    run = write_run_site(
        tmp_path / "run", RunPage("correct", [(graded.case, graded.outcome) for graded in correct.score.cases], context.clauses)
    )
    text = (run.folder / "index.html").read_text(encoding="utf-8")
    assert "Failures by cause" not in text and "<p>No failures.</p>" in text
    check_site(run.folder)
    failing = next(result for result in results if result.name == "partials-shared-between-events")
    write_class_site(tmp_path / "failing", [failing], context.clauses)
    assert re.search(
        r"Failures by cause \(\d+ cases in 1 group\)",
        (tmp_path / "failing" / "s-partials-shared-between-events.html").read_text(encoding="utf-8"),
    )


def test_a_case_page_says_what_placeholders_mean_and_notes_a_silent_stream() -> None:
    from conformance.judging.outcome import Divergence, Outcome
    from conformance.model.cases import Case
    from conformance.model.clauses import load_clauses
    from conformance.reports.html.casepage import case_section

    expected_events: list[JsonValue] = [{"type": "start", "partial": {"provider": {"$type": "string"}, "content": []}}]
    case = Case(
        "c", "scratch.yaml", 1, "04", "4.1", ("SM-PLAY-1",), "scratch", "scripted_model", {},
        steps=({"action": "consume", "expect": {"events": expected_events, "finished": True}},), step_lines=(2,),
    )  # fmt: skip
    silent = Outcome(
        "c", "failed", "steps[0].events: expected 1 item but got 0 items", 0.3,
        divergence=Divergence("steps[0].events", "1 item", "0 items", kind="missing"), step_index=0,
        observation={"steps": [{"events": [], "finished": False}]},
    )  # fmt: skip
    page = case_section(case, silent, load_clauses())
    assert "stream() never pushed anything" in page
    placeholder = Outcome(
        "c", "failed", "x", 0.1, divergence=Divergence("steps[0].events[0].type", '"start"', '"end"'), step_index=0,
        observation={"steps": [{"events": [{"type": "end", "partial": {"provider": "p", "content": []}}], "finished": True}]},
    )  # fmt: skip
    page = case_section(case, placeholder, load_clauses())
    assert "<i>any string</i>" in page and "$type" not in page
