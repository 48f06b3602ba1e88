"""Gradescope's ``results.json`` format, as its documentation states it ("Autograder Specifications").

A JSON Schema of the documented fields, and :func:`problems` for a document: every field
Gradescope documents has its documented type and values, and no other field appears (a typo
such as ``max_points`` would be silently ignored by Gradescope). The score must be given at
the top or on every test.
"""

from __future__ import annotations

from typing import Any

import jsonschema

FORMATS = ["text", "html", "simple_format", "md", "ansi"]
VISIBILITIES = ["hidden", "after_due_date", "after_published", "visible"]

TEST = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number"},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": {"enum": FORMATS},
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": {"enum": FORMATS},
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": {"enum": VISIBILITIES},
        "extra_data": {"type": "object"},
    },
}

RESULTS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": FORMATS},
        "test_output_format": {"enum": FORMATS},
        "test_name_format": {"enum": FORMATS},
        "visibility": {"enum": VISIBILITIES},
        "stdout_visibility": {"enum": VISIBILITIES},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "value"],
                "properties": {"name": {"type": "string"}, "order": {"enum": ["asc", "desc"]}},
            },
        },
    },
}


def problems(document: Any) -> list[str]:
    """Why Gradescope would not take ``document`` as ``results.json``; empty when it would."""
    found = [
        f"{'.'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in jsonschema.Draft202012Validator(RESULTS).iter_errors(document)
    ]
    if found:
        return found
    tests = document.get("tests", [])
    if "score" not in document and not all("score" in test for test in tests):
        found.append("score: neither at the top nor on every test")
    for index, test in enumerate(tests):
        if "score" in test and "max_score" in test and not 0 <= test["score"] <= test["max_score"]:
            found.append(f"tests.{index}: score {test['score']} outside 0..{test['max_score']}")
    return found
