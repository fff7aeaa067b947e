"""A reader's view of the store: every read returns only what that reader may see, as of
when they ask.

Two things limit a view, each optional: who asks (`requester`: only the events their
visibility admits) and when (`as_of`: only events observed at or before that time, so a
question asked on Monday is never answered from Tuesday's events, whatever the system).

Access is enforced here, under the search engine, the controller and the graphs, rather
than in each of them: they all read through the `MemoryStoreAPI` surface, and a view that
never hands out an invisible id cannot be bypassed by a seed list, an expansion step, a
temporal neighbour or a coverage pass that forgot to filter.

Fused memory inherits its members' visibility by the *hide* rule: a fused node exists for a
requester only when they may see every member it was written from, since its summary and
its embedding are derived from all of them. A pack with a member hidden from the requester
is absent (no seed, no expansion through it, no summary in any context); its visible
members stay reachable as events on their own. Edges are kept only when both ends are
visible, so neither a semantic nor a causal edge carries anyone across to a hidden event.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from memory.errors import MemFuseError, NodeNotFoundError
from memory.models import (
    Edge,
    EdgeType,
    Event,
    FusedNode,
    Link,
    NodeKind,
    is_fused_id,
    links_weighing,
)
from memory.moments import Moments
from memory.read_request import ReadRequest
from memory.store_api import MemoryStoreAPI, StoreStats
from memory.temporal_index import key_span
from memory.visibility import audience

_WIDEN = 4  # a filtered search asks the index for this many times more, until it has enough
# A time cut over at most this many events is checked against their ids, listed once per view
# (~50 ns an id); past it each id's event is read for its time.
_CUT_SET_LIMIT = 8192


@dataclass(frozen=True)
class _Readable:
    """What one requester may read of the whole store, in time order: when each person and
    each device is first named by an event they may see, and those events' (timestamp, id)
    keys, to bisect (a view's `events_between`, its counts and its n-th latest time were each
    a pass over every event listed, checked one by one, several times a question)."""

    people: dict[str, datetime]
    devices: dict[str, datetime]
    keys: list[tuple[datetime, str]]

    @staticmethod
    def until(first_named: dict[str, datetime], as_of: datetime | None) -> set[str]:
        """The names first named at or before `as_of` (None: ever)."""
        return {name for name, first in first_named.items() if as_of is None or first <= as_of}

    def span(self, start: datetime, end: datetime) -> tuple[int, int]:
        """The positions of the events with start <= timestamp <= end (the store's own
        `events_between` bounds)."""
        return key_span(self.keys, start, end)


# Store → requester → (the store's generation, what they may read). The planner asks a view
# for the names it may recognise once per question, and reading every event the requester may
# see for them took 2 ms a question on a household's week (most of a question's planning), and
# more as the memory grows; so they are read once per requester while the store is unchanged.
_READABLE: weakref.WeakKeyDictionary[object, dict[str, tuple[object, _Readable]]] = (
    weakref.WeakKeyDictionary()
)
_READABLE_LOCK = threading.Lock()


def read_readable(store: MemoryStoreAPI, who: str) -> _Readable:
    """What `who` may read of `store`: off its time index where it has one (no event read:
    at 100k events, reading each for its names and time took 1-2 s), else event by event."""
    event_keys = getattr(store, "event_keys", None)
    first_named = getattr(store, "first_named", None)
    if event_keys is None or first_named is None:
        return read_readable_events(store, who)

    every = getattr(store, "visibilities", None)  # one copy, not a call an event
    seen: dict[str, str] = every() if every is not None else {}
    admits = {v: _admits(who, v) for v in set(seen.values())}

    def admitted(event_id: str) -> bool:  # stored since the copy, or a store without one
        try:
            return _admits(who, store.visibility_of(event_id))
        except NodeNotFoundError:  # forgotten since it was listed
            return False

    known = seen.get
    keys = [  # inline: a function call an event was a third of this read
        key
        for key in event_keys(datetime.min, datetime.max)
        if (admits[v] if (v := known(key[1])) is not None else admitted(key[1]))
    ]
    people, devices = first_named({i for _, i in keys}.__contains__)
    return _Readable(people, devices, keys)


def read_readable_events(store: MemoryStoreAPI, who: str) -> _Readable:
    """`read_readable` by reading every event the requester may see, in time order."""
    people: dict[str, datetime] = {}
    devices: dict[str, datetime] = {}
    keys: list[tuple[datetime, str]] = []
    for event_id in store.events_between(datetime.min, datetime.max):  # time order
        try:
            if not _admits(who, store.visibility_of(event_id)):
                continue
            event = store.get_event(event_id)
        except NodeNotFoundError:  # forgotten since it was listed
            continue
        devices.setdefault(event.device, event.timestamp)
        for person in event.characters:
            people.setdefault(person, event.timestamp)
        keys.append((event.timestamp, event_id))
    return _Readable(people, devices, keys)


class ReadOnlyViewError(MemFuseError, AttributeError):
    """A write through a requester's view (views only read; writes go to the store). Also an
    AttributeError, so `getattr(view, name, default)` probes keep working."""


@lru_cache(maxsize=4096)
def _admits(requester: str, visibility: str) -> bool:
    admitted = audience(visibility)
    return admitted is None or requester in admitted


class VisibleStore:
    """The read surface of `MemoryStoreAPI` for one reader over one store: a requester (None:
    every audience, an administrative read), a time (`as_of`; None: no cut), or both.

    Build one per request (it memoises what it checked, the searches it ran and the edges
    it walked, and never outlives the request, so it cannot go stale); it reads the store's
    current visibility on every new id.
    """

    def __init__(
        self,
        store: MemoryStoreAPI,
        requester: str | None = None,
        *,
        as_of: datetime | None = None,
    ):
        if requester is not None and (not isinstance(requester, str) or not requester.strip()):
            raise MemFuseError("a view needs a requester's name")
        if requester is None and as_of is None:
            raise MemFuseError("a view needs a requester, a time (as_of), or both")
        self.store = store
        self.requester = requester.strip() if requester is not None else None
        self.as_of = as_of
        self._who = self.requester.casefold() if self.requester is not None else None
        self._seen: dict[str, bool] = {}
        # ids this view listed itself (`events_between`): visible by construction, so a batch
        # read of them passes in one set test (a week's window lists ~1,400 events, and one
        # `_require` call each was a millisecond of a search)
        self._listed: set[str] = set()
        self._visible: list[Event] | None = None
        self._upto: frozenset[str] | None = None  # the ids up to the cut (none when many)
        # What this view already answered: a question's later rounds repeat many of its first
        # round's searches (the guard's, the focus query's) and walk the same edges.
        self._hits: dict[tuple[Any, ...], list[tuple[str, float]]] = {}
        self._links: dict[str, list[Link]] = {}
        self._typed_links: dict[tuple[str, EdgeType, float], list[Link]] = {}
        self._own_readable: _Readable | None = None  # a store without a generation: per view

    # --- the checks ---------------------------------------------------------------------

    def may_see(self, node_id: str) -> bool:
        """An event this requester may see, or a fused node all of whose members they may."""
        known = self._seen.get(node_id)
        if known is not None:
            return known
        if is_fused_id(node_id):
            try:
                members = self.store.get_fused(node_id).members
            except NodeNotFoundError:
                members = []
            visible = bool(members) and all(self._event_visible(m) for m in members)
        else:
            visible = self._event_visible(node_id)
        self._seen[node_id] = visible
        return visible

    def _event_visible(self, event_id: str) -> bool:
        known = self._seen.get(event_id)
        if known is None:
            try:
                known = self._who is None or _admits(self._who, self.store.visibility_of(event_id))
                known = known and self._before_cut(event_id)
            except NodeNotFoundError:
                known = False
            self._seen[event_id] = known
        return known

    def _before_cut(self, event_id: str) -> bool:
        """Observed at or before `as_of` (NodeNotFoundError for an unknown id). Over a short
        past the view lists the ids up to the cut once and finds most ids there instead of
        reading their events (a search checks hundreds); an id it does not find (a later
        event, or one stored since the list was made) is read for its time, as before."""
        if self.as_of is None:
            return True
        if self._upto is None:  # decided once per view: a long past lists nothing
            short = self.store.count_events_between(datetime.min, self.as_of) <= _CUT_SET_LIMIT
            self._upto = frozenset(
                self.store.events_between(datetime.min, self.as_of) if short else ()
            )
        if event_id in self._upto:
            return True
        event_time = getattr(self.store, "event_time", None)  # without decoding the event
        if event_time is not None:
            return bool(event_time(event_id) <= self.as_of)
        return self.store.get_event(event_id).timestamp <= self.as_of

    def _require(self, node_id: str, what: str) -> None:
        if not self.may_see(node_id):  # the same error as for an unknown id: no existence leak
            raise NodeNotFoundError(node_id, what)

    def _require_all(self, node_ids: list[str], what: str) -> None:
        """`_require` for each id, or one set test when the view listed them all itself."""
        if self._listed.issuperset(node_ids):
            return
        for node_id in node_ids:
            self._require(node_id, what)

    def _listing(self, ids: list[str]) -> list[str]:
        self._listed.update(ids)
        return ids

    def _widened(
        self, search: Callable[[int], list[tuple[str, float]]], n: int
    ) -> list[tuple[str, float]]:
        """The first `n` visible hits of a ranked search, asking for more until it has them
        or the index has no more to give."""
        ask = max(n, 1)
        while True:
            hits = search(ask)
            visible = [(i, s) for i, s in hits if self.may_see(i)]
            if len(visible) >= n or len(hits) < ask:
                return visible[:n]
            ask *= _WIDEN

    def visibility_of(self, event_id: str) -> str:
        self._require(event_id, "event")
        return self.store.visibility_of(event_id)

    # --- events and packs -----------------------------------------------------------------

    def has_node(self, node_id: str) -> bool:
        return self.store.has_node(node_id) and self.may_see(node_id)

    def get_event(self, event_id: str) -> Event:
        self._require(event_id, "event")
        return self.store.get_event(event_id)

    def get_events(self, event_ids: Iterable[str]) -> list[Event]:
        ids = list(event_ids)
        self._require_all(ids, "event")
        return self.store.get_events(ids)

    def _visible_events(self) -> list[Event]:
        """The visible events in time order, read once per view (the planner asks for the
        known people and devices, stats for both and more)."""
        if self._visible is None:
            every = self.events_between(datetime.min, self.as_of or datetime.max)
            self._visible = self.store.get_events(every)
        return self._visible

    def _visible_event_ids(self) -> list[str]:
        return [e.event_id for e in self._visible_events()]

    def all_events(self) -> list[Event]:
        return list(self._visible_events())

    def get_fused(self, node_id: str) -> FusedNode:
        self._require(node_id, "fused node")
        return self.store.get_fused(node_id)

    def all_fused(self) -> list[FusedNode]:
        return [n for n in self.store.all_fused() if self.may_see(n.node_id)]

    def fused_of(self, event_id: str) -> list[str]:
        self._require(event_id, "event")
        return [i for i in self.store.fused_of(event_id) if self.may_see(i)]

    # --- edges ------------------------------------------------------------------------

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        if not self.may_see(node_id):
            return []
        return [
            e for e in self.store.neighbors(node_id, edge_type) if self.may_see(e.other(node_id))
        ]

    def links(self, node_id: str) -> list[Link]:
        found = self._links.get(node_id)
        if found is None:
            found = self._links[node_id] = (
                [link for link in self.store.links(node_id) if self.may_see(link.other)]
                if self.may_see(node_id)
                else []
            )
        return list(found)

    def links_of(
        self, node_id: str, edge_type: EdgeType, min_weight: float = -math.inf
    ) -> list[Link]:
        """`links` of one type weighing at least `min_weight`: only those are checked for
        visibility. A search's walk follows causal links and the semantic ones above its
        threshold; reading every link and checking each far end (a pack: all its members) was
        a third of the walk, mostly for links it never follows (py-spy, seed 7)."""
        typed = getattr(self.store, "links_of", None)
        if not callable(typed):  # a store that lists all links: the shown ones, filtered
            return links_weighing(self.links(node_id), edge_type, min_weight)
        key = (node_id, edge_type, min_weight)
        found = self._typed_links.get(key)
        if found is None:
            raw = typed(node_id, edge_type, min_weight)
            found = self._typed_links[key] = (
                [link for link in raw if self.may_see(link.other)] if self.may_see(node_id) else []
            )
        return list(found)

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        return self.may_see(src) and self.may_see(dst) and self.store.has_edge(src, dst, edge_type)

    def edge_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node_id in self._visible_event_ids():
            for edge in self.neighbors(node_id):
                if edge.src == node_id or (edge.type == EdgeType.SEMANTIC and edge.src > node_id):
                    counts[edge.type.value] = counts.get(edge.type.value, 0) + 1
        return counts

    # --- indexes ------------------------------------------------------------------------

    def embed_query(self, text: str) -> np.ndarray:
        return self.store.embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.store.embed_queries(texts)

    def vector(self, node_id: str) -> np.ndarray:
        self._require(node_id, "node")
        return self.store.vector(node_id)

    def vectors(self, node_ids: Sequence[str]) -> np.ndarray:
        """`vector` for many ids at once: in one batch when the store reads batches."""
        ids = list(node_ids)
        self._require_all(ids, "node")
        batch = getattr(self.store, "vectors", None)
        if callable(batch):
            return np.asarray(batch(ids))
        return np.stack([self.store.vector(i) for i in ids]) if ids else np.zeros((0, 0))

    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        vector = np.asarray(query_vector)
        key = ("dense", vector.dtype.str, vector.tobytes(), n, kind, between)
        empty, window = self._cut(between)
        if empty:
            return []
        return self._remembered(
            key,
            lambda: self._widened(lambda m: self.store.dense_search(vector, m, kind, window), n),
        )

    def lexical_search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        empty, window = self._cut(between)
        if empty:
            return []
        return self._remembered(
            ("lexical", query, n, kind, between, common_share),
            lambda: self._widened(
                lambda m: self.store.lexical_search(query, m, kind, window, common_share), n
            ),
        )

    def moment_search(
        self, query_vector: np.ndarray, n: int, as_of: datetime | None = None
    ) -> list[tuple[str, float]]:
        """The store's `moment_search` as this reader reads it: at the view's time (or the
        earlier `as_of`), only events they may see. Both turns of a moment have one
        visibility (`memory.moments`): a moment is visible exactly when its turn is."""
        vector = np.asarray(query_vector)
        cut = min((t for t in (self.as_of, as_of) if t is not None), default=None)
        return self._remembered(
            ("moments", vector.dtype.str, vector.tobytes(), n, cut),
            lambda: self._widened(lambda m: self.store.moment_search(vector, m, cut), n),
        )

    def moment_cosines(
        self, query_vectors: np.ndarray, node_ids: Sequence[str]
    ) -> dict[str, float]:
        moments = self._moments()
        if moments is None:
            return {}
        visible = [i for i in node_ids if i in moments.rows and self.may_see(i)]
        return moments.cosines(np.asarray(query_vectors), visible, self.as_of)

    def _moments(self) -> Moments | None:
        read = getattr(self.store, "moments", None)
        return read() if callable(read) else None

    def _cut(
        self, between: tuple[datetime, datetime] | None
    ) -> tuple[bool, tuple[datetime, datetime] | None]:
        """(nothing of `between` lies at or before the view's time, `between` ended there):
        the indexes cut at the view's time themselves, so the hits after it are never fetched
        and then dropped (asked mid-week, half a week's events lie after the question, and the
        view asked again for four times as many; asked early in a long memory, nearly all)."""
        if self.as_of is None:
            return False, between
        span = self._until_view(*(between or (datetime.min, self.as_of)))
        return span is None, span

    def _until_view(self, start: datetime, end: datetime) -> tuple[datetime, datetime] | None:
        """[start, end] cut at the view's time; None when nothing of it is left."""
        if self.as_of is not None:
            end = min(end, self.as_of)
        return (start, end) if start <= end else None

    def _remembered(
        self, key: tuple[Any, ...], search: Callable[[], list[tuple[str, float]]]
    ) -> list[tuple[str, float]]:
        """A search this view already ran, answered again without running it (a copy)."""
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = search()
        return list(hits)

    def common_terms(self, text: str, share: float) -> list[str]:
        """The whole memory's common words, as `lexical_search` already tells them apart by
        them (see `term_rarity`)."""
        return self.store.common_terms(text, share)

    def term_rarity(self, text: str) -> dict[str, float]:
        """The whole memory's idf, as `lexical_search` already ranks by it: a word's rarity
        says no more about hidden events than the scores of a search through this view."""
        return self.store.term_rarity(text)

    def event_centroid(self) -> np.ndarray | None:
        """The whole memory's mean event vector, hidden and later events included: one
        average over every event names no event and no text, and the view's own mean would
        cost a pass over its events for every question (the whole memory's is a running sum).
        A search through the view ranks by it; it never decides what the view may return."""
        return self.store.event_centroid()

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        span = self._until_view(start, end)
        if span is None:
            return []
        if self._who is None:  # a time cut alone: the index has already cut them
            return self._listing(self.store.events_between(*span))
        readable = self._readable(self._who)
        lo, hi = readable.span(*span)
        return self._listing([event_id for _, event_id in readable.keys[lo:hi]])

    def device_events_between(self, device: str, start: datetime, end: datetime) -> list[str]:
        """The device's events the view may read in [start, end]: the store's list for that
        device, cut at the view's time, then checked one by one for the requester (only that
        device's events are looked at)."""
        span = self._until_view(start, end)
        if span is None:
            return []
        ids = self.store.device_events_between(device, *span)
        return self._listing(ids if self._who is None else [i for i in ids if self.may_see(i)])

    def count_events_between(self, start: datetime, end: datetime) -> int:
        span = self._until_view(start, end)
        if span is None:
            return 0
        if self._who is None:  # a time cut alone: the store counts, no event is read
            return self.store.count_events_between(*span)
        lo, hi = self._readable(self._who).span(*span)
        return hi - lo

    def nth_latest_time(self, end: datetime, n: int) -> datetime | None:
        if self.as_of is not None:
            end = min(end, self.as_of)
        if self._who is None:  # a time cut alone: one bisection of the store's index
            return self.store.nth_latest_time(end, n)
        if n < 1:
            raise ValueError(f"expected n >= 1, got {n}")
        readable = self._readable(self._who)
        _, hi = readable.span(datetime.min, end)
        return readable.keys[hi - n][0] if hi >= n else None

    def adjacent_events(
        self, event_id: str, radius: int, by: Literal["device", "person"]
    ) -> list[str]:
        """Up to `radius` visible events before and after, on the same device (or sharing a
        person): the store's neighbourhood widened until enough visible ones are in it."""
        anchor = self.get_event(event_id)
        if radius <= 0:
            return []
        key = (anchor.timestamp, event_id)
        reach = radius
        while True:
            near = self.store.get_events(self.store.adjacent_events(event_id, reach, by))
            before_all = [e for e in near if (e.timestamp, e.event_id) < key]
            after_all = [e for e in near if (e.timestamp, e.event_id) > key]
            before = [e.event_id for e in before_all if self._event_visible(e.event_id)]
            after = [e.event_id for e in after_all if self._event_visible(e.event_id)]
            done_before = len(before) >= radius or len(before_all) < reach
            done_after = len(after) >= radius or len(after_all) < reach
            if done_before and done_after:
                return before[-radius:] + after[:radius]
            reach *= _WIDEN

    # --- what this requester may know of the store --------------------------------------

    def known_people(self) -> set[str]:
        """Names the planner may recognise in a question. A time cut alone leaves them whole
        (a name is vocabulary, not evidence, and reading every event per question would not
        scale); a requester's view names only the people of events they may see."""
        if self._who is None:
            return self.store.known_people()
        return _Readable.until(self._readable(self._who).people, self.as_of)

    def known_devices(self) -> set[str]:
        if self._who is None:
            return self.store.known_devices()
        return _Readable.until(self._readable(self._who).devices, self.as_of)

    def _readable(self, who: str) -> _Readable:
        """What the requester may read, once per store generation (`_READABLE`); once per
        view of a store that does not say when it changes."""
        generation = getattr(self.store, "generation", None)
        if generation is None:
            if self._own_readable is None:
                self._own_readable = read_readable(self.store, who)
            return self._own_readable
        with _READABLE_LOCK:
            known = _READABLE.setdefault(self.store, {}).get(who)
        if known is not None and known[0] == generation:
            return known[1]
        readable = read_readable(self.store, who)  # under the generation read before it: a write
        with _READABLE_LOCK:  # meanwhile leaves it stale, and the next view reads again
            _READABLE.setdefault(self.store, {})[who] = (generation, readable)
        return readable

    def stats(self) -> StoreStats:
        events = self._visible_events()
        packs = self.all_fused()
        sizes = [len(node.members) for node in packs]
        return StoreStats(
            events=len(events),
            fused_nodes=len(packs),
            mean_members=sum(sizes) / len(sizes) if sizes else 0.0,
            edges=self.edge_counts(),
            devices=len({e.device for e in events}),
            people=len({p for e in events for p in e.characters}),
            first_event=events[0].timestamp if events else None,
            last_event=events[-1].timestamp if events else None,
        )

    def refresh(self) -> bool:
        changed = self.store.refresh()
        if changed:
            self._seen.clear()
            self._listed.clear()
            self._visible = None
            self._upto = None
            self._hits.clear()
            self._links.clear()
            self._typed_links.clear()
            self._own_readable = None
        return changed

    def __getattr__(self, name: str) -> Any:
        """Everything else (writes, the plan log, the fusion queue) is not a reader's."""
        reader = f"{self.requester}'s" if self.requester is not None else "an as-of"
        raise ReadOnlyViewError(
            f"{name!r} is not available through {reader} read-only view of the memory"
        )


def as_of(store: MemoryStoreAPI, when: datetime | None) -> MemoryStoreAPI:
    """The store as it was known at `when`: events observed later are absent (and so is any
    fused node written from one of them). A view narrows an existing view, never widens it:
    its requester stays and the earlier of the two times wins. None: the store unchanged."""
    if when is None:
        return store
    if isinstance(store, VisibleStore):
        if store.as_of is not None and store.as_of <= when:
            return store
        return VisibleStore(store.store, store.requester, as_of=when)
    return VisibleStore(store, as_of=when)


def request_view(store: MemoryStoreAPI, request: ReadRequest) -> MemoryStoreAPI:
    """The store as one read may see it, as one view object: as of the asking time, and only
    the requester's events unless it is an administrative read. The API's baseline searches
    and every node of a retrieval run read through this, built once per read."""
    if request.admin or request.requester is None:
        return as_of(store, request.question_time)
    return VisibleStore(store, request.requester, as_of=request.question_time)
