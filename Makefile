.DEFAULT_GOAL := help
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO := .eve/demo
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed-stamp

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres]'
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install eve (editable) with the dev and postgres extras

demo: $(STAMP) bubblewrap ## Scaffold an example agent in .eve/demo and run a real session end to end (offline test model)
	$(BIN)/python scripts/demo.py

test: $(STAMP) bubblewrap chromium ## Run the test suite (offline; uses PostgreSQL at 127.0.0.1:5432 when present)
	$(BIN)/pytest -q -n auto --dist loadgroup --durations=15

bubblewrap: ## Make sure bubblewrap (the sandbox's default backend) is installed: apt-get as root, else say why not
	@if command -v bwrap >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "bubblewrap: installing it (apt-get install -y bubblewrap)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
			|| (apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null) \
			|| echo "bubblewrap: apt-get could not install it; the bubblewrap tests will be skipped"; \
	else \
		echo "bubblewrap: not installed, and installing it needs root and apt-get (sudo apt-get install bubblewrap);" \
			"the bubblewrap tests will be skipped"; \
	fi

chromium: ## Make sure Chromium (the inspector's browser tests) is installed: apt-get as root, else say why not
	@if [ -x /usr/bin/chromium ]; then \
		:; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "chromium: installing it (apt-get install -y chromium)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq chromium >/dev/null 2>&1 \
			|| (apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null) \
			|| echo "chromium: apt-get could not install it; the browser tests will be skipped"; \
	else \
		echo "chromium: not installed, and installing it needs root and apt-get (sudo apt-get install chromium);" \
			"the browser tests will be skipped"; \
	fi

interop: $(STAMP) ## eve's own TypeScript client (npm eve 0.80.1) against eve start; installs Node 24 and the client into ~/.cache/eve-interop first
	$(BIN)/python -m tests.interop.node_env
	$(BIN)/pytest -q tests/interop

lint: $(STAMP) ## ruff format check and lint
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

fmt: $(STAMP) ## Format and auto-fix with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP) ## mypy --strict over the package, the tests and the benchmarks
	$(BIN)/mypy

check: lint typecheck test ## Lint, type-check and test

bench: $(STAMP) ## Run the benchmarks (each prints a ratio against a baseline measured in the same run)
	@for f in bench/[!_]*.py; do case $$f in bench/profile_*) continue;; esac; echo "== $$f"; $(BIN)/python $$f || exit 1; done

$(PEERS_STAMP): bench/peers/requirements.txt
	test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet -r bench/peers/requirements.txt
	touch $(PEERS_STAMP)

bench-peers: $(STAMP) $(PEERS_STAMP) ## eve beside LangGraph and DBOS (pinned, in .venv-peers), one workload, one run, one table
	$(BIN)/python bench/peers/run.py

.PHONY: bench-peers

clean: ## Remove the virtual environment and generated data
	rm -rf $(VENV) $(PEERS_VENV) .eve/demo .pytest_cache .mypy_cache .ruff_cache

help: ## Show the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_-]+:.*## /{printf "  %-10s %s\n",$$1,$$2}' $(MAKEFILE_LIST)

.PHONY: install demo test interop bubblewrap chromium lint fmt typecheck check bench clean help
