# Two commands for a new user: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   ?= demo

.PHONY: test test-fast test-slow test-runtime-all test-order-loop demo bench venv clean tools check

venv: $(STAMP)

$(STAMP): pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The go stack's tests need `go` (Debian's golang-go): installed here when
# missing and this is a root Debian machine (as CI is); elsewhere those tests
# say in their skip reason what to install.
tools:
	@command -v go >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get update -qq && apt-get install -y -qq golang-go; } >/dev/null 2>&1; } || \
		echo "go is not installed: the go stack's gates are skipped (apt-get install golang-go)"

# Lint and format (ruff), the import contract (pyproject.toml's
# [tool.importlinter]) and the types: the whole package, and the domain strictly.
LINTED := gatetui tests bench
STRICT := gatetui/gate gatetui/stacks gatetui/backends gatetui/git gatetui/config.py gatetui/errors.py \
          gatetui/globs.py gatetui/pyparse.py gatetui/inert.py
check: $(STAMP)
	$(BIN)/ruff check --quiet $(LINTED)
	$(BIN)/ruff format --check --quiet $(LINTED)
	$(BIN)/lint-imports --no-cache >/dev/null || $(BIN)/lint-imports --no-cache
	$(BIN)/mypy gatetui
	$(BIN)/mypy --strict $(STRICT)

# One pytest-xdist worker per core (at most 4); tests sharing an expensive
# fixture (every sample gated once per backend) stay on one worker. The order
# is random: pytest-randomly prints its seed, and `--randomly-seed=N` replays it.
# Under ten minutes on 2 cores: the further cases of a gated behaviour (marked
# `slow`) wait for `make test-slow`, which CI runs after it.
XDIST := -n auto --maxprocesses 4 --dist loadgroup
test: $(STAMP) tools check
	$(BIN)/python -m pytest $(XDIST) -m "not slow"

# What needs no sandbox and no install (tests/tiers.py checks the marks):
# under a minute on 2 cores.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) -m "not sandbox and not install and not slow"

# What `make test` leaves to CI: every test marked `slow`, and every sample
# through the runtime backend (`make test` gates one, through the CLI).
test-slow: $(STAMP) tools
	GATETUI_RUNTIME_ALL_SAMPLES=1 $(BIN)/python -m pytest $(XDIST) -m slow

# Every sample through the runtime backend (about 3 minutes on 2 cores; `test`
# gates one, through the CLI). `test-slow`, which CI runs, gates them too.
test-runtime-all: $(STAMP) tools
	GATETUI_RUNTIME_ALL_SAMPLES=1 $(BIN)/python -m pytest -q tests/test_runtime_backend.py -k samples_get

# Each order sample gated 20 times with fresh seeds (issue 36's figure; `test` gates each 5 times).
# CI runs it after `test`.
test-order-loop: $(STAMP) tools
	GATETUI_ORDER_GATES=20 $(BIN)/python -m pytest -q -s tests/test_order_catch.py

demo: $(STAMP)
	rm -rf $(DEMO)
	$(BIN)/gatetui demo $(DEMO)

bench: $(STAMP)
	$(BIN)/python bench/gate_bench.py
	$(BIN)/python bench/runtime_bench.py
	$(BIN)/python bench/warm_bench.py
	$(BIN)/python bench/runtime_layer_bench.py

clean:
	rm -rf $(VENV) $(DEMO)

# The gate on consecutive releases of real projects (bench/RELEASES.md; issue 35).
# Needs the package index, so it is not part of `make test`; cached and resumable
# (~/.cache/gatetui-releases): `$(BIN)/python bench/releases.py --only NAME` reruns one project.
.PHONY: eval
eval: $(STAMP)
	$(BIN)/python bench/releases.py
