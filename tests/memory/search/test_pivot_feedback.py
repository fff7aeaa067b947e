"""The pivot's feedback search on the real store: run only when the pivot asks for the
anchors' distinctive words (`EvidencePivot.terms`; the offline judge's pivot does not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.records import SearchHits
from memory.search import pivot as pivot_module
from memory.search.config import MEMFUSE_DEFAULT
from memory.search.pivot import COLOCATED, FEEDBACK, pivot_search
from memory.search.plan import EvidencePivot, RoundPlan
from memory.store import MemoryStore

from .test_pivot_series import QUESTION, week
from .test_store_integration import HashedWords


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    memory = MemoryStore.open(tmp_path, embedder=HashedWords())
    memory.add_events(week())
    yield memory
    memory.close()


def pivoting(terms: int) -> RoundPlan:
    pivot = EvidencePivot(enabled=True, anchors=["sleep12"], terms=terms, confidence=1.0)
    return RoundPlan.from_query(QUESTION).model_copy(update={"pivot": pivot})


def searched(
    store: MemoryStore, plan: RoundPlan, monkeypatch: pytest.MonkeyPatch
) -> tuple[SearchHits, int]:
    """The pivot round's hits, and how many engine searches it ran."""
    runs = []
    engine = pivot_module.run_search

    def counted(*args: object, **kwargs: object) -> SearchHits:
        runs.append(args)
        return engine(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pivot_module, "run_search", counted)
    return pivot_search(store, plan, MEMFUSE_DEFAULT, known={"sleep12"}), len(runs)


def test_asked_for_words_the_pivot_searches_again_with_them(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits, runs = searched(store, pivoting(terms=5), monkeypatch)
    lists = {c.node_id: c.trace.seed_lists for c in hits.candidates}
    assert runs == 1 and hits.seeds  # one search of the plan with the words added
    assert any(FEEDBACK in found for found in lists.values())
    assert "sleep12" not in lists  # what the caller holds is never returned


def test_without_words_the_pivot_runs_no_search_and_keeps_what_lies_beside(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits, runs = searched(store, pivoting(terms=0), monkeypatch)
    assert runs == 0 and hits.seeds == []
    # the pulse half an hour after the anchor, on the same watch and person
    assert [c.node_id for c in hits.candidates] == ["pulse12"]
    assert hits.candidates[0].trace.seed_lists == [COLOCATED]
