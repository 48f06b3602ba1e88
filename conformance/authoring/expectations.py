"""New expectations from an observation, keeping every matcher the observation still satisfies.

A matcher (``$type``, ``$oneOf``, ``$any``) records that the spec leaves a value open; the
reference's concrete value at that place is one choice among several and must not replace it.
More generally, any part of the old expectation that the observation still matches is kept
as written, so a regeneration changes only what actually diverges.
"""

from __future__ import annotations

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.judging.matcher import first_divergence, is_matcher


def merge(old: JsonValue, observed: JsonValue) -> JsonValue:
    """The expectation to write at one place: ``old`` where it still matches, else ``observed``."""
    if first_divergence(old, observed) is None:
        return old
    if isinstance(old, dict) and not is_matcher(old) and isinstance(observed, dict):
        merged: JsonObject = {key: merge(value, observed[key]) for key, value in old.items() if key in observed}
        merged.update((key, value) for key, value in observed.items() if key not in old)
        return merged
    if isinstance(old, list) and isinstance(observed, list):
        return [merge(item, seen) for item, seen in zip(old, observed, strict=False)] + observed[len(old) :]
    return observed


def merge_expect(old: JsonObject, observation: JsonObject) -> JsonObject:
    """A whole ``expect`` block: the same keys as before (the keys a case checks are the author's choice)."""
    # A key the observation lacks stays as written: the runner will report it, not regen.
    return {key: merge(value, observation[key]) if key in observation else value for key, value in old.items()}
