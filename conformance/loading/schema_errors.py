"""Schema problems in a fixture case, said precisely: the deepest reason, at its path, with a suggestion.

Two things live here, called from :mod:`conformance.loading.loader`:

* :func:`describe` turns a ``jsonschema`` error into ``(path, message)``. For a ``oneOf`` /
  ``anyOf`` (a content block, a turn, an event) it follows the branch the value itself names
  (its ``type`` or ``role``), down to the most specific reason, so a tool call written with
  ``args`` says "unknown key 'args' (did you mean 'arguments'?)" rather than "'text' was
  expected"; values are never dumped.
* :func:`unknown_key_message` and :func:`suggest` word an unknown key with a did-you-mean,
  for :mod:`conformance.loading.expected_keys` too, which checks the keys of expected IR values.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from conformance.model.schemas import load_schema

Path = tuple[str | int, ...]
MATCHER_KEYS = frozenset({"$type", "$oneOf", "$any"})
DISCRIMINATORS = ("type", "role")
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
    # A key like `$typ` is a misspelt matcher wherever it is: say so before any schema detail.
    found = _misspelt_matcher(error, outer) or _key_problem(error, path) or _discriminator_problem(error)
    return found if found is not None else (path, _value_problem(error))


def _misspelt_matcher(error: ValidationError, outer: ValidationError) -> tuple[Path, str] | None:
    """A ``$`` key that is no matcher, in the object the error is about or in the one it was reported on."""
    for candidate in (error, outer):
        if isinstance(candidate.instance, dict):
            found = matcher_key_problem(candidate.instance)
            if found is not None:
                return (*tuple(candidate.absolute_path), found[0]), found[1]
    if error.validator == "not" and isinstance(error.instance, str) and error.instance.startswith("$"):  # propertyNames
        return (*tuple(error.absolute_path), error.instance), unknown_matcher_message(error.instance)
    return None


def _key_problem(error: ValidationError, path: Path) -> tuple[Path, str] | None:
    """Unknown keys (with a did-you-mean) or missing ones, at the key's own path."""
    if not isinstance(error.instance, dict):
        return None
    if error.validator == "additionalProperties":
        allowed = allowed_keys(error.schema)
        unknown = [key for key in error.instance if isinstance(key, str) and key not in allowed]
        if unknown:
            return _at_key(path, unknown), "; ".join(unknown_key_message(key, allowed) for key in unknown)
    if error.validator == "required":
        missing = [key for key in error.validator_value if key not in error.instance]  # type: ignore[union-attr]
        # A shape discriminated by `action` (a step) allows the keys of every branch.
        return _missing_and_unknown(path, error.instance, missing, _all_keys(error.schema))
    return None


def _value_problem(error: ValidationError) -> str:
    """A wrong value in one line: what was expected and what the fixture has, never the whole value."""
    if error.validator == "const":
        return f"expected {short(error.validator_value)}, got {short(error.instance)}{no_such_block(error.instance)}"
    if error.validator == "enum":
        choices = ", ".join(short(choice) for choice in error.validator_value)  # type: ignore[union-attr]
        return f"{short(error.instance)} is not one of {choices}"
    if error.validator == "type":
        return f"{short(error.instance)} is not of type {error.validator_value!r}"
    return _one_line(_shorten_message(error))


def _discriminator_problem(error: ValidationError) -> tuple[Path, str] | None:
    """For a oneOf/anyOf over shapes told apart by ``role`` / ``type``: an unknown or misspelt discriminator."""
    if error.validator not in ("oneOf", "anyOf") or not isinstance(error.instance, dict):
        return None
    path: Path = tuple(error.absolute_path)
    alternatives = [_resolved(item, error) for item in error.validator_value] if isinstance(error.validator_value, list) else []
    for key in DISCRIMINATORS:
        known = [const for const in (const_of(alternative, key) for alternative in alternatives) if const is not None]
        if known and key in error.instance and error.instance[key] not in known:
            choices = ", ".join(short(const) for const in known)
            value = error.instance[key]
            return (*path, key), f"{short(value)} is not a {key} this IR knows here (one of {choices}){no_such_block(value)}"
    unnamed = without_discriminator(error.instance, alternatives)
    if unnamed is None:
        return _unknown_action(path, error.instance, alternatives)
    return (*path, *unnamed[0]), unnamed[1]


def _unknown_action(path: Path, instance: Mapping[str, Any], alternatives: list[Mapping[str, Any]]) -> tuple[Path, str] | None:
    """A one-key action (a script's ``{wait: G}``, a step's ``{release: G}``) whose key no alternative has: that key."""
    actions = [alternative["required"][0] for alternative in alternatives if len(alternative.get("required", ())) == 1]
    if not actions or len(actions) != sum(isinstance(alternative.get("required"), list) for alternative in alternatives):
        return None
    unknown = [key for key in instance if isinstance(key, str) and key not in actions]
    if len(instance) != 1 or not unknown:
        return None
    return (*path, unknown[0]), unknown_key_message(unknown[0], actions)


