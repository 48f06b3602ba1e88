"""The failing cases of a submission, one line per cause, worded once for every report format.

A cause (:mod:`conformance.judging.failure_groups`) that fails a hundred cases is one line: its labs,
how many cases, what diverged (the example's first line, or the cause itself when nothing
diverged, such as a module that kills the program on import), and the case ids. The
terminal shows a few ids; Markdown and JSON every one. Each format only escapes the pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from conformance.feedback.case_feedback import one_line
from conformance.feedback.featured import failure_groups_of
from conformance.grading.grader import SubmissionResult
from conformance.model.clauses import Clause


@dataclass(frozen=True)
class CauseLine:
    """One cause of a submission's charged failures."""

    #: The labs (areas) of its cases, in the rubric's order.
    labs: tuple[str, ...]
    #: Its cases, in fixture order.
    case_ids: tuple[str, ...]
    #: Those of its cases the rubric holds out.
    held_out: frozenset[str]
    #: What went wrong: the one case's first line, or for several the example's (the cause when nothing diverged).
    text: str
    #: The clause the cause breaks, when one is known.
    clause: str | None

    @property
    def count(self) -> int:
        """How many cases the cause fails."""
        return len(self.case_ids)

    def render(
        self,
        label: str,
        ids_shown: int | None = None,
        code: Callable[[str], str] = str,
        text: Callable[[str], str] = str,
    ) -> str:
        """``lab 3.2  12 cases: <what>  (id-1, id-2, id-3, … 9 more; 2 of them held out)``.

        ``ids_shown`` cuts the id list (``None``: every id); ``code`` and ``text`` escape an id
        and the submission's words for the format (Markdown code spans and text).
        """
        where = f"{label} {', '.join(self.labs)}"
        ids = [f"{code(case_id)}{' (held out)' if case_id in self.held_out else ''}" for case_id in self.case_ids]
        if self.count == 1:
            return f"{where}  {ids[0]}: {text(self.text)}"
        shown = ids if ids_shown is None else ids[:ids_shown]
        more = f", … {len(ids) - len(shown)} more" if len(shown) < len(ids) else ""
        more += f"; {len(self.held_out)} of them held out" if self.held_out else ""
        return f"{where}  {self.count} cases: {text(self.text)}  ({', '.join(shown)}{more})"


def cause_lines(result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[CauseLine]:
    """The submission's charged failures, one :class:`CauseLine` per cause, in the order of their first lab."""
    by_id = {graded.case.id: graded for graded in result.score.cases}
    lab_order: dict[str, int] = {lab.lab: index for index, lab in enumerate(result.score.labs)}
    groups = failure_groups_of(result, clauses)
    lines: list[CauseLine] = []
    for group in sorted(groups, key=lambda group: min(lab_order.get(str(case.lab), 0) for case, _ in group.members)):
        members = [by_id[case.id] for case, _ in group.members]
        labs = tuple(sorted({graded.case.lab for graded in members}, key=lambda lab: lab_order.get(lab, 0)))
        if len(members) == 1:
            what = one_line(members[0])
        else:
            example = by_id[group.example[0].id]
            what = str(group.cause) if group.example[1].divergence is None else one_line(example)
        held = frozenset(graded.case.id for graded in members if graded.held_out)
        lines.append(CauseLine(labs, tuple(graded.case.id for graded in members), held, what, group.clause))
    return lines


def heading(lines: list[CauseLine]) -> str:
    """``failing cases: 104 in 2 causes, one line each``."""
    count = sum(line.count for line in lines)
    return f"failing cases: {count} in {len(lines)} cause{'s' if len(lines) != 1 else ''}, one line each"
