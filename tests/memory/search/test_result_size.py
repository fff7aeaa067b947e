"""A search for k events returns k when the memory holds that many — at any k, not only the
k the recipes' list depths were set for (20), and for any query, however few hits its own
lists find.

Two ways a search used to come back short, silently:
- past k = 20 the list depths capped it: `naive_rag`'s 20-deep dense list gave it 20 events at
  k = 60, `hybrid`'s 30-deep pool 30 (`SearchConfig.sized` now deepens them with k);
- MemFuse's plan lists (10 dense hits a query) gave a one-word query 12 events at k = 20, and
  the guard filled only its reserved slots from its own 30-deep ranking (now it fills every
  place the plan's ranking left empty).
Checked as a property over k on one real store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.retrieval import search
from memory.search.config import (
    DEPTHS,
    HYBRID_RRF,
    MEMFUSE_DEFAULT,
    NAIVE_RAG,
    REFERENCE_K,
    SearchConfig,
)
from memory.store import MemoryStore
from tests.support.plain_events import QUERIES, plain_events, plain_store

EVENTS = plain_events()
ASKED = EVENTS[-1].timestamp + timedelta(hours=1)

property_settings = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
ks = st.integers(min_value=1, max_value=len(EVENTS) + 10)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    with plain_store(Path(tmp_path_factory.mktemp("sizes")), EVENTS) as opened:
        yield opened


@property_settings
@given(k=ks, query=st.sampled_from(QUERIES), recipe=st.sampled_from([NAIVE_RAG, HYBRID_RRF]))
def test_a_dense_baseline_returns_k_events_whatever_k(
    store: MemoryStore, k: int, query: str, recipe: SearchConfig
) -> None:
    ids = search(store, query, recipe.sized(k), question_time=ASKED).event_ids()
    assert len(ids) == min(k, len(EVENTS)) == len(set(ids))


@property_settings
@given(k=ks, query=st.sampled_from(QUERIES))
def test_memfuse_returns_k_events_whatever_k(store: MemoryStore, k: int, query: str) -> None:
    ids = search(store, query, MEMFUSE_DEFAULT.sized(k), question_time=ASKED).event_ids()
    assert len(ids) == min(k, len(EVENTS)) == len(set(ids))


def test_sizing_leaves_the_depths_alone_up_to_the_reference_k() -> None:
    for k in (1, 7, REFERENCE_K):
        sized = MEMFUSE_DEFAULT.sized(k)
        assert (sized.top_k, sized.context.entries) == (k, k)
        assert all(getattr(sized, d) == getattr(MEMFUSE_DEFAULT, d) for d in DEPTHS)
        assert sized.guard == MEMFUSE_DEFAULT.guard


def test_sizing_deepens_in_proportion_and_once() -> None:
    sized = NAIVE_RAG.sized(3 * REFERENCE_K)
    assert [getattr(sized, d) for d in DEPTHS] == [3 * getattr(NAIVE_RAG, d) for d in DEPTHS]
    assert sized.guard.depth == 3 * NAIVE_RAG.guard.depth
    assert sized.sized(3 * REFERENCE_K) == sized
    odd = HYBRID_RRF.sized(REFERENCE_K + 1)  # rounded up, never below what k needs
    assert all(getattr(odd, d) > getattr(HYBRID_RRF, d) for d in DEPTHS)
