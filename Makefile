# Uno Arena: `make demo` and `make test` are the whole Quick start (README.md).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8000

.PHONY: demo test install lint serve clean

$(BIN)/python:
	@./deploy/ensure-venv.sh "$(PYTHON)" "$(VENV)"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@

install: $(VENV)/.installed

## demo: set everything up, seed a demo on the embedded default, serve on 127.0.0.1:$(PORT)
demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	@echo "Uno Arena runs on http://127.0.0.1:$(PORT)/ (Ctrl-C stops it)"
	$(BIN)/python manage.py serve_embedded 127.0.0.1:$(PORT)

## test: set everything up and run the whole test suite (lint included)
test: install
	./deploy/ensure-test-tools.sh
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis
