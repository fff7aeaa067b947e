"""Candidate memories for an incoming event, in the one record format the fusion agent reads.

The same `CandidateRecord` is used for the initial candidates, for `search_memory` results
and for `get_pack_members` answers, so the agent (LLM or offline twin) reasons over one
shape. Candidates are *past* memories only: events that sort before the current event by
(timestamp, event_id), and fused nodes (which only ever hold processed events). This keeps
the online semantics of the paper even when an ingest batch is embedded up front.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.errors import NodeNotFoundError
from memory.fusion.rarity import frequencies_for
from memory.models import Event, FusedNode, NodeKind, format_timestamp, is_fused_id
from memory.store_api import MemoryStoreAPI
from memory.trusted import TrustedBuilder


class CandidateConfig(BaseModel):
    """How wide the candidate net is cast for one event (sizes bound the agent's prompt)."""

    model_config = ConfigDict(frozen=True)

    dense_events: int = Field(default=8, ge=0, description="Nearest past events by embedding.")
    dense_fused: int = Field(default=4, ge=0, description="Nearest fused nodes by embedding.")
    same_moment_minutes: float = Field(
        default=20.0, ge=0, description="Other devices' events within ± this many minutes."
    )
    same_moment_limit: int = Field(
        default=6, ge=0, description="Same-moment events kept (closest)."
    )
    same_person_radius: int = Field(default=3, ge=0, description="Earlier events sharing a person.")
    same_person_hours: float = Field(
        default=12.0, ge=0, description="Same-person events older than this are dropped."
    )
    packs_of_events: bool = Field(
        default=True, description="Also show the fused nodes the candidate events belong to."
    )
    recent_events: int = Field(
        default=2048,
        ge=1,
        description="The dense searches look at the span holding the last this-many events "
        "before the current one (and at the packs reaching into it), so the net costs the "
        "same however long the memory grows; a memory with fewer past events is searched "
        "whole (every memory is, until it holds this many).",
    )
    max_candidates: int = Field(default=24, ge=1, description="Cap on the merged candidate list.")
    search_n: int = Field(default=8, ge=1, description="Hits per search_memory call and kind.")
    lookup_limit: int = Field(default=15, ge=1, description="Members shown by get_pack_members.")
    rare_share: float = Field(
        default=0.02,
        gt=0,
        le=1,
        description="A word is rare when at most this share of events use it.",
    )
    rare_min_df: int = Field(
        default=3, ge=1, description="…or at most this many (early on, when there are few events)."
    )


class CandidateRecord(BaseModel):
    """One memory as the fusion agent sees it: an atomic event or a fused node."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    kind: NodeKind
    timestamp: datetime = Field(description="Event time, or a pack's first member time.")
    end: datetime | None = Field(default=None, description="A pack's last member time.")
    devices: tuple[str, ...] = Field(default=(), description="Source device(s).")
    people: tuple[str, ...] = Field(default=(), description="People involved / pack subjects.")
    locations: tuple[str, ...] = Field(
        default=(), description="Where (event) or member places (pack)."
    )
    modality: str | None = Field(default=None, description="Sensing modality of an event.")
    text: str = Field(description="The event description or the pack summary.")
    similarity: float = Field(default=0.0, description="Cosine to the current event (or query).")
    rare_overlap: float = Field(
        default=0.0,
        description="Σ idf of the rare content words an event shares with the current event "
        "(0 for packs); boilerplate words do not count.",
    )
    member_count: int = Field(default=0, ge=0, description="Members of a pack (0 for events).")
    packs: tuple[str, ...] = Field(default=(), description="Fused nodes an event belongs to.")
    found_by: tuple[str, ...] = Field(default=(), description="dense, same_moment, same_person, …")

    @property
    def is_fused(self) -> bool:
        return self.kind == NodeKind.FUSED

    def render(self) -> str:
        """One compact line for a prompt."""
        if self.is_fused:
            end = self.end or self.timestamp
            span = f"{format_timestamp(self.timestamp)} - {format_timestamp(end)}"
            return (
                f"Fused node [{self.node_id}] members={self.member_count} [{span}] "
                f"subjects={','.join(self.people) or '-'} devices={','.join(self.devices)} "
                f"sim={self.similarity:.2f}: {self.text}"
            )
        packs = f" packs={','.join(self.packs)}" if self.packs else ""
        return (
            f"Event [{self.node_id}] [{format_timestamp(self.timestamp)}] "
            f"[{','.join(self.devices)}] [{','.join(self.locations)}] "
            f"people={','.join(self.people) or '-'} sim={self.similarity:.2f}{packs}: {self.text}"
        )


_RECORD = TrustedBuilder(CandidateRecord)


def event_record(
    event: Event,
    similarity: float = 0.0,
    found_by: Iterable[str] = (),
    packs: Iterable[str] = (),
    rare_overlap: float = 0.0,
) -> CandidateRecord:
    # built without validation: every value comes typed from a validated Event (fusion makes
    # ~20 records per event, and validating each was a tenth of its time; memory.trusted)
    return _RECORD(
        node_id=event.event_id,
        kind=NodeKind.EVENT,
        timestamp=event.timestamp,
        devices=(event.device,),
        people=tuple(event.characters),
        locations=(event.location,) if event.location else (),
        modality=event.modality.value,
        text=event.description,
        similarity=round(float(similarity), 4),
        rare_overlap=round(float(rare_overlap), 3),
        packs=tuple(packs),
        found_by=tuple(found_by),
    )


def fused_record(
    node: FusedNode,
    similarity: float = 0.0,
    found_by: Iterable[str] = (),
    locations: Iterable[str] = (),
) -> CandidateRecord:
    # built without validation: every value comes typed from a validated FusedNode
    return _RECORD(
        node_id=node.node_id,
        kind=NodeKind.FUSED,
        timestamp=node.start,
        end=node.end,
        devices=tuple(node.devices),
        people=tuple(node.subjects),
        locations=tuple(locations),
        text=node.summary,
        similarity=round(float(similarity), 4),
        member_count=len(node.members),
        found_by=tuple(found_by),
    )


_PLACES: weakref.WeakKeyDictionary[object, dict[str, tuple[tuple[str, ...], list[str]]]] = (
    weakref.WeakKeyDictionary()
)
_PLACES_LOCK = threading.Lock()


def pack_places(store: MemoryStoreAPI, node: FusedNode) -> list[str]:
    """The sorted places of a pack's members, remembered per store and pack for as long as
    its member list stays the same (events are immutable, so the members decide the places).
    Fusion shows each candidate pack with its places, and reading its members' events again
    for every event it is a candidate of cost ~1 % of a fused ingest."""
    members = tuple(node.members)
    with _PLACES_LOCK:
        memo = _PLACES.setdefault(store, {})
        known = memo.get(node.node_id)
    if known is not None and known[0] == members:
        return known[1]
    places = sorted({e.location for e in store.get_events(node.members) if e.location})
    with _PLACES_LOCK:
        memo[node.node_id] = (members, places)
    return places


def _before(event: Event, horizon: tuple[datetime, str]) -> bool:
    return (event.timestamp, event.event_id) < horizon


class _Collector:
    """Merges hits from several sources by id, remembering every source that found one."""

    def __init__(
        self,
        store: MemoryStoreAPI,
        horizon: tuple[datetime, str],
        exclude: set[str],
        reference: Event | None,
        config: CandidateConfig,
    ):
        self.store = store
        self.horizon = horizon
        self.exclude = exclude
        self.config = config
        self.frequencies = frequencies_for(store) if reference is not None else None
        self.reference = (
            self.frequencies.tokens(reference) if self.frequencies and reference else frozenset()
        )
        self.sims: dict[str, float] = {}
        self.sources: dict[str, list[str]] = {}
        self.order: list[str] = []

    def add(self, node_id: str, source: str, similarity: float | None = None) -> None:
        if node_id in self.exclude:
            return
        if node_id not in self.sources:
            self.sources[node_id] = []
            self.order.append(node_id)
        if source not in self.sources[node_id]:
            self.sources[node_id].append(source)
        if similarity is not None:
            self.sims[node_id] = max(similarity, self.sims.get(node_id, -1.0))

    def rarity(self, event: Event) -> float:
        if self.frequencies is None:
            return 0.0
        return self.frequencies.shared_rarity(
            self.reference,
            self.frequencies.tokens(event),
            self.config.rare_share,
            self.config.rare_min_df,
        )

    def records(self, vector: np.ndarray | None, limit: int) -> list[CandidateRecord]:
        """Materialise: drop future events, fill missing similarities, order by similarity."""
        event_ids = [i for i in self.order if not is_fused_id(i)]
        events = {e.event_id: e for e in self.store.get_events(event_ids)}
        kept = [
            i
            for i in self.order
            if is_fused_id(i) or (i in events and _before(events[i], self.horizon))
        ]
        if vector is not None:
            for node_id in kept:
                if node_id not in self.sims:
                    self.sims[node_id] = float(np.dot(vector, self.store.vector(node_id)))
        kept.sort(key=lambda i: (-self.sims.get(i, 0.0), i))
        kept = kept[:limit]
        out: list[CandidateRecord] = []
        for node_id in kept:
            sim, found = self.sims.get(node_id, 0.0), self.sources[node_id]
            if is_fused_id(node_id):
                node = self.store.get_fused(node_id)
                places = pack_places(self.store, node)
                out.append(fused_record(node, sim, found, places))
            else:
                event = events[node_id]
                rare = self.rarity(event)
                out.append(event_record(event, sim, found, self.store.fused_of(node_id), rare))
        return out


def _events_window(
    span: tuple[datetime, datetime] | None, end: datetime
) -> tuple[datetime, datetime]:
    """Where the dense event search looks: the recent span, or all of the past without one."""
    return span or (_lower_bound(end), end)


def _lower_bound(ts: datetime) -> datetime:
    return min(datetime(1971, 1, 1), ts - timedelta(days=1))


def recent_span(
    store: MemoryStoreAPI, end: datetime, recent: int
) -> tuple[datetime, datetime] | None:
    """The shortest span ending at `end`, to the minute, holding at least `recent` events;
    None when the whole past holds no more than that.

    A span [end - reach, end] holds `recent` events exactly when it reaches back to the
    `recent`-th latest event, so one lookup of that event's time answers every probe of the
    search below (it asked the time index to count the span, two bisections a probe and ~40
    probes an event, 4 % of a fused ingest at 60k events). The probes, doubling then halving,
    are kept as they were: the spans, and so every candidate set, are the ones counting gave.
    """
    if recent < 1 or store.nth_latest_time(end, recent + 1) is None:
        return None  # no more than `recent` events up to `end`
    edge = store.nth_latest_time(end, recent)
    assert edge is not None
    reach = timedelta(minutes=1)
    while end - reach > edge:  # the span still holds too few
        if end - datetime.min <= reach * 2:
            return None
        reach *= 2
    short, long = reach / 2, reach  # short holds too few (or is the first probe), long enough
    while long - short > timedelta(minutes=1):
        middle = short + (long - short) / 2
        if end - middle <= edge:
            long = middle
        else:
            short = middle
    return (end - long, end)


def retrieve_candidates(
    store: MemoryStoreAPI, event: Event, config: CandidateConfig | None = None
) -> list[CandidateRecord]:
    """The temporary zone's candidate set: similar past events and packs, plus the same moment
    seen by other devices and the same people shortly before (cross-source evidence that a
    purely semantic search would miss). The event must already be stored (its vector is reused).
    """
    cfg = config or CandidateConfig()
    horizon = (event.timestamp, event.event_id)
    vector = store.vector(event.event_id)
    frequencies_for(store).add(event)  # the vocabulary statistics grow with every event seen
    col = _Collector(store, horizon, {event.event_id}, event, cfg)
    span = recent_span(store, event.timestamp, cfg.recent_events)
    if cfg.dense_events:
        window = _events_window(span, event.timestamp)
        for node_id, sim in store.dense_search(
            vector, cfg.dense_events + 1, NodeKind.EVENT, window
        ):
            col.add(node_id, "dense", sim)
    if cfg.dense_fused:
        for node_id, sim in store.dense_search(vector, cfg.dense_fused, NodeKind.FUSED, span):
            col.add(node_id, "dense", sim)
    if cfg.same_moment_limit:
        delta = timedelta(minutes=cfg.same_moment_minutes)
        near = store.get_events(
            store.events_between(event.timestamp - delta, event.timestamp + delta)
        )
        near = [e for e in near if e.device != event.device and _before(e, horizon)]
        near.sort(key=lambda e: (abs((e.timestamp - event.timestamp).total_seconds()), e.event_id))
        for e in near[: cfg.same_moment_limit]:
            col.add(e.event_id, "same_moment")
    if cfg.same_person_radius and event.characters:
        oldest = event.timestamp - timedelta(hours=cfg.same_person_hours)
        ids = store.adjacent_events(event.event_id, cfg.same_person_radius, by="person")
        for e in store.get_events(ids):
            if oldest <= e.timestamp and _before(e, horizon):
                col.add(e.event_id, "same_person")
    if cfg.packs_of_events:
        for node_id in list(col.order):
            if not is_fused_id(node_id):
                for fid in store.fused_of(node_id):
                    col.add(fid, "pack_of_candidate")
    return col.records(vector, cfg.max_candidates)


def prime_candidate_searches(
    store: MemoryStoreAPI, events: Sequence[Event], config: CandidateConfig | None = None
) -> int:
    """Announce the dense searches `retrieve_candidates` will make for each of `events` (its
    events and packs in the recent span), so that their rows are scored in one pass
    (`prime_dense_search`, on stores that have it): a bulk ingest pays one matrix product for
    a group of events instead of two per event, and each search answers as it would have.
    Only the earliest and the latest event's windows are found: a window's start moves with
    its end, so theirs bound the rows of the group's (finding each event's span twice, here
    and in its search, cost as much as a tenth of what the one product saves); a row of a
    middle event's window outside them is scored in its own search. Returns the rows scored
    ahead (0: nothing held, as when an event has no vector: its own fusion reports that, on
    its own)."""
    cfg = config or CandidateConfig()
    prime = getattr(store, "prime_dense_search", None)
    if not (cfg.dense_events or cfg.dense_fused) or not events or not callable(prime):
        return 0
    try:
        vectors = np.stack([store.vector(e.event_id) for e in events])
    except NodeNotFoundError:
        return 0
    ends = (min(e.timestamp for e in events), max(e.timestamp for e in events))
    windows = [_events_window(recent_span(store, end, cfg.recent_events), end) for end in ends]
    return int(prime(vectors, windows))


def search_memory(
    store: MemoryStoreAPI,
    query: str,
    current: Event,
    config: CandidateConfig | None = None,
) -> list[CandidateRecord]:
    """The agent's `search_memory` tool: dense + BM25L over past events and packs for a query.
    Similarities are to the query; rare-word overlap is with the current event."""
    cfg = config or CandidateConfig()
    vector = store.embed_query(query)
    horizon = (current.timestamp, current.event_id)
    col = _Collector(store, horizon, {current.event_id}, current, cfg)
    span = recent_span(store, horizon[0], cfg.recent_events)
    window = _events_window(span, horizon[0])
    for node_id, sim in store.dense_search(vector, cfg.search_n, NodeKind.EVENT, window):
        col.add(node_id, "search", sim)
    for node_id, sim in store.dense_search(vector, max(cfg.search_n // 2, 1), NodeKind.FUSED, span):
        col.add(node_id, "search", sim)
    for node_id, _score in store.lexical_search(query, cfg.search_n):
        col.add(node_id, "search_bm25")
    return col.records(vector, cfg.search_n * 2)


def pack_members(
    store: MemoryStoreAPI, fused_id: str, current: Event, config: CandidateConfig | None = None
) -> list[CandidateRecord]:
    """The agent's `get_pack_members` tool: the pack's member events (time order), each with its
    similarity and rare-word overlap to the current event, so noisy members stand out."""
    cfg = config or CandidateConfig()
    node = store.get_fused(fused_id)
    vector = store.vector(current.event_id)
    col = _Collector(store, (current.timestamp, current.event_id), set(), current, cfg)
    out = []
    for e in store.get_events(node.members[: cfg.lookup_limit]):
        sim = float(np.dot(vector, store.vector(e.event_id)))
        packs = store.fused_of(e.event_id)
        out.append(event_record(e, sim, ("lookup",), packs, col.rarity(e)))
    return sorted(out, key=lambda r: (r.timestamp, r.node_id))
