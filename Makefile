# One entry point for people and CI. `make serve` and `make test` are the two
# commands the README promises work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test check lint typecheck install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	./scripts/install-test-system-packages

## serve: install, migrate the embedded (or DATABASE_URL) database, run API + worker
serve: install
	$(BIN)/grounded db upgrade
	$(BIN)/grounded serve --with-worker

## test: install test dependencies, then lint, type-check and run every test
test: install-test check

## check: what CI runs, without reinstalling
check: lint typecheck
	$(BIN)/python -m pytest

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
