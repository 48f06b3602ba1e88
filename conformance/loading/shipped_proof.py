"""Write the proof a wheel ships that its bundled fixtures passed every check (run when the wheel is built).

``python -m conformance.loading.shipped_proof OUT`` loads the bundled fixtures of every profile
with a private, empty cache, exactly as a run does, and writes the parsed entries of the files
that loaded cleanly into one JSON file, keyed as :mod:`.validation_cache` keys them (the file's
bytes, its name, the profile, the clause registry, the schemas and the checking code). A file
with a problem has no entry, so an installed copy checks it again and reports the problem.
``hatch_build.py`` runs this and puts OUT into the wheel as ``conformance/_data/validated-cases.json``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def write_proof(out: Path) -> int:
    """Load every profile's bundled suite into a private cache and write its parsed entries to ``out``; their number."""
    with tempfile.TemporaryDirectory(prefix="pi-proof-") as folder:
        previous = os.environ.get("PI_CONFORMANCE_CACHE")
        os.environ["PI_CONFORMANCE_CACHE"] = folder
        try:
            from conformance.loading import validation_cache
            from conformance.loading.loader import load_suite
            from conformance.model.profiles import PROFILES

            for profile in PROFILES:
                load_suite(profile=profile)
            entries = validation_cache.parsed_entries(Path(folder))
        finally:
            if previous is None:
                del os.environ["PI_CONFORMANCE_CACHE"]
            else:
                os.environ["PI_CONFORMANCE_CACHE"] = previous
    out.write_text(json.dumps(entries, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    """Command line: the output file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m conformance.loading.shipped_proof OUT.json", file=sys.stderr)
        return 2
    count = write_proof(Path(args[0]))
    print(f"shipped_proof: {count} checked fixture files -> {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
