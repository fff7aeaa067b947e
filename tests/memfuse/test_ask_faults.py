"""`ask` and `search` when the LLM fails: the evidence is always shown, the reason is one line,
the retry budget bounds the wait, and the trace says who decided.

The LLM endpoint is the local fake OpenAI server (tests/support/fake_openai.py) answering HTTP 500;
the CLI runs as a user would, a subprocess per command. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from memfuse.api import MemFuse, decision_lines
from memfuse.settings import MemFuseSettings
from memory.models import Event
from memory.store import MemoryStore
from signatures.retry import forget_outages
from tests.support.embedders import tiny_embedder
from tests.support.fake_openai import Fail, FakeOpenAI, start_fake_openai

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"
ASKED = "2026-05-14T20:00:00"


@pytest.fixture(autouse=True)
def _fresh_endpoints() -> Iterator[None]:
    forget_outages()
    yield
    forget_outages()


@pytest.fixture
def down() -> Iterator[FakeOpenAI]:
    with start_fake_openai(lambda body: Fail(500)) as fake:
        yield fake


# --- the API ----------------------------------------------------------------------------


def test_ask_with_the_endpoint_down_returns_the_evidence(tmp_path: Path, down: FakeOpenAI) -> None:
    store = MemoryStore.open(tmp_path / "store", embedder=tiny_embedder())
    store.add_events(
        [
            Event(
                event_id=f"e{i}",
                timestamp=datetime(2026, 5, 12, 7 + i),
                device="watch_david",
                modality="health",
                location="home",
                description=text,
                characters=("David",),
            )
            for i, text in enumerate(
                ["Sleep score 82", "David left for work", "Fridge ordered milk"]
            )
        ]
    )
    settings = MemFuseSettings(
        llm_model="Qwen/Qwen2.5-7B-Instruct",
        llm_base_url=down.base_url,
        llm_retry_seconds=2.0,
        _env_file=None,
    )
    memory = MemFuse(store, settings)
    try:
        started = time.monotonic()
        result = memory.ask("How did I sleep?", user="David", time=datetime(2026, 5, 13, 9), k=3)
        spent = time.monotonic() - started
    finally:
        memory.close()
    assert spent < 10.0 and down.failures_served == 2
    assert set(down.models) == {"Qwen/Qwen2.5-7B-Instruct"}
    assert result.answer is None
    assert result.reader_error and "\n" not in result.reader_error
    assert len(result.context) == 3
    assert result.decisions[-1]["step"] == "reader"
    assert all(d["decided_by"].startswith("offline fallback:") for d in result.decisions)
    assert len(decision_lines(result.decisions)) == len(result.decisions)  # they differ: listed


def test_decision_lines_are_one_line_when_one_maker_decided_everything() -> None:
    decisions = [
        {"step": "round 1 planner", "decided_by": "offline"},
        {"step": "reader", "decided_by": "offline"},
    ]
    assert decision_lines(decisions) == ["decided by: offline (all 2 decisions)"]
    assert decision_lines([]) == []


# --- the command line ---------------------------------------------------------------------


def memfuse(*args: str, data_dir: Path, llm: str | None = None) -> subprocess.CompletedProcess[str]:
    """One CLI run with a scrubbed LLM environment; `llm` points it at a (fake) endpoint."""
    env = {**os.environ, "MEMFUSE_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    for name in [n for n in env if n.startswith("MEMFUSE_LLM_")]:
        env.pop(name)
    if llm is not None:
        env.update(
            MEMFUSE_LLM_MODEL="fake-model", MEMFUSE_LLM_BASE_URL=llm, MEMFUSE_LLM_RETRY_SECONDS="2"
        )
    return subprocess.run(
        [sys.executable, "-m", "memfuse.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("ask-faults")
    done = memfuse("ingest", str(SAMPLE), "--mode", "plain", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    return data_dir


def test_cli_ask_with_the_endpoint_down_prints_evidence_and_exits_1(
    ingested: Path, down: FakeOpenAI
) -> None:
    result = memfuse(
        "ask",
        "who was limping after the run",
        "--time",
        ASKED,
        "-k",
        "4",
        "--admin",
        data_dir=ingested,
        llm=down.base_url,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "evidence (" in result.stdout and "h_0" in result.stdout  # the table is there
    assert "reader failed:" in result.stdout and "Answer:" not in result.stdout
    assert "round 1 planner: decided by offline fallback:" in result.stdout
    # one progress line per retry and one when the budget was spent, each a single line
    assert "retry 1 of 3 in 1s" in result.stderr and "giving up after 2 attempt(s)" in result.stderr
    assert down.failures_served == 2  # later decisions and the reader were not sent


def test_cli_ask_json_carries_the_decisions(ingested: Path, down: FakeOpenAI) -> None:
    result = memfuse(
        "ask",
        "who was limping after the run",
        "--time",
        ASKED,
        "-k",
        "4",
        "--json",
        "--admin",
        data_dir=ingested,
        llm=down.base_url,
    )
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["answer"] is None and payload["reader_error"]
    assert len(payload["context"]) == 4
    assert payload["decisions"][0]["decided_by"].startswith("offline fallback: ")
    assert payload["decisions"][-1]["step"] == "reader"


def test_cli_search_json_ends_with_the_trace(ingested: Path) -> None:
    result = memfuse(
        "search",
        "who was limping after the run",
        "--time",
        ASKED,
        "-k",
        "3",
        "--json",
        "--admin",
        data_dir=ingested,
    )
    assert result.returncode == 0, result.stderr
    *entries, last = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(entries) >= 3 and all("node_id" in e for e in entries)
    trace = last["trace"]
    assert trace["decisions"][0] == {"step": "round 1 planner", "decided_by": "offline"}
    assert {d["decided_by"] for d in trace["decisions"]} == {"offline"}
    assert trace["rounds"] >= 2 and trace["stop_reason"]
