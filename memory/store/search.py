"""What the search engine reads: query embeddings, stored vectors, dense and lexical search,
term rarity, time windows and neighbouring events, and what the store knows (people,
devices, counts).

Its own part because these only pass the indexes through: they read, never write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

import numpy as np

from memory.errors import NodeNotFoundError
from memory.models import NodeKind
from memory.moments import Moments
from memory.store.events import EventLog
from memory.store.packs import FusedPacks
from memory.store.plans import PlanLog
from memory.store_api import StoreStats


class SearchIndexes(EventLog, FusedPacks, PlanLog):
    """Reads the indexes for search, and the store's counts."""

    # --- indexes ----------------------------------------------------------------------

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text], False)[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), False)

    def vector(self, node_id: str) -> np.ndarray:
        """The node's unit vector (a copy: the index's own row is never handed out)."""
        vector = self._vectors.get(node_id)
        if vector is None:
            raise NodeNotFoundError(node_id)
        return vector.copy()

    def vectors(self, node_ids: Sequence[str]) -> np.ndarray:
        """Stacked unit vectors of node_ids, one row each, in order (a copy)."""
        if not node_ids:
            return np.zeros((0, 0))
        rows = self._vectors.take(node_ids)
        if rows is None:  # one has no vector: the error names it
            return np.stack([self.vector(i) for i in node_ids])
        return rows

    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        """Nearest nodes by cosine, best first. `between` keeps events inside the window and
        fused nodes whose [start, end] overlaps it."""
        return self._vectors.search(query_vector, n, kind, between)

    def moments(self) -> Moments:
        """The dialogue turns' moments (`memory.moments`), built once per generation of the
        store: the first search after a write builds them (embedding only new moments)."""
        generation = self.generation
        held = self._moments
        if held is not None and held[0] == generation:
            return held[1]
        with self._db.lock:
            held = self._moments
            if held is not None and held[0] == generation:
                return held[1]
            turns = self.get_events(sorted(self._dialogue))
            visibility = self._visibility  # every stored event's, kept beside it
            built = self._moment_builder.build(turns, visibility.__getitem__, self.vectors)
            self._moments = (generation, built)
            return built

    def moment_search(
        self, query_vector: np.ndarray, n: int, as_of: datetime | None = None
    ) -> list[tuple[str, float]]:
        """The `n` best events read by their moments (`memory.moments`): a turn that has a
        moment scored by its moments, any other event by its cosine, best first, ties by id;
        as a reader at `as_of` reads them (events and moments after it left out). Empty
        when the store holds no moment."""
        moments = self.moments()
        if not len(moments):
            return []
        vector = np.asarray(query_vector)
        scores = dict(moments.top(vector, n, as_of))
        if len(moments) < len(self._events):  # events without a moment: their own cosine
            # at most len(moments) of the plain hits are turns with one: one search is enough
            between = None if as_of is None else (datetime.min, as_of)
            hits = self.dense_search(vector, n + len(moments), NodeKind.EVENT, between)
            scores |= {i: s for i, s in hits if i not in moments.rows}
        return sorted(scores.items(), key=lambda hit: (-hit[1], hit[0]))[:n]

    def moment_cosines(
        self, query_vectors: np.ndarray, node_ids: Sequence[str]
    ) -> dict[str, float]:
        """Moment scores of those of `node_ids` that have a moment (best over the queries)."""
        return self.moments().cosines(np.asarray(query_vectors), node_ids, None)

    def prime_dense_search(
        self, query_vectors: np.ndarray, windows: Sequence[tuple[datetime, datetime] | None]
    ) -> int:
        """Announce `dense_search` calls to come with these query vectors over these windows:
        their rows are scored in one pass now (`VectorIndex.prime`), and the searches answer
        exactly as they would have. Returns the rows scored (0: nothing held)."""
        return self._vectors.prime(query_vectors, windows)

    def lexical_search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        """BM25L over the same texts; only positive scores, best first; `between` keeps the
        nodes whose time span meets it (scores stay those of the whole memory); with
        `common_share`, a node sharing only common tokens with the query is no hit
        (`LexicalIndex.search`)."""
        return self._lexical.search(query, n, kind, between, common_share)

    def event_centroid(self) -> np.ndarray | None:
        """The mean vector of the stored events (None without events)."""
        return self._vectors.event_centroid()

    def common_terms(self, text: str, share: float) -> list[str]:
        """The lexical index's tokens of `text` found in more than `share` of its records."""
        return self._lexical.common(text, share)

    def term_rarity(self, text: str) -> dict[str, float]:
        """The lexical index's idf of each token of `text` (higher: rarer in this memory)."""
        return self._lexical.rarity(text)

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        """Event ids with start <= timestamp <= end, in time order."""
        return self._temporal.between(start, end)

    def device_events_between(self, device: str, start: datetime, end: datetime) -> list[str]:
        """`events_between` for one device's events, in time order, without reading any."""
        return self._temporal.device_between(device, start, end)

    def event_keys(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        """`events_between` with each event's time: (timestamp, id), in time order."""
        return self._temporal.keys_between(start, end)

    def first_named(
        self, admitted: Callable[[str], bool]
    ) -> tuple[dict[str, datetime], dict[str, datetime]]:
        """When each person and each device is first named by an event `admitted` accepts
        (by id), without reading any event: a reader's view of who and what it may know.
        Under the store's lock: the per-name lists are walked, and a writer may add a name."""
        with self._db.lock:
            return self._temporal.first_named(admitted)

    def count_events_between(self, start: datetime, end: datetime) -> int:
        """How many events lie in [start, end] (the temporal index, without building a list)."""
        return self._temporal.count_between(start, end)

    def nth_latest_time(self, end: datetime, n: int) -> datetime | None:
        """The timestamp of the n-th latest event at or before `end` (one bisection)."""
        return self._temporal.nth_latest(end, n)

    def adjacent_events(
        self, event_id: str, radius: int, by: Literal["device", "person"]
    ) -> list[str]:
        """Up to `radius` events before and after, on the same device (or sharing a person)."""
        return self._temporal.adjacent(self.get_event(event_id), radius, by)

    # --- what the store knows ---------------------------------------------------------

    def known_people(self) -> set[str]:
        return set(self._people)

    def known_devices(self) -> set[str]:
        return set(self._devices)

    def stats(self) -> StoreStats:
        with self._db.lock:
            sizes = [len(node.members) for node in self._fused.values()]
            return StoreStats(
                events=len(self._events),
                fused_nodes=len(self._fused),
                mean_members=sum(sizes) / len(sizes) if sizes else 0.0,
                edges=self.edge_counts(),
                devices=len(self._devices),
                people=len(self._people),
                first_event=self._temporal.first(),
                last_event=self._temporal.last(),
                pending_plans=self.plan_counts()["pending"],
                pending_fusion=self._db.execute("SELECT COUNT(*) FROM pending_fusion").fetchone()[
                    0
                ],
            )
