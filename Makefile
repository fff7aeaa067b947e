# MemFuse — everything a fresh machine needs, from `make demo` or `make test` alone.
# The CPU build of PyTorch is pinned (torch==2.13.0): an unpinned torch pulls a multi-GB GPU build.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.memfuse-installed
# Local wheel folders (this machine keeps the CPU torch wheel in /opt/wheels); harmless elsewhere.
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
DEMO_DIR ?= demo-out
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export LANGSMITH_TRACING := false

.PHONY: install test torture demo lint bench perf clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install $(FIND_LINKS) "torch==2.13.0"
	$(PY) -m pip install $(FIND_LINKS) -e ".[test]"
	touch $(STAMP)

test: install
	$(PY) -m pytest -q

# The crash torture test alone, ten times harder than in `make test` (500 kill -9s).
torture: install
	MEMFUSE_TORTURE_KILLS=500 $(PY) -m pytest -q -s -m torture

lint: install
	$(VENV)/bin/ruff check memfuse graphs signatures memory eval tests

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
