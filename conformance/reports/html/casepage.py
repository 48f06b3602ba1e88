# ruff: noqa: E501  (HTML templates read better as one line per element)
"""One case as HTML: its first divergence, the expected and actual traces side by side, clause and hint.

For a scenario case whose divergence is in an event list, the two event traces are shown
row by row; the first differing event is highlighted (row marked in text, shape and colour)
and so is the first differing field inside it; partial snapshots fold into ``<details>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from conformance.common.jsontypes import JsonValue
from conformance.feedback.failure_report import describe_step, first_difference, silent_stream_line
from conformance.judging.bearing import event_types, fitting_hint, rank_clauses
from conformance.judging.outcome import Outcome
from conformance.model.cases import BrokenCase, Case
from conformance.model.clauses import Clause
from conformance.model.profiles import get_profile
from conformance.reports.html.layout import anchor, badge, compact, e, pretty

_EVENT_PATH = re.compile(r"^steps\[(?P<step>\d+)\]\.events(?:\[(?P<index>\d+)\](?:\.(?P<field>[A-Za-z_$][\w$]*))?)?")
_STEP_PATH = re.compile(r"^steps\[(?P<step>\d+)\]")
#: Event keys shown folded: whole messages, which would drown the trace.
_FOLDED = frozenset({"partial", "message", "error"})


def first_diverging_event(case: Case, outcome: Outcome) -> tuple[int, int, str | None] | None:
    """(step, event index, field) of the first differing event of a case's trace, if its divergence is in one."""
    divergence = outcome.divergence
    match = _EVENT_PATH.match(divergence.path) if divergence is not None else None
    if match is None or outcome.observation is None:
        return None
    step = int(match["step"])
    expected, actual = _step_events(case, outcome, step)
    if match["index"] is not None:
        return step, int(match["index"]), match["field"]
    index = first_difference(event_types(expected), event_types(actual))
    return (step, index, None) if index is not None else None


def _unwrap(events: JsonValue) -> JsonValue:
    if isinstance(events, dict):
        alternatives = events.get("$oneOf")
        if isinstance(alternatives, list) and alternatives:
            return alternatives[0]
    return events


def _step_events(case: Case, outcome: Outcome, step: int) -> tuple[JsonValue, JsonValue]:
    expected_step = case.steps[step].get("expect") if step < len(case.steps) else None
    expected = _unwrap(expected_step.get("events")) if isinstance(expected_step, dict) else None
    observed_steps = outcome.observation.get("steps") if outcome.observation is not None else None
    observed = observed_steps[step] if isinstance(observed_steps, list) and step < len(observed_steps) else None
    actual = observed.get("events") if isinstance(observed, dict) else None
    return expected, actual


def _event_cell(event: JsonValue, field: str | None, open_fold: bool) -> str:
    if not isinstance(event, dict):
        return '<span class="muted">(no event)</span>' if event is None else f"<code>{compact(event)}</code>"
    inline = []
    folds = []
    for key, value in event.items():
        if key == "type":
            continue
        if key in _FOLDED:
            summary = _mark(f"<code>{e(key)}</code>", key == field)
            opened = " open" if open_fold and key == field else ""
            folds.append(f"<details{opened}><summary>{summary}</summary><pre>{pretty(value)}</pre></details>")
        else:
            inline.append(_mark(f"<code>{e(key)}: {compact(value, 120)}</code>", key == field))
    head = f"<code><strong>{e(event.get('type', '?'))}</strong></code>"
    return head + ("<br>" + " ".join(inline) if inline else "") + "".join(folds)


# Single angle quotes mark a placeholder in the expected JSON until it is rendered.
_OPEN, _CLOSE = "\u2039", "\u203a"
_PLACEHOLDER = re.compile(f"&quot;{_OPEN}([^{_CLOSE}&]*){_CLOSE}&quot;")


