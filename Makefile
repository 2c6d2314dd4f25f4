# The two commands a new user runs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench openapi lint typecheck clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip "setuptools>=68" wheel

# Stamps are named after pyproject.toml's hash, so changing dependencies reinstalls.
DEPS_HASH := $(shell cat pyproject.toml examples/rlvr-plugin-example/pyproject.toml | cksum | cut -d' ' -f1)

$(VENV)/.run-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.dev-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet -e '.[dev]'
	touch $@ $(VENV)/.run-$(DEPS_HASH)

run: $(VENV)/.run-$(DEPS_HASH)
	$(VENV)/bin/rlvr serve --host $(HOST) --port $(PORT)

test: $(VENV)/.dev-$(DEPS_HASH)
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.dev-$(DEPS_HASH)
	$(PY) -m bench.service
	$(PY) -m bench.math_grading
	$(PY) -m bench.sandbox
	$(PY) -m bench.scale

openapi: $(VENV)/.run-$(DEPS_HASH)
	$(VENV)/bin/rlvr openapi -o openapi.yaml

# ruff (bare `import service` and friends are banned), mypy --strict, and the import
# contracts in pyproject.toml (service -> verifiers -> sandboxes, no cycles). The
# commands live in tests/test_lint.py, so `make test` and CI hold the code to them too.
lint: $(VENV)/.dev-$(DEPS_HASH)
	$(PY) -m pytest -q tests/test_lint.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build rlvr.egg-info
