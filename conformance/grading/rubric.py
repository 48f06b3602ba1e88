"""A rubric: each lab's points and how its cases share them (``spec/schemas/rubric.schema.json``).

A rubric grades one profile (``profile:``, default ``course``) and groups cases as that
profile does: by lab for ``course`` (``labs:``), by area for ``pi-ai-1`` (``areas:``, a
case's area is its first feature). In code every group is a "lab" (:class:`LabRule`,
``Rubric.labs``, ``Case.lab``); reports name it with :attr:`Rubric.group_label`.

A submission's score is the sum over the rubric's labs of
``weight x (weight of the passed cases / weight of all the lab's cases)``. Inside a lab the
cases share the points equally, or by tag: a tag is a clause id (``SM-ABORT-1``), a clause
family (``SM-ABORT``), a case id or a case-id prefix (``sm-abort``), and a case weighs the
largest weight among the tags that match it. Labs the rubric does not list are not run.

``scoring_mode`` chooses how failures cost (:mod:`conformance.grading.scoring`):
``per-case`` (the default: the formula above), ``per-clause`` (each clause the lab's
weighted cases cite weighs the same, shared by its cases by weight, so a clause earns the
share of its cases that pass) or ``capped`` (per case, but one cause of failure,
:mod:`conformance.judging.failure_groups`, costs at most ``cause_cap`` of its lab's points).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from conformance.isolation.staff_build import DEFAULT_STAFF_BUILD, StaffBuild, StaffBuildError, parse_staff_build
from conformance.model.cases import LABS, Case
from conformance.model.clauses import Clause
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, get_profile
from conformance.model.schemas import validator
from conformance.yamlio.settings_file import read_yaml

DEFAULT_RUBRIC = Path(__file__).resolve().with_name(get_profile(DEFAULT_PROFILE).default_rubric)

Scoring = Literal["equal", "by-tag"]
ScoringMode = Literal["per-case", "per-clause", "capped"]
#: The scoring modes a rubric may choose, its default first.
SCORING_MODES: tuple[ScoringMode, ...] = ("per-case", "per-clause", "capped")
#: With ``scoring_mode: capped``, the share of a lab's points one cause costs at most unless ``cause_cap`` says otherwise.
DEFAULT_CAUSE_CAP = 0.4
HeldOutVisibility = Literal["after_published", "after_due_date", "hidden"]
PublicCases = Literal["confirmed", "plain"]


class RubricError(ValueError):
    """A rubric that cannot be used: unreadable, invalid, or at odds with the fixtures."""


def profile_groups(profile: str) -> tuple[str, ...]:
    """The groups of ``profile`` in its order: the course's labs, another profile's areas."""
    return LABS if profile == DEFAULT_PROFILE else get_profile(profile).features


def group_key(profile: str) -> str:
    """The rubric key that lists a profile's groups: ``labs`` or ``areas``."""
    return f"{get_profile(profile).group_label}s"


def default_rubric_path(profile: str = DEFAULT_PROFILE) -> Path:
    """The rubric shipped for ``profile`` (:attr:`Profile.default_rubric`)."""
    return DEFAULT_RUBRIC.with_name(get_profile(profile).default_rubric)


def tag_matches(tag: str, name: str) -> bool:
    """True when ``tag`` is ``name`` or a prefix of it that ends where a ``-`` follows."""
    return name == tag or name.startswith(tag + "-")


@dataclass(frozen=True)
class LabRule:
    """One lab's points and how its cases share them."""

    lab: str
    weight: float
    scoring: Scoring = "equal"
    tags: Mapping[str, float] = field(default_factory=dict)
    default_weight: float = 1.0

    def case_weight(self, case: Case) -> float:
        """The case's share of the lab (relative to the lab's other cases)."""
        if self.scoring == "equal":
            return 1.0
        names = (case.id, *case.clauses)
        # The largest matching weight, not the sum: a case that checks many clauses of one
        # family must not count several times.
        matching = [weight for tag, weight in self.tags.items() if any(tag_matches(tag, name) for name in names)]
        return max(matching) if matching else self.default_weight


