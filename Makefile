# Two commands for a new user: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   ?= demo

.PHONY: test demo bench venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

demo: $(STAMP)
	rm -rf $(DEMO)
	$(BIN)/gatetui demo $(DEMO)

bench: $(STAMP)
	$(BIN)/python bench/gate_bench.py
	$(BIN)/python bench/runtime_bench.py

clean:
	rm -rf $(VENV) $(DEMO)
