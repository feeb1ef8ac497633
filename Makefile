# The two commands of the README: `make demo` and `make test`. Both set up
# .venv on first use from this repo's own files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench conformance clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.demo

lint: $(STAMP)
	$(BIN)/ruff check mcp_core mcp_adapters tests benchmarks examples
	$(BIN)/ruff format --check mcp_core mcp_adapters tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy --strict mcp_core

unit: $(STAMP)
	$(BIN)/coverage erase
	$(BIN)/coverage run -m pytest
	$(BIN)/coverage report --fail-under=95

test: lint typecheck unit

# The official MCP conformance suite (npm, pinned) against examples/conformance/.
conformance: $(STAMP)
	scripts/conformance.sh

bench: $(STAMP)
	$(BIN)/python benchmarks/core_bench.py

clean:
	rm -rf $(VENV) .coverage .pytest_cache .mypy_cache .ruff_cache