@dataclass(frozen=True)
class Rubric:
    """A validated rubric."""

    name: str
    labs: Mapping[str, LabRule]
    held_out: frozenset[str] = frozenset()
    source: str = "default"
    #: Gradescope visibility of held-out tests: they stay out of sight until grades are published.
    held_out_visibility: HeldOutVisibility = "after_published"
    #: The profile the rubric grades; its labs are that profile's groups.
    profile: str = DEFAULT_PROFILE
    #: How failures cost: per case (the default), per clause, or per case with each cause capped.
    scoring_mode: ScoringMode = "per-case"
    #: With ``capped``: the share of a lab's points one cause of failure costs at most.
    cause_cap: float = DEFAULT_CAUSE_CAP
    #: How a ``pi-course:`` submission is built: the staff files pinned over its own, and the command (``build:``).
    build: StaffBuild = DEFAULT_STAFF_BUILD
    #: With held-out cases: public cases earn only as far as the held-out cases of their clauses do (:mod:`confirmation`).
    public_cases: PublicCases = "confirmed"

    @property
    def group_label(self) -> str:
        """What reports call a group of cases: ``lab`` (course) or ``area`` (pi-ai-1)."""
        return get_profile(self.profile).group_label

    @property
    def scoring_note(self) -> str:
        """How failures cost, for a report's header: "" for the default (per case)."""
        if self.scoring_mode == "per-clause":
            return "scored per clause"
        if self.scoring_mode == "capped":
            return f"one cause costs at most {self.cause_cap:.0%} of a {self.group_label}'s points"
        return ""

    @property
    def max_score(self) -> float:
        """The points of a submission that passes every case."""
        return sum(rule.weight for rule in self.labs.values())

    def selects(self, case: Case) -> bool:
        """True when the case belongs to a graded lab."""
        return case.lab in self.labs

    def check_against(self, cases: Iterable[Case], clauses: Mapping[str, Clause]) -> list[str]:
        """Problems between the rubric and the loaded fixtures (typos would grade silently wrong)."""
        cases = list(cases)
        problems: list[str] = []
        ids = {case.id for case in cases}
        key, label, spec = group_key(self.profile), self.group_label, get_profile(self.profile).spec
        for case_id in sorted(self.held_out - ids):
            problems.append(f"held_out: no case has the id {case_id!r}")
        for lab, rule in self.labs.items():
            lab_cases = [case for case in cases if case.lab == lab]
            names = {name for case in lab_cases for name in (case.id, *case.clauses)}
            for tag in rule.tags:
                if not any(tag_matches(tag, name) for name in names):
                    known = f"a clause of {spec}" if any(tag_matches(tag, c) for c in clauses) else "any clause or case id"
                    problems.append(f"{key}.{lab}.tags.{tag}: matches no case of {label} {lab} (it is not a prefix of {known} there)")
            lab_weight = sum(rule.case_weight(case) for case in lab_cases)
            if not math.isfinite(lab_weight):
                problems.append(f"{key}.{lab}: its case weights add up to {lab_weight}; use smaller tag weights")
            elif lab_weight <= 0:
                problems.append(
                    f"{key}.{lab}: the {label} has no case with a weight above 0, so its {rule.weight:g} points cannot be earned"
                )
        return problems


def load_rubric(path: Path | None = None, profile: str = DEFAULT_PROFILE) -> Rubric:
    """Load and validate a rubric file for ``profile`` (default: the one shipped for the profile).

    A rubric of another profile is a :class:`RubricError`: its groups are not the profile's.
    """
    default = default_rubric_path(profile)
    path = path or default
    data = read_yaml(path, "rubric", RubricError)
    source = "default" if path == default else str(path)
    rubric = parse_rubric(data, source, path.parent)
    if rubric.profile != profile:
        raise RubricError(
            f"{source}: a rubric of profile {rubric.profile!r} (its profile:, default course), but grading is for --profile {profile}; "
            f"grade with --profile {rubric.profile}, or give a rubric that says profile: {profile} "
            f"(the shipped one: conformance/grading/{get_profile(profile).default_rubric})"
        )
    return rubric


