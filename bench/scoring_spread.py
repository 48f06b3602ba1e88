"""Points a one-bug project loses under each scoring mode (:mod:`conformance.grading.scoring_modes`).

Usage: python bench/scoring_spread.py [--cache FILE]

Reads the grading cache of ``bench/feedback_quality.py`` (run that first) and prints, per
one-bug variant, the points lost under each ``scoring_mode`` a rubric may choose (per case,
the default; per clause; a per-cause cap), then the spread (largest / smallest loss) of each.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` and `tests` importable

from conformance.grading.scoring_modes import MODES, lab_points  # noqa: E402

MISBEHAVING = ("hangs-in-textof", "crashes-on-import", "never-emits")


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pi-feedback-quality.pickle")
    args = parser.parse_args()
    results = pickle.loads(args.cache.read_bytes())
    print(f"{'variant':<26}" + "".join(f"{mode:>12}" for mode in MODES))
    losses: dict[str, list[float]] = {mode: [] for mode in MODES}
    for name, result in results.items():
        row = []
        for mode in MODES:
            lost = result.score.max_points - sum(lab_points(result.score, mode).values())
            row.append(lost)
            if name not in MISBEHAVING:
                losses[mode].append(lost)
        print(f"{name:<26}" + "".join(f"{value:12.2f}" for value in row))
    print(f"{'one-bug spread (max/min)':<26}" + "".join(f"{max(v) / min(v):11.1f}x" for v in losses.values()))
    print(f"{'one-bug range':<26}" + "".join(f"{min(v):5.2f}-{max(v):5.2f}".rjust(12) for v in losses.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
