# The two commands a new user runs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench bytecode openapi lint clean train-demo job-env

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip "setuptools>=68" wheel

# Stamps are named after pyproject.toml's hash, so changing dependencies reinstalls; and
# after the C extension's source, which the install compiles (src/rlvr/sandboxes/local/_jobstart.c).
DEPS_HASH := $(shell cat pyproject.toml examples/rlvr-plugin-example/pyproject.toml src/rlvr/sandboxes/local/_jobstart.c | cksum | cut -d' ' -f1)

$(VENV)/.run-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet -e .
	touch $@

# The compat extra (tests/compat runs the trainers' code): torch first, from the local CPU
# wheel (any other spec pulls CUDA), then openrlhf without its CUDA-bound pins. openrlhf's
# wheel also installs a top-level `tests` package, which would shadow ours: removed.
$(VENV)/.dev-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev,compat]'
	$(PIP) install --quiet --no-deps openrlhf==0.11.2
	rm -rf "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/tests"
	touch $@ $(VENV)/.run-$(DEPS_HASH) $(VENV)/.lint-$(DEPS_HASH)

# torch from the local CPU wheel before anything that depends on it (see pyproject's `train`).
$(VENV)/.train-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[train]'
	touch $@

# The job environment (rlvr.sandboxes.jobenv): the pinned Python packages programs may
# import, apart from the service's own, in $(JOBS_ENV)/python, where the sandbox looks
# by default (RLVR_JOB_PYTHON_PATH names another). --no-deps: the file pins every
# dependency, so the set is exactly its list. Built again when the file changes. Node's
# lodash is Debian's node-lodash (apt-get install node-lodash; .ci/run installs it).
# A checkout under /tmp builds it in /opt/rlvr-jobs instead, where the images have it:
# every job's /tmp is its own, so no job could see a folder under the host's /tmp.
JOBS_ENV ?= $(if $(filter /tmp/%,$(CURDIR)),/opt/rlvr-jobs,.venv-jobs)
JOBS_REQUIREMENTS := src/rlvr/sandboxes/job-requirements.txt
JOBS_HASH := $(shell cksum < $(JOBS_REQUIREMENTS) | cut -d' ' -f1)

$(JOBS_ENV)/.built-$(JOBS_HASH): $(VENV)/bin/python
	rm -rf $(JOBS_ENV)/python $(JOBS_ENV)/.built-*
	$(PIP) install --quiet --no-deps --only-binary=:all: --target $(JOBS_ENV)/python -r $(JOBS_REQUIREMENTS)
	touch $@

# C++ jobs' precompiled bits/stdc++.h (rlvr.sandboxes.runner.pch), built again when g++
# or the module changes; nothing where g++ is missing.
GXX_VERSION := $(shell g++ -dumpfullversion 2>/dev/null)
PCH_HASH := $(shell cksum < src/rlvr/sandboxes/runner/pch.py | cut -d' ' -f1)-$(GXX_VERSION)
# The marker stays outside the folder jobs see.
$(JOBS_ENV)/.pch-built-$(PCH_HASH): $(VENV)/bin/python
	rm -rf $(JOBS_ENV)/pch $(JOBS_ENV)/.pch-built-*
	if [ -n "$(GXX_VERSION)" ]; then $(PY) -m rlvr.sandboxes.runner.pch $(JOBS_ENV)/pch; fi
	mkdir -p $(@D) && touch $@

job-env: $(JOBS_ENV)/.built-$(JOBS_HASH) $(JOBS_ENV)/.pch-built-$(PCH_HASH)

# GRPO on the built-in arithmetic task against a local `rlvr serve`: runs/demo/summary.json,
# log.jsonl and curves.png.
train-demo: $(VENV)/.train-$(DEPS_HASH)
	$(VENV)/bin/rlvr train --config src/rlvr/trainer/grpo/demo.yaml

# The package's bytecode, as a wheel install has it (an editable one has none, and
# PYTHONDONTWRITEBYTECODE may keep Python from writing it): the sandbox's zygote then
# loads its modules instead of compiling them, which would leave garbage in the heap
# that every job's fork copies. Only changed files are compiled again.
bytecode: $(VENV)/bin/python
	$(PY) -m compileall -q src/rlvr

run: $(VENV)/.run-$(DEPS_HASH) bytecode job-env
	$(VENV)/bin/rlvr serve --host $(HOST) --port $(PORT)

test: $(VENV)/.dev-$(DEPS_HASH) bytecode job-env
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.dev-$(DEPS_HASH) bytecode job-env
	$(PY) -m bench.service
	$(PY) -m bench.math_grading
	$(PY) -m bench.sandbox
	$(PY) -m bench.scale

openapi: $(VENV)/.run-$(DEPS_HASH)
	$(VENV)/bin/rlvr openapi -o openapi.yaml

# The `lint` extra alone (no torch, trl or verl): seconds to install and run. ruff, mypy
# --strict, and the import contracts in pyproject.toml (service -> verifiers ->
# sandboxes, no cycles). tests/test_lint.py runs the same three, so `make test` and CI
# hold the code to them too.
$(VENV)/.lint-$(DEPS_HASH): $(VENV)/bin/python
	$(PIP) install --quiet -e '.[lint]'
	touch $@

lint: $(VENV)/.lint-$(DEPS_HASH)
	$(VENV)/bin/ruff check src tests bench examples conftest.py
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) $(JOBS_ENV) .pytest_cache .mypy_cache .ruff_cache build src/rlvr.egg-info
