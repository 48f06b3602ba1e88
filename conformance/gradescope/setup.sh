#!/usr/bin/env bash
# Gradescope's setup.sh, written by `pi-conformance autograder gradescope` (pi-conformance @VERSION@).
# Runs once, as root, when Gradescope builds the autograder image. It installs:
#   Node.js @NODE_INSTALL_MAJOR@ (NodeSource's apt repository, else the distro's) unless one at the course's floor
#   (@NODE_COURSE_FLOOR@+) is there; a Node.js older than @NODE_MINIMUM_MAJOR@ is refused (docs/node-versions.md);
#   a venv holding exactly the pi-conformance wheel in this zip, at $PREFIX/venv (world-readable);
#   the pinned TypeScript toolchain, at $PREFIX/toolchain (world-readable);
#   bubblewrap, where the image allows it (a failure is noted, not fatal: grading then runs
#   without the sandbox, and each result says so).
# The rubric and held-out set go to $PREFIX/private (root only), and /autograder/source is made
# root only: student code runs as "nobody" and can read neither.
set -euo pipefail

# PI_AUTOGRADER_ROOT is for pi-conformance's own tests, which simulate the /autograder tree.
ROOT="${PI_AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
if [ -n "${PI_AUTOGRADER_ROOT:-}" ]; then PREFIX="$ROOT/opt/pi-conformance"; else PREFIX=/opt/pi-conformance; fi
NODE_MINIMUM_MAJOR=@NODE_MINIMUM_MAJOR@
NODE_COURSE_FLOOR=@NODE_COURSE_FLOOR@
export DEBIAN_FRONTEND=noninteractive

updated=""
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup.sh: no apt-get here to install $*" >&2
        return 1
    fi
    if [ -z "$updated" ]; then apt-get update -q && updated=1; fi
    apt-get install -y -q --no-install-recommends "$@"
}

# "MAJOR MINOR" of the node on PATH (empty when none runs).
node_version() { node --version 2>/dev/null | sed -nE 's/^v([0-9]+)\.([0-9]+).*/\1 \2/p'; }
# at_least MAJOR.MINOR: the node on PATH, with npm, is that recent.
at_least() {
    local found want_major want_minor
    found="$(node_version)"
    [ -n "$found" ] && command -v npm >/dev/null 2>&1 || return 1
    want_major="${1%%.*}"; want_minor="${1#*.}"; [ "$want_minor" != "$1" ] || want_minor=0
    set -- $found
    [ "$1" -gt "$want_major" ] || { [ "$1" -eq "$want_major" ] && [ "$2" -ge "$want_minor" ]; }
}

# supported: the node on PATH, with npm, is one the adapters confine: NODE_MINIMUM_MAJOR.x, or
# NODE_COURSE_FLOOR and later (21.x and 22.0-22.18 lack the permission model the adapters use).
supported() {
    local found
    found="$(node_version)"
    [ -n "$found" ] && command -v npm >/dev/null 2>&1 || return 1
    set -- $found
    [ "$1" -eq "$NODE_MINIMUM_MAJOR" ] || at_least "$NODE_COURSE_FLOOR"
}

started=$(date +%s)
echo "setup.sh: pi-conformance @VERSION@ into $PREFIX"

# -- Node.js ------------------------------------------------------------------------------
if at_least "$NODE_COURSE_FLOOR"; then
    echo "setup.sh: Node.js $(node --version) is already here"
else
    apt_install ca-certificates curl gnupg || true
    if curl -fsSL "https://deb.nodesource.com/setup_@NODE_INSTALL_MAJOR@.x" -o /tmp/nodesource_setup.sh && bash /tmp/nodesource_setup.sh; then
        apt_install nodejs
    else
        echo "setup.sh: NodeSource's repository is out of reach; trying the distro's nodejs" >&2
        apt_install nodejs npm || true
    fi
    supported || { echo "setup.sh: Node.js $NODE_MINIMUM_MAJOR.x or $NODE_COURSE_FLOOR+ with npm is needed and could not be installed (found: $(node --version 2>/dev/null || echo none))" >&2; exit 1; }
    at_least "$NODE_COURSE_FLOOR" || echo "setup.sh: note: Node.js $(node --version) grades, but is older than the course's $NODE_COURSE_FLOOR" >&2
fi

# -- Python and the package ---------------------------------------------------------------
# Grading starts its helper processes as nobody with the venv's interpreter, so nobody must be able
# to run it: a Python under /root (pyenv, conda) is skipped.
runs_as_nobody() {
    if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then return 0; fi
    (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- "$1" -c 'import sys') >/dev/null 2>&1
}
python_ok() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && runs_as_nobody "$1"; }
find_python() {  # every python3.X on PATH, not just the first of each name (a pyenv shim may shadow the system's)
    local name found
    for name in python3.13 python3.12 python3.11 python3; do
        for found in $(type -ap "$name"); do
            if python_ok "$found"; then echo "$found"; return 0; fi
        done
    done
    return 1
}
PYTHON="$(find_python || true)"
if [ -z "$PYTHON" ]; then
    # Ubuntu 22.04's python3 is 3.10: its python3.11 package (universe) is recent enough.
    apt_install python3.11 python3.11-venv || apt_install python3-venv || true
    PYTHON="$(find_python || true)"
    [ -n "$PYTHON" ] || { echo "setup.sh: Python 3.11+ with venv, runnable by nobody, is needed and could not be installed" >&2; exit 1; }
fi
echo "setup.sh: Python $("$PYTHON" --version 2>&1) at $PYTHON"
mkdir -p "$PREFIX"
chmod 755 "$PREFIX"
rm -rf "$PREFIX/venv"
"$PYTHON" -m venv "$PREFIX/venv"
"$PREFIX/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$SOURCE/@WHEEL@"

# -- the toolchain ------------------------------------------------------------------------
export PI_CONFORMANCE_TOOLCHAIN="$PREFIX/toolchain"
"$PREFIX/venv/bin/pi-conformance" toolchain install

# -- bubblewrap ---------------------------------------------------------------------------
if ! command -v bwrap >/dev/null 2>&1; then
    apt_install bubblewrap || echo "setup.sh: note: bubblewrap could not be installed; student code will run without the sandbox (as nobody)" >&2
fi

# -- what only root may read --------------------------------------------------------------
rm -rf "$PREFIX/private"
mkdir -p "$PREFIX/private"
chmod 700 "$PREFIX/private"
if [ -f "$SOURCE/rubric.yaml" ]; then cp "$SOURCE/rubric.yaml" "$PREFIX/private/rubric.yaml"; fi
if [ -d "$SOURCE/held-out" ]; then cp -R "$SOURCE/held-out" "$PREFIX/private/held-out"; fi
chmod -R go-rwx "$PREFIX/private"
chmod -R a+rX "$PREFIX/venv" "$PREFIX/toolchain"
chmod 700 "$SOURCE"

"$PREFIX/venv/bin/pi-conformance" doctor || true
echo "setup.sh: done in $(( $(date +%s) - started )) s"
