"""The multi-round controller returns k events when the memory holds that many, at any k: its
first round no longer comes back short (see `tests/memory/search/test_result_size.py`), so a
later round's finds contest places instead of filling empty ones."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphs.retrieval import ABLATIONS, retrieve
from graphs.retrieval.planning import spare_order
from memory.models import NodeKind
from memory.records import Candidate, ExpansionTrace
from memory.store import MemoryStore
from tests.support.plain_events import QUERIES, plain_events, plain_store

EVENTS = plain_events()
ASKED = EVENTS[-1].timestamp + timedelta(hours=1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    with plain_store(Path(tmp_path_factory.mktemp("sizes")), EVENTS) as opened:
        yield opened


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(min_value=1, max_value=len(EVENTS) + 10),
    query=st.sampled_from(QUERIES),
    system=st.sampled_from(["memfuse", "memfuse_no_ar"]),
)
def test_the_controller_returns_k_events_whatever_k(
    store: MemoryStore, k: int, query: str, system: str
) -> None:
    result = retrieve(store, query, question_time=ASKED, admin=True, k=k, options=ABLATIONS[system])
    assert len(result.event_ids) == min(k, len(EVENTS)) == len(set(result.event_ids))


def test_spare_events_follow_the_order_the_searches_found_them() -> None:
    """What fills a place the context budget leaves empty (a fourth pack's members are left
    out): the pool's other events, round 1's first, each round in its own rank order; packs
    and the events already chosen are not spare."""

    def candidate(node_id: str, score: float, kind: NodeKind = NodeKind.EVENT) -> Candidate:
        trace = ExpansionTrace(seed_id=node_id, seed_lists=["dense:0"])
        return Candidate(node_id=node_id, kind=kind, score=score, trace=trace)

    pool = {
        i: candidate(i, s)
        for i, s in [("late", 9.0), ("r1b", 1.0), ("r1a", 0.5), ("chosen", 5.0), ("unranked", 8.0)]
    }
    pool["fused_p"] = candidate("fused_p", 7.0, NodeKind.FUSED)
    found = {"r1a": (1, 0), "r1b": (1, 3), "late": (2, 0), "chosen": (1, 1), "fused_p": (1, 2)}
    assert spare_order(pool, found, {"chosen"}) == ["r1a", "r1b", "late", "unranked"]
