"""Crash torture: a fused ingest `kill -9`ed at random points, reopened and resumed.

After every kill the reopened store must be consistent (SQLite, Chroma, BM25 and temporal
counts agree, no dangling edge, every fused member stored, no plan left half-applied), and
once the ingest is allowed to finish, every input event is stored exactly once, the fusion
queue is empty and the graph equals an uninterrupted run's. `make test` kills 50 times;
`make torture` (MEMFUSE_TORTURE_KILLS=500) ten times more.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from graphs.fusion.context import FusionContext
from graphs.fusion.ingest import ingest_events
from memory.fusion.commit import replay_pending
from memory.store import MemoryStore
from tests.graphs.torture_worker import stream
from tests.support.embedders import tiny_embedder

pytestmark = pytest.mark.torture
KILLS = int(os.environ.get("MEMFUSE_TORTURE_KILLS", "50"))
REPO = Path(__file__).resolve().parents[2]


def graph_of(store: MemoryStore) -> tuple[Any, ...]:
    """Everything fusion built: fused nodes (members, summary) and every edge with its weight.

    Semantic weights are compared too: they were once off after a crash (Chroma's cosine space
    gave vectors back an ulp away on reopen, which broke exact ties between the stream's
    repeated texts); collections now use inner product and return the bits they were given.
    """
    fused = sorted((n.node_id, tuple(n.members), n.summary) for n in store.all_fused())
    nodes = [e.event_id for e in store.all_events()] + [n[0] for n in fused]
    edges = {e for n in nodes for e in store.neighbors(n)}
    weighted = sorted(
        {
            (*sorted((e.src, e.dst)), e.type.value, round(e.weight, 4))
            if e.type.value == "semantic"
            else (e.src, e.dst, e.type.value, round(e.weight, 4))
            for e in edges
        }
    )
    return fused, weighted


def check_consistent(store: MemoryStore, inputs: set[str]) -> None:
    events = store.all_events()
    ids = [e.event_id for e in events]
    assert len(ids) == len(set(ids)) and set(ids) <= inputs
    fused = store.all_fused()
    assert len(store._temporal) == len(ids)
    assert len(store._lexical) == len(ids) + len(fused)
    assert len(store._vectors) == len(ids) + len(fused)
    known = set(ids) | {n.node_id for n in fused}
    for node in fused:
        assert node.members and set(node.members) <= set(ids)
    for node_id in known:
        for edge in store.neighbors(node_id):
            assert edge.src in known and edge.dst in known
    assert store.plan_counts()["pending"] == 0
    assert set(store.pending_fusion()) <= set(ids)


def test_kill_9_at_random_points_loses_nothing(tmp_path: Path) -> None:
    reference = MemoryStore.open(tmp_path / "reference", embedder=tiny_embedder())
    ingest_events(
        reference, stream(), config=FusionContext(policy="offline"), progress=False, chunk_size=32
    )
    expected = graph_of(reference)
    reference.close()

    inputs = {e.event_id for e in stream()}
    data_dir = tmp_path / "tortured"
    rng = random.Random(20261201)
    kills = finished = 0
    while kills < KILLS:
        worker = subprocess.Popen(
            [sys.executable, "-m", "tests.graphs.torture_worker", str(data_dir)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        worker.kill()
        worker.wait()
        kills += 1
        store = MemoryStore.open(data_dir, embedder=tiny_embedder())
        try:
            replay_pending(store)  # what any next writer does first
            check_consistent(store, inputs)
            finished = len(store.all_events()) == len(inputs) and not store.pending_fusion()
        finally:
            store.close()
        if finished:
            break  # the stream is done: more kills would hit nothing
    completed = subprocess.run(
        [sys.executable, "-m", "tests.graphs.torture_worker", str(data_dir)],
        capture_output=True,
        check=False,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert completed.returncode == 0 and completed.stdout.split()[-1] == "done", completed.stderr
    store = MemoryStore.open(data_dir, embedder=tiny_embedder())
    try:
        check_consistent(store, inputs)
        stored = {e.event_id for e in store.all_events()}
        print(
            f"\ntorture: {kills} kills survived, {len(inputs - stored)} events lost, "
            f"{len(store.pending_fusion())} left queued"
        )
        assert stored == inputs and store.pending_fusion() == []
        got = graph_of(store)
        assert got[0] == expected[0]  # the same fused nodes, members and summaries
        for mine, theirs in zip(got[1:], expected[1:], strict=True):
            missing, extra = set(theirs) - set(mine), set(mine) - set(theirs)
            assert not missing and not extra, (sorted(missing)[:5], sorted(extra)[:5])
    finally:
        store.close()
    assert kills >= min(KILLS, 10)
