"""JUnit XML, the format CI systems and most dashboards read.

The common structure (the Ant/Jenkins ``JUnit.xsd`` family): ``<testsuites>`` holding one
``<testsuite>`` per lab, one ``<testcase>`` per case whose ``classname`` is the lab and
``name`` the case id, with a ``<failure>``, ``<error>`` or ``<skipped>`` child when it did
not pass. Counts and times are attributes; each suite's points are ``<properties>``.
For a profile other than the course's a suite is an area (``area messages``,
``pi-conformance.area_messages``) and the root names the profile.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from conformance.common.student_text import for_xml
from conformance.feedback.case_feedback import case_feedback, one_line
from conformance.grading.grader import SubmissionResult
from conformance.model.clauses import Clause
from conformance.reports.formats.common import points, profile_of

_CHILD = {"failed": "failure", "errored": "error", "skipped": "skipped"}


def _time(seconds: float) -> str:
    return f"{seconds:.3f}"


def _xml_safe(root: ET.Element) -> None:
    """Escape every character XML 1.0 cannot hold, in every text and attribute: student text is everywhere."""
    for element in root.iter():
        if element.text:
            element.text = for_xml(element.text)
        for key, value in element.attrib.items():
            element.set(key, for_xml(value))


def render(result: SubmissionResult, clauses: Mapping[str, Clause]) -> str:
    """The report as JUnit XML."""
    graded_cases = result.score.cases
    label, profile = result.rubric.group_label, profile_of(result)
    root = ET.Element("testsuites", name=f"pi-conformance: {result.name}" + (f" (profile {profile})" if profile else ""))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for lab in result.score.labs:
        cases = [graded for graded in graded_cases if graded.case.lab == lab.lab]
        lab_time = sum(graded.outcome.duration_s for graded in cases)
        total_time += lab_time
        counts = {
            "tests": len(cases),
            "failures": lab.counts.get("failed", 0),
            "errors": lab.counts.get("errored", 0),
            "skipped": lab.counts.get("skipped", 0),
        }
        for key, value in counts.items():
            totals[key] += value
        attributes = {"name": f"{label} {lab.lab}", **{key: str(value) for key, value in counts.items()}, "time": _time(lab_time)}
        suite = ET.SubElement(root, "testsuite", attributes)
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="points", value=points(lab.points))
        ET.SubElement(properties, "property", name="max_points", value=points(lab.max_points))
        ET.SubElement(properties, "property", name="sandbox", value=result.isolation)
        ET.SubElement(properties, "property", name="limits", value=result.limits)
        for graded in cases:
            testcase = ET.SubElement(
                suite,
                "testcase",
                classname=f"pi-conformance.{label}_{lab.lab.replace('.', '_').replace('-', '_')}",
                name=graded.case.id,
                file=graded.case.file,
                line=str(graded.case.line),
                time=_time(graded.outcome.duration_s),
            )
            child = _CHILD.get(graded.outcome.status)
            if child is None:
                continue
            element = ET.SubElement(testcase, child, message=one_line(graded))
            if child != "skipped":
                element.set("type", graded.outcome.status)
                element.text = case_feedback(graded, clauses)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _time(total_time))
    _xml_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
