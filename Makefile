# MemFuse — everything a fresh machine needs, from `make demo` or `make test` alone.
# Every package is pinned, with its hashes, in requirements.lock (`make lock` refreshes it):
# an install resolves nothing, so it is the same on every machine and every day, and fast.
# The CPU build of PyTorch is pinned (torch==2.13.0+cpu): an unpinned torch pulls a multi-GB GPU build.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
UV_VERSION := 0.13.9
LOCK   := requirements.lock
STAMP  := $(VENV)/.memfuse-installed
# Where torch's CPU build comes from: this machine keeps the wheel in /opt/wheels; elsewhere
# uv takes it from PyTorch's CPU index (--torch-backend cpu: for the torch packages only).
TORCH_SOURCE := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,--torch-backend cpu)
# What the lock holds besides pyproject.toml's dependencies and its `test` extra: the CPU
# torch build, and setuptools to build the editable install without fetching anything.
LOCK_EXTRA := 'torch==2.13.0+cpu' 'setuptools>=77'
# The platform the lock is resolved for, whoever runs `make lock`: Linux x86_64, CPython 3.11.
LOCK_TARGET := --python-version 3.11 --python-platform x86_64-manylinux_2_28
LOCK_FLAGS ?=
DEMO_DIR ?= demo-out
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export LANGSMITH_TRACING := false

.PHONY: install lock postgres test torture demo lint bench perf clean

install: $(STAMP)

# uv installs exactly the lock (sync also removes what the lock doesn't list), checking every
# hash, and compiles it to bytecode once (a `memfuse` call then never compiles typer and the rest
# again, even where PYTHONDONTWRITEBYTECODE keeps Python from caching it); then the project
# itself, editable, built with the locked setuptools; then checks that the lock still satisfies
# pyproject.toml (a dependency added without `make lock` fails here).
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"
	$(UV) pip sync --python $(PY) --require-hashes --compile-bytecode $(TORCH_SOURCE) $(LOCK)
	$(UV) pip install --python $(PY) --no-deps --no-build-isolation -e .
	@$(UV) pip check --python $(PY) || { echo "requirements.lock doesn't satisfy \
	pyproject.toml: run 'make lock' and commit requirements.lock" >&2; exit 1; }
	touch $(STAMP)

# Re-resolve the lock after a change to pyproject.toml, keeping every pin that still fits;
# `make lock LOCK_FLAGS=--upgrade` moves every package to its newest allowed release.
lock:
	@test -x $(UV) || { $(PYTHON) -m venv $(VENV) && \
		$(PY) -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"; }
	printf '%s\n' $(LOCK_EXTRA) | $(UV) pip compile pyproject.toml - --extra test \
		$(LOCK_TARGET) $(TORCH_SOURCE) --generate-hashes --custom-compile-command "make lock" \
		$(LOCK_FLAGS) -o $(LOCK)

# The PostgreSQL server binaries (initdb, pg_ctl) the PostgreSQL store tests start a throwaway
# server with: Debian's `postgresql` package, installed only when missing (needs root and apt;
# elsewhere install it by hand). Without it those tests are skipped, except in CI (CI=true).
postgres:
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; \
	then echo "PostgreSQL server binaries: found"; \
	else DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; fi

test: install
	$(PY) -m pytest -q

# The crash torture tests alone, harder than in `make test`: 500 kill -9s of a fused ingest and
# 200 of the real `memfuse ingest` CLI (events, graph and audit log checked each time).
torture: install
	MEMFUSE_TORTURE_KILLS=500 MEMFUSE_CLI_TORTURE_KILLS=200 $(PY) -m pytest -q -s -m torture

# Formatting, lint rules with the line length, strict types below the public API and on the
# synthesis graph that moved to eval (pyproject.toml; the rest of eval is not typed strictly).
lint: install
	$(VENV)/bin/ruff format --check memfuse graphs signatures memory eval tests
	$(VENV)/bin/ruff check memfuse graphs signatures memory eval tests
	$(VENV)/bin/mypy memory signatures graphs
	$(VENV)/bin/mypy --follow-imports=silent eval/synth/graph eval/synth/artifacts.py eval/verify \
		eval/synth/pipeline.py eval/synth/stages.py eval/synth/command.py

# Synthesize one small scenario, benchmark four systems on it, show one question with provenance.
demo: install
	rm -rf $(DEMO_DIR)
	$(VENV)/bin/memfuse synth --scenarios 1 --seed 7 --out $(DEMO_DIR)/memfusebench.json
	$(VENV)/bin/memfuse bench --dataset $(DEMO_DIR)/memfusebench.json \
		--systems naive_rag,bm25,hybrid,memfuse --out $(DEMO_DIR)/bench --data-dir $(DEMO_DIR)/stores
	$(VENV)/bin/memfuse show-question --dataset $(DEMO_DIR)/memfusebench.json \
		--data-dir $(DEMO_DIR)/stores --index 0

bench: install
	$(VENV)/bin/memfuse synth --out data/memfusebench.json
	$(VENV)/bin/memfuse bench --dataset data/memfusebench.json --out bench-out

perf: install
	$(VENV)/bin/memfuse bench-perf --events 10000

clean:
	rm -rf $(VENV) .memfuse $(DEMO_DIR) bench-out
