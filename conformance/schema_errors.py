"""Schema problems in a fixture case, said precisely: the deepest reason, at its path, with a suggestion.

Two things live here, both called from :mod:`conformance.loader`:

* :func:`describe` turns a ``jsonschema`` error into ``(path, message)``. For a ``oneOf`` /
  ``anyOf`` (a content block, a turn, an event) it follows the branch the value itself names
  (its ``type`` or ``role``), down to the most specific reason, so a tool call written with
  ``args`` says "unknown key 'args' (did you mean 'arguments'?)" rather than "'text' was
  expected"; values are never dumped.
* :func:`expectation_problems` checks the keys of every expected IR value (events, partials,
  messages, blocks, usage, recorded requests, contexts): the fixture schema lets an expected
  value hold matchers anywhere, so it cannot say that ``content_index`` is not a key of any
  event. Here every object whose shape the IR fixes is compared with that shape's keys.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from conformance.jsontypes import JsonObject
from conformance.schemas import load_schema

Path = tuple[str | int, ...]
_MATCHER_KEYS = frozenset({"$type", "$oneOf", "$any"})
_DISCRIMINATORS = ("type", "role")
_SHORT = 60


# -- describing a jsonschema error ------------------------------------------------------


def describe_best(errors: list[ValidationError]) -> tuple[Path, str]:
    """:func:`describe` of the most specific among several errors reported at one path."""
    specific = [_most_specific(error) for error in errors]
    named = [error for original, error in zip(errors, specific, strict=True) if error is not original]
    if not named:
        # A value whose `role` / `type` names no branch: that is the mistake, not whatever
        # jsonschema's best_match finds deepest in some branch (`content is not a string`).
        for error in errors:
            found = _discriminator_problem(error)
            if found is not None:
                return found
    chosen = _deepest(named) if named else best_match(errors)
    return describe(chosen if chosen is not None else errors[0])


def describe(error: ValidationError) -> tuple[Path, str]:
    """The deepest, most specific reason for ``error``: its path inside the instance and a one-line message."""
    outer = error
    error = _most_specific(error)
    path: Path = tuple(error.absolute_path)
    validator = error.validator
    # A key like `$typ` is a misspelt matcher wherever it is: say so before any schema detail.
    for candidate in (error, outer):
        if isinstance(candidate.instance, dict):
            found = matcher_key_problem(candidate.instance)
            if found is not None:
                return (*tuple(candidate.absolute_path), found[0]), found[1]
    if validator == "not" and isinstance(error.instance, str) and error.instance.startswith("$"):  # propertyNames
        return (*path, error.instance), unknown_matcher_message(error.instance)
    if validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = _allowed_keys(error.schema)
        unknown = [key for key in error.instance if isinstance(key, str) and key not in allowed]
        if unknown:
            return _at_key(path, unknown), "; ".join(unknown_key_message(key, allowed) for key in unknown)
    if validator == "required" and isinstance(error.instance, dict):
        missing = [key for key in error.validator_value if key not in error.instance]  # type: ignore[union-attr]
        # A shape discriminated by `action` (a step) allows the keys of every branch.
        allowed = _all_keys(error.schema)
        return _missing_and_unknown(path, error.instance, missing, allowed)
    discriminated = _discriminator_problem(error)
    if discriminated is not None:
        return discriminated
    if validator == "const":
        return path, f"expected {_short(error.validator_value)}, got {_short(error.instance)}{_no_such_block(error.instance)}"
    if validator == "enum":
        choices = ", ".join(_short(choice) for choice in error.validator_value)  # type: ignore[union-attr]
        return path, f"{_short(error.instance)} is not one of {choices}"
    if validator == "type":
        return path, f"{_short(error.instance)} is not of type {error.validator_value!r}"
    return path, _one_line(_shorten_message(error))


def _discriminator_problem(error: ValidationError) -> tuple[Path, str] | None:
    """For a oneOf/anyOf over shapes told apart by ``role`` / ``type``: an unknown or misspelt discriminator."""
    if error.validator not in ("oneOf", "anyOf") or not isinstance(error.instance, dict):
        return None
    path: Path = tuple(error.absolute_path)
    alternatives = [_resolved(item, error) for item in error.validator_value] if isinstance(error.validator_value, list) else []
    for key in _DISCRIMINATORS:
        known = [const for const in (_const_of(alternative, key) for alternative in alternatives) if const is not None]
        if known and key in error.instance and error.instance[key] not in known:
            choices = ", ".join(_short(const) for const in known)
            value = error.instance[key]
            return (*path, key), f"{_short(value)} is not a {key} this IR knows here (one of {choices}){_no_such_block(value)}"
    unnamed = _without_discriminator(error.instance, alternatives)
    return None if unnamed is None else ((*path, *unnamed[0]), unnamed[1])


def unknown_matcher_message(key: str) -> str:
    """The message for a ``$`` key that is no matcher (``$typ``, ``$oneof``)."""
    suggestion = suggest(key, sorted(_MATCHER_KEYS))
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    return f"unknown matcher {key!r}{hint}; a matcher is {{$type: ...}}, {{$oneOf: [...]}} or {{$any: true}}"


def matcher_key_problem(value: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first key of ``value`` that starts with ``$`` and is no matcher, with its message."""
    for key in value:
        if isinstance(key, str) and key.startswith("$") and key not in _MATCHER_KEYS:
            return key, unknown_matcher_message(key)
    return None