def placeholders_named(expected: JsonValue) -> JsonValue:
    """An expectation with its matchers as what they mean: ``{"$type": "string"}`` -> *any string*.

    Only for the expected side: an implementation's output is shown as it is.
    """
    if isinstance(expected, dict):
        if len(expected) == 1 and "$type" in expected:
            return f"{_OPEN}any {expected['$type']}{_CLOSE}"
        if len(expected) == 1 and "$any" in expected:
            return f"{_OPEN}any value{_CLOSE}"
        if len(expected) == 1 and "$oneOf" in expected and isinstance(expected["$oneOf"], list):
            return f"{_OPEN}one of {len(expected['$oneOf'])} shapes{_CLOSE}"
        return {key: placeholders_named(value) for key, value in expected.items()}
    if isinstance(expected, list):
        return [placeholders_named(item) for item in expected]
    return expected


def readable_placeholders(html_text: str) -> str:
    """Rendered placeholders without their JSON quotes, in italics: they are not strings to match."""
    return _PLACEHOLDER.sub(lambda match: f"<i>{match[1]}</i>", html_text)


def _mark(text: str, marked: bool) -> str:
    return f'<mark class="field" title="first differing field">{text} ≠</mark>' if marked else text


def trace_table(expected: JsonValue, actual: JsonValue, row: int | None, field: str | None, row_id: str = "first-difference") -> str:
    """Expected and actual events side by side; the first differing row and field highlighted."""
    left = expected if isinstance(expected, list) else []
    right = actual if isinstance(actual, list) else []
    rows = []
    for index in range(max(len(left), len(right))):
        diverged = index == row
        marker = '<span aria-label="first difference">▶ first difference</span><br>' if diverged else ""
        cls = f' class="diverged" id="{e(row_id)}"' if diverged else ""
        expected_cell = (
            readable_placeholders(_event_cell(placeholders_named(left[index]), field if diverged else None, diverged))
            if index < len(left)
            else '<span class="muted">— (no event expected)</span>'
        )
        actual_cell = (
            _event_cell(right[index], field if diverged else None, diverged)
            if index < len(right)
            else '<span class="muted">— (no event)</span>'
        )
        rows.append(f'<tr{cls} data-index="{index}"><td>{marker}#{index}</td><td>{expected_cell}</td><td>{actual_cell}</td></tr>')
    return (
        '<table class="trace"><caption class="small muted">events, expected | actual</caption>'
        '<thead><tr><th scope="col">#</th><th scope="col">expected</th><th scope="col">actual</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _side_by_side(expected: JsonValue, actual: object, label: str) -> str:
    return (
        f'<table class="trace"><caption class="small muted">{e(label)}, expected | actual</caption>'
        '<thead><tr><th scope="col">expected</th><th scope="col">actual</th></tr></thead>'
        f"<tbody><tr><td><pre>{readable_placeholders(pretty(placeholders_named(expected)))}</pre></td><td><pre>{pretty(actual)}</pre></td></tr></tbody></table>"
    )


def evidence(case: Case, outcome: Outcome) -> str:
    """The traces: events side by side for an event divergence, else the diverged step's (or the value's) observation."""
    if outcome.observation is None:
        return f"<pre>{e(outcome.message)}</pre>" if outcome.message else ""
    place = first_diverging_event(case, outcome)
    if place is not None:
        step, row, field = place
        expected, actual = _step_events(case, outcome, step)
        if isinstance(expected, list):
            return (
                _step_heading(case, step)
                + trace_table(expected, actual, row, field, anchor(case.id) + "-diff")
                + _rest_of_step(case, outcome, step)
            )
    divergence = outcome.divergence
    match = _STEP_PATH.match(divergence.path) if divergence is not None else None
    if case.is_scenario and match is not None:
        step = int(match["step"])
        expected_step = case.steps[step].get("expect") if step < len(case.steps) else None
        observed_steps = outcome.observation.get("steps")
        observed = observed_steps[step] if isinstance(observed_steps, list) and step < len(observed_steps) else None
        return _step_heading(case, step) + _side_by_side(expected_step, observed, f"steps[{step}]")
    if case.is_scenario:
        return _side_by_side([step.get("expect") for step in case.steps], outcome.observation.get("steps"), "steps")
    return _side_by_side(case.expect, outcome.observation, "observation")


def _step_heading(case: Case, step: int) -> str:
    if step >= len(case.steps):
        return f'<p class="small">step <code>steps[{step}]</code> (the case has {len(case.steps)} steps)</p>'
    line = case.step_lines[step] if step < len(case.step_lines) else case.line
    return f'<p class="small">step <code>steps[{step}] {e(describe_step(case.steps[step]))}</code> ({e(case.file)}:{line})</p>'


def _rest_of_step(case: Case, outcome: Outcome, step: int) -> str:
    expected_step = case.steps[step].get("expect")
    observed_steps = outcome.observation.get("steps") if outcome.observation is not None else None
    observed = observed_steps[step] if isinstance(observed_steps, list) and step < len(observed_steps) else None
    if not isinstance(expected_step, dict) or not isinstance(observed, dict):
        return ""
    expected_rest = {key: value for key, value in expected_step.items() if key != "events"}
    actual_rest = {key: value for key, value in observed.items() if key != "events"}
    if not expected_rest and not actual_rest:
        return ""
    return f"<details><summary>the rest of steps[{step}]</summary>{_side_by_side(expected_rest, actual_rest, f'steps[{step}] without events')}</details>"


def clause_aside(case: Case, outcome: Outcome, clauses: Mapping[str, Clause], hint: bool = True) -> str:
    """The clauses (the most relevant first, whole text) and the hint that fits."""
    ranked = rank_clauses(case, outcome, clauses)
    items = []
    for number, clause_id in enumerate(ranked):
        clause = clauses.get(clause_id)
        text = e(clause.text) if clause else "(unknown clause)"
        if number < 2:
            items.append(f"<li><strong>{e(clause_id)}</strong>: {text}</li>")
        else:
            items.append(f"<li><details><summary>{e(clause_id)}</summary>{text}</details></li>")
    parts = [f'<h4>clauses</h4><ul class="small">{"".join(items)}</ul>'] if items else []
    fitting = fitting_hint(case, outcome) if hint else None
    if fitting:
        parts.append(f'<h4>hint</h4><p class="hint">{e(fitting)}</p>')
    return f'<aside class="why" aria-label="clause and hint">{"".join(parts)}</aside>'


def case_section(
    case: Case | BrokenCase,
    outcome: Outcome,
    clauses: Mapping[str, Clause],
    extra: Sequence[str] = (),
    status: str | None = None,
    heading: str = "h3",
) -> str:
    """A whole case: heading with status, divergence, traces beside the clause text and hint."""
    status = status or outcome.status
    group = get_profile(case.profile).group_label  # lab (course) or area (pi-ai-1)
    label = f"fails because of an earlier {group}" if status == "inherited" else None
    head = f"<{heading}>{badge(status, label)} <code>{e(case.id)}</code>"
    if isinstance(case, BrokenCase):
        return f'<section class="case" id="{anchor(case.id)}">{head}</{heading}><pre>{e(outcome.message)}</pre></section>'
    head += f' <span class="muted small">{e(group)} {e(case.lab)}</span></{heading}>'
    lines = [f'<p>{e(case.description)}<br><span class="small muted">fixture {e(case.location)}</span></p>']
    lines += [f"<p>{line}</p>" for line in extra]
    if outcome.divergence is not None:
        lines.append(f'<p class="divergence"><code>{e(outcome.divergence)}</code></p>')
    silence = silent_stream_line(case, outcome)
    if silence:  # the same note as the terminal, Markdown and Gradescope outputs
        lines.append(f'<p class="note">{e(silence)}</p>')
    elif outcome.message and outcome.observation is not None:
        lines.append(f'<p class="divergence">{e(outcome.message.splitlines()[0])}</p>')
    try:
        traces = evidence(case, outcome)
    except Exception as error:  # an observation of any shape must not cost the page: say so and go on
        traces = f'<p class="muted">(the traces could not be shown: {e(type(error).__name__)})</p><pre>{e(outcome.message)}</pre>'
    body = f'<div class="case-grid"><div>{traces}</div>{clause_aside(case, outcome, clauses)}</div>'
    return f'<section class="case" id="{anchor(case.id)}" aria-label="case {e(case.id)}">{head}{"".join(lines)}{body}</section>'
