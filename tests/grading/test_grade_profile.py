"""``grade --profile`` and ``grade-batch --profile``: the pi-ai-1 profile is graded per area.

The upstream package (installed as ``tests/adapters/test_profile_pi_ai.py`` does, skipped with the
reason when npm or the registry is missing) gets full marks in four areas; a Python port
with one helper broken loses points in that helper's area only, and the reports say
"area"; rubrics and implementations of the other profile are usage errors (exit 2).
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import cli
from conformance.grading.grader import prepare
from conformance.grading.rubric import DEFAULT_RUBRIC, Rubric, RubricError, load_rubric, parse_rubric
from conformance.grading.scoring import score
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import Case
from conformance.model.profiles import PI_AI_1
from tests.support.handshake_program import HANDSHAKE_PROGRAM
from tests.support.pi_ai_package import install_pi_ai
from tests.support.requirements import needs_node, needs_npm

AREAS = list(PI_AI_1.features)
EXIT_USAGE = 2


@pytest.fixture(scope="module")
def pi_ai_package() -> Path:
    return install_pi_ai()


def grade(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["grade", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# A port of the helpers whose contentText joins blocks with a space instead of a newline
# (spec/pi-ai-1/spec.md: the separator defaults to "\n"). Everything else is the port's.
BROKEN_PORT = """
from types import SimpleNamespace

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
from examples.pi_ai_port import text
from tests.support.pi_ai_port import HELPERS


def content_text(content, separator=" "):
    return text.content_text(content, separator)


def make():
    return PiAiBindingAdapter(SimpleNamespace(**{**vars(HELPERS), "content_text": content_text}), name="port-with-a-space")
