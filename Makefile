# Uno Arena: `make demo` and `make test` are the whole Quick start (README.md);
# `make check` is the fast loop while working (lint, types, the fast tests).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8000

.PHONY: demo test check install lint types serve clean

$(BIN)/python:
	@./deploy/ensure-venv.sh "$(PYTHON)" "$(VENV)"

# setup.py and engine/_core.c: the compiled core is rebuilt when its source changes
$(VENV)/.installed: pyproject.toml setup.py engine/_core.c | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,rl]"
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

## check: the fast loop: lint, mypy (files and strictness in pyproject.toml) and the tests
## that are neither `slow` nor need a service (PostgreSQL, Redis, Docker), one pytest-xdist
## worker per core (each with its own in-memory SQLite database)
check: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	env -u DATABASE_URL -u REDIS_URL -u ARENA_REQUIRE_SERVICES -u PYTHONDONTWRITEBYTECODE \
		$(BIN)/pytest -q -m "not slow and not services and not docker" -n auto --dist worksteal

lint: install
	$(BIN)/ruff check .

types: install
	$(BIN)/mypy

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache .hypothesis