def _at_key(path: Path, keys: list[str]) -> Path:
    """The path of the one key a problem is about (its own line), else of the object."""
    return (*path, keys[0]) if len(keys) == 1 else path


def _missing_and_unknown(path: Path, instance: Mapping[str, Any], missing: list[str], allowed: list[str]) -> tuple[Path, str]:
    """Missing and unknown keys of one object; a missing key explained by a misspelt one is said once."""
    extra = [key for key in instance if isinstance(key, str) and key not in allowed] if allowed else []
    explained = {key for key in extra if suggest(key, missing) is not None}
    still_missing = [key for key in missing if not any(suggest(typo, [key]) == key for typo in explained)]
    parts = [unknown_key_message(key, allowed) for key in extra]
    if still_missing:
        parts.insert(0, "missing required key " + ", ".join(repr(key) for key in still_missing))
    return (_at_key(path, extra) if not still_missing else path), "; ".join(parts)


def _all_keys(schema: Any) -> list[str]:
    """The keys a shape allows, counting every branch of a shape discriminated by ``if``/``then``."""
    keys = _allowed_keys(schema)
    if isinstance(schema, dict):
        for item in schema.get("allOf") or ():
            then = item.get("then") if isinstance(item, dict) else None
            if isinstance(then, dict):
                branch = _resolve_ref(then["$ref"]) if isinstance(then.get("$ref"), str) else then
                keys.extend(key for key in _allowed_keys(branch) if key not in keys)
    return keys


def _without_discriminator(instance: Mapping[str, Any], alternatives: list[Mapping[str, Any]]) -> tuple[Path, str] | None:
    """A value of a discriminated shape (a message, a block, an event) that names no branch: its misspelt keys."""
    for key in _DISCRIMINATORS:
        known = [const for const in (_const_of(alternative, key) for alternative in alternatives) if const is not None]
        if not known or key in instance:
            continue
        allowed: list[str] = []
        for alternative in alternatives:
            allowed.extend(name for name in _allowed_keys(alternative) if name not in allowed)
        if any(key not in _allowed_keys(alternative) for alternative in alternatives):
            # A branch without the key (an error turn has no role): only misspelt keys are sure mistakes.
            extra = [name for name in instance if isinstance(name, str) and name not in allowed]
            if not extra:
                return None
            return _at_key((), extra), "; ".join(unknown_key_message(name, allowed) for name in extra)
        where, message = _missing_and_unknown((), instance, [key], allowed)
        if "missing required key" in message:
            message += f" (one of {', '.join(_short(const) for const in known)})"
        return where, message
    return None


def _most_specific(error: ValidationError) -> ValidationError:
    """Follow oneOf/anyOf/if-then context into the branch the value names, as deep as it goes."""
    while error.context:
        branch = _branch_named_by_value(error)
        if branch is None:
            break
        error = branch
    return error


def _branch_named_by_value(error: ValidationError) -> ValidationError | None:
    """Among the sub-errors of a oneOf/anyOf, those of the branch whose discriminator matches the value."""
    context = list(error.context or ())
    instance = error.instance
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in context:
        index = sub.schema_path[0] if sub.schema_path else -1
        by_branch.setdefault(index if isinstance(index, int) else -1, []).append(sub)
    if isinstance(instance, dict):
        alternatives = error.validator_value if isinstance(error.validator_value, list) else []
        for index, alternative in enumerate(alternatives):
            if _names_branch(_resolved(alternative, error), instance) and index in by_branch:
                return _deepest(by_branch[index])
        # No branch named by the value: the value's discriminator itself is the mistake.
        for key in _DISCRIMINATORS:
            if key in instance:
                consts = [
                    _const_of(_resolved(alternative, error), key)
                    for alternative in (error.validator_value if isinstance(error.validator_value, list) else [])
                ]
                named = [const for const in consts if const is not None]
                if named:
                    return None
    if len(by_branch) == 1:
        return _deepest(next(iter(by_branch.values())))
    return None


