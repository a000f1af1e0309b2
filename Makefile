# Two commands for a newcomer: `make plan` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.gpucloud-installed
STACK  ?= dev

.PHONY: plan plan-all test lint typecheck unit dist bench bench-checkov mutation clean-venv

# A first install downloads about 1.5 minutes of wheels: each step says what it does and pip shows its progress.
$(STAMP): pyproject.toml constraints.txt gpucloud/tools.py
	@echo "==> [1/4] virtualenv $(VENV)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/4] pip"
	$(PY) -m pip install --progress-bar on --upgrade "pip>=24"
	@echo "==> [3/4] gpucloud and its pinned dependencies (constraints.txt; the first time takes a minute or two)"
	$(PY) -m pip install --progress-bar on -c constraints.txt -e ".[dev,train]"
	@echo "==> [4/4] helm and kubectl (pinned, checksum-verified; the same code fetches them on first use)"
	$(VENV)/bin/gpucloud tools install --dest $(VENV)/bin
	@touch $(STAMP)

# The stack's policy config (policies/configs/<stack>.json) is applied by gpucloud plan itself.
plan: $(STAMP)
	$(VENV)/bin/gpucloud plan --stack $(STACK)

plan-all: $(STAMP)
	$(VENV)/bin/gpucloud plan --all

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	@scripts/ensure_chromium.sh
	GPUCLOUD_REQUIRE_BROWSER=1 $(VENV)/bin/pytest

test: lint typecheck unit

# The sdist and the wheel (dist/), built by setuptools from this venv, nothing downloaded; tests/test_wheel.py
# builds the same two and installs the wheel into a fresh venv.
dist: $(STAMP)
	$(PY) -c "from setuptools import build_meta as b; print(b.build_sdist('dist')); print(b.build_wheel('dist'))"

# Benchmarks (not tests). Each writes docs/bench/<name>.json and the docs' tables from its own output
# (scripts/bench_record.py); tests/docs/test_bench_figures.py holds the docs to those files.
bench: $(STAMP)
	PYTHONPATH=$(CURDIR) $(PY) scripts/bench_plan.py --runs 5 --record
	PYTHONPATH=$(CURDIR) $(PY) scripts/bench_cost.py --record
	PYTHONPATH=$(CURDIR) $(PY) scripts/bench_policies.py --record

# Checkov 3.3.30 against the pack on the red-team corpus (creates Checkov's own virtualenv once; needs PyPI).
bench-checkov: $(STAMP)
	PYTHONPATH=$(CURDIR) $(PY) scripts/bench_checkov.py --record

# Mutation score of the modules a change touches, against the tests that cover them (mutmut, pinned):
#   make mutation MODULES="gpucloud/conformance/pod_network.py" TESTS="tests/conformance/test_pod_network.py"
mutation: $(STAMP)
	$(PY) scripts/mutation.py --modules $(MODULES) --tests $(TESTS)

clean-venv:
	rm -rf $(VENV)
