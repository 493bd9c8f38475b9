# `make run` serves on the embedded defaults (data under ./data, port 3100);
# `make test` runs ruff, mypy --strict and the test suite. Both create .venv first.
VENV := .venv
BIN := $(VENV)/bin
PYTHON ?= python3

.PHONY: run test lint typecheck unit bench clean chromium

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/svc $(ARGS)

lint: $(BIN)/.installed
	$(BIN)/ruff check svc logql_to_sql gocompat schemas tests benchmarks examples

typecheck: $(BIN)/.installed
	$(BIN)/mypy --strict svc logql_to_sql gocompat

unit: $(BIN)/.installed chromium
	$(BIN)/pytest

# The web UI's browser tests drive Debian's chromium (Playwright never downloads one).
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

test: lint typecheck unit

bench: $(BIN)/.installed
	$(BIN)/python -m benchmarks.ingest

clean:
	rm -rf $(VENV) build *.egg-info
