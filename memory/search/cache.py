"""A per-search read cache over the store Protocol.

One search touches the same nodes from several stages (seed filtering, expansion,
scoring, constraints, projection). The cache fetches each event, fused node, edge
list and vector once, and batches event and vector look-ups so that a search costs
a handful of store round trips instead of one per candidate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np

from memory.models import EdgeType, Event, FusedNode, Link, is_fused_id, links_weighing
from memory.store_api import MemoryStoreAPI


class StoreCache:
    """Memoised, batched reads for one search call (never outlives it, so never goes stale)."""

    def __init__(self, store: MemoryStoreAPI):
        self.store = store
        self._events: dict[str, Event] = {}
        self._fused: dict[str, FusedNode] = {}
        self._links: dict[str, list[Link]] = {}
        self._typed_links: dict[tuple[str, EdgeType, float], list[Link]] = {}
        self._fused_of: dict[str, list[str]] = {}
        self._vectors: dict[str, np.ndarray] = {}

    # --- nodes ---
    def events(self, event_ids: Iterable[str]) -> dict[str, Event]:
        """The events for these ids, fetched from the store in one batch for the missing ones."""
        wanted = list(dict.fromkeys(event_ids))
        missing = [i for i in wanted if i not in self._events]
        if missing:
            for event in self.store.get_events(missing):
                self._events[event.event_id] = event
        return {i: self._events[i] for i in wanted if i in self._events}

    def event(self, event_id: str) -> Event:
        if event_id not in self._events:
            self._events[event_id] = self.store.get_event(event_id)
        return self._events[event_id]

    def fused(self, node_id: str) -> FusedNode:
        if node_id not in self._fused:
            self._fused[node_id] = self.store.get_fused(node_id)
        return self._fused[node_id]

    def span(self, node_id: str) -> tuple[datetime, datetime]:
        """[start, end] of a node: a fused node's member range, an event's own instant."""
        if is_fused_id(node_id):
            node = self.fused(node_id)
            return node.start, node.end
        ts = self.event(node_id).timestamp
        return ts, ts

    # --- graph ---
    def links(self, node_id: str) -> list[Link]:
        """Every edge touching the node, seen from it (one store call per node per search)."""
        if node_id not in self._links:
            self._links[node_id] = self.store.links(node_id)
        return self._links[node_id]

    def _links_of(self, node_id: str, edge_type: EdgeType, min_weight: float) -> list[Link]:
        """The node's links of one type weighing at least `min_weight`: from the store's
        typed read where it has one (the others are neither built nor checked), filtered
        from `links` otherwise."""
        key = (node_id, edge_type, min_weight)
        if key not in self._typed_links:
            typed = getattr(self.store, "links_of", None)
            self._typed_links[key] = (
                typed(node_id, edge_type, min_weight)
                if callable(typed)
                else links_weighing(self.links(node_id), edge_type, min_weight)
            )
        return self._typed_links[key]

    def causal(self, node_id: str) -> list[tuple[str, bool]]:
        """(neighbour, walked_in_reverse) over causal edges, both directions."""
        return [
            (link.other, not link.outgoing)
            for link in self._links_of(node_id, EdgeType.CAUSAL, -math.inf)
        ]

    def semantic(self, node_id: str, threshold: float) -> list[tuple[str, float]]:
        """(neighbour, weight) over semantic edges at or above the threshold, strongest first."""
        found = [
            (link.other, link.weight)
            for link in self._links_of(node_id, EdgeType.SEMANTIC, threshold)
        ]
        return sorted(found, key=lambda pair: (-pair[1], pair[0]))

    def fused_of(self, event_id: str) -> list[str]:
        if event_id not in self._fused_of:
            self._fused_of[event_id] = sorted(self.store.fused_of(event_id))
        return self._fused_of[event_id]

    # --- vectors ---
    def vectors(self, node_ids: Iterable[str]) -> np.ndarray:
        """A (len(ids), dim) matrix of L2-normalised vectors, in the order asked.

        Uses the store's optional batch method `vectors(ids)` when it has one and falls
        back to the Protocol's `vector(id)` otherwise.
        """
        wanted = list(node_ids)
        missing = [i for i in dict.fromkeys(wanted) if i not in self._vectors]
        if missing:
            batch = getattr(self.store, "vectors", None)
            if callable(batch):
                rows = np.asarray(batch(missing), dtype=np.float32)
                for node_id, row in zip(missing, rows):
                    self._vectors[node_id] = row
            else:
                for node_id in missing:
                    self._vectors[node_id] = np.asarray(
                        self.store.vector(node_id), dtype=np.float32
                    )
        if not wanted:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[i] for i in wanted])

    def cosines(self, node_ids: Sequence[str], vector: np.ndarray) -> np.ndarray:
        """The products of many nodes' vectors with one vector, as `vectors(ids) @ vector`
        computes them (the same float32 rows in one contiguous matrix), without keeping the
        rows: a time window's events are scored once, and a month of them (thousands of rows)
        cost more to keep one by one and stack than to multiply."""
        batch = getattr(self.store, "vectors", None)
        if not callable(batch) or not node_ids:
            rows = self.vectors(node_ids)
        else:
            rows = np.ascontiguousarray(batch(list(node_ids)), dtype=np.float32)
        products: np.ndarray = rows @ vector
        return products
