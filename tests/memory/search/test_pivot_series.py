"""The pivot's lists on the real store: the series (an anchor's recurring record on the other
days of the window — same device, near the anchor's time of day, most like the anchor), and
the feedback search, run only when the pivot asks for the anchors' distinctive words."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from memory.models import Event, Modality
from memory.records import SearchHits
from memory.search import pivot as pivot_module
from memory.search.config import MEMFUSE_DEFAULT
from memory.search.pivot import COLOCATED, FEEDBACK, SERIES, pivot_candidates, pivot_search, series
from memory.search.plan import EvidencePivot, RoundPlan
from memory.store import MemoryStore

from .test_store_integration import HashedWords

WEEK = (datetime(2026, 5, 11), datetime(2026, 5, 17, 23, 59, 59))


def log(event_id: str, when: str, device: str, text: str) -> Event:
    return Event(
        event_id=event_id,
        timestamp=datetime.fromisoformat(when),
        device=device,
        modality=Modality.HEALTH,
        location="bedroom",
        description=text,
        characters=("Ann",),
    )


def week() -> list[Event]:
    """Ann's watch: a sleep summary each morning near 07:00 (a minute later each day), a
    pulse reading half an hour after it and one each afternoon; the summary of the 18th is
    past the window; the phone writes a sleep-like note at 07:00 on the 14th."""
    events = []
    for day in range(10, 19):
        minute = f"{day - 10:02d}"
        events += [
            log(f"sleep{day}", f"2026-05-{day} 07:{minute}", "watch_ann", "Ann slept 7 hours"),
            log(f"pulse{day}", f"2026-05-{day} 07:30", "watch_ann", "Ann pulse 61 bpm"),
            log(f"noon{day}", f"2026-05-{day} 15:00", "watch_ann", "Ann slept 1 hour nap"),
        ]
    # the watch summary's words on another device (its id would win a tie)
    events.append(log("wphone14", "2026-05-14 07:00", "phone_ann", "Ann slept 7 hours"))
    return events


QUESTION = "How did Ann sleep?"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    memory = MemoryStore.open(tmp_path, embedder=HashedWords())
    memory.add_events(week())
    yield memory
    memory.close()


def question_vector(store: MemoryStore) -> np.ndarray:
    return np.asarray(store.embed_query(QUESTION), dtype=np.float32)


def found(store: MemoryStore, known: frozenset[str] = frozenset()) -> list[str]:
    anchor = store.get_events(["sleep12"])
    hits = series(store, anchor, WEEK, 60, question_vector(store), known)
    return [event_id for event_id, _, _ in hits]


def test_one_record_a_day_from_the_anchors_device_inside_the_window(store: MemoryStore) -> None:
    # each other day of the window: the summary (not the pulse half an hour later, nor the
    # afternoon nap 8 hours away, nor the phone's note); the 10th and 18th are outside
    assert sorted(found(store)) == [f"sleep{day}" for day in (11, 13, 14, 15, 16, 17)]


def test_what_the_caller_holds_is_never_returned(store: MemoryStore) -> None:
    # without their summaries, the 13th and 14th give the watch's next best record near
    # 07:00, the pulse — on the 14th not the phone's note, the summary's very words
    rest = found(store, known=frozenset({"sleep13", "sleep14"}))
    assert "sleep13" not in rest and "sleep14" not in rest
    assert {"pulse13", "pulse14"} <= set(rest)


def test_the_pivot_lists_the_series_only_when_asked_and_with_a_window(store: MemoryStore) -> None:
    asked = EvidencePivot(enabled=True, anchors=["sleep12"], series=True, confidence=1.0)
    vector = question_vector(store)
    _, recurring, _ = pivot_candidates(store, asked, QUESTION, vector, set(), WEEK)
    assert {c.node_id for c in recurring} >= {"sleep11", "sleep17"}
    assert all(c.trace.seed_lists == [SERIES] and c.trace.seed_id == "sleep12" for c in recurring)
    # a trace says which pivot list found it, not "temporal neighbour" (what the context shows)
    assert {c.trace.label() for c in recurring} == {"pivot:series of sleep12"}
    assert {c.trace.pivot_list() for c in recurring} == {SERIES}
    _, without_window, _ = pivot_candidates(store, asked, QUESTION, vector, set())
    plain = asked.model_copy(update={"series": False})
    _, not_asked, _ = pivot_candidates(store, plain, QUESTION, vector, set(), WEEK)
    assert without_window == [] and not_asked == []


def test_without_a_window_the_pivots_own_days_bound_the_series(store: MemoryStore) -> None:
    """Without a window from the question, the days the pivot carries (from the evidence)
    bound the series; the plan's window, when there is one, wins."""
    days = EvidencePivot(
        enabled=True,
        anchors=["sleep12"],
        series=True,
        series_from=datetime(2026, 5, 11).date(),
        series_to=datetime(2026, 5, 14).date(),
        confidence=1.0,
    )
    vector = question_vector(store)
    _, recurring, _ = pivot_candidates(store, days, QUESTION, vector, set())
    assert sorted(c.node_id for c in recurring) == ["sleep11", "sleep13", "sleep14"]
    _, over_window, _ = pivot_candidates(store, days, QUESTION, vector, set(), WEEK)
    assert {c.node_id for c in over_window} >= {"sleep16", "sleep17"}


def test_another_days_event_counts_only_when_it_reads_enough_like_the_anchor(
    store: MemoryStore,
) -> None:
    """With the summaries known, the pulse half an hour later is the watch's nearest record;
    it reads 0.8 like the summary in this embedding, so a bar above that leaves nothing."""
    anchor = store.get_events(["sleep12"])
    summaries = {f"sleep{d}" for d in range(10, 19)}
    vector = question_vector(store)
    loose = series(store, anchor, WEEK, 60, vector, summaries, min_likeness=0.7)
    strict = series(store, anchor, WEEK, 60, vector, summaries, min_likeness=0.9)
    assert {"pulse13", "pulse14"} <= {event_id for event_id, _, _ in loose} and strict == []


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
    assert hits.candidates[0].trace.label() == "pivot:colocated of sleep12"
