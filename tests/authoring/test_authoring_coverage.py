"""``fixtures coverage``: clauses in spec order, unchecked ones first; --check fails on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.authoring import coverage
from conformance.model.cases import Case
from conformance.model.clauses import Clause, load_clauses
from tests.support.fixture_scratch import run_fixtures, scratch


def test_every_clause_of_the_bundled_fixtures_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_fixtures(capsys, "coverage", "--check", "--format", "json")
    assert code == 0
    report = json.loads(out)
    # Pending clauses (chapter 09's Agent, cases to come) first, then the checked ones; each group in spec order.
    pending = [row["id"] for row in report["clauses"] if row["status"] == "pending"]
    assert [row["id"] for row in report["clauses"]] == pending + [clause for clause in load_clauses() if clause not in pending]
    assert pending == [clause for clause in load_clauses() if clause in pending]
    assert report["summary"]["unchecked"] == 0 and all(row["cases"] or row["status"] == "pending" for row in report["clauses"])
    assert "clauses checked by at least one case" in err


def test_unchecked_clauses_come_first_in_spec_order_and_fail_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    code, out, err = run_fixtures(capsys, "coverage", "--fixtures", str(root), "--check")
    assert code == 1
    spec_order = list(load_clauses())
    rows = [line.split(" | ")[0].lstrip("| ") for line in out.splitlines() if line.startswith("| ") and not line.startswith("| clause")]
    statuses = [line.split(" | ")[2] for line in out.splitlines() if line.startswith("| ") and not line.startswith("| clause")]
    unchecked = [clause for clause, status in zip(rows, statuses, strict=True) if status == "unchecked"]
    assert unchecked and statuses[: len(unchecked)] == ["unchecked"] * len(unchecked)
    assert unchecked == [clause for clause in spec_order if clause in unchecked]
    # Then the pending clauses (cases to come), then the checked ones, each group in spec order.
    pending = [clause for clause, status in zip(rows, statuses, strict=True) if status == "pending"]
    assert pending == [clause for clause in spec_order if clause in pending]
    checked = [clause for clause in spec_order if clause not in unchecked and clause not in pending]
    assert rows[len(unchecked) :] == pending + checked
    assert "| IR-MAKE-1 |" in out and "`make-text-empty`" in out
    assert "unchecked: " + ", ".join(unchecked) in err
    # Without --check the same report exits 0; --output writes it to a file.
    report = tmp_path / "coverage.json"
    code, out, _ = run_fixtures(capsys, "coverage", "--fixtures", str(root), "--format", "json", "--output", str(report))
    assert code == 0 and out == ""
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [row["id"] for row in data["clauses"]][: len(unchecked)] == unchecked
    assert data["summary"]["unchecked"] == len(unchecked)


def test_a_withdrawn_clause_needs_no_case() -> None:
    clauses = {
        "A-1": Clause("A-1", "In force.", 1),
        "A-2": Clause("A-2", "*withdrawn* (replaced by A-3).", 2),
        "A-3": Clause("A-3", "In force, unchecked.", 3),
    }
    case = Case("c", "f.yaml", 1, "03", "3.1", ("A-1",), "d", "text_of", {})
    table = coverage.compute(clauses, [case], "9.9.9")
    assert [(row.id, row.status) for row in table.rows] == [("A-3", "unchecked"), ("A-1", "checked"), ("A-2", "withdrawn")]
    assert table.unchecked == ["A-3"]
    assert table.summary() == "coverage: 1/2 clauses checked by at least one case; unchecked: A-3"


def test_a_pending_clause_is_listed_apart_and_passes_the_check_until_a_case_cites_it() -> None:
    clauses = {
        "A-1": Clause("A-1", "In force.", 1),
        "A-2": Clause("A-2", "Waits for a vocabulary. *cases pending*", 2),
        "A-3": Clause("A-3", "In force, unchecked.", 3),
    }
    case = Case("c", "f.yaml", 1, "03", "3.1", ("A-1",), "d", "text_of", {})
    table = coverage.compute(clauses, [case], "9.9.9")
    assert [(row.id, row.status) for row in table.rows] == [("A-3", "unchecked"), ("A-2", "pending"), ("A-1", "checked")]
    assert (table.unchecked, table.pending) == (["A-3"], ["A-2"])
    assert table.summary() == "coverage: 1/3 clauses checked by at least one case; unchecked: A-3; 1 pending (cases to come): A-2"
    assert json.loads(coverage.to_json(table))["summary"]["pending"] == 1
    # Once a case cites it, the marker no longer matters: the clause is checked.
    cited = Case("d", "f.yaml", 2, "03", "3.1", ("A-2",), "d", "text_of", {})
    assert coverage.compute(clauses, [case, cited], "9.9.9").pending == []


def test_sort_by_cases_puts_the_thinnest_clauses_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_fixtures(capsys, "coverage", "--sort", "cases", "--format", "json")
    assert code == 0
    counts = [len(row["cases"]) for row in json.loads(out)["clauses"] if row["status"] != "withdrawn"]
    assert counts == sorted(counts) and counts[0] < counts[-1]
    # Among clauses with as many cases, spec order stays.
    code, default_out, _ = run_fixtures(capsys, "coverage", "--format", "json")
    spec_order = [row["id"] for row in json.loads(default_out)["clauses"]]
    ones = [row["id"] for row in json.loads(out)["clauses"] if len(row["cases"]) == counts[0]]
    assert ones == [clause for clause in spec_order if clause in ones]


def test_clauses_whose_cases_have_no_hint_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    clauses = {
        "A-1": Clause("A-1", "Hinted.", 1),
        "A-2": Clause("A-2", "Checked, no hint.", 2),
        "A-3": Clause("A-3", "Unchecked.", 3),
        "A-4": Clause("A-4", "*withdrawn*.", 4),
    }
    hinted = Case("hinted", "f.yaml", 1, "03", "3.1", ("A-1", "A-2"), "d", "text_of", {}, hint=("If value ...",))
    plain = Case("plain", "f.yaml", 2, "03", "3.1", ("A-2",), "d", "text_of", {})
    table = coverage.compute(clauses, [hinted, plain], "9.9.9")
    # A clause is hinted when any case citing it has a hint; unchecked and withdrawn ones are not counted.
    assert table.unhinted == [] and table.hint_summary() == "hints: 2/2 checked clauses have a case with a hint"
    # A hint no failure can show (it names no observation key) hints nothing.
    unshowable = Case("unshowable", "f.yaml", 3, "03", "3.1", ("A-1",), "d", "text_of", {}, hint=("look harder",))
    assert coverage.compute(clauses, [plain, unshowable], "9").unhinted == ["A-1", "A-2"]
    table = coverage.compute(
        clauses, [plain, Case("other", "f.yaml", 3, "03", "3.1", ("A-1",), "d", "text_of", {}, hint=("If value x",))], "9"
    )
    assert table.unhinted == ["A-2"]
    assert table.hint_summary() == "hints: 1/2 checked clauses have a case with a hint; none for A-2"
    rows = {row["id"]: row for row in json.loads(coverage.to_json(table))["clauses"]}
    assert rows["A-2"]["hinted_cases"] == [] and rows["A-1"]["hinted_cases"] == ["other"]
    assert json.loads(coverage.to_json(table))["summary"]["unhinted"] == 1
    markdown = coverage.to_markdown(table)
    assert "| A-2 | Checked, no hint. | checked |  | 1 | `plain` | **none** |" in markdown and table.hint_summary() in markdown
    none = coverage.compute(clauses, [plain], "9")
    assert none.hint_summary() == "hints: none of the 1 checked clause has a case with a hint"
    # The command says it on standard error, next to the coverage line.
    code, _, err = run_fixtures(capsys, "coverage", "--format", "json")
    assert code == 0 and "fixtures hints: " in err and "checked clauses have a case with a hint" in err


@pytest.mark.parametrize(("profile", "document"), [("course", "spec/spec.md"), ("pi-ai-1", "spec/pi-ai-1/spec.md")])
def test_the_report_names_the_version_of_its_profiles_own_document(profile: str, document: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.paths import REPO

    code, out, _ = run_fixtures(capsys, "coverage", "--profile", profile, "--format", "json")
    assert code == 0
    heading = next(line for line in (REPO / document).read_text(encoding="utf-8").splitlines() if " version: " in line)
    assert json.loads(out)["spec_version"] == heading.split(" version: ")[1].split()[0]
