"""The last step of Gradescope's ``run_autograder``: a ``results.json`` in every case, saying how students were isolated.

``python -m conformance.autograder.finish RESULTS --exit-status N --log FILE --run-as USER``

When ``grade`` wrote ``RESULTS``, its output gains one line that says what isolation the
student code actually had (the user it ran as, and whether the bubblewrap sandbox held it);
``extra_data`` gets the same. When ``grade`` wrote nothing (a usage error: a bad rubric or
held-out set, which staff must fix), ``RESULTS`` is written with a score of 0 and the error,
so Gradescope shows why instead of "the autograder failed to produce results".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic
from conformance.common.jsontypes import JsonObject

_LOG_LINES = 30


def isolation_line(sandbox: str, run_as: str) -> str:
    """What students are told about the isolation their code had."""
    if sandbox == "bwrap":
        where = "in the bubblewrap sandbox (no network, no file of the grader's visible)"
    else:
        where = "WITHOUT the bubblewrap sandbox (this container does not allow it); it could not read the autograder's files"
    return f"Isolation: your code ran as the unprivileged user {run_as}, {where}."


def finish(results: Path, exit_status: int, log: Path | None, run_as: str) -> JsonObject:
    """The final ``results.json`` document (see the module docstring)."""
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() if log else []
        except OSError:
            lines = []
        detail = "\n".join(lines[-_LOG_LINES:]) or "no output"
        return {
            "score": 0,
            "output": f"The autograder could not grade this submission (pi-conformance exited {exit_status}). "
            f"This is the autograder's setup, not your code; staff have been told by this message:\n{detail}\n",
            "output_format": "text",
            "extra_data": {"status": "autograder-error", "exit_status": exit_status, "run_as": run_as},
            "tests": [],
        }
    given = data.get("extra_data")
    extra: JsonObject = given if isinstance(given, dict) else {}
    sandbox = str(extra.get("sandbox", "none"))
    output = str(data.get("output") or "")
    data["output"] = f"{output.rstrip()}\n\n{isolation_line(sandbox, run_as)}\n"
    data["extra_data"] = {**extra, "run_as": run_as}
    return data


def main(argv: list[str] | None = None) -> int:
    """Rewrite ``RESULTS`` as :func:`finish` says."""
    parser = argparse.ArgumentParser(prog="python -m conformance.autograder.finish")
    parser.add_argument("results", type=Path)
    parser.add_argument("--exit-status", type=int, required=True)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--run-as", required=True)
    args = parser.parse_args(argv)
    document = finish(args.results, args.exit_status, args.log, args.run_as)
    write_text_atomic(args.results, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