def unknown_matcher_message(key: str) -> str:
    """The message for a ``$`` key that is no matcher (``$typ``, ``$oneof``)."""
    suggestion = suggest(key, sorted(MATCHER_KEYS))
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    literal = f"; for the literal key {key!r} write {'$' + key!r}"
    return f"unknown matcher {key!r}{hint}; a matcher is {{$type: ...}}, {{$oneOf: [...]}} or {{$any: true}}{literal}"


def matcher_key_problem(value: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first key of ``value`` that starts with ``$`` and is no matcher, with its message."""
    for key in value:
        # `$$O` is the literal key `$O` (fixture-format.md, Matching): data, not a matcher.
        if isinstance(key, str) and key.startswith("$") and not key.startswith("$$") and key not in MATCHER_KEYS:
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
    keys = allowed_keys(schema)
    if isinstance(schema, dict):
        for item in schema.get("allOf") or ():
            then = item.get("then") if isinstance(item, dict) else None
            if isinstance(then, dict):
                branch = resolve_ref(then["$ref"]) if isinstance(then.get("$ref"), str) else then
                keys.extend(key for key in allowed_keys(branch) if key not in keys)
    return keys


def without_discriminator(instance: Mapping[str, Any], alternatives: list[Mapping[str, Any]]) -> tuple[Path, str] | None:
    """A value of a discriminated shape (a message, a block, an event) that names no branch: its misspelt keys."""
    for key in DISCRIMINATORS:
        known = [const for const in (const_of(alternative, key) for alternative in alternatives) if const is not None]
        if not known or key in instance:
            continue
        allowed: list[str] = []
        for alternative in alternatives:
            allowed.extend(name for name in allowed_keys(alternative) if name not in allowed)
        if any(key not in allowed_keys(alternative) for alternative in alternatives):
            # A branch without the key (an error turn has no role): only misspelt keys are sure mistakes.
            extra = [name for name in instance if isinstance(name, str) and name not in allowed]
            if not extra:
                return None
            return _at_key((), extra), "; ".join(unknown_key_message(name, allowed) for name in extra)
        where, message = _missing_and_unknown((), instance, [key], allowed)
        if "missing required key" in message:
            message += f" (one of {', '.join(short(const) for const in known)})"
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
            if names_branch(_resolved(alternative, error), instance) and index in by_branch:
                return _deepest(by_branch[index])
        # No branch named by the value: the value's discriminator itself is the mistake.
        for key in DISCRIMINATORS:
            if key in instance:
                consts = [
                    const_of(_resolved(alternative, error), key)
                    for alternative in (error.validator_value if isinstance(error.validator_value, list) else [])
                ]
                named = [const for const in consts if const is not None]
                if named:
                    return None
    if len(by_branch) == 1:
        return _deepest(next(iter(by_branch.values())))
    return None


def no_such_block(value: object) -> str:
    if value in ("thinking", "image", "redacted_thinking"):
        return f"; the course's IR has no {value} block (IR-BLOCK-1, IR-BLOCK-2: text and toolCall only)"
    return ""


def _deepest(errors: list[ValidationError]) -> ValidationError:
    """The error deepest in the instance; among equals, an unknown or missing key first."""
    rank = {"additionalProperties": 0, "required": 1}
    return min(errors, key=lambda sub: (-len(sub.absolute_path), rank.get(str(sub.validator), 2)))


def names_branch(schema: Mapping[str, Any], instance: Mapping[str, Any]) -> bool:
    for key in DISCRIMINATORS:
        const = const_of(schema, key)
        if const is not None and instance.get(key) == const:
            return True
    return False


def const_of(schema: Mapping[str, Any], key: str) -> Any:
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get(key), dict):
        return properties[key].get("const")
    return None


def _resolved(schema: Any, error: ValidationError) -> Mapping[str, Any]:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return resolve_ref(schema["$ref"])
    return schema if isinstance(schema, dict) else {}


def allowed_keys(schema: Any) -> list[str]:
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


def short(value: object) -> str:
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
        message = message.replace(whole, short(error.instance))
    return message


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- definitions of the IR and fixture schemas ------------------------------------------


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


def resolve_ref(ref: str) -> Mapping[str, Any]:
    """The definition ``ref`` names; a reference without a file is the course fixture schema's (else its IR's).

    A bare name (``"ModelEvent"``, no ``#``) is the course IR's definition of that name.
    """
    file, mark, pointer = ref.partition("#")
    if not mark:
        file, pointer = "", ref
    name = pointer.rsplit("/", 1)[-1]
    defs = _defs_of(file) if file else _fixture_defs()
    found = defs.get(name)
    if not isinstance(found, dict):
        found = _ir_defs().get(name) or _fixture_defs().get(name)
    return found if isinstance(found, dict) else {}
