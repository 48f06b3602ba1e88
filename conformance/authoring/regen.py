"""``fixtures regen``: recompute a case's expectations from the reference, as a diff to review.

Regeneration is a review aid, not an authoring tool: expectations are derived from the
spec, and regen shows where the reference now disagrees with what a case says. Hence the
guards: it runs only when the reference passes every *other* case (a reference that is
wrong elsewhere is not a trustworthy source), it leaves cases marked
``expectations: hand-written`` alone, it keeps every matcher the new value still satisfies,
and it writes nothing without ``--write``.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.adapters.interface import Adapter
from conformance.authoring import placeholders, regen_review
from conformance.authoring.expectations import merge_expect
from conformance.authoring.files import FixtureText, read, real_path
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.judging.divergences import compare
from conformance.loading import shared_files
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import Clause, load_profile_clauses
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import DEFAULT_PROFILE, get_profile
from conformance.model.schemas import validator
from conformance.running.engine import Loop, Policy, close, run_alone
from conformance.yamlio import canonical
from conformance.yamlio import edit as textedit
from conformance.yamlio import positions as yamltext

HAND_WRITTEN = "hand-written"


class RegenRefused(RuntimeError):
    """regen will not run at all (a broken suite, or a reference that fails other cases)."""


@dataclass
class RegenResult:
    """What regen found: a diff per changed file, new texts to write, and per-case notes."""

    diff: str = ""
    new_texts: dict[Path, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def regenerate(
    case_ids: list[str],
    root: Path | None = None,
    adapter_factory: Callable[[], Adapter] | None = None,
    profile: str = DEFAULT_PROFILE,
) -> RegenResult:
    """New expectations for ``case_ids`` of ``profile`` from the reference, as a unified diff (nothing is written).

    ``adapter_factory`` builds the reference; by default the bundled course reference, which
    only the course profile has.
    """
    root = root or fixtures_dir()
    if adapter_factory is None and profile != DEFAULT_PROFILE:
        raise RegenRefused(f"profile {profile} has no bundled reference implementation; pass --reference {_reference_form(profile)}")
    suite = load_suite(root, profile=profile)
    if suite.broken:
        listing = "\n  ".join(suite.problems)
        raise RegenRefused(f"the fixtures do not load cleanly; fix them first (pi-conformance fixtures lint):\n  {listing}")
    by_id = {case.id: case for case in suite.cases}
    unknown = [case_id for case_id in case_ids if case_id not in by_id]
    if unknown:
        raise RegenRefused(f"no case with id {', '.join(unknown)}")
    clauses = load_profile_clauses(profile)
    factory = adapter_factory or _reference
    named = list(dict.fromkeys(case_ids))
    _require_reference_passes_others(factory, [case for case in suite.cases if case.id not in named])
    adapter = factory()
    try:
        return _regenerate(adapter, [by_id[case_id] for case_id in named], root, clauses, profile)
    finally:
        close(adapter)


def _regenerate(adapter: Adapter, cases: list[Case], root: Path, clauses: Mapping[str, Clause], profile: str) -> RegenResult:
    """The new expectations of ``cases`` from ``adapter`` (the reference), file by file."""
    result = RegenResult()
    texts: dict[str, FixtureText] = {}
    rewriters: dict[str, textedit.Rewriter] = {}
    edits: dict[str, list[textedit.Edit]] = {}
    intended: dict[str, JsonValue] = {}
    # Document order, so that an anchor's new value is known before the aliases that use it.
    for case in sorted(cases, key=lambda case: (case.file, case.line)):
        fixture = texts.setdefault(case.file, read(real_path(case.file, root), root))
        rewriter = rewriters.setdefault(case.file, textedit.Rewriter(fixture.text))
        data = intended.setdefault(case.file, copy.deepcopy(fixture.data))
        before = (dict(rewriter.changed), set(rewriter.kept_aliases))
        try:
            node, whole = _case_in(fixture, case)
            if whole.get("expectations") == HAND_WRITTEN:
                raise _Refusal("its expectations are marked `expectations: hand-written`; edit them by hand")
            node, raw = _expect_holder(node, whole, profile)
            new_raw = _regenerate_case(adapter, case, raw)
            if new_raw is None:
                result.notes.append(f"{case.location}: {case.id}: already matches the reference; nothing to change")
                continue
            # Each changed value with the clause that decides it; one the spec quotes exactly is not regen's to change.
            notes, contradictions = regen_review.review(case.id, case.location, raw, new_raw, list(case.clauses), clauses)
            if contradictions:
                raise _Refusal("; ".join(contradictions))
            result.notes.extend(notes)
            edits.setdefault(case.file, []).extend(_case_edits(rewriter, node, raw, new_raw))
            _replace_case(data, case.id, new_raw if raw is whole else {**whole, profile: new_raw})
        except (_Refusal, textedit.EditError) as refusal:
            rewriter.changed, rewriter.kept_aliases = before
            result.refused.append(f"{case.location}: {case.id}: {refusal}")
    for display, file_edits in edits.items():
        fixture = texts[display]
        assert fixture.document is not None
        try:
            new_text = textedit.apply(fixture.text, fixture.document, file_edits, rewriters[display].kept_aliases)
            _check_reads_back(new_text, intended[display], display, profile)
        except textedit.EditError as error:
            result.refused.append(f"{display}: {error}")
            continue
        result.new_texts[fixture.path] = new_text
        old_lines, new_lines = fixture.text.splitlines(keepends=True), new_text.splitlines(keepends=True)
        result.diff += "".join(difflib.unified_diff(old_lines, new_lines, f"a/{display}", f"b/{display}"))
    return result


def write(result: RegenResult) -> list[Path]:
    """Write the regenerated files; returns the paths written."""
    for path, text in result.new_texts.items():
        path.write_text(text, encoding="utf-8")
    return list(result.new_texts)


def _first_line(text: str) -> str:
    return text.partition("\n")[0]


class _Refusal(Exception):
    """This one case is not regenerated (the others still are)."""


def _reference() -> Adapter:
    from conformance.adapters.reference import create

    return create()


def _require_reference_passes_others(factory: Callable[[], Adapter], others: list[Case]) -> None:
    # On the engine's loop, as run runs them: a case an adapter gave up on is retried alone.
    outcomes = Loop(Policy(), factory).run(factory(), others)
    failing = [outcome for outcome in outcomes if outcome.status != "passed"]
    if failing:
        listing = "\n  ".join(f"{outcome.case_id}: {outcome.status}: {_first_line(outcome.message)}" for outcome in failing)
        raise RegenRefused(f"the reference fails {len(failing)} other case(s), so it is no source of expectations:\n  {listing}")


def _case_in(fixture: FixtureText, case: Case) -> tuple[yamltext.Node, JsonObject]:
    for node, raw in fixture.cases:
        if raw.get("id") == case.id:
            return node, raw
    raise _Refusal("not found in its file's text")


def _expect_holder(node: yamltext.Node, raw: JsonObject, profile: str) -> tuple[yamltext.Node, JsonObject]:
    """Where the case's expectations are written: the case, or in a shared case the profile's block that holds its own."""
    block, block_node = raw.get(profile), node.get(profile) if node.kind == "mapping" else None
    if isinstance(block, dict) and "expect" in block and block_node is not None:
        return block_node, block
    return node, raw


_CLOCK_TICK_S = 0.005


def _regenerate_case(adapter: Adapter, case: Case, raw: JsonObject) -> JsonObject | None:
    """The case with new expectations, or None when the reference already passes it."""
    if raw.get("expectations") == HAND_WRITTEN:
        raise _Refusal("its expectations are marked `expectations: hand-written`; edit them by hand")
    if any(True for _ in placeholders.find(raw)):
        raise _Refusal("it still has `TODO:` placeholders; regen reviews finished cases, it does not write them")
    outcome = run_alone(adapter, case)
    if outcome.status == "passed":
        return None
    if outcome.observation is None:
        raise _Refusal(f"the reference gave no usable observation ({outcome.status}: {outcome.message})")
    observation = outcome.observation
    new_raw = copy.deepcopy(raw)
    if case.is_scenario:
        observed_steps = observation.get("steps")
        assert isinstance(observed_steps, list)  # the run checked the observation against its schema
        steps: list[JsonObject] = []
        for step, observed in zip(case.steps, observed_steps, strict=True):
            expect = step.get("expect")
            if isinstance(expect, dict) and isinstance(observed, dict):
                step = {**step, "expect": merge_expect(expect, observed)}
            steps.append(step)
        new_raw["steps"] = list[JsonValue](steps)
        regenerated = dataclasses.replace(case, steps=tuple(steps))
    else:
        new_expect = merge_expect(case.expect or {}, observation)
        new_raw["expect"] = new_expect
        regenerated = dataclasses.replace(case, expect=new_expect)
    divergence, _ = compare(regenerated, observation)
    if divergence is not None:
        raise _Refusal(f"the regenerated expectations still diverge ({divergence}); please report this")
    # A value that differs between two runs (a clock, an id) must be a matcher, chosen by the author.
    # The pause lets a millisecond clock move on: two fast runs can otherwise stamp the same time.
    time.sleep(_CLOCK_TICK_S)
    again = run_alone(adapter, regenerated)
    if again.status != "passed":
        where = again.divergence.path if again.divergence else again.message
        raise _Refusal(f"the reference's value at {where} changes from run to run; write a matcher there by hand (spec/fixture-format.md)")
    return new_raw


def _case_edits(rewriter: textedit.Rewriter, node: yamltext.Node, raw: JsonObject, new_raw: JsonObject) -> list[textedit.Edit]:
    """Edits inside the case's ``expect`` and ``steps[].expect`` blocks only."""
    if node.kind != "mapping":
        raise _Refusal("the case is not written in place (an alias?)")
    if "expect" in raw:
        expect_node = node.get("expect")
        assert expect_node is not None
        return rewriter.value_edits(expect_node, raw["expect"], new_raw["expect"])
    steps_node = node.get("steps")
    old_steps, new_steps = raw.get("steps"), new_raw.get("steps")
    assert isinstance(old_steps, list) and isinstance(new_steps, list)
    edits: list[textedit.Edit] = []
    for index, (old_step, new_step) in enumerate(zip(old_steps, new_steps, strict=True)):
        if not isinstance(old_step, dict) or not isinstance(new_step, dict) or canonical.same(old_step, new_step):
            continue
        step_node = steps_node.item(index) if steps_node is not None and steps_node.kind == "sequence" else None
        expect_node = step_node.get("expect") if step_node is not None else None
        if expect_node is None:
            raise _Refusal(f"steps[{index}] is not written in place (an alias?); regen edits only what is written in the case")
        edits.extend(rewriter.value_edits(expect_node, old_step["expect"], new_step["expect"]))
    return edits