"""


@pytest.fixture
def broken_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "broken_pi_ai_port.py").write_text(textwrap.dedent(BROKEN_PORT), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "python:broken_pi_ai_port:make"


# -- full marks ---------------------------------------------------------------------------


@needs_node
@needs_npm
def test_the_upstream_package_gets_full_marks_in_four_areas(
    pi_ai_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, gradescope, markdown = tmp_path / "report.json", tmp_path / "results.json", tmp_path / "report.md"
    code, out, _ = grade(
        capsys, "--profile", "pi-ai-1", "--impl", f"pi-ai:{pi_ai_package}", "--json", str(report), "--gradescope", str(gradescope),
        "--markdown", str(markdown),
    )  # fmt: skip
    assert code == 0, out
    assert "(profile pi-ai-1)" in out.splitlines()[0]
    for area in AREAS:
        assert f"area {area} " in out
    assert " lab " not in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["profile"] == "pi-ai-1" and "labs" not in data
    assert [area["area"] for area in data["areas"]] == AREAS
    assert all(area["points"] == area["max_points"] > 0 for area in data["areas"])
    assert data["points"] == data["max_points"] and data["passed"] == data["total"] > 0
    assert {case["area"] for case in data["cases"]} == set(AREAS)
    results = json.loads(gradescope.read_text(encoding="utf-8"))
    assert results["extra_data"]["profile"] == "pi-ai-1" and results["score"] == results["extra_data"]["max_score"]
    assert all(test["tags"][0].startswith("area ") for test in results["tests"])
    text = markdown.read_text(encoding="utf-8")
    assert "- profile: `pi-ai-1`" in text and "| area | points |" in text


# -- a broken helper ----------------------------------------------------------------------


def test_a_broken_helper_loses_points_in_its_area_only(broken_port: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, markdown = tmp_path / "report.json", tmp_path / "report.md"
    args = ["--profile", "pi-ai-1", "--impl", broken_port, "--trust-python", "--json", str(report), "--markdown", str(markdown)]
    code, out, _ = grade(capsys, *args)
    assert code == 0, out  # graded normally, whatever the score
    data = json.loads(report.read_text(encoding="utf-8"))
    areas = {area["area"]: area for area in data["areas"]}
    assert 0 < areas["messages"]["points"] < areas["messages"]["max_points"]
    assert areas["system-replay"]["points"] == areas["system-replay"]["max_points"]
    failed = [case for case in data["cases"] if case["status"] == "failed"]
    assert failed and {case["area"] for case in failed} == {"messages"}
    assert all(case["id"].startswith("pa-content-text") for case in failed), [case["id"] for case in failed]
    # The report names the area of what failed, and never a lab.
    assert re.search(r"failing cases: \d+ in \d+ causes?, one line each\n  area messages  ", out), out
    assert f"── area messages: {failed[0]['id']}" in out
    skipped = next(case for case in data["cases"] if case["status"] == "skipped")
    assert f"({skipped['area']} " not in skipped["feedback"] and f"(area {skipped['area']})" in skipped["feedback"]
    assert "## Area messages:" in markdown.read_text(encoding="utf-8")
    assert " lab " not in out and "lab " not in markdown.read_text(encoding="utf-8")


def test_a_bug_is_charged_once_in_the_earlier_area() -> None:
    shipped = load_rubric(profile="pi-ai-1")
    # Areas and cases listed later area first: the profile's order decides which area is charged.
    rubric = Rubric("reversed", dict(reversed(list(shipped.labs.items()))), profile="pi-ai-1")

    def failed_case(case_id: str, area: str) -> tuple[Case, Outcome]:
        case = Case(case_id, "scratch.yaml", 1, "", area, ("PA-TEXT-1",), "d", "content_text", {}, expect={"value": "a"}, profile="pi-ai-1")
        outcome = Outcome(case_id, "failed", "differs", 0.01, observation={"value": "b"}, divergence=Divergence("value", "'a'", "'b'"))
        return case, outcome

    # Another system-replay case passes: the area's own code works, so the excused case keeps its points.
    own = Case(
        "pa-own", "scratch.yaml", 1, "", "system-replay", ("PA-TEXT-1",), "d", "content_text", {}, expect={"value": "a"}, profile="pi-ai-1"
    )
    passed = (own, Outcome("pa-own", "passed", "", 0.01, observation={"value": "a"}))
    scored = score(rubric, [failed_case("pa-late", "system-replay"), passed, failed_case("pa-early", "messages")])
    by_id = {graded.case.id: graded for graded in scored.cases}
    assert by_id["pa-early"].inherited is None and by_id["pa-early"].points == 0
    inherited = by_id["pa-late"].inherited
    assert inherited is not None and inherited.lab == "messages"
    assert inherited.explanation().startswith("fails because of area messages (")
    assert scored.lab("system-replay") is not None and scored.lab("system-replay").points == 25  # type: ignore[union-attr]


def test_a_program_is_told_the_profile_it_is_graded_against(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "course_only.py"
    program.write_text(HANDSHAKE_PROGRAM, encoding="utf-8")  # names itself after the profile it was asked for; implements course
    report = tmp_path / "report.json"
    impl = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(program))}"
    _, out, _ = grade(capsys, "--profile", "pi-ai-1", "--impl", impl, "--sandbox", "none", "--json", str(report), "--budget", "60")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["implementation"] == "saw-pi-ai-1", out
    assert data["points"] == 0 and any("profile mismatch" in case["message"] for case in data["cases"]), out


# -- rubrics ------------------------------------------------------------------------------


def test_the_pi_ai_default_rubric_has_four_equal_areas_and_fits_the_fixtures() -> None:
    rubric = load_rubric(profile="pi-ai-1")
    assert rubric.profile == "pi-ai-1" and rubric.group_label == "area" and rubric.source == "default"
    assert list(rubric.labs) == AREAS
    assert len({rule.weight for rule in rubric.labs.values()}) == 1
    assert all(rule.scoring == "equal" for rule in rubric.labs.values())
    context = prepare(rubric)
    assert {case.lab for case in context.cases} == set(AREAS) and all(case.profile == "pi-ai-1" for case in context.cases)


def test_the_course_default_rubric_is_still_the_course() -> None:
    rubric = load_rubric()
    assert (
        rubric.profile == "course"
        and rubric.group_label == "lab"
        and ",".join(rubric.labs) == "3.1,3.2,4.1,4.2,5.1,5.2,5.3,6.1,6.2,6.3,7.1,7.2,7.3,7.4,7.5,9.1,9.2,9.3,9.4,9.5"
    )
    with pytest.raises(RubricError, match=r"a rubric of profile 'course'.*--profile pi-ai-1"):
        load_rubric(DEFAULT_RUBRIC, "pi-ai-1")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": 1, "profile": "pi-ai-1", "labs": {"messages": {"weight": 1}}}, "lists its areas under areas:, not labs:"),
        ({"version": 1, "areas": {"messages": {"weight": 1}}}, "lists its labs under labs:, not areas:"),
        ({"version": 1, "profile": "pi-ai-1", "areas": {"3.1": {"weight": 1}}}, "'3.1' is not one of"),
        ({"version": 1, "profile": "pi-ai-9", "labs": {"3.1": {"weight": 1}}}, "profile: 'pi-ai-9' is not one of"),
        ({"version": 1, "profile": "pi-ai-1", "areas": {"messages": {"weight": -1}}}, "areas.messages.weight: -1"),
    ],
)
def test_rubrics_are_checked_against_their_profile(data: dict[str, object], message: str) -> None:
    with pytest.raises(RubricError, match=message.replace("(", r"\(")):
        parse_rubric(data, "test")


def test_a_tag_that_matches_no_case_names_the_area() -> None:
    rubric = parse_rubric(
        {"version": 1, "profile": "pi-ai-1", "areas": {"messages": {"weight": 1, "scoring": "by-tag", "tags": {"PA-REPLAY": 2}}}}, "test"
    )
    with pytest.raises(RubricError, match=r"areas\.messages\.tags\.PA-REPLAY: matches no case of area messages"):
        prepare(rubric)


# -- usage errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "pi-ai-1", "--rubric", str(DEFAULT_RUBRIC), "--impl", "cmd:true"], "a rubric of profile 'course'"),
        (["--profile", "pi-ai-1"], "has no bundled implementation: give --impl"),
        (["--profile", "pi-ai-1", "--impl", "pi-course:."], "a pi-course implementation is profile course"),
        (["--profile", "pi-ai-1", "--impl", "reference"], "a reference implementation is profile course"),
        (["--impl", "pi-ai:."], "a pi-ai implementation is profile pi-ai-1, but grading is for --profile course"),
    ],
)
def test_wrong_combinations_are_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = grade(capsys, *args)
    assert code == EXIT_USAGE
    assert message in err


def test_grade_batch_refuses_course_submissions_under_pi_ai(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    base = ["grade-batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--profile", "pi-ai-1"]
    assert cli.main([*base, "--impl-template", "pi-course:{path}"]) == EXIT_USAGE
    assert "--impl-template pi-course:{path}: a pi-course implementation is profile course" in capsys.readouterr().err
    assert cli.main([*base, "--rubric", str(DEFAULT_RUBRIC)]) == EXIT_USAGE
    assert "a rubric of profile 'course'" in capsys.readouterr().err
    assert not (tmp_path / "out" / "gradebook.csv").exists()


# -- a batch ------------------------------------------------------------------------------


@needs_node
@needs_npm
def test_grade_batch_grades_pi_ai_packages_per_area(pi_ai_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "upstream").symlink_to(pi_ai_package, target_is_directory=True)
    (subs / "empty").mkdir()
    out, html = tmp_path / "out", tmp_path / "site"
    code = cli.main(["grade-batch", str(subs), "--out", str(out), "--profile", "pi-ai-1", "--html", str(html)])
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err  # the empty folder is not a package
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as file:
        rows = {row["submission"]: row for row in csv.DictReader(file)}
    header = list(rows["upstream"])
    assert [name for name in header if name.startswith(("area_", "lab_"))] == [f"area_{area}" for area in AREAS]
    assert rows["upstream"]["status"] == "ok" and rows["upstream"]["total"] == rows["upstream"]["max_total"]
    assert rows["empty"]["status"] == "not-a-project" and "holds no @earendil-works/pi-ai" in rows["empty"]["detail"]
    meta = json.loads((out / "gradebook.meta.json").read_text(encoding="utf-8"))
    assert meta["profile"] == "pi-ai-1"
    report = json.loads((out / "reports" / "upstream" / "report.json").read_text(encoding="utf-8"))
    assert report["profile"] == "pi-ai-1"
    overview = (html / "index.html").read_text(encoding="utf-8")
    assert "profile pi-ai-1" in overview and "Score distribution per area" in overview and "area messages" in overview
    assert ">lab " not in overview
    page = next(path.read_text(encoding="utf-8") for path in html.glob("*.html") if "upstream" in path.name)
    assert "profile pi-ai-1;" in page and '<h2 id="labs">Areas</h2>' in page and '<th scope="row">area messages</th>' in page
    # Resuming the batch under the other profile is refused, not mixed into one gradebook.
    assert cli.main(["grade-batch", str(subs), "--out", str(out)]) == EXIT_USAGE
