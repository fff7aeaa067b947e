"""An in-memory store implementing MemoryStoreAPI with hand-set vectors.

Cosines in the search tests are dot products of the vectors written in the test, so
every expected score can be computed by hand. BM25L is replaced by a transparent
lexical score (number of distinct query words in the node's index text), and every
call is logged so that tests can assert which retrievers a recipe used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal

import numpy as np

from memory.errors import NodeNotFoundError
from memory.models import (
    Edge,
    EdgeType,
    Event,
    FusedNode,
    Link,
    Modality,
    NodeKind,
    is_fused_id,
)
from memory.store_api import AddReport, StoreStats

WORD = re.compile(r"[a-z0-9]+")


def unit(*values: float) -> np.ndarray:
    """An L2-normalised float32 vector."""
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def make_event(
    event_id: str,
    when: str,
    description: str = "something happened",
    device: str = "phone_a",
    characters: Sequence[str] = (),
    location: str = "home",
) -> Event:
    return Event(
        event_id=event_id,
        timestamp=when,
        device=device,
        modality=Modality.APP_USAGE,
        location=location,
        description=description,
        characters=tuple(characters),
    )


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def _common_words(words: set[str], texts: list[set[str]], share: float) -> list[str]:
    """Those of `words` found in more than `share` of `texts`, sorted."""
    return [w for w in sorted(words) if sum(w in t for t in texts) > share * len(texts)]


class FakeStore:
    """MemoryStoreAPI over plain dicts; `calls` records every retrieval call by name."""

    def __init__(self, dim: int = 4, event_mean: bool = False):
        self.dim = dim
        # whether `event_centroid` answers the events' mean (the hub correction's input); off,
        # it answers None and searches rank by plain cosine, as the hand computations here do
        self.event_mean = event_mean
        self._events: dict[str, Event] = {}
        self._fused: dict[str, FusedNode] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._edges: dict[tuple[str, str, str], Edge] = {}
        self._adjacent: dict[str, list[Edge]] = {}
        self._belongs_to: dict[str, list[str]] = {}
        self.query_vectors: dict[str, np.ndarray] = {}
        self.calls: list[str] = []
        self.common_shares: list[float | None] = []
        """The `common_share` of every lexical search, in call order."""
        self._word_cache: dict[tuple[str, str], set[str]] = {}

    # --- test helpers ---
    def put_event(self, event: Event, vector: np.ndarray) -> Event:
        self._events[event.event_id] = event
        self._vectors[event.event_id] = np.asarray(vector, dtype=np.float32)
        return event

    def put_fused_with_vector(
        self, node_id: str, summary: str, members: list[str], vector: np.ndarray
    ) -> FusedNode:
        node = FusedNode.from_members(node_id, summary, [self._events[m] for m in members])
        self._store_fused(node, np.asarray(vector, dtype=np.float32))
        return node

    def _store_fused(self, node: FusedNode, vector: np.ndarray) -> None:
        self.delete_fused(node.node_id)
        self._fused[node.node_id] = node
        self._vectors[node.node_id] = vector
        for member in node.members:
            self._belongs_to.setdefault(member, []).append(node.node_id)

    def set_query(self, text: str, vector: np.ndarray) -> None:
        self.query_vectors[text] = np.asarray(vector, dtype=np.float32)

    def link(self, src: str, dst: str, edge_type: EdgeType, weight: float = 1.0) -> None:
        self.add_edge(Edge(src=src, dst=dst, type=edge_type, weight=weight))

    # --- events ---
    def add_events(
        self, events: Sequence[Event], progress: bool = False, pending: bool = False
    ) -> AddReport:
        added = []
        for event in events:
            if event.event_id not in self._events:
                self.put_event(event, self._hash_vector(event.index_text()))
                added.append(event.event_id)
        return AddReport(added=added)

    def pending_fusion(self) -> list[str]:
        return []  # searches never fuse

    def mark_fused(self, event_id: str) -> None:
        pass

    def note_pending(self, event_id: str, reason: str) -> None:
        pass

    def check_events(self, events: Sequence[Event]) -> AddReport:
        new = [e.event_id for e in events if e.event_id not in self._events]
        return AddReport(added=new, unchanged=[e.event_id for e in events if e.event_id not in new])

    def has_node(self, node_id: str) -> bool:
        return node_id in self._events or node_id in self._fused

    def get_event(self, event_id: str) -> Event:
        if event_id not in self._events:
            raise NodeNotFoundError(event_id, "event")
        return self._events[event_id]

    def get_events(self, event_ids: Iterable[str]) -> list[Event]:
        self.calls.append("get_events")
        return [self.get_event(i) for i in event_ids]

    def all_events(self) -> list[Event]:
        return sorted(self._events.values(), key=lambda e: (e.timestamp, e.event_id))

    # --- fused ---
    def get_fused(self, node_id: str) -> FusedNode:
        if node_id not in self._fused:
            raise NodeNotFoundError(node_id, "fused node")
        return self._fused[node_id]

    def all_fused(self) -> list[FusedNode]:
        return list(self._fused.values())

    def fused_of(self, event_id: str) -> list[str]:
        return sorted(self._belongs_to.get(event_id, []))

    def put_fused(self, node: FusedNode) -> None:
        self._store_fused(node, self._hash_vector(node.summary))

    def delete_fused(self, node_id: str) -> None:
        node = self._fused.pop(node_id, None)
        self._vectors.pop(node_id, None)
        for member in node.members if node else []:
            self._belongs_to[member].remove(node_id)

    # --- edges ---
    def add_edge(self, edge: Edge) -> bool:
        if edge.key() in self._edges:
            return False
        self._edges[edge.key()] = edge
        self._adjacent.setdefault(edge.src, []).append(edge)
        self._adjacent.setdefault(edge.dst, []).append(edge)
        return True

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        return Edge(src=src, dst=dst, type=edge_type).key() in self._edges

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        self.calls.append("neighbors")
        if is_fused_id(node_id):
            members = self._fused[node_id].members if node_id in self._fused else []
            belong = [Edge(src=m, dst=node_id, type=EdgeType.BELONG) for m in members]
        else:
            belong = [
                Edge(src=node_id, dst=f, type=EdgeType.BELONG) for f in self.fused_of(node_id)
            ]
        edges = self._adjacent.get(node_id, []) + belong
        return [e for e in edges if edge_type is None or e.type == edge_type]

    def links(self, node_id: str) -> list[Link]:
        edges = self.neighbors(node_id)
        self.calls[-1] = "links"
        return [Link.of(edge, node_id) for edge in edges]

    def edge_counts(self) -> dict[str, int]:
        counts = {t.value: 0 for t in EdgeType}
        for edge in self._edges.values():
            counts[edge.type.value] += 1
        counts[EdgeType.BELONG.value] = sum(len(n.members) for n in self._fused.values())
        return counts

    # --- indexes ---
    def _hash_vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in _words(text):
            vector[sum(map(ord, word)) % self.dim] += 1.0
        if not vector.any():
            vector[0] = 1.0
        return vector / np.linalg.norm(vector)

    def embed_query(self, text: str) -> np.ndarray:
        self.calls.append("embed")
        return self.query_vectors.get(text, self._hash_vector(text))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append("embed")
        return np.stack([self.query_vectors.get(t, self._hash_vector(t)) for t in texts])

    def vector(self, node_id: str) -> np.ndarray:
        self.calls.append("vector")
        return self._vectors[node_id]

    def _kind_ok(self, node_id: str, kind: NodeKind | None) -> bool:
        return kind is None or (kind == NodeKind.FUSED) == is_fused_id(node_id)

    def _inside(self, node_id: str, between: tuple[datetime, datetime]) -> bool:
        """`between` restricts events only, like the real store."""
        return is_fused_id(node_id) or between[0] <= self._events[node_id].timestamp <= between[1]

    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        self.calls.append(f"dense:{kind.value if kind else 'all'}")
        ids = [
            node_id
            for node_id in self._vectors
            if self._kind_ok(node_id, kind) and (between is None or self._inside(node_id, between))
        ]
        if not ids:
            return []
        cosines = np.stack([self._vectors[i] for i in ids]) @ np.asarray(
            query_vector, dtype=np.float32
        )
        hits = [(node_id, float(c)) for node_id, c in zip(ids, cosines)]
        hits.sort(key=lambda pair: (-pair[1], pair[0]))
        return hits[:n]

    # The fake's vectors are set by hand, with no text model to read a moment with: it holds
    # no moments (`memory.moments`), and every event scores by its own cosine.
    def moment_search(
        self, query_vector: np.ndarray, n: int, as_of: datetime | None = None
    ) -> list[tuple[str, float]]:
        self.calls.append("moments")
        return []

    def moment_cosines(
        self, query_vectors: np.ndarray, node_ids: Sequence[str]
    ) -> dict[str, float]:
        return {}

    def _words_by_node(self) -> dict[str, set[str]]:
        """Every event's and pack's words, as the lexical search reads them."""
        return {
            node_id: self._text_words(
                node_id,
                (
                    self._fused[node_id] if is_fused_id(node_id) else self._events[node_id]
                ).index_text(),
            )
            for node_id in [*self._events, *self._fused]
        }

    def _text_words(self, node_id: str, text: str) -> set[str]:
        key = (node_id, text)
        if key not in self._word_cache:
            self._word_cache[key] = _words(text)
        return self._word_cache[key]

    def lexical_search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        self.calls.append("lexical")
        self.common_shares.append(common_share)
        wanted = _words(query)
        words_of = self._words_by_node()
        common = (
            set(_common_words(wanted, list(words_of.values()), common_share))
            if common_share is not None
            else set()
        )
        if common and common != wanted:  # the store's rule: a hit must share an uncommon word
            words_of = {i: ws for i, ws in words_of.items() if ws & (wanted - common)}
        hits = []
        for node_id, words in words_of.items():
            if not self._kind_ok(node_id, kind):
                continue
            if between is not None and not self._inside(node_id, between):
                continue
            score = float(len(wanted & words))
            if score > 0:
                hits.append((node_id, score))
        hits.sort(key=lambda pair: (-pair[1], pair[0]))
        return hits[:n]

    def event_centroid(self) -> np.ndarray | None:
        events = [self._vectors[i] for i in self._events if i in self._vectors]
        if not self.event_mean or not events:
            return None
        mean: np.ndarray = np.mean(events, axis=0).astype(np.float32)
        return mean

    def common_terms(self, text: str, share: float) -> list[str]:
        """The fake's words of `text` found in more than `share` of its events and packs."""
        return _common_words(_words(text), list(self._words_by_node().values()), share)

    def term_rarity(self, text: str) -> dict[str, float]:
        """idf over the event texts, in the fake's own words."""
        texts = [self._text_words(i, e.index_text()) for i, e in self._events.items()]
        return {
            word: math.log(len(texts) + 1) - math.log(sum(word in t for t in texts) + 0.5)
            for word in dict.fromkeys(_words(text))
        }

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        self.calls.append("events_between")
        return [e.event_id for e in self.all_events() if start <= e.timestamp <= end]

    def device_events_between(self, device: str, start: datetime, end: datetime) -> list[str]:
        self.calls.append("device_events_between")
        return [
            e.event_id
            for e in self.all_events()
            if e.device == device and start <= e.timestamp <= end
        ]

    def count_events_between(self, start: datetime, end: datetime) -> int:
        return sum(1 for e in self.all_events() if start <= e.timestamp <= end)

    def nth_latest_time(self, end: datetime, n: int) -> datetime | None:
        times = sorted(e.timestamp for e in self.all_events() if e.timestamp <= end)
        return times[-n] if len(times) >= n else None

    def adjacent_events(
        self, event_id: str, radius: int, by: Literal["device", "person"]
    ) -> list[str]:
        self.calls.append(f"adjacent:{by}")
        anchor = self.get_event(event_id)
        if by == "device":
            line = [e for e in self.all_events() if e.device == anchor.device]
        else:
            people = set(anchor.characters)
            line = [e for e in self.all_events() if people & set(e.characters)]
        ids = [e.event_id for e in line]
        at = ids.index(event_id)
        return ids[max(0, at - radius) : at] + ids[at + 1 : at + 1 + radius]

    # --- what the store knows ---
    def known_people(self) -> set[str]:
        return {c for e in self._events.values() for c in e.characters}

    def known_devices(self) -> set[str]:
        return {e.device for e in self._events.values()}

    def stats(self) -> StoreStats:
        events = self.all_events()
        return StoreStats(
            events=len(events),
            fused_nodes=len(self._fused),
            mean_members=(
                sum(len(n.members) for n in self._fused.values()) / len(self._fused)
                if self._fused
                else 0.0
            ),
            edges=self.edge_counts(),
            devices=len(self.known_devices()),
            people=len(self.known_people()),
            first_event=events[0].timestamp if events else None,
            last_event=events[-1].timestamp if events else None,
        )