def _replace_case(data: JsonValue, case_id: str, new_raw: JsonObject) -> None:
    assert isinstance(data, dict) and isinstance(data.get("cases"), list)
    cases = data["cases"]
    assert isinstance(cases, list)
    for index, raw in enumerate(cases):
        if isinstance(raw, dict) and raw.get("id") == case_id:
            cases[index] = new_raw


def _check_reads_back(new_text: str, intended: JsonValue, display: str, profile: str = DEFAULT_PROFILE) -> None:
    """The edited text must parse to exactly the intended data, and still be a valid fixture file."""
    try:
        data = yaml.load(new_text, Loader=yamltext.LOADER)
    except yaml.YAMLError as error:
        raise textedit.EditError(f"the edited text is not valid YAML ({error}); nothing written, please report this") from error
    if not canonical.same(data, intended):
        raise textedit.EditError("the edited text does not read back as intended; nothing written, please report this")
    # A shared file's part that regen edits is the expectations, which every profile's view holds.
    checked = shared_files.view_of(data, get_profile(profile)).data if shared_files.is_shared(data) else data
    invalid = next(iter(validator(get_profile(profile).fixture_schema).iter_errors(checked)), None)
    if invalid is not None:
        raise textedit.EditError(f"{display}: the new expectations do not fit the fixture schema: {invalid.message}")


def _reference_form(profile: str) -> str:
    """How ``--reference`` names an implementation of ``profile`` (its submission kind's form), for a refusal."""
    from conformance.adapters.kinds import submission_kind

    try:
        return submission_kind(profile).usage
    except KeyError:
        return "IMPL"
