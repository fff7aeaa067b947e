"""A pivot search: new evidence reached from the evidence already found (see `EvidencePivot`).

Two lists, each holding only events the caller does not hold yet, taken in turns:

- **co-located**: events within `minutes` of an anchor that share its place or one of its
  people, on any device, best cosine to the question first. This is how the other speaker's
  turn, the door sensor beside the camera or the phone of the person the camera saw come in:
  they share the anchor's time and place, not the question's words.
- **feedback**: the plan searched again (every stage of the engine) with the anchors' most
  distinctive words added — pseudo-relevance feedback, the words chosen by the lexical
  index's own idf, so boilerplate every sensor repeats is never chosen.

- **series** (when the pivot asks for it: for a question over several days, or when the
  evidence shows one device's record on several days): on each other day of the plan's
  window, else of the days the pivot carries, the anchor device's event nearest the anchor in
  text within `series_minutes` of its time of day. A device that reports once a day (steps, screen
  time, sleep, the door locked each evening) writes the same kind of record at about the
  same time; the question's words find a day or two of them, and the rest sit among the
  device's other logs that share its boilerplate.

Taking turns keeps any list from crowding out the others; which list found an event is in
its trace (`seed_lists`).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from itertools import zip_longest

import numpy as np

from memory.models import Event, NodeKind
from memory.records import PIVOT_LIST_PREFIX, Candidate, ExpansionTrace, SearchHits
from memory.search.cache import StoreCache
from memory.search.config import SearchConfig
from memory.search.engine import run_search
from memory.search.plan import EvidencePivot, RoundPlan
from memory.search.scoring import max_cosines
from memory.search.seeds import active_window
from memory.store_api import MemoryStoreAPI
from memory.text import tokenize

COLOCATED = f"{PIVOT_LIST_PREFIX}colocated"
FEEDBACK = f"{PIVOT_LIST_PREFIX}feedback"
SERIES = f"{PIVOT_LIST_PREFIX}series"
FEEDBACK_ANCHORS = 3  # the feedback words come from the best few anchors only
RECORD_LIKENESS = 0.7
"""Cosine to its anchor (index texts: description, device, place, people) from which another
day's event counts as the same record when the days come from the evidence
(`EvidencePivot.series_days`), not from a window the question named. One device's daily
records (a step total, a night's sleep) read alike well above it; a speaker's turns at the
same hour on other days mostly do not, and a conversation is no record. On the dev sources the
bar changes nothing (`memfuse bench --suite`: the same recall with it and without); it is
there for a conversation whose best evidence is one speaker's turns at about one hour on three
days of a week."""


def active_pivot(plan: RoundPlan, config: SearchConfig) -> EvidencePivot | None:
    pivot = plan.pivot
    honoured = config.use_constraints and pivot.confidence >= config.constraint_confidence
    return pivot if pivot.enabled and pivot.anchors and honoured else None


def feedback_terms(
    store: MemoryStoreAPI, anchors: Sequence[Event], question: str, n: int
) -> list[str]:
    """The `n` words of the anchors that are rarest in the memory, summed over the anchors
    that use them, leaving out the question's own words and bare numbers."""
    if n <= 0 or not anchors:
        return []
    asked = set(tokenize(question))
    weight: dict[str, float] = {}
    for event in anchors:
        for word, idf in store.term_rarity(event.description).items():
            if word in asked or word.isdigit() or idf <= 0:
                continue
            weight[word] = weight.get(word, 0.0) + idf
    return sorted(weight, key=lambda w: (-weight[w], w))[:n]


def colocated(
    store: MemoryStoreAPI,
    anchors: Sequence[Event],
    minutes: int,
    query_vector: np.ndarray,
    known: Collection[str],
) -> list[tuple[str, str, float]]:
    """(event id, anchor id, cosine to the question) of the new events near the anchors in
    time that share an anchor's place or person; best cosine first. Events and vectors are
    read in one batch each (`StoreCache`)."""
    radius = timedelta(minutes=minutes)
    cache = StoreCache(store)
    anchor_of: dict[str, str] = {}
    anchor_ids = {a.event_id for a in anchors}
    for anchor in anchors:
        nearby = [
            i
            for i in store.events_between(anchor.timestamp - radius, anchor.timestamp + radius)
            if i not in known and i not in anchor_ids and i not in anchor_of
        ]
        people = set(anchor.characters)
        for event in cache.events(nearby).values():
            same_place = bool(anchor.location) and event.location == anchor.location
            if same_place or people & set(event.characters):
                anchor_of[event.event_id] = anchor.event_id
    return by_question(cache, anchor_of, query_vector)


def series(
    store: MemoryStoreAPI,
    anchors: Sequence[Event],
    window: tuple[datetime, datetime],
    minutes: int,
    query_vector: np.ndarray,
    known: Collection[str],
    min_likeness: float = -1.0,
) -> list[tuple[str, str, float]]:
    """(event id, anchor id, cosine to the question) of each anchor's record on the other
    days of `window`: per anchor and day, the anchor device's new event within `minutes` of
    the anchor's time of day with the highest cosine to the anchor, if that cosine reaches
    `min_likeness`; best cosine to the question first."""
    start, end = window
    radius = timedelta(minutes=minutes)
    cache = StoreCache(store)
    anchor_of: dict[str, str] = {}
    taken = {a.event_id for a in anchors} | set(known)
    days = (end - start).days + 1
    for anchor in anchors:
        if not start <= anchor.timestamp <= end:
            continue
        anchor_vector = cache.vectors([anchor.event_id])[0]
        for offset in range(-days, days + 1):
            centre = anchor.timestamp + timedelta(days=offset)
            low, high = max(centre - radius, start), min(centre + radius, end)
            if offset == 0 or low > high:
                continue
            # the anchor device's events only: the store's list for that device (reading every
            # event of each slot to find them was most of a series search)
            same = [
                i for i in store.device_events_between(anchor.device, low, high) if i not in taken
            ]
            if not same:
                continue
            cosines = cache.vectors(same) @ anchor_vector
            best = max(range(len(same)), key=lambda j: (float(cosines[j]), same[j]))
            if float(cosines[best]) >= min_likeness:
                anchor_of.setdefault(same[best], anchor.event_id)
    return by_question(cache, anchor_of, query_vector)


def by_question(
    cache: StoreCache, anchor_of: dict[str, str], query_vector: np.ndarray
) -> list[tuple[str, str, float]]:
    """(event id, its anchor, cosine to the question), best cosine first (ties by id)."""
    ids = list(anchor_of)
    if not ids:
        return []
    cosines = max_cosines(np.atleast_2d(query_vector), cache.vectors(ids))
    ranked = sorted(zip(ids, map(float, cosines)), key=lambda item: (-item[1], item[0]))
    return [(event_id, anchor_of[event_id], cosine) for event_id, cosine in ranked]


def expanded(plan: RoundPlan, terms: list[str]) -> RoundPlan:
    """The plan with the feedback words as one more rewrite and in its lexical query."""
    words = " ".join(terms)
    return plan.model_copy(
        update={
            "semantic_queries": [*plan.semantic_queries, words][-3:],
            "bm25_query": f"{plan.lexical_query()} {words}",
            "pivot": EvidencePivot(),
        }
    )


def pivot_trace(anchor: str, seed_list: str) -> ExpansionTrace:
    return ExpansionTrace(seed_id=anchor, distance=1, neighbor_of=anchor, seed_lists=[seed_list])


def take_turns(*ranked: Sequence[Candidate], k: int) -> list[Candidate]:
    """The lists' candidates one from each in turn, first sighting kept, at most k."""
    out: dict[str, Candidate] = {}
    for row in zip_longest(*ranked):
        for candidate in row:
            if candidate is not None and candidate.node_id not in out:
                out[candidate.node_id] = candidate
    return list(out.values())[:k]


def pivot_candidates(
    store: MemoryStoreAPI,
    pivot: EvidencePivot,
    question: str,
    query_vector: np.ndarray,
    known: Collection[str],
    window: tuple[datetime, datetime] | None = None,
) -> tuple[list[Candidate], list[Candidate], list[str]]:
    """The co-located candidates, the series candidates (with `pivot.series` and a window:
    the plan's, else the pivot's own days) and the feedback words of one pivot (no search
    yet)."""
    anchors = store.get_events([a for a in pivot.anchors if store.has_node(a)])
    terms = feedback_terms(store, anchors[:FEEDBACK_ANCHORS], question, pivot.terms)
    near = colocated(store, anchors, pivot.minutes, query_vector, known)
    recurring: list[tuple[str, str, float]] = []
    # the question's window as it is; days the evidence suggested only for records alike
    days, likeness = (
        (window, -1.0) if window is not None else (pivot.series_days(), RECORD_LIKENESS)
    )
    if pivot.series and days is not None:
        recurring = series(
            store, anchors, days, pivot.series_minutes, query_vector, known, likeness
        )
    return _candidates(near, COLOCATED), _candidates(recurring, SERIES), terms


def _candidates(found: list[tuple[str, str, float]], seed_list: str) -> list[Candidate]:
    return [
        Candidate(
            node_id=event_id,
            kind=NodeKind.EVENT,
            score=cosine,
            cosine=cosine,
            trace=pivot_trace(anchor, seed_list),
        )
        for event_id, anchor, cosine in found
    ]


def pivot_search(
    store: MemoryStoreAPI,
    plan: RoundPlan,
    config: SearchConfig,
    *,
    known: Collection[str],
    requester: str | None = None,
    question_time: datetime | None = None,
    question: str | None = None,
) -> SearchHits:
    """One pivot round: new co-located events, series events and feedback hits, in turns, at
    most k.

    The feedback search runs only when the anchors have words to add: without them it would
    repeat the question's own search, which can add nothing."""
    pivot = active_pivot(plan, config)
    if pivot is None:
        raise ValueError("pivot_search needs a plan with an honoured pivot")
    started = time.perf_counter()
    asked = question or plan.focus
    query_vector = np.asarray(store.embed_query(asked), dtype=np.float32)
    window = active_window(plan, config)
    near, recurring, terms = pivot_candidates(store, pivot, asked, query_vector, known, window)
    feedback: list[Candidate] = []
    seeds: list[str] = []
    if terms:
        result = run_search(
            store,
            expanded(plan, terms),
            config,
            requester=requester,
            question_time=question_time,
            question=question,
        )
        seeds = result.seeds
        feedback = [
            c.model_copy(update={"trace": c.trace.model_copy(update={"seed_lists": [FEEDBACK]})})
            for c in result.candidates
            if c.node_id not in known
        ]
    return SearchHits(
        query=" ".join([plan.focus, *terms]),
        seeds=seeds,
        candidates=take_turns(near, recurring, feedback, k=config.top_k),
        fused=[],
        guard_ids=[],
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )
