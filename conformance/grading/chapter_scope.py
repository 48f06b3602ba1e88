"""The labs a submission is graded on: those of the chapters it has reached (docs/grading.md, "The chapter a repository is at").

A course repository at chapter 04 is not charged for chapter 06's labs: they are left out of
its rubric (not run, worth nothing, out of its maximum), so a finished chapter 04 keeps full
marks. The chapter comes from the submission's files (:mod:`conformance.adapters.course_chapters`
for ``pi-course:``); kinds that say nothing about chapters are graded on every lab.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from conformance.adapters.kinds import Impl
from conformance.model.cases import Case

if TYPE_CHECKING:
    from conformance.grading.grader import GradingContext


@dataclass(frozen=True)
class ChapterScope:
    """The latest chapter a submission is graded on (None: every chapter) and why."""

    chapter: str | None = None
    reason: str = ""

    def includes(self, chapter: str) -> bool:
        """Whether a case of ``chapter`` is graded (chapters are two-digit strings: "03" < "06")."""
        return self.chapter is None or chapter <= self.chapter

    def sentence(self, left_out: list[str]) -> str:
        """One line for reports: the chapter, why, and the labs left out; empty when every chapter is graded."""
        if self.chapter is None:
            return ""
        line = f"chapter {self.chapter}: {self.reason}"
        return line + (f"; not graded: {_labs(left_out)}" if left_out else "")


def _labs(labs: list[str]) -> str:
    return ("lab " if len(labs) == 1 else "labs ") + ", ".join(labs)


def scope_of(impl: Impl) -> ChapterScope:
    """The chapters ``impl`` is graded on, from its files (nothing of it runs)."""
    detected = impl.detected_chapter()
    return ChapterScope() if detected is None else ChapterScope(detected.chapter, detected.reason)


def lab_chapter(lab: str) -> str | None:
    """The course chapter of a lab ("6.1" -> "06"); None for a name that is no course lab (a pi-ai-1 area)."""
    head, dot, tail = lab.partition(".")
    return f"{int(head):02d}" if dot and head.isdigit() and tail.isdigit() else None


def scoped(context: GradingContext, scope: ChapterScope) -> tuple[GradingContext, str]:
    """``context`` without the labs of chapters ``scope`` leaves out, and the report line that says so.

    A case that cites a clause a later chapter's code supersedes (``*superseded at chapter 09*``:
    chapter 07's loop rejects when the model throws, chapter 09's catches it) is left out too for
    a repository at that chapter or later: its code there rightly does otherwise.
    """
    superseded = tuple(case.id for case in context.cases if _superseded_for(case, context, scope))
    if superseded:
        context = replace(
            context, cases=tuple(case for case in context.cases if case.id not in superseded), superseded=(*context.superseded, *superseded)
        )
    kept_labs = {lab: rule for lab, rule in context.rubric.labs.items() if scope.includes(lab_chapter(lab) or "00")}
    # A rubric of later chapters only would keep nothing: then every lab is graded, as without a scope.
    # Scoping a scoped context changes nothing and says the same (a batch scopes in two processes).
    if len(kept_labs) == len(context.rubric.labs) or not kept_labs:
        return context, _with_superseded(scope.sentence(list(context.left_out)), context, scope)
    left_out = (*context.left_out, *sorted(lab for lab in context.rubric.labs if lab not in kept_labs))
    cases = tuple(case for case in context.cases if case.lab in kept_labs)
    rubric = replace(context.rubric, labs=kept_labs)
    context = replace(context, rubric=rubric, cases=cases, left_out=left_out)
    return context, _with_superseded(scope.sentence(list(left_out)), context, scope)


def _superseded_for(case: Case, context: GradingContext, scope: ChapterScope) -> bool:
    if scope.chapter is None:
        return False
    chapters = (context.clauses[clause].superseded_at for clause in case.clauses if clause in context.clauses)
    return any(chapter is not None and chapter <= scope.chapter for chapter in chapters)


def _with_superseded(sentence: str, context: GradingContext, scope: ChapterScope) -> str:
    if not context.superseded or not sentence:
        return sentence
    return f"{sentence}; not graded at chapter {scope.chapter}, which changes what they check: {', '.join(context.superseded)}"
