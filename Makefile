# Two commands for a newcomer: `make plan` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.gpucloud-installed
STACK  ?= dev

.PHONY: plan test lint typecheck unit bench mutation clean-venv

$(STAMP): pyproject.toml constraints.txt scripts/fetch_helm.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev,train]"
	$(PY) scripts/fetch_helm.py $(VENV)/bin
	@touch $(STAMP)

plan: $(STAMP)
	$(VENV)/bin/gpucloud plan --stack $(STACK) --policy-config policies/configs/$(STACK).json

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	@scripts/ensure_chromium.sh
	GPUCLOUD_REQUIRE_BROWSER=1 $(VENV)/bin/pytest

test: lint typecheck unit

bench: $(STAMP)
	$(PY) scripts/bench_plan.py

# Mutation score of the modules a change touches, against the tests that cover them (mutmut, pinned):
#   make mutation MODULES="gpucloud/conformance/pod_network.py" TESTS="tests/conformance/test_pod_network.py"
mutation: $(STAMP)
	$(PY) scripts/mutation.py --modules $(MODULES) --tests $(TESTS)

clean-venv:
	rm -rf $(VENV)
