"""Crash torture of the real CLI: `memfuse ingest` (the real process, the default embedder)
`kill -9`ed at random points — cold embedding cache, mid-embedding, mid-fusion, mid-commit,
mid-delivery of the audit log — and run again until it finishes.

The end state must equal one uninterrupted run's: the same events, the same fused graph, and
an audit log that records exactly what was committed — every event in exactly one ingest
entry, one fusion-plan entry per plan with the reference's outcome, a chain that verifies
against the store's anchor. `make test` kills a few times; `make torture`
(MEMFUSE_CLI_TORTURE_KILLS=200) kills 200 times.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memfuse.api import MemFuse
from memfuse.settings import load_settings
from tests.graphs.test_ingest_torture import graph_of
from tests.graphs.torture_worker import stream

pytestmark = pytest.mark.torture
KILLS = int(os.environ.get("MEMFUSE_CLI_TORTURE_KILLS", "3"))
SEED = int(os.environ.get("MEMFUSE_CLI_TORTURE_SEED", "20261202"))  # another seed: other kill times
REPO = Path(__file__).resolve().parents[2]
MEMFUSE = REPO / ".venv" / "bin" / "memfuse"
EVENTS = 240


def _env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for name in ("MEMFUSE_LLM_MODEL", "MEMFUSE_DATA_DIR", "MEMFUSE_USER", "MEMFUSE_DEBUG"):
        env.pop(name, None)
    return env


def _ingest(source: Path, data_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(MEMFUSE), "ingest", str(source), "--data-dir", str(data_dir), "--user", "torture"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
        start_new_session=True,
    )


def _outcome(data_dir: Path) -> tuple[Any, ...]:
    """(events, graph, audit summary, verification) of a finished data dir."""
    with MemFuse.open(data_dir, settings=load_settings(data_dir=data_dir), writer=True) as memory:
        store: Any = memory.store
        events = sorted(e.event_id for e in store.all_events())
        graph = graph_of(store)
        entries = memory.audit.entries()
        report = memory.verify_audit()
    ingested = Counter(i for e in entries if e.op == "ingest" for i in e.ids)
    plans = sorted(
        (str(e.ids[0]), str(e.ids[-1]), str(e.details["status"]))
        for e in entries
        if e.op == "fusion_plan"
    )
    return events, graph, ingested, plans, report


def test_kill_9_of_the_real_cli_loses_nothing_and_the_log_is_exact(tmp_path: Path) -> None:
    if not MEMFUSE.exists():
        pytest.skip("the CLI is not installed in .venv (run `make install`)")
    source = tmp_path / "events.jsonl"
    source.write_text("".join(e.model_dump_json() + "\n" for e in stream(EVENTS)), encoding="utf-8")
    reference = tmp_path / "reference"
    started = time.perf_counter()
    done = _ingest(source, reference)
    assert done.wait(timeout=600) == 0, done.stderr.read() if done.stderr else ""
    whole = time.perf_counter() - started
    events, graph, ingested, plans, report = _outcome(reference)
    assert report.ok and set(ingested.values()) == {1} and len(plans) == EVENTS

    data_dir = tmp_path / "tortured"
    rng = random.Random(SEED)
    kills = 0
    while kills < KILLS:
        worker = _ingest(source, data_dir)
        time.sleep(rng.uniform(0.0, whole * 1.1))
        if worker.poll() is not None:  # it finished before the kill: start over
            assert worker.returncode == 0, worker.stderr.read() if worker.stderr else ""
            for path in sorted(data_dir.rglob("*"), reverse=True):
                path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
            continue
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        kills += 1
        if kills % 25 == 0:
            print(f"cli torture: {kills}/{KILLS} kills", flush=True)
    final = _ingest(source, data_dir)
    assert final.wait(timeout=600) == 0, final.stderr.read() if final.stderr else ""
    got_events, got_graph, got_ingested, got_plans, got_report = _outcome(data_dir)
    twice = sorted(i for i, n in got_ingested.items() if n != 1)
    print(
        f"\ncli torture: {kills} kills of `memfuse ingest`; events lost "
        f"{len(set(events) - set(got_events))}, graph differences "
        f"{int(got_graph != graph)}, audit differences "
        f"{len(twice) + len(set(plans) ^ set(got_plans)) + int(not got_report.ok)}"
    )
    assert got_events == events
    assert got_graph == graph
    assert set(got_ingested) == set(ingested) and not twice  # every event in one ingest entry
    assert got_plans == plans  # one entry per plan, with the reference's outcome
    assert got_report.ok, json.dumps(got_report.problems)
