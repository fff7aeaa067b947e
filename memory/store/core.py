"""The store's state: the in-memory indexes read from the database, kept in step with it
(`refresh`, the vector reconciliation of opening), closing, and the helpers every job shares.

Its own part because every other part works on this state: they are mixins over `StoreCore`.
"""

from __future__ import annotations

import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self

import numpy as np

from memory.backends.base import BaseDatabase
from memory.edge_store import EdgeStore
from memory.embeddings import CachedEmbedder, Embedder, l2_normalise, uncached
from memory.errors import ConfigurationError
from memory.event_table import EventTable
from memory.lexical_index import BM25Params, LexicalIndex
from memory.models import Event, FusedNode, Modality, NodeKind
from memory.moments import MomentBuilder, Moments
from memory.temporal_index import TemporalIndex
from memory.vector_index import VectorIndex
from memory.visibility import derive as derive_visibility

_EMBED_CHUNK = 256  # texts per embedder call when a progress bar is shown


class StoreCore:
    """The state every part of `MemoryStore` works on, and its lifecycle."""

    def __init__(
        self,
        *,
        data_dir: Path,
        namespace: str,
        db: BaseDatabase,
        embedder: Embedder,
        owns_embedder: bool,
        vectors: VectorIndex,
        bm25: BM25Params | None = None,
    ):
        self.data_dir = data_dir
        self.namespace = namespace
        self.embedder = embedder
        self._owns_embedder = owns_embedder
        self._db = db
        self._vectors = vectors
        self._events = EventTable()
        self._fingerprints: dict[str, str] = {}
        self._fused: dict[str, FusedNode] = {}
        # Values are interned: a million events share a few audiences, not a string each.
        self._visibility: dict[str, str] = {}
        self._people: Counter[str] = Counter()
        self._devices: Counter[str] = Counter()
        self._dialogue: set[str] = set()  # the dialogue turns: what `moments()` pairs
        self._moments: tuple[tuple[int, int], Moments] | None = None
        self._moment_builder = MomentBuilder(uncached(embedder).embed)
        self._bm25 = bm25
        self._lexical = LexicalIndex(bm25)
        self._temporal = TemporalIndex()
        self._closed = False
        self._logged_plans: dict[str, tuple[str | None, int]] = {}
        """Plan id → (event id, operation count) of plans this store logged and has not marked
        yet: their audit entry is queued from here, without reading back and parsing the
        logged payload (a fused node's full member list) once more for every plan."""
        self.open_repairs: dict[str, int] = {}
        """What opening had to repair in Chroma: deleted / embedded / retagged node counts."""
        self._seen_version = db.data_version()
        self._loads = 0
        self._load()
        self._edges = EdgeStore(db, self._kind_of)

    # --- loading and keeping in step with the database ---------------------------------

    def _load(self) -> None:
        """Read events and fused nodes into fresh in-memory indexes, then put them in place
        together (a search running meanwhile sees the old state or the new, never a mix of
        the containers)."""
        events = EventTable()
        fingerprints: dict[str, str] = {}
        fused: dict[str, FusedNode] = {}
        people: Counter[str] = Counter()
        devices: Counter[str] = Counter()
        dialogue: set[str] = set()
        lexical, temporal = LexicalIndex(self._bm25), TemporalIndex()
        visibility = self._stored_visibility()
        rows = self._db.execute("SELECT fingerprint, body FROM events ORDER BY ts, event_id")
        for fingerprint, body in rows:
            event = Event.model_validate_json(body)
            events.add(event, body)
            fingerprints[event.event_id] = fingerprint
            devices[event.device] += 1
            people.update(set(event.characters))
            if event.modality == Modality.DIALOGUE:
                dialogue.add(event.event_id)
            temporal.add(event)
            lexical.add(
                event.event_id,
                event.index_text(),
                NodeKind.EVENT,
                (event.timestamp, event.timestamp),
            )
            if event.event_id not in visibility:
                visibility[event.event_id] = sys.intern(derive_visibility(event))
        for (body,) in self._db.execute("SELECT body FROM fused_nodes ORDER BY node_id"):
            node = FusedNode.model_validate_json(body)
            fused[node.node_id] = node
            lexical.add(node.node_id, node.index_text(), NodeKind.FUSED, (node.start, node.end))
        self._events, self._fingerprints, self._fused = events, fingerprints, fused
        self._visibility = {i: visibility[i] for i in events}
        self._people, self._devices, self._dialogue = people, devices, dialogue
        self._lexical, self._temporal = lexical, temporal
        self._loads += 1

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever what the store holds may have: after every write transaction
        (committed or rolled back: a rollback puts back what a reader may have seen changed)
        and every reload. A reader may keep what it derived from the store while this stays
        the same (`memory.access` keeps each requester's names so)."""
        return self._db.transactions_ended, self._loads

    def _stored_visibility(self) -> dict[str, str]:
        try:
            rows = self._db.execute("SELECT event_id, visibility FROM event_visibility")
        except sqlite3.OperationalError:  # a store made before visibility, opened read-only
            return {}
        return {event_id: sys.intern(value) for event_id, value in rows}

    def refresh(self) -> bool:
        """Catch up with what other processes committed since this store last looked: a CLI
        ingest while `langgraph dev` serves the same data dir, say. Costs one PRAGMA when
        nothing changed, so every search and every retrieval run may call it first; after a
        change, events, packs and edges are re-read in one read transaction (a consistent
        snapshot of the writer's committed state); the vector table keeps what it holds and
        embeds new or changed nodes here, in memory only, through the shared embedding cache
        (an embedded Chroma client in another process serves stale segments, so Chroma is
        not read). Returns whether anything was reloaded."""
        version = self._db.data_version()
        if version == self._seen_version:
            return False
        with self._db.lock:
            if self._db.in_transaction:  # our own write in progress: nothing foreign to see
                return False
            with self._db.snapshot():  # a read transaction, no write lock taken
                self._load()
                self._edges.reload()
            self._seen_version = version
            expected = self._expected_vectors()
        self._vectors.reload_mirror(expected, lambda texts: self._embed(texts, False))
        return True

    def _expected_vectors(self) -> dict[str, tuple[NodeKind, datetime, datetime, str]]:
        """Node → (kind, start, end, indexed text): what the vector table must hold."""
        expected: dict[str, tuple[NodeKind, datetime, datetime, str]] = {
            e.event_id: (NodeKind.EVENT, e.timestamp, e.timestamp, e.index_text())
            for e in self._events.scan()
        }
        for node in self._fused.values():
            expected[node.node_id] = (NodeKind.FUSED, node.start, node.end, node.index_text())
        return expected

    def _reconcile_vectors(self) -> dict[str, int]:
        return self._vectors.reconcile(
            self._expected_vectors(), lambda texts: self._embed(texts, False)
        )

    # --- read-only, flushing, closing, transactions -----------------------------------

    @property
    def read_only(self) -> bool:
        """Opened from a data dir we may not write: reads work, writes are refused."""
        return self._db.read_only

    @property
    def collection_name(self) -> str:
        """This store's own Chroma collection (`memfuse-<namespace>-<store id>`)."""
        return self._vectors.collection_name

    def flush(self) -> None:
        """Write buffered vectors to Chroma now (also done on close and every few hundred)."""
        self._vectors.flush()

    def settle(self) -> None:
        """The end of a write call: buffered vectors go to Chroma now where other processes
        read it (a server), else with the next full buffer or the close (`VectorIndex.settle`)."""
        self._vectors.settle()

    def close(self) -> None:
        if self._closed:
            return
        with self._db.lock:
            self._closed = True
            try:
                self._vectors.close()
            finally:
                self._db.close()
                if self._owns_embedder and isinstance(self.embedder, CachedEmbedder):
                    self.embedder.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """Group writes (put_fused, delete_fused, add_edge, plan-log marks) into one atomic
        commit; an exception inside undoes all of them, in SQLite and in memory."""
        with self._db.transaction():
            yield self

    @contextmanager
    def grouped_writes(self) -> Iterator[Self]:
        """Many write transactions under one commit, each still atomic and rolled back alone
        when it fails (`BaseDatabase.grouped`): a bulk fusion's plans. A crash inside loses
        the whole group, so only redoable work belongs in one."""
        with self._db.grouped():
            yield self

    # --- helpers ----------------------------------------------------------------------

    def _kind_of(self, node_id: str) -> NodeKind | None:
        if node_id in self._events:
            return NodeKind.EVENT
        if node_id in self._fused:
            return NodeKind.FUSED
        return None

    def _count_sources(self, event: Event, sign: int) -> None:
        if event.modality == Modality.DIALOGUE:
            if sign > 0:
                self._dialogue.add(event.event_id)
            else:
                self._dialogue.discard(event.event_id)
        self._devices[event.device] += sign
        for person in set(event.characters):
            self._people[person] += sign
        if sign < 0:
            self._devices += Counter()  # drop zero counts
            self._people += Counter()

    def _embed(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        """Embed in one call, or in chunks under a tqdm bar; check the embedder's contract."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if progress:
            from tqdm.auto import tqdm

            parts = []
            with tqdm(total=len(texts), desc="embedding", unit="text") as bar:
                for start in range(0, len(texts), _EMBED_CHUNK):
                    chunk = texts[start : start + _EMBED_CHUNK]
                    parts.append(self.embedder.embed(chunk))
                    bar.update(len(chunk))
            vectors = np.concatenate(parts)
        else:
            vectors = self.embedder.embed(texts)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ConfigurationError(
                f"embedder {self.embedder.model_id!r} returned shape {vectors.shape} "
                f"for {len(texts)} texts"
            )
        return l2_normalise(vectors)  # cheap insurance: cosine = dot product everywhere
