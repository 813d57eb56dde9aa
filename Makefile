# Two commands for a new user: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   ?= demo

.PHONY: test test-fast test-slow test-runtime-all test-order-loop test-browser demo bench venv clean tools check

venv: $(STAMP)

# pip brings uv into the fresh venv, and uv installs the project: it resolves,
# downloads and compiles in parallel, in a fraction of pip's time (bench/RESULTS.md).
# Where uv cannot be installed or cannot install, pip installs everything.
$(STAMP): pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	{ $(BIN)/python -m pip install --quiet uv && \
		$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[test]'; } || \
	{ echo 'uv could not install the project: pip installs it'; \
		$(BIN)/python -m pip install --quiet --upgrade pip && $(BIN)/python -m pip install --quiet -e '.[test]'; }
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
# The strict pass keeps a cache of its own: mypy's cache holds each module's
# result under the options it was checked with, so one shared by the two passes
# was thrown away by each in turn, and every `make check` checked from nothing.
# Then the docs site (mkdocs.yml), built strictly into site/: a broken link or
# anchor, or a page left out of the nav, fails; and every file README.md links to exists.
LINTED := gatetui tests bench
STRICT := gatetui/gate gatetui/stacks gatetui/backends gatetui/git gatetui/config.py gatetui/policy.py gatetui/errors.py \
          gatetui/globs.py gatetui/pyparse.py gatetui/inert.py
check: $(STAMP)
	$(BIN)/ruff check --quiet $(LINTED)
	$(BIN)/ruff format --check --quiet $(LINTED)
	$(BIN)/lint-imports --no-cache >/dev/null || $(BIN)/lint-imports --no-cache
	$(BIN)/mypy gatetui
	$(BIN)/mypy --strict --cache-dir .mypy_cache/strict $(STRICT)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site >/dev/null 2>&1 || \
		NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
	$(BIN)/python -c 'import pathlib, re, sys; links = re.findall(r"\]\(([^)#]+)", pathlib.Path("README.md").read_text()); \
		bad = [t for t in links if "://" not in t and not pathlib.Path(t).exists()]; \
		sys.exit(f"README.md links to missing files: {bad}" if bad else 0)'

# One pytest-xdist worker per core (at most 4); tests sharing an expensive
# fixture (every sample gated once per backend) stay on one worker. The order
# is random: pytest-randomly prints its seed, and `--randomly-seed=N` replays it.
# Each gated behaviour in a case or two; the further cases (marked `slow`: other
# variants, the other fork mode) wait for `make test-slow`, which CI runs after
# it. bench/RESULTS.md has each tier's CPU and wall time with its load.
XDIST := -n auto --maxprocesses 4 --dist loadgroup
test: $(STAMP) tools check
	$(BIN)/python -m pytest $(XDIST) -m "not slow"

# What needs no sandbox, no install and drives no real program (a test runner,
# a stack's toolchain or the Textual app): tests/support/tiers.py checks the marks.
# About a minute on 2 cores.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) -m "not sandbox and not install and not drives and not slow"

# What `make test` leaves to CI: every test marked `slow` (the samples whose
# behaviour another gated test shows: tests/support/gated_samples.py's
# LEFT_TO_CI), and every sample through the runtime backend (`make test`
# gates one, through the CLI).
test-slow: $(STAMP) tools
	GATETUI_RUNTIME_ALL_SAMPLES=1 $(BIN)/python -m pytest $(XDIST) -m slow

# Every sample through the runtime backend (about 3 minutes on 2 cores; `test`
# gates one, through the CLI). `test-slow`, which CI runs, gates them too.
test-runtime-all: $(STAMP) tools
	GATETUI_RUNTIME_ALL_SAMPLES=1 $(BIN)/python -m pytest -q tests/backends/test_runtime_backend.py \
		-k "samples_get or cli_check_with_the_runtime_backend" 

# Each order sample gated 20 times with fresh seeds (`test` gates each twice).
# CI runs it after `test`.
test-order-loop: $(STAMP) tools
	GATETUI_ORDER_GATES=20 $(BIN)/python -m pytest -q -s tests/gated/test_order_catch.py

# `gatetui web` in a real browser: Debian's chromium and chromium-driver, installed
# here when missing on a root Debian machine (as CI is). CI runs it after `test`;
# `make test` never collects tests/browser (tests/conftest.py).
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
		{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get update -qq && apt-get install -y -qq chromium chromium-driver; } >/dev/null 2>&1; } || \
		{ echo "test-browser needs chromium and chromium-driver (apt-get install chromium chromium-driver)"; exit 1; }
	GATETUI_BROWSER=1 $(BIN)/python -m pytest -q -p no:randomly tests/browser

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

# The gate on consecutive releases of real projects (bench/RELEASES.md).
# Needs the package index, so it is not part of `make test`; cached and resumable
# (~/.cache/gatetui-releases): `$(BIN)/python bench/releases.py --only NAME` reruns one project.
.PHONY: eval
eval: $(STAMP)
	$(BIN)/python bench/releases.py