def _no_such_block(value: object) -> str:
    if value in ("thinking", "image", "redacted_thinking"):
        return f"; the course's IR has no {value} block (IR-BLOCK-1, IR-BLOCK-2: text and toolCall only)"
    return ""


def _deepest(errors: list[ValidationError]) -> ValidationError:
    """The error deepest in the instance; among equals, an unknown or missing key first."""
    rank = {"additionalProperties": 0, "required": 1}
    return min(errors, key=lambda sub: (-len(sub.absolute_path), rank.get(str(sub.validator), 2)))


def _names_branch(schema: Mapping[str, Any], instance: Mapping[str, Any]) -> bool:
    for key in _DISCRIMINATORS:
        const = _const_of(schema, key)
        if const is not None and instance.get(key) == const:
            return True
    return False


def _const_of(schema: Mapping[str, Any], key: str) -> Any:
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get(key), dict):
        return properties[key].get("const")
    return None


def _resolved(schema: Any, error: ValidationError) -> Mapping[str, Any]:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return _resolve_ref(schema["$ref"])
    return schema if isinstance(schema, dict) else {}


def _allowed_keys(schema: Any) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return [str(key) for key in properties] if isinstance(properties, dict) else []


def unknown_key_message(key: str, allowed: Iterable[str]) -> str:
    """``unknown key 'x' (did you mean 'y'?)`` or with the keys allowed there."""
    allowed = sorted(allowed)
    suggestion = suggest(key, allowed)
    if suggestion is not None:
        return f"unknown key {key!r} (did you mean {suggestion!r}?)"
    return f"unknown key {key!r} (allowed: {', '.join(allowed)})" if allowed else f"unknown key {key!r}"


def suggest(key: str, allowed: Iterable[str]) -> str | None:
    """The allowed key the author most likely meant: the same word in camelCase, or the closest spelling."""
    allowed = list(allowed)
    camel = re.sub(r"[_-]([a-z0-9])", lambda match: match.group(1).upper(), key)
    for candidate in allowed:
        if candidate.lower() in (key.lower(), camel.lower()) or candidate == camel:
            return candidate
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6) or difflib.get_close_matches(camel, allowed, n=1, cutoff=0.6)
    if close:
        return close[0]
    prefixed = [candidate for candidate in allowed if candidate.startswith(key) or key.startswith(candidate)]
    return prefixed[0] if len(prefixed) == 1 else None


def _short(value: object) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"


def _shorten_message(error: ValidationError) -> str:
    """jsonschema's message with the offending value (which may be a whole turn) cut short."""
    message = str(error.message)
    whole = repr(error.instance)
    if len(whole) > _SHORT and whole in message:
        message = message.replace(whole, _short(error.instance))
    return message


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- keys of expected IR values ---------------------------------------------------------


@cache
def _ir_defs() -> Mapping[str, Any]:
    defs = load_schema("ir.schema.json").get("$defs", {})
    return defs if isinstance(defs, dict) else {}


@cache
def _fixture_defs() -> Mapping[str, Any]:
    defs = load_schema("fixture-file.schema.json").get("$defs", {})
    return defs if isinstance(defs, dict) else {}


# A generated expected-value schema's definitions have the keys of its IR's (conformance.authoring.expected_schema).
_IR_OF_EXPECTED = {"expected-ir.schema.json": "ir.schema.json", "pi-ai-1-expected-ir.schema.json": "pi-ai-1-ir.schema.json"}


@cache
def _defs_of(file: str) -> Mapping[str, Any]:
    try:
        defs = load_schema(_IR_OF_EXPECTED.get(file, file)).get("$defs", {})
    except KeyError:  # not one of ours
        return {}
    return defs if isinstance(defs, dict) else {}


def _resolve_ref(ref: str) -> Mapping[str, Any]:
    """The definition ``ref`` names; a reference without a file is the course fixture schema's (else its IR's)."""
    file, _, pointer = ref.partition("#")
    name = pointer.rsplit("/", 1)[-1]
    defs = _defs_of(file) if file else _fixture_defs()
    found = defs.get(name)
    if not isinstance(found, dict):
        found = _ir_defs().get(name) or _fixture_defs().get(name)
    return found if isinstance(found, dict) else {}


def _def(name: str) -> Mapping[str, Any]:
    return _resolve_ref(name)


