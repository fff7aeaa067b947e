"""The hub correction: a query less part of the memory's mean event vector, so the events that
say least stop riding on what every event of the memory shares."""

from __future__ import annotations

import numpy as np
import pytest

from memory.retrieval import MEMFUSE_DEFAULT, search
from memory.search.config import HYBRID_RRF, NAIVE_RAG, GuardConfig
from memory.search.hubs import hub_corrected

from .fakes import FakeStore, make_event, unit

DENSE_ONLY = MEMFUSE_DEFAULT.with_(guard=GuardConfig(enabled=False), use_bm25=False)


def chatter_store() -> FakeStore:
    """Six near-empty turns along the memory's shared direction (x), one turn with content
    (y) that the question asks about. By plain cosine a chatter turn is nearest the question
    (0.896 against 0.889); less half the mean it falls far behind (0.425 against 0.562)."""
    store = FakeStore(event_mean=True)
    store.set_query("which restaurant did Diego quit?", unit(0.9, 0.436, 0, 0))
    for i in range(6):
        store.put_event(
            make_event(f"chat{i}", f"2024-02-04T21:2{i}", "Diego said: ok"),
            unit(0.995, 0, 0.1 if i % 2 else -0.1, 0),
        )
    store.put_event(
        make_event("quit", "2024-02-04T21:30", "Diego said: I gave notice at Salt & Ember"),
        unit(0.6, 0.8, 0, 0),
    )
    return store


def test_the_correction_takes_the_share_of_the_mean_out_of_every_query() -> None:
    store = chatter_store()
    mean = store.event_centroid()
    assert mean is not None
    queries = np.stack([unit(1, 0, 0, 0), unit(0, 1, 0, 0)])
    assert np.allclose(hub_corrected(store, queries, 0.5), queries - 0.5 * mean)
    assert hub_corrected(store, queries, 0.0) is queries
    assert hub_corrected(FakeStore(event_mean=True), queries, 0.5) is queries  # no events


def test_a_turn_with_content_outranks_the_chatter_only_with_the_correction() -> None:
    store = chatter_store()
    question = "which restaurant did Diego quit?"
    corrected = search(store, question, DENSE_ONLY)
    plain = search(store, question, DENSE_ONLY.with_(hub_penalty=0.0))
    assert corrected.seeds[0] == "quit" and corrected.event_ids()[0] == "quit"
    assert plain.seeds[0].startswith("chat")
    mean = store.event_centroid()
    assert mean is not None
    chatter, quit_ = store.vector("chat0"), store.vector("quit")
    asked = store.embed_query(question)
    # the candidate's cosine is the corrected one: cosine less half its cosine to the mean
    hit = next(c for c in corrected.candidates if c.node_id == "quit")
    assert hit.cosine == pytest.approx(float(quit_ @ asked - 0.5 * quit_ @ mean), abs=1e-6)
    assert float(chatter @ asked) > float(quit_ @ asked)


def test_the_baselines_rank_by_plain_cosine() -> None:
    assert NAIVE_RAG.hub_penalty == 0.0 and HYBRID_RRF.hub_penalty == 0.0
    assert (
        search(chatter_store(), "which restaurant did Diego quit?", NAIVE_RAG)
        .event_ids()[0]
        .startswith("chat")
    )
