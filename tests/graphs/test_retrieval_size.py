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
from memory.store import MemoryStore
from tests.support.embedders import tiny_embedder
from tests.support.plain_events import QUERIES, plain_events

EVENTS = plain_events()
ASKED = EVENTS[-1].timestamp + timedelta(hours=1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(Path(tmp_path_factory.mktemp("sizes")), embedder=tiny_embedder())
    opened.add_events(EVENTS)
    yield opened
    opened.close()


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
