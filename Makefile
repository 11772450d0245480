# EnvDuels: `make run` starts everything locally; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
# Built-in players answer instantly; a small delay makes the demo tournament stream at a pace
# a person can watch. Set ENVDUELS_BUILTIN_LATENCY_MS=0 to run at full speed.
ENVDUELS_BUILTIN_LATENCY_MS ?= 400

# Installs come from uv.lock (every package pinned with its hashes, from PyPI); `make lock`
# updates it after a change to pyproject.toml.
UV_VERSION := 0.13.9
UV := UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv

.PHONY: run test test-durations install lock lint check-migrations bench soak clean screenshots

# Where PYTHONDONTWRITEBYTECODE is set, Python never caches compiled modules, so every process
# (each test worker, each subprocess a test starts) would compile Django, SciPy and the rest from
# source again: the install compiles the packages once, and each make the project's own modules
# that changed. Elsewhere Python caches them as it goes.
COMPILE_BYTECODE := $(if $(PYTHONDONTWRITEBYTECODE),--compile-bytecode)
COMPILE_PROJECT := $(if $(PYTHONDONTWRITEBYTECODE),$(BIN)/python -m compileall -q \
	envduels_site duels sandbox_runner tests benchmarks,@true)

$(STAMP): pyproject.toml uv.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'uv==$(UV_VERSION)'
	$(UV) sync --frozen --extra dev --inexact --quiet $(COMPILE_BYTECODE)
	@touch $(STAMP)

install: $(STAMP)
	@$(COMPILE_PROJECT)

lock: install
	$(UV) lock

# Static files are collected (hashed and compressed) only when one of them changed since the
# last collect; pages work without it too (plain names, short cache lifetime).
VAR_DIR := $(or $(ENVDUELS_VAR_DIR),var)
STATIC_MANIFEST := $(VAR_DIR)/staticfiles/staticfiles.json
STATIC_SOURCES := $(shell find static -type f 2>/dev/null)

$(STATIC_MANIFEST): $(STATIC_SOURCES) | $(STAMP)
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@touch $@

# LOCAL_MODEL=smollm2 adds a real model to the demo: installed into its cached virtualenv
# (ENVDUELS_CACHE_DIR; the first install compiles llama-cpp-python), served on 127.0.0.1 as the
# player local-smollm2 and queued in one duel against builtin-rookie (docs/players.md).
LOCAL_MODEL ?=
run: install $(STATIC_MANIFEST)
	$(BIN)/python manage.py setup_local
	$(if $(LOCAL_MODEL),$(BIN)/python manage.py local_model install $(LOCAL_MODEL))
	$(if $(LOCAL_MODEL),$(BIN)/python manage.py local_model serve $(LOCAL_MODEL) --demo & \
		trap 'kill $$! 2>/dev/null' EXIT;) \
	ENVDUELS_BUILTIN_LATENCY_MS=$(ENVDUELS_BUILTIN_LATENCY_MS) \
		$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

# Tests run in parallel processes (pytest-xdist), each with its own database and files; most
# tests wait on sandboxes, subprocesses and sockets, so twice as many workers as cores keeps two
# cores busy. TEST_WORKERS=0 runs everything in one process. The 15 slowest tests are listed at
# the end: a slow test is a bug to fix (docs/testing.md).
TEST_WORKERS ?= 4
test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15

# Record every test's seconds in tests/durations.json, which orders the parallel run (docs/testing.md).
test-durations: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --store-durations -q

lint: install
	$(BIN)/ruff check .
	$(UV) lock --check
	$(BIN)/python manage.py makemigrations --check --dry-run

# README pictures from demo data (Playwright + Chromium at /usr/bin/chromium); commit the PNGs.
screenshots: install
	$(BIN)/python scripts/screenshots.py

# Every benchmark that runs offline; cost_bench.py also needs REDIS_URL and install_bench.py the
# network (run them by hand).
bench: install
	$(BIN)/python benchmarks/startup_bench.py
	$(BIN)/python benchmarks/sandbox_bench.py
	$(BIN)/python benchmarks/tournament_bench.py
	$(BIN)/python benchmarks/web_bench.py
	$(BIN)/python benchmarks/first_load_bench.py
	$(BIN)/python benchmarks/viewer_bench.py
	$(BIN)/python benchmarks/exchange_bench.py
	$(BIN)/python benchmarks/validation_bench.py
	$(BIN)/python benchmarks/analytics_bench.py
	$(BIN)/python benchmarks/study_page_bench.py
	$(BIN)/python benchmarks/study_figures_bench.py
	$(BIN)/python benchmarks/agreement_bench.py

# A long tournament under every fault at once, invariants checked at the end
# (docs/operations.md). Needs root, PostgreSQL's server binaries, redis-server and bubblewrap;
# starts its own PostgreSQL and Redis. SOAK_MINUTES=2 for a quick look.
SOAK_MINUTES ?= 30
soak: install
	$(BIN)/python benchmarks/soak.py --minutes $(SOAK_MINUTES)

clean:
	rm -rf $(VENV) var/staticfiles .pytest_cache .ruff_cache