def expectation_problems(raw: JsonObject) -> list[tuple[Path, str]]:
    """Unknown keys in the expected IR values of a case, each as ``(path in the case, message)``."""
    operation = raw.get("operation")
    found: list[tuple[Path, str]] = []
    expect = raw.get("expect")
    if isinstance(expect, dict):
        shape = {
            "make_text": "TextContent",
            "make_user_message": "UserMessage",
            "make_assistant_message": "AssistantMessage",
            "current_system_message": "SystemMessage",
        }.get(str(operation))
        if shape is not None and "value" in expect:
            found.extend(_check(expect["value"], _def(shape), ("expect", "value")))
    steps = raw.get("steps")
    input_value = raw.get("input")
    assistant = operation == "scripted_model" or (isinstance(input_value, dict) and input_value.get("kind") == "assistant")
    if isinstance(steps, list):
        for index, step in enumerate(steps):
            expected = step.get("expect") if isinstance(step, dict) else None
            if isinstance(expected, dict):
                found.extend(_step_problems(expected, ("steps", index, "expect"), assistant))
    return found


def _step_problems(expect: JsonObject, where: Path, assistant: bool) -> Iterator[tuple[Path, str]]:
    if assistant:
        events = expect.get("events")
        if isinstance(events, list):
            for index, event in enumerate(events):
                yield from _check(event, _def("ModelEvent"), (*where, "events", index))
        if "value" in expect:
            shape = "ModelEvent" if "done" in expect else "AssistantMessage"
            yield from _check(expect["value"], _def(shape), (*where, "value"))
    requests = expect.get("requests")
    if isinstance(requests, list):
        for index, request in enumerate(requests):
            yield from _check(request, _def("AgentContext"), (*where, "requests", index))
    if "context" in expect:
        yield from _check(expect["context"], _def("AgentContext"), (*where, "context"))


def _is_matcher(value: object) -> bool:
    return isinstance(value, dict) and any(key in value for key in _MATCHER_KEYS)


def _check(value: Any, schema: Mapping[str, Any], where: Path) -> Iterator[tuple[Path, str]]:
    """Unknown keys of ``value`` against the IR ``schema`` (matchers stand for anything)."""
    if isinstance(value, dict):
        misspelt = matcher_key_problem(value)
        if misspelt is not None:
            yield (*where, misspelt[0]), misspelt[1]
            return
    if _is_matcher(value):
        return
    if isinstance(schema.get("$ref"), str):
        schema = _resolve_ref(schema["$ref"])
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(alternatives, list):
        branch = _pick(value, [_resolve_ref(item["$ref"]) if "$ref" in item else item for item in alternatives if isinstance(item, dict)])
        resolved = [_resolve_ref(item["$ref"]) if "$ref" in item else item for item in alternatives if isinstance(item, dict)]
        if branch is not None:
            yield from _check(value, branch, where)
        elif isinstance(value, dict) and (found := _without_discriminator(value, resolved)) is not None:
            inner, message = found
            yield (*where, *inner), message
        elif isinstance(value, dict):
            for key in _DISCRIMINATORS:
                names = [_const_of(alternative, key) for alternative in alternatives if isinstance(alternative, dict)]
                names = [
                    _const_of(_resolve_ref(item["$ref"]), key) for item in alternatives if isinstance(item, dict) and "$ref" in item
                ] + names
                known = [name for name in names if name is not None]
                if known and key in value and not _is_matcher(value[key]):
                    choices = ", ".join(map(repr, known))
                    why = f"{_short(value[key])} is not a known {key} here (one of {choices}){_no_such_block(value[key])}"
                    yield (*where, key), why
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            if schema.get("additionalProperties") is False:
                for key in value:
                    if isinstance(key, str) and key not in properties:
                        yield (*where, key), unknown_key_message(key, properties)
            for key, item in value.items():
                sub = properties.get(key)
                if isinstance(sub, dict):
                    yield from _check(item, sub, (*where, key))
        return
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _check(item, schema["items"], (*where, index))


def _pick(value: Any, alternatives: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The alternative a value names by its ``type`` / ``role``; for an object naming neither, the one without that key."""
    if not isinstance(value, dict):
        return None
    for alternative in alternatives:
        if _names_branch(alternative, value):
            return alternative
    if not any(key in value for key in _DISCRIMINATORS):
        # An error turn has no role: the branch whose properties do not know 'role'.
        without = [alternative for alternative in alternatives if "role" not in _allowed_keys(alternative)]
        if len(without) == 1:
            return without[0]
    return None