def parse_rubric(data: object, source: str = "rubric", base: Path | None = None) -> Rubric:
    """Validate rubric data (as loaded from YAML or JSON) and build the :class:`Rubric`.

    ``base`` is the folder the ``build.pin`` files are relative to (the rubric's own; default: the working folder).
    """
    if isinstance(data, dict) and isinstance(data.get("labs"), dict):
        # Staff naturally write `3.1:` unquoted, which YAML reads as a number.
        data = {**data, "labs": {_lab_key(key): value for key, value in data["labs"].items()}}
    misplaced = _group_key_problem(data)
    if misplaced:
        raise RubricError(f"{source}: not a valid rubric: {misplaced}")
    errors = sorted(validator("rubric.schema.json").iter_errors(data), key=lambda error: list(map(str, error.absolute_path)))
    if errors:
        lines = []
        for error in errors:
            where = ".".join(str(part) for part in error.absolute_path) or "(root)"
            lines.append(f"  {where}: {error.message}")
        raise RubricError(f"{source}: not a valid rubric (spec/schemas/rubric.schema.json):\n" + "\n".join(lines))
    assert isinstance(data, dict)
    profile = str(data.get("profile", DEFAULT_PROFILE))
    key = group_key(profile)
    problems = _number_problems(data[key], key)
    if problems:
        raise RubricError(f"{source}: not a valid rubric:\n" + "\n".join(f"  {problem}" for problem in problems))
    labs: dict[str, LabRule] = {}
    for lab in profile_groups(profile):  # the profile's order, whatever the file's order
        raw = data[key].get(lab)
        if raw is None:
            continue
        labs[lab] = LabRule(
            lab=lab,
            weight=float(raw["weight"]),
            scoring=raw.get("scoring", "equal"),
            tags={str(tag): float(weight) for tag, weight in (raw.get("tags") or {}).items()},
            default_weight=float(raw.get("default_weight", 1.0)),
        )
    try:
        build = parse_staff_build(data.get("build"), base or Path())
    except StaffBuildError as error:
        raise RubricError(f"{source}: not a valid rubric: {error}") from error
    return Rubric(
        name=str(data.get("name") or source),
        labs=labs,
        held_out=frozenset(data.get("held_out") or ()),
        source=source,
        held_out_visibility=data.get("held_out_visibility", "after_published"),
        profile=profile,
        scoring_mode=data.get("scoring_mode", "per-case"),
        cause_cap=float(data.get("cause_cap", DEFAULT_CAUSE_CAP)),
        build=build,
        public_cases=data.get("public_cases", "confirmed"),
    )


def _group_key_problem(data: object) -> str | None:
    """A rubric that lists its groups under the other profile's key, said plainly (the schema's words are not)."""
    if not isinstance(data, dict) or data.get("profile", DEFAULT_PROFILE) not in PROFILES:
        return None
    profile = str(data.get("profile", DEFAULT_PROFILE))
    key = group_key(profile)
    for other in sorted({group_key(name) for name in PROFILES} - {key}):
        if other in data:
            owner = next(name for name in PROFILES if group_key(name) == other)
            return (
                f"{other}: a rubric of profile {profile} lists its {get_profile(profile).group_label}s under {key}:, not {other}: "
                f"({other}: is for a rubric that says profile: {owner})"
            )
    return None


def _number_problems(labs: Mapping[str, Mapping[str, object]], key: str = "labs") -> list[str]:
    """Weights JSON Schema lets through but arithmetic cannot use: NaN, infinities, sums that overflow.

    A lab's ``weight`` must be finite and above 0, tag weights and ``default_weight``
    finite and at least 0 (0 keeps a case reported but unscored), and the total finite:
    otherwise scores come out as ``nan`` or ``inf`` and reports as invalid JSON.
    """
    problems: list[str] = []
    total = 0.0
    for lab, raw in labs.items():
        weight = raw.get("weight")
        if isinstance(weight, int | float) and not (math.isfinite(weight) and weight > 0):
            problems.append(f"{key}.{lab}.weight: {weight} is not a finite number above 0")
        elif isinstance(weight, int | float):
            total += float(weight)
        tags = raw.get("tags")
        named = {f"tags.{tag}": value for tag, value in tags.items()} if isinstance(tags, dict) else {}
        if "default_weight" in raw:
            named["default_weight"] = raw["default_weight"]
        for where, value in named.items():
            if isinstance(value, int | float) and not (math.isfinite(value) and value >= 0):
                problems.append(f"{key}.{lab}.{where}: {value} is not a finite number of at least 0")
            elif isinstance(value, int | float) and isinstance(weight, int | float) and not math.isfinite(float(value) * weight):
                problems.append(f"{key}.{lab}.{where}: {value} is too large to score with (weight x case weight overflows)")
    if not problems and not math.isfinite(total):
        problems.append(f"{key}: the {key[:-1]} weights add up to {total}, not a finite number of points")
    return problems


def _lab_key(key: object) -> object:
    return str(key) if isinstance(key, int | float) and not isinstance(key, bool) else key
