# Two entry points for a fresh clone; both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: conformance test test-fast lint bench mutation clean toolchain compat-page

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

## Run the conformance suite against the bundled reference and print the summary.
conformance: $(BIN)/pi-conformance toolchain
	$(BIN)/pi-conformance run --impl reference

## Install every published @earendil-works/pi-ai 1.x (npm, into .cache, once each), run the
## pi-ai-1 cases on each and rewrite docs/pi-ai-compatibility.md.
compat-page: $(BIN)/pi-conformance
	$(BIN)/pi-conformance compat --out docs/pi-ai-compatibility.md

## Run the project's own tests (the suite against the reference included).
# Bytecode caches on (PYTHONDONTWRITEBYTECODE emptied): the tests start hundreds of Python
# processes, each of which would otherwise recompile the package and redo pytest's assert rewriting.
# -n auto: one pytest-xdist worker more than the cores (tests/conftest.py says why);
# --dist loadgroup keeps each xdist_group (the graded class, shared by two modules) on one
# worker, so it is graded once.
test: $(BIN)/pi-conformance toolchain
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadgroup

## The fast tier, for working on one stage: every test that needs no Node.js, npm, bun, toolchain,
## sandbox or browser and builds no wheel (the -m expression is requirements.FAST_TIER; tests/README.md).
# No toolchain prerequisite: nothing here builds a course project. `make test` stays the complete suite.
test-fast: $(BIN)/pi-conformance
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadgroup -m "not (needs_node or needs_npm or needs_bun or needs_toolchain or needs_bwrap or needs_chromium or builds_wheel)"

## ruff and mypy --strict on the Python packages, the tests and the benchmarks; fixture lint and clause coverage.
# mypy checks tests/ and bench/ in a run of their own: they import the examples as examples.pi_ai_port,
# while a run over examples/ itself names the same files pi_ai_port (one file, two module names).
lint: $(BIN)/pi-conformance toolchain
	$(BIN)/ruff check conformance reference_impl tests bench examples
	$(BIN)/ruff format --check conformance reference_impl tests bench examples
	$(BIN)/mypy --strict conformance reference_impl examples
	$(BIN)/mypy --strict tests bench
	$(BIN)/pi-conformance fixtures lint
	$(BIN)/pi-conformance fixtures coverage --check --output /dev/null

## Mutation score: every mutant of reference_impl against the suite, in process; writes mutation-report.json.
mutation: $(BIN)/pi-conformance
	$(BIN)/python -m conformance.mutation --report mutation-report.json

## Wall time of the suite next to a trivial parametrized pytest run; build time per submission.
bench: $(BIN)/pi-conformance toolchain
	$(BIN)/python bench/suite_overhead.py
	$(BIN)/python bench/build_time.py

clean:
	rm -rf $(VENV) build dist *.egg-info
