#!/usr/bin/env bash
# Gradescope's run_autograder, written by `pi-conformance autograder gradescope` (pi-conformance @VERSION@).
# Grades /autograder/submission into /autograder/results/results.json. Student code (the build
# and the adapter) runs as "nobody" (uid 65534), which cannot read /autograder/source or the
# held-out set, and in the bubblewrap sandbox when this container allows it (--sandbox auto);
# results.json's output says which isolation was used.
set -uo pipefail

# PI_AUTOGRADER_ROOT is for pi-conformance's own tests, which simulate the /autograder tree.
ROOT="${PI_AUTOGRADER_ROOT:-/autograder}"
if [ -n "${PI_AUTOGRADER_ROOT:-}" ]; then PREFIX="$ROOT/opt/pi-conformance"; else PREFIX=/opt/pi-conformance; fi
RUN_AS=nobody
export PI_CONFORMANCE_TOOLCHAIN="$PREFIX/toolchain"

chmod 700 "$ROOT/source" 2>/dev/null || true
mkdir -p "$ROOT/results"
RESULTS="$ROOT/results/results.json"
rm -f "$RESULTS"
args=(grade --profile "@PROFILE@" --impl "@IMPL_KIND@:$ROOT/submission" --gradescope "$RESULTS" --run-as "$RUN_AS" --sandbox auto)
if [ -f "$PREFIX/private/rubric.yaml" ]; then args+=(--rubric "$PREFIX/private/rubric.yaml"); fi
if [ -d "$PREFIX/private/held-out" ]; then args+=(--held-out "$PREFIX/private/held-out"); fi

# The grader's own output (which names held-out cases) goes to this log, shown to staff only.
log="$(mktemp)"
cd "$PREFIX"
"$PREFIX/venv/bin/pi-conformance" "${args[@]}" >"$log" 2>&1
status=$?
cat "$log"
"$PREFIX/venv/bin/python" -m conformance.autograder.finish "$RESULTS" --exit-status "$status" --log "$log" --run-as "$RUN_AS"
rm -f "$log"
exit 0
