"""A small in-memory stand-in for `memory.store.MemoryStore`, and a hand-computable embedder.

Unit tests of the fusion layer use the fake store to inject crashes and to run without
Chroma; integration tests run the same scenarios on the real store with the same
`KeywordEmbedder`, whose cosine is |A∩B| / sqrt(|A|·|B|) over the vocabulary words two texts
contain — similarities a test can compute by hand.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal

import numpy as np

from memory.errors import EventConflictError, InvalidEdgeError, NodeNotFoundError
from memory.models import Edge, EdgeType, Event, FusedNode, Link, NodeKind, is_fused_id
from memory.store_api import AddReport
from memory.text import tokenize
from tests.support.embedders import KeywordEmbedder


class FakeStore:
    def __init__(self, embedder: KeywordEmbedder):
        self.embedder = embedder
        self.events: dict[str, Event] = {}
        self.fused: dict[str, FusedNode] = {}
        self.vecs: dict[str, np.ndarray] = {}
        self.edges: dict[tuple[str, str, str], Edge] = {}
        self.plans: dict[str, dict[str, Any]] = {}  # plan_id -> {event_id, payload, status, reason}
        self.fail_next_put_fused = False
        self.queue: dict[str, str | None] = {}  # event_id -> failure reason (fusion queue)

    # --- embedding ---
    def _embed(self, text: str) -> np.ndarray:
        return self.embedder.vector(text)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._embed(t) for t in texts])

    def vector(self, node_id: str) -> np.ndarray:
        if node_id not in self.vecs:
            raise NodeNotFoundError(node_id)
        return self.vecs[node_id]

    # --- events ---
    def pending_fusion(self) -> list[str]:
        return sorted(self.queue, key=lambda i: (self.events[i].timestamp, i))

    def mark_fused(self, event_id: str) -> None:
        self.queue.pop(event_id, None)

    def note_pending(self, event_id: str, reason: str) -> None:
        if event_id in self.queue:
            self.queue[event_id] = reason

    def check_events(self, events: Sequence[Event]) -> AddReport:
        for e in events:
            old = self.events.get(e.event_id)
            if old is not None and old.fingerprint() != e.fingerprint():
                raise EventConflictError(e.event_id, old.differing_fields(e))
        added = [e.event_id for e in events if e.event_id not in self.events]
        return AddReport(
            added=added, unchanged=[e.event_id for e in events if e.event_id not in added]
        )

    def add_events(
        self, events: Sequence[Event], progress: bool = False, pending: bool = False
    ) -> AddReport:
        report = AddReport()
        self.check_events(events)
        if pending:
            self.queue.update({e.event_id: None for e in events if e.event_id not in self.events})
        for e in events:
            if e.event_id in self.events:
                report.unchanged.append(e.event_id)
                continue
            self.events[e.event_id] = e
            self.vecs[e.event_id] = self._embed(e.index_text())
            report.added.append(e.event_id)
        return report

    def has_node(self, node_id: str) -> bool:
        return node_id in self.events or node_id in self.fused

    def get_event(self, event_id: str) -> Event:
        if event_id not in self.events:
            raise NodeNotFoundError(event_id, "event")
        return self.events[event_id]

    def get_events(self, event_ids: Iterable[str]) -> list[Event]:
        return [self.get_event(i) for i in event_ids]

    def all_events(self) -> list[Event]:
        return sorted(self.events.values(), key=lambda e: (e.timestamp, e.event_id))

    # --- fused ---
    def get_fused(self, node_id: str) -> FusedNode:
        if node_id not in self.fused:
            raise NodeNotFoundError(node_id, "fused node")
        return self.fused[node_id].model_copy(deep=True)

    def all_fused(self) -> list[FusedNode]:
        return [self.get_fused(i) for i in sorted(self.fused)]

    def fused_of(self, event_id: str) -> list[str]:
        return sorted(f for f, n in self.fused.items() if event_id in n.members)

    def put_fused(self, node: FusedNode) -> None:
        for key in [k for k in self.edges if k[2] == "belong" and k[1] == node.node_id]:
            del self.edges[key]
        for m in node.members:
            self.edges[(m, node.node_id, "belong")] = Edge(
                src=m, dst=node.node_id, type=EdgeType.BELONG
            )
        if self.fail_next_put_fused:  # crash between the "SQLite" half and the "Chroma" half
            self.fail_next_put_fused = False
            raise RuntimeError("injected crash inside put_fused")
        self.fused[node.node_id] = node.model_copy(deep=True)
        self.vecs[node.node_id] = self._embed(node.index_text())

    def delete_fused(self, node_id: str) -> None:
        self.fused.pop(node_id, None)
        self.vecs.pop(node_id, None)
        for key in [k for k in self.edges if node_id in k[:2]]:
            del self.edges[key]

    # --- edges ---
    def add_edge(self, edge: Edge) -> bool:
        if edge.src == edge.dst:
            raise InvalidEdgeError(edge.src, edge.dst, edge.type.value, "self-loop")
        for end in (edge.src, edge.dst):
            if not self.has_node(end):
                raise InvalidEdgeError(
                    edge.src, edge.dst, edge.type.value, f"{end!r} does not exist"
                )
        if edge.type == EdgeType.CAUSAL and (is_fused_id(edge.src) or is_fused_id(edge.dst)):
            raise InvalidEdgeError(edge.src, edge.dst, "causal", "causal edges join two events")
        key = edge.key()
        if key in self.edges:
            return False
        self.edges[key] = edge
        return True

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        return Edge(src=src, dst=dst, type=edge_type).key() in self.edges

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        return [
            e
            for e in self.edges.values()
            if node_id in (e.src, e.dst) and (edge_type is None or e.type == edge_type)
        ]

    def links(self, node_id: str) -> list[Link]:
        return [Link.of(edge, node_id) for edge in self.neighbors(node_id)]

    def edge_counts(self) -> dict[str, int]:
        counts = {t.value: 0 for t in EdgeType}
        for e in self.edges.values():
            counts[e.type.value] += 1
        return counts

    # --- indexes ---
    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        hits = []
        for node_id, vec in self.vecs.items():
            fused = is_fused_id(node_id)
            if kind is not None and fused != (kind == NodeKind.FUSED):
                continue
            if (
                between
                and not fused
                and not between[0] <= self.events[node_id].timestamp <= between[1]
            ):
                continue
            hits.append((node_id, float(np.dot(query_vector, vec))))
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:n]

    def term_rarity(self, text: str) -> dict[str, float]:
        texts = [set(tokenize(e.description)) for e in self.events.values()]
        return {
            word: math.log(len(texts) + 1) - math.log(sum(word in t for t in texts) + 0.5)
            for word in dict.fromkeys(tokenize(text))
        }

    def lexical_search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        assert common_share is None, "fusion's candidate search reads plain BM25L"
        q = set(tokenize(query))
        lo, hi = between or (datetime.min, datetime.max)
        hits = []
        for node_id, text in [
            (e.event_id, e.description) for e in self.events.values() if lo <= e.timestamp <= hi
        ] + [(f.node_id, f.summary) for f in self.fused.values() if f.start <= hi and f.end >= lo]:
            score = len(q & set(tokenize(text)))
            if score > 0:
                hits.append((node_id, float(score)))
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:n]

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        return [e.event_id for e in self.all_events() if start <= e.timestamp <= end]

    def device_events_between(self, device: str, start: datetime, end: datetime) -> list[str]:
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
        me = self.get_event(event_id)
        if by == "device":
            same = [e for e in self.all_events() if e.device == me.device]
        else:
            same = [e for e in self.all_events() if set(e.characters) & set(me.characters)]
        ids = [e.event_id for e in same]
        i = ids.index(event_id) if event_id in ids else 0
        return [x for x in ids[max(i - radius, 0) : i + radius + 1] if x != event_id]

    def known_people(self) -> set[str]:
        return {c for e in self.events.values() for c in e.characters}

    def known_devices(self) -> set[str]:
        return {e.device for e in self.events.values()}

    # --- plan log ---
    def log_plan(self, plan_id: str, event_id: str, payload: dict[str, Any]) -> bool:
        if plan_id in self.plans:
            return False
        self.plans[plan_id] = {
            "event_id": event_id,
            "payload": copy.deepcopy(payload),
            "status": "pending",
            "reason": None,
        }
        return True

    def mark_plan(self, plan_id: str, status: str, reason: str | None = None) -> None:
        if plan_id not in self.plans:
            raise NodeNotFoundError(plan_id, "plan")
        self.plans[plan_id]["status"] = status
        self.plans[plan_id]["reason"] = reason

    def pending_plans(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (pid, copy.deepcopy(p["payload"]))
            for pid, p in self.plans.items()
            if p["status"] == "pending"
        ]

    def plan_attempts(self, event_id: str) -> int:
        return sum(1 for p in self.plans.values() if p["event_id"] == event_id)

    def plan_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.plans.values():
            counts[p["status"]] = counts.get(p["status"], 0) + 1
        return counts

    @contextmanager
    def transaction(self) -> Iterator[None]:
        yield

    # --- helpers for tests ---
    def snapshot(self) -> tuple[dict[str, Any], dict[tuple[str, str, str], float]]:
        fused = {k: v.model_dump() for k, v in self.fused.items()}
        return fused, {k: e.weight for k, e in self.edges.items()}
