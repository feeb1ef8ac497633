# The two commands of the README: `make demo` and `make test`. Both set up
# .venv on first use from this repo's own files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: general-path demo cluster-demo test lint typecheck unit servers fuzz bench conformance test-pythons clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.demo

# Redis, 3 replicas and nginx on loopback; the seed client through the balancer
# in both eras, one replica killed midway (docs/deploy.md).
cluster-demo: $(STAMP) servers
	$(BIN)/python -m examples.cluster_demo

lint: $(STAMP)
	$(BIN)/ruff check mcp_core mcp_adapters tests benchmarks examples
	$(BIN)/ruff format --check mcp_core mcp_adapters tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy --strict mcp_core
	$(BIN)/mypy mcp_adapters

# The tests start real redis-server and nginx processes of their own: make sure
# the binaries are there (apt-get on Debian-family machines, else a hint).
servers:
	@scripts/ensure-debian-tool.sh redis-server redis-server "the Redis store tests need it" \
		"install Redis >= 7.0 so that redis-server is on PATH (Fedora: dnf install redis; macOS: brew install redis)"
	@scripts/ensure-debian-tool.sh nginx nginx "the replicas-behind-a-balancer tests need it" \
		"install nginx so that nginx is on PATH or in /usr/sbin (Fedora: dnf install nginx; macOS: brew install nginx)"

# Three workers on the CI machine's two cores: many tests wait on subprocesses
# and sockets, so a third worker fills the idle CPU (measured on 2 cores, load 2:
# 6 min 33 s with two workers, 5 min 44 s with three). Tests that watch the
# whole machine for leaked processes run in one worker group (tests/conftest.py).
# PYTHONDONTWRITEBYTECODE is emptied (a machine may set it, as CI's does): without
# cached bytecode every server subprocess a test starts compiles mcp_core and
# mcp_adapters again, and every worker rewrites each test module's asserts again
# (measured on a clean clone, tests/cli + tests/seeds: 137 s of CPU with it set,
# 94 s with caches written; __pycache__ is git-ignored).
unit: $(STAMP) servers
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 3 --dist loadgroup --cov=mcp_core --cov-branch \
		--cov-report=term:skip-covered --cov-fail-under=95

# The engines' lanes (specialised paths for well-formed messages, `_Connection._lanes`)
# must behave exactly as the general path: the engine's own tests run once more with
# the lanes off, so whatever they pin is pinned for both paths (about 70 s of CPU).
general-path: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n 3 -p no:cacheprovider --general-path \
		tests/core tests/fuzz tests/spec

test: lint typecheck unit general-path

# The suite again on each newer CPython the machine has (3.13, 3.12: found as
# pythonX.Y or under pyenv; each in its own git-ignored .venv-X.Y), where asyncio's
# eager tasks take their native path (scripts/test-pythons.sh). CI runs it after
# the conformance suite; a version the machine lacks is skipped with a line saying so.
test-pythons: servers
	scripts/test-pythons.sh

# The byte-level Hypothesis fuzz tests and the state machines at ten times their
# `make test` size (20,000 byte-level examples, 1,500 machine runs), then the
# type-confusion fuzzer at full size (not part of `make test`, which feeds a share
# of the same inputs): every field of every message of every revision of
# the wrong JSON type, then seeded random stacks of changes, 1,000,000 inputs on
# two workers; prints the count and a summary, fails on any failure.
# `make fuzz FUZZ_ARGS="--count 200000 --seed 7 --workers 1"`.
FUZZ_ARGS ?=

fuzz: $(STAMP)
	MCP_FUZZ_SCALE=10 $(BIN)/pytest -q -p no:cacheprovider tests/fuzz/test_fuzz.py \
		tests/fuzz/test_state_machine.py
	$(BIN)/python fuzz/type_confusion.py $(FUZZ_ARGS)

# The official MCP conformance suite (npm, pinned) against examples/conformance/.
conformance: $(STAMP)
	scripts/conformance.sh

# Ours against the official SDK, case by case (see docs/performance.md); the
# in-process, stdio and HTTP cases also against the TypeScript SDKs (node/bench/,
# installed by scripts/node-env.sh; needs npm). Figures also go to
# benchmarks/results/latest.json. `make bench BENCH_ARGS="--quick"`,
# `BENCH_ARGS="--cases inproc,http"`, `BENCH_ARGS="--peers sdk"` (no node);
# the engine alone: benchmarks/core_bench.py.
BENCH_ARGS ?=
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install -q -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .venv-3.* .coverage .pytest_cache .mypy_cache .ruff_cache
