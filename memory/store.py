"""MemoryStore: the persistent dual-layer memory (events, fused nodes, typed edges, indexes).

Layout of a data directory:

    <data_dir>/<namespace>.sqlite   events, fused nodes, edges, plan log (the source of truth)
    <data_dir>/chroma/              embedded Chroma (absent when a Chroma server is used)
    <data_dir>/embeddings.sqlite    embedding cache (default embedder)

With a database URL (MEMFUSE_DATABASE_URL) the first line is the namespace's schema on a
PostgreSQL server instead (`memory.pg`); everything below says SQLite for either backend.

SQLite is authoritative; everything else is derived from it on open: BM25L and the
temporal index are rebuilt, and the dense index is reconciled with Chroma (missing or
stale vectors are re-embedded through the cache, orphans dropped). So a crash between
the SQLite commit and a Chroma write loses nothing.

Every write validates first and writes second, inside one `Database` transaction whose
undo log also restores the in-memory indexes: a failure leaves nothing half-written.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
import sys
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import numpy as np
from pydantic import BaseModel

from memory import audit_outbox
from memory.audit_outbox import ANCHOR_KEY, OUTBOX_SCHEMA, QueuedEntry
from memory.edge_store import BaseDatabase, Database, EdgeStore, sqlite_writable
from memory.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingConfig,
    l2_normalise,
    make_embedder,
)
from memory.errors import (
    ConfigurationError,
    DataDirError,
    EventConflictError,
    InvalidEdgeError,
    InvalidEventError,
    InvalidFusedNodeError,
    NodeNotFoundError,
    storage_fault,
)
from memory.event_table import EventTable
from memory.lexical_index import BM25Params, LexicalIndex
from memory.models import (
    FUSED_PREFIX,
    Edge,
    EdgeType,
    Event,
    FusedNode,
    NodeKind,
    format_timestamp,
    is_fused_id,
)
from memory.store_api import AddReport, PlanStatus, StoreStats
from memory.temporal_index import TemporalIndex
from memory.vector_index import (
    IndexedVector,
    VectorIndex,
    VectorIndexConfig,
    acquire_chroma_client,
    collection_prefix,
    release_chroma_client,
)
from memory.visibility import derive as derive_visibility

_PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "done", "rejected")
_NAMESPACE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?")
_SCHEMA_VERSION = "1"
_EMBED_CHUNK = 256  # texts per embedder call when a progress bar is shown

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    (
        "CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, ts TEXT NOT NULL, "
        "fingerprint TEXT NOT NULL, body TEXT NOT NULL)"
    ),
    "CREATE INDEX IF NOT EXISTS events_ts ON events (ts, event_id)",
    "CREATE TABLE IF NOT EXISTS fused_nodes (node_id TEXT PRIMARY KEY, body TEXT NOT NULL)",
    (
        "CREATE TABLE IF NOT EXISTS plan_log (plan_id TEXT PRIMARY KEY, event_id TEXT, "
        "payload TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('pending', 'done', "
        "'rejected')), reason TEXT, created_at TEXT NOT NULL)"
    ),
    # an event's earlier attempts, counted for every new plan id (see `plan_attempts`)
    "CREATE INDEX IF NOT EXISTS plan_log_event ON plan_log (event_id)",
    # Stored by a fused ingest but not fused yet: written in the same transaction as the event,
    # removed once its fusion finished, so a crash, a full disk or an LLM outage leaves work
    # that the next ingest (or `memfuse fuse --pending`) picks up, never a silent gap.
    (
        "CREATE TABLE IF NOT EXISTS pending_fusion (event_id TEXT PRIMARY KEY, "
        "ts TEXT NOT NULL, reason TEXT)"
    ),
    # Who may see each event (see memory.visibility): beside the immutable event, since a
    # household may change it. An event without a row (a store made before visibility
    # existed) gets the default derivation when loaded.
    (
        "CREATE TABLE IF NOT EXISTS event_visibility (event_id TEXT PRIMARY KEY, "
        "visibility TEXT NOT NULL)"
    ),
    # The audit log's entries, queued in the transaction of the change each records and
    # delivered to the log after it commits (see memory.audit_outbox).
    OUTBOX_SCHEMA,
)
# Written in the SQL both backends run (see memory.pg.translate): an upsert, not OR REPLACE.
_SET_VISIBILITY = (
    "INSERT INTO event_visibility (event_id, visibility) VALUES (?, ?) "
    "ON CONFLICT (event_id) DO UPDATE SET visibility = excluded.visibility"
)


def _copy_fused(node: FusedNode) -> FusedNode:
    """A copy the caller may change: its lists fresh, the immutable rest shared (a deep copy
    cost ~0.3 ms, and fusion reads thousands of packs per household)."""
    return node.model_copy(
        update={
            "members": list(node.members),
            "subjects": list(node.subjects),
            "devices": list(node.devices),
        }
    )


def prepare_data_dir(data_dir: Path) -> bool:
    """Make sure `data_dir` is a directory (creating it if missing); True if it is writable.

    A data dir we may not write is opened for reading only (see `MemoryStore.open`); what
    cannot be a data dir at all (a file, a path through a file) is a one-line error.
    """
    path = Path(data_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise DataDirError(
            path,
            "not a directory",
            f"data dir {path} is a file, not a directory; point it at a folder",
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            why = (exc.strerror or "permission denied").lower()
            raise DataDirError(
                path, why, f"data dir {path} does not exist and cannot be created ({why})"
            ) from exc
        raise storage_fault(exc, path) or DataDirError(path, str(exc)) from exc
    return os.access(path, os.W_OK)


class _MemoryOnlyCollection:
    """Stands in for the Chroma collection of a store opened read-only: embedded Chroma cannot
    open a folder it may not write, so vectors come from the embedding cache into the
    index's in-memory table, and every query is answered exactly from there (count 0)."""

    name = "memory-only"

    def get(self, **_: Any) -> dict[str, list[Any]]:
        return {"ids": [], "embeddings": [], "metadatas": []}

    def upsert(self, **_: Any) -> None:
        """Nothing is persisted: a read-only store writes no vectors."""

    def delete(self, **_: Any) -> None:
        """Nothing is persisted: a read-only store writes no vectors."""

    def count(self) -> int:
        return 0


class MemoryStore:
    """The MemoryStoreAPI implementation. Open with `MemoryStore.open(...)`; close when done."""

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
        self._bm25 = bm25
        self._lexical = LexicalIndex(bm25)
        self._temporal = TemporalIndex()
        self._closed = False
        self.open_repairs: dict[str, int] = {}
        """What opening had to repair in Chroma: deleted / embedded / retagged node counts."""
        self._seen_version = db.data_version()
        self._load()
        self._edges = EdgeStore(db, self._kind_of)

    # --- opening and closing ----------------------------------------------------------

    @classmethod
    def open(
        cls,
        data_dir: Path,
        namespace: str = "default",
        embedder: Embedder | None = None,
        chroma_host: str | None = None,
        chroma_port: int = 8000,
        embedding: EmbeddingConfig | None = None,
        vector_config: VectorIndexConfig | None = None,
        bm25: BM25Params | None = None,
        database_url: str | None = None,
    ) -> MemoryStore:
        """Open (or create) the store in `data_dir`, restoring everything it holds.

        The embedder is `embedder` if given, else built from `embedding` (default: the bundled
        MiniLM), cached in <data_dir>/embeddings.sqlite unless the config names a cache.
        Vectors live in a Chroma collection named after the namespace and the store's id
        (`memfuse-<namespace>-<store id>`, the id kept in the SQLite file), so any number of
        data dirs can share one Chroma server (`chroma_host`) with the same namespace.

        A data dir we may not write (or a store file we may only read) is opened read-only,
        since reading must not need more rights than reading: SQLite files open read-only,
        nothing is created, and (embedded Chroma cannot open such a folder) the vectors are
        rebuilt in memory through the embedding cache; a write then fails with
        ReadOnlyDataDirError, rolled back.

        With `database_url` (a `postgresql://` URL) the events, fused nodes, edges and plan
        log live on that PostgreSQL server, in the namespace's own schema (see `memory.pg`),
        instead of `<data_dir>/<namespace>.sqlite`; the data dir keeps the rest.
        """
        if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
            raise ConfigurationError(
                f"namespace must be 1-63 letters, digits, '-' or '_' (starting and ending "
                f"with a letter or digit), got {namespace!r}"
            )
        if embedder is not None and embedding is not None:
            raise ConfigurationError("give either an embedder or an embedding config, not both")
        data_dir = Path(data_dir).expanduser()
        read_only = not prepare_data_dir(data_dir)
        db_path = data_dir / f"{namespace}.sqlite"
        read_only = read_only or (not database_url and not sqlite_writable(db_path))
        if read_only and not database_url and not db_path.is_file():
            raise DataDirError(
                data_dir,
                "read-only, no store",
                f"data dir {data_dir} is read-only "
                f"and holds no store {namespace!r}, so none can be made there",
            )
        owns_embedder = embedder is None
        if embedder is None:
            embedder = make_embedder(embedding or EmbeddingConfig(), data_dir / "embeddings.sqlite")
        try:
            db = cls._database(db_path, namespace, read_only, database_url)
        except BaseException:
            if owns_embedder and isinstance(embedder, CachedEmbedder):
                embedder.close()
            raise
        try:
            if not read_only:
                for statement in _SCHEMA:
                    db.execute(statement)
            store_id, created = cls._check_meta(db, embedder)
            if created and not chroma_host:
                cls._refuse_orphaned_vectors(db, data_dir / "chroma", namespace)
            if read_only and not chroma_host:  # embedded Chroma cannot even open read-only
                vectors = VectorIndex(_MemoryOnlyCollection(), vector_config)
            else:
                vectors = VectorIndex.open(
                    namespace,
                    store_id,
                    path=None if chroma_host else data_dir / "chroma",
                    host=chroma_host,
                    port=chroma_port,
                    config=vector_config,
                )
        except BaseException as exc:
            db.close()
            if owns_embedder and isinstance(embedder, CachedEmbedder):
                embedder.close()
            if fault := db.fault(exc):
                raise fault from exc
            raise
        try:
            store = cls(
                data_dir=data_dir,
                namespace=namespace,
                db=db,
                embedder=embedder,
                owns_embedder=owns_embedder,
                vectors=vectors,
                bm25=bm25,
            )
            store.open_repairs = store._reconcile_vectors()
        except BaseException as exc:
            vectors.close(flush=False)
            db.close()
            if owns_embedder and isinstance(embedder, CachedEmbedder):
                embedder.close()
            if fault := db.fault(exc):
                raise fault from exc  # e.g. a page of the file is garbage: names the file
            raise
        return store

    @staticmethod
    def _database(
        db_path: Path, namespace: str, read_only: bool, database_url: str | None
    ) -> BaseDatabase:
        """The SQLite file in the data dir, or the namespace's schema on a PostgreSQL server."""
        if not database_url:
            return Database(db_path, read_only=read_only)
        from memory.pg import PostgresDatabase, is_database_url  # psycopg: only when used

        if not is_database_url(database_url):
            raise ConfigurationError(
                "database URL must start with postgresql:// (or postgres://); unset it to keep "
                "the store in the data dir's SQLite file"
            )
        return PostgresDatabase(database_url, namespace, read_only=read_only)

    @staticmethod
    def _check_meta(db: BaseDatabase, embedder: Embedder) -> tuple[str, bool]:
        """One store, one vector space: refuse to mix vectors of two embedding models.

        Returns the store's id (made at its first open, kept in its SQLite file; it names
        the store's Chroma collection) and whether it was made just now.
        """
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        stored_model = meta.get("embedding_model")
        if stored_model is not None and stored_model != embedder.model_id:
            raise ConfigurationError(
                f"store {db.where} was built with embedding model {stored_model!r}; "
                f"it cannot be opened with {embedder.model_id!r}"
            )
        store_id = meta.get("store_id") or uuid.uuid4().hex[:16]
        if db.read_only:  # nothing can be recorded; a store without an id has no vectors yet
            return store_id, False
        with db.transaction():
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [
                    ("schema_version", _SCHEMA_VERSION),
                    ("embedding_model", embedder.model_id),
                    ("store_id", store_id),
                ],
            )
        return store_id, "store_id" not in meta

    @staticmethod
    def _refuse_orphaned_vectors(db: BaseDatabase, chroma_dir: Path, namespace: str) -> None:
        """A new SQLite file next to an embedded Chroma that already holds this namespace's
        vectors means the store's source of truth went missing: say so, never start over
        silently (the vectors alone cannot rebuild the events)."""
        has_events = db.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None
        if has_events or not chroma_dir.is_dir():
            return
        key, client = acquire_chroma_client(path=chroma_dir)
        try:
            names = [getattr(c, "name", c) for c in client.list_collections()]
            orphans = [
                n
                for n in names
                if str(n).startswith(collection_prefix(namespace)) or n == f"memfuse-{namespace}"
            ]
        finally:
            release_chroma_client(key)
        if orphans:
            where, what = db.where, "SQLite file" if db.dialect == "sqlite" else "schema"
            db.discard_new()  # the empty file this open made, not user data
            raise ConfigurationError(
                f"{where} is missing but {chroma_dir} holds vectors of namespace "
                f"{namespace!r} ({', '.join(map(str, orphans))}); restore the {what} from "
                f"a backup, or move {chroma_dir} away to start this namespace afresh"
            )

    def _load(self) -> None:
        """Read events and fused nodes into fresh in-memory indexes, then put them in place
        together (a search running meanwhile sees the old state or the new, never a mix of
        the containers)."""
        events = EventTable()
        fingerprints: dict[str, str] = {}
        fused: dict[str, FusedNode] = {}
        people: Counter[str] = Counter()
        devices: Counter[str] = Counter()
        lexical, temporal = LexicalIndex(self._bm25), TemporalIndex()
        visibility = self._stored_visibility()
        rows = self._db.execute("SELECT fingerprint, body FROM events ORDER BY ts, event_id")
        for fingerprint, body in rows:
            event = Event.model_validate_json(body)
            events.add(event, body)
            fingerprints[event.event_id] = fingerprint
            devices[event.device] += 1
            people.update(set(event.characters))
            temporal.add(event)
            lexical.add(event.event_id, event.index_text(), NodeKind.EVENT)
            if event.event_id not in visibility:
                visibility[event.event_id] = sys.intern(derive_visibility(event))
        for (body,) in self._db.execute("SELECT body FROM fused_nodes ORDER BY node_id"):
            node = FusedNode.model_validate_json(body)
            fused[node.node_id] = node
            lexical.add(node.node_id, node.index_text(), NodeKind.FUSED)
        self._events, self._fingerprints, self._fused = events, fingerprints, fused
        self._visibility = {i: visibility[i] for i in events}
        self._people, self._devices = people, devices
        self._lexical, self._temporal = lexical, temporal

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
    def transaction(self) -> Iterator[MemoryStore]:
        """Group writes (put_fused, delete_fused, add_edge, plan-log marks) into one atomic
        commit; an exception inside undoes all of them, in SQLite and in memory."""
        with self._db.transaction():
            yield self

    # --- helpers ----------------------------------------------------------------------

    def _kind_of(self, node_id: str) -> NodeKind | None:
        if node_id in self._events:
            return NodeKind.EVENT
        if node_id in self._fused:
            return NodeKind.FUSED
        return None

    def _count_sources(self, event: Event, sign: int) -> None:
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

    # --- events (immutable) -----------------------------------------------------------

    def add_events(
        self,
        events: Sequence[Event],
        progress: bool = False,
        pending: bool = False,
        visibility: Mapping[str, str] | None = None,
    ) -> AddReport:
        """Validate the whole batch, then write the new events in one transaction.

        Raises InvalidEventError (bad record, reserved id, same id twice with different
        content, a bad `visibility` field) or EventConflictError (an id stored with other
        content) before anything is written. Identical re-adds are reported as `unchanged`
        (their visibility untouched: `set_visibility` changes it). With `pending`, the new
        events are queued for fusion in the same transaction (see `pending_fusion`).
        `visibility` gives canonical visibilities by id (the caller's policy applied); an
        event it leaves out gets the default derivation.
        """
        with self._db.lock:  # validation must see the state the write will change
            return self._add_events(events, progress, pending, visibility or {})

    def check_events(self, events: Sequence[Event]) -> AddReport:
        """What `add_events` would do with this batch (added / unchanged), raising the same
        errors, and writing nothing: a caller that stores a large batch in parts checks the
        whole batch first, so a bad record at its end cannot leave its beginning written."""
        with self._db.lock:
            new, unchanged, _ = self._validated(events)
            return AddReport(added=[e.event_id for e in new], unchanged=unchanged)

    def _validated(self, events: Sequence[Event]) -> tuple[list[Event], list[str], dict[str, str]]:
        """(new events, unchanged ids, fingerprint by id) of a batch, or the first problem."""
        batch: dict[str, Event] = {}
        fingerprints: dict[str, str] = {}
        for position, event in enumerate(events, start=1):
            if not isinstance(event, Event):
                raise InvalidEventError(
                    None, "<record>", f"expected an Event, got {type(event).__name__}", position
                )
            event_id = event.event_id
            if is_fused_id(event_id):
                raise InvalidEventError(
                    event_id,
                    "event_id",
                    f"must not start with {FUSED_PREFIX!r} (reserved for fused nodes)",
                    position,
                )
            fingerprint = event.fingerprint()
            if event_id in batch:
                if fingerprints[event_id] != fingerprint:
                    raise InvalidEventError(
                        event_id,
                        "event_id",
                        "duplicated in the batch with different content",
                        position,
                    )
                continue
            batch[event_id] = event
            fingerprints[event_id] = fingerprint
        new: list[Event] = []
        unchanged: list[str] = []
        for event_id, event in batch.items():
            stored = self._fingerprints.get(event_id)
            if stored is None:
                new.append(event)
            elif stored == fingerprints[event_id]:
                unchanged.append(event_id)
            else:
                raise EventConflictError(event_id, self._events[event_id].differing_fields(event))
        return new, unchanged, fingerprints

    def _add_events(
        self,
        events: Sequence[Event],
        progress: bool,
        pending: bool,
        visibility: Mapping[str, str],
    ) -> AddReport:
        new, unchanged, fingerprints = self._validated(events)
        if not new:
            return AddReport(unchanged=unchanged)
        audiences = {
            e.event_id: sys.intern(visibility.get(e.event_id) or derive_visibility(e)) for e in new
        }
        vectors = self._embed([e.index_text() for e in new], progress)
        bodies = {e.event_id: e.model_dump_json() for e in new}
        with self._db.transaction() as db:
            db.executemany(
                "INSERT INTO events (event_id, ts, fingerprint, body) VALUES (?, ?, ?, ?)",
                [
                    (
                        e.event_id,
                        e.timestamp.isoformat(),
                        fingerprints[e.event_id],
                        bodies[e.event_id],
                    )
                    for e in new
                ],
            )
            db.executemany(
                _SET_VISIBILITY,
                list(audiences.items()),
            )
            if pending:
                db.executemany(
                    "INSERT INTO pending_fusion (event_id, ts) VALUES (?, ?) "
                    "ON CONFLICT DO NOTHING",
                    [(e.event_id, e.timestamp.isoformat()) for e in new],
                )
            self._index_events(db, new, fingerprints, bodies, vectors)
            self._queue_audit(
                db,
                "ingest",
                {"stored": len(new), "unchanged": len(unchanged)},
                [e.event_id for e in new],
                {"mode": "fused" if pending else "plain"},
            )
            self._visibility.update(audiences)

            def unset() -> None:
                for event_id in audiences:
                    self._visibility.pop(event_id, None)

            db.on_rollback(unset)
            db.after_commit(self._vectors.maybe_flush)
        return AddReport(added=[e.event_id for e in new], unchanged=unchanged)

    # --- the fusion queue -----------------------------------------------------------------

    def pending_fusion(self) -> list[str]:
        """Ids of stored events still waiting for fusion, oldest first."""
        rows = self._db.execute("SELECT event_id FROM pending_fusion ORDER BY ts, event_id")
        return [row[0] for row in rows]

    def mark_fused(self, event_id: str) -> None:
        """The event's fusion finished (a plan committed, rejected, or nothing to do)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM pending_fusion WHERE event_id = ?", (event_id,))

    def note_pending(self, event_id: str, reason: str) -> None:
        """Why the event's fusion did not finish (it stays queued)."""
        with self._db.transaction() as db:
            db.execute(
                "UPDATE pending_fusion SET reason = ? WHERE event_id = ?", (reason[:500], event_id)
            )

    def pending_reasons(self) -> dict[str, str]:
        """Event id → the last failure noted for a queued event (queued ones without one
        omitted)."""
        rows = self._db.execute(
            "SELECT event_id, reason FROM pending_fusion WHERE reason IS NOT NULL"
        )
        return {event_id: reason for event_id, reason in rows}

    # --- visibility (see memory.visibility) --------------------------------------------

    def visibility_of(self, event_id: str) -> str:
        """The event's canonical visibility; NodeNotFoundError for an unknown id."""
        value = self._visibility.get(event_id)
        if value is None:
            raise NodeNotFoundError(event_id, "event")
        return value

    def visibilities(self) -> dict[str, str]:
        """Event id → visibility, for every event (a copy)."""
        with self._db.lock:
            return dict(self._visibility)

    def set_visibility(self, changes: Mapping[str, str]) -> list[str]:
        """Give events new (canonical) visibilities in one transaction; returns the ids whose
        visibility changed. Every id must be a stored event (checked before any write)."""
        with self._db.lock:
            for event_id in changes:
                self.visibility_of(event_id)
            changed = {i: sys.intern(v) for i, v in changes.items() if self._visibility[i] != v}
            if not changed:
                return []
            previous = {i: self._visibility[i] for i in changed}
            with self._db.transaction() as db:
                db.executemany(
                    _SET_VISIBILITY,
                    list(changed.items()),
                )
                values = sorted(set(changed.values()))
                self._queue_audit(
                    db,
                    "visibility",
                    {"events": len(changed)},
                    sorted(changed),
                    {"visibility": values[0] if len(values) == 1 else "several"},
                )
                self._visibility.update(changed)
                db.on_rollback(lambda: self._visibility.update(previous))
            return sorted(changed)

    # --- forgetting ---------------------------------------------------------------------

    def forget_events(self, event_ids: Sequence[str]) -> dict[str, int]:
        """Remove events from every store: their rows, visibility, queue entries, the plan-log
        records that name them (a payload quotes its events' packs), every edge touching them,
        their lexical, temporal and dense entries. Fused nodes keep listing them until the
        caller re-fuses those packs, which it does inside the same `transaction()`, so a
        forget is one atomic change. Deleted rows are zeroed (secure_delete); the caller
        then calls `scrub_forgotten`, which truncates the WAL (its old page images) and
        scrubs the vectors and the embedding cache. Returns counts."""
        with self._db.lock:
            ids = list(dict.fromkeys(event_ids))
            events = [self.get_event(i) for i in ids]  # every id known before any write
            counts = {"events": len(ids), "edges": 0, "plans": 0}
            with self._db.transaction() as db:
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    for table in ("events", "event_visibility", "pending_fusion"):
                        db.execute(f"DELETE FROM {table} WHERE event_id IN ({marks})", chunk)
                    counts["plans"] += db.execute(
                        f"DELETE FROM plan_log WHERE event_id IN ({marks})", chunk
                    ).rowcount
                counts["plans"] += self._forget_plans(db, set(ids))
                for event in events:
                    counts["edges"] += self._edges.remove_node(event.event_id)
                self._unindex_events(db, events)
                self._queue_audit(db, "forget", counts, ids)  # redacted once delivered
            return counts

    def _forget_plans(self, db: BaseDatabase, ids: set[str]) -> int:
        """Delete plan-log records whose payload names a forgotten id (as a JSON string)."""
        doomed = [
            plan_id
            for plan_id, payload in db.execute("SELECT plan_id, payload FROM plan_log")
            if any(f'"{i}"' in payload for i in ids)
        ]
        db.executemany("DELETE FROM plan_log WHERE plan_id = ?", [(p,) for p in doomed])
        return len(doomed)

    def _unindex_events(self, db: BaseDatabase, events: Sequence[Event]) -> None:
        """Take events out of the in-memory indexes, undone on rollback."""
        saved = [(e, self._fingerprints[e.event_id], self._visibility[e.event_id]) for e in events]

        def restore() -> None:
            for event, fingerprint, visibility in saved:
                if event.event_id not in self._events:
                    self._events.add(event)
                    self._fingerprints[event.event_id] = fingerprint
                    self._visibility[event.event_id] = visibility
                    self._count_sources(event, +1)
                    self._temporal.add(event)

        db.on_rollback(restore)
        ids = [e.event_id for e in events]
        db.on_rollback(self._vectors.delete(ids))
        for event in events:
            db.on_rollback(self._lexical.remove(event.event_id))
            del self._events[event.event_id]
            del self._fingerprints[event.event_id]
            del self._visibility[event.event_id]
            self._count_sources(event, -1)
            self._temporal.remove(event)
        db.after_commit(self._vectors.maybe_flush)

    def _index_events(
        self,
        db: BaseDatabase,
        new: list[Event],
        fingerprints: Mapping[str, str],
        bodies: Mapping[str, str],
        vectors: np.ndarray,
    ) -> None:
        """Put new events in the in-memory indexes, undone on rollback; `bodies` are their
        JSON as written to the database, kept as the event table's compact rows."""
        indexed: list[Event] = []

        def forget() -> None:  # registered first: undoes however far the loop below got
            for event in indexed:
                del self._events[event.event_id]
                del self._fingerprints[event.event_id]
                self._count_sources(event, -1)
                self._temporal.remove(event)

        db.on_rollback(forget)
        for event in new:
            self._events.add(event, bodies[event.event_id])
            self._fingerprints[event.event_id] = fingerprints[event.event_id]
            self._count_sources(event, +1)
            indexed.append(event)
            self._temporal.add(event)
        db.on_rollback(
            self._vectors.upsert(
                [
                    IndexedVector(
                        e.event_id, v, NodeKind.EVENT, e.timestamp, e.timestamp, e.index_text()
                    )
                    for e, v in zip(new, vectors, strict=True)
                ]
            )
        )
        for event in new:
            db.on_rollback(self._lexical.add(event.event_id, event.index_text(), NodeKind.EVENT))

    def has_node(self, node_id: str) -> bool:
        return node_id in self._events or node_id in self._fused

    def get_event(self, event_id: str) -> Event:
        event = self._events.get(event_id)
        if event is None:
            raise NodeNotFoundError(event_id, "event")
        return event

    def get_events(self, event_ids: Iterable[str]) -> list[Event]:
        """The events in the order asked; NodeNotFoundError on the first unknown id."""
        return [self.get_event(event_id) for event_id in event_ids]

    def all_events(self) -> list[Event]:
        """Every event, ordered by (timestamp, event_id)."""
        with self._db.lock:
            ids = self._temporal.between(datetime.min, datetime.max)
            return [self._events.decode(i) for i in ids]

    # --- fused nodes ------------------------------------------------------------------

    def get_fused(self, node_id: str) -> FusedNode:
        node = self._fused.get(node_id)
        if node is None:
            raise NodeNotFoundError(node_id, "fused node")
        return _copy_fused(node)

    def all_fused(self) -> list[FusedNode]:
        with self._db.lock:
            return [_copy_fused(self._fused[i]) for i in sorted(self._fused)]

    def fused_of(self, event_id: str) -> list[str]:
        """Fused nodes the event belongs to (sorted)."""
        return sorted(e.dst for e in self._edges.neighbors(event_id, EdgeType.BELONG))

    def _check_fused(self, node: FusedNode) -> None:
        if not is_fused_id(node.node_id):
            raise InvalidFusedNodeError(node.node_id, f"id must start with {FUSED_PREFIX!r}")
        repeated = sorted(m for m, n in Counter(node.members).items() if n > 1)
        if repeated:
            raise InvalidFusedNodeError(node.node_id, f"repeated members: {', '.join(repeated)}")
        for member in node.members:
            kind = self._kind_of(member)
            if kind is None:
                raise NodeNotFoundError(member, "event")
            if kind != NodeKind.EVENT:
                raise InvalidEdgeError(
                    member,
                    node.node_id,
                    EdgeType.BELONG.value,
                    "must go from an event to a fused node, got fused -> fused",
                )
        if node.start > node.end:
            raise InvalidFusedNodeError(node.node_id, "start is after end")

    def put_fused(self, node: FusedNode) -> None:
        """Insert or replace a fused node: re-embed its summary (unless unchanged), re-index
        it, and make its belong edges exactly its members. The caller sets `version`."""
        with self._db.lock:
            self._put_fused(node)

    def _put_fused(self, node: FusedNode) -> None:
        self._check_fused(node)
        node = node.model_copy(deep=True)
        node_id, text = node.node_id, node.index_text()
        previous = self._fused.get(node_id)
        current = self._vectors.get(node_id)
        if previous is not None and previous.index_text() == text and current is not None:
            vector = current.copy()
        else:
            vector = self._embed([text], False)[0]
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO fused_nodes (node_id, body) VALUES (?, ?) "
                "ON CONFLICT (node_id) DO UPDATE SET body = excluded.body",
                (node_id, node.model_dump_json()),
            )
            self._fused[node_id] = node
            db.on_rollback(lambda: self._restore_fused(node_id, previous))
            self._edges.set_members(node_id, node.members)
            db.on_rollback(
                self._vectors.upsert(
                    [IndexedVector(node_id, vector, NodeKind.FUSED, node.start, node.end, text)]
                )
            )
            db.on_rollback(self._lexical.add(node_id, text, NodeKind.FUSED))
            db.after_commit(self._vectors.maybe_flush)

    def _restore_fused(self, node_id: str, previous: FusedNode | None) -> None:
        if previous is None:
            self._fused.pop(node_id, None)
        else:
            self._fused[node_id] = previous

    def delete_fused(self, node_id: str) -> None:
        """Remove a fused node with its belong edges and any semantic edge touching it."""
        previous = self._fused.get(node_id)
        if previous is None:
            raise NodeNotFoundError(node_id, "fused node")
        with self._db.transaction() as db:
            db.execute("DELETE FROM fused_nodes WHERE node_id = ?", (node_id,))
            self._edges.remove_node(node_id)
            db.on_rollback(self._vectors.delete([node_id]))
            db.on_rollback(self._lexical.remove(node_id))
            del self._fused[node_id]
            db.on_rollback(lambda: self._restore_fused(node_id, previous))
            db.after_commit(self._vectors.maybe_flush)

    # --- edges ------------------------------------------------------------------------

    def check_edge(self, edge: Edge) -> None:
        """Raise InvalidEdgeError / NodeNotFoundError if add_edge would refuse `edge`."""
        if edge.type == EdgeType.BELONG:
            raise InvalidEdgeError(
                edge.src,
                edge.dst,
                edge.type.value,
                "belong edges follow fused-node membership; use put_fused",
            )
        self._edges.check(edge)

    def add_edge(self, edge: Edge) -> bool:
        """Add a causal or semantic edge; False if it already exists (semantic: either order)."""
        self.check_edge(edge)
        return self._edges.add(edge)

    def remove_edge(self, edge: Edge) -> bool:
        """Remove a causal or semantic edge (a re-fused pack's recomputed ones); False if absent."""
        if edge.type == EdgeType.BELONG:
            raise InvalidEdgeError(
                edge.src, edge.dst, edge.type.value, "belong edges follow fused-node membership"
            )
        return self._edges.remove(edge)

    def scrub_forgotten(self, texts: Sequence[str]) -> dict[str, int]:
        """After a committed forget: write the vector deletions out and scrub them from the
        vector store's files, and drop the cached embeddings of `texts` (the forgotten nodes'
        indexed texts) that no remaining node still indexes. Returns what it did."""
        with self._db.lock:
            still = {e.index_text() for e in self._events.scan()}
            still |= {n.index_text() for n in self._fused.values()}
        done: dict[str, int] = {}
        self._vectors.flush()
        done.update(self._vectors.scrub())
        if isinstance(self.embedder, CachedEmbedder):
            done["cache_entries"] = self.embedder.discard([t for t in texts if t not in still])
        done["wal_truncated"] = int(self._db.truncate_wal())
        return done

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        """Causal/belong: in the stored direction; semantic: in either order."""
        return self._edges.has(src, dst, edge_type)

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching node_id in either direction (as stored; use Edge.other)."""
        return self._edges.neighbors(node_id, edge_type)

    def edge_counts(self) -> dict[str, int]:
        return self._edges.counts()

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
        """Stacked unit vectors of node_ids, one row each, in order."""
        return np.stack([self.vector(i) for i in node_ids]) if node_ids else np.zeros((0, 0))

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

    def lexical_search(
        self, query: str, n: int, kind: NodeKind | None = None
    ) -> list[tuple[str, float]]:
        """BM25L over the same texts; only positive scores, best first."""
        return self._lexical.search(query, n, kind)

    def term_rarity(self, text: str) -> dict[str, float]:
        """The lexical index's idf of each token of `text` (higher: rarer in this memory)."""
        return self._lexical.rarity(text)

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        """Event ids with start <= timestamp <= end, in time order."""
        return self._temporal.between(start, end)

    def count_events_between(self, start: datetime, end: datetime) -> int:
        """How many events lie in [start, end] (the temporal index, without building a list)."""
        return self._temporal.count_between(start, end)

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

    # --- the audit outbox (see memory.audit_outbox) ------------------------------------

    def _queue_audit(
        self,
        db: BaseDatabase,
        op: str,
        counts: Mapping[str, int],
        ids: Sequence[str],
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue the entry of a change inside that change's transaction."""
        args = audit_outbox.entry_args(op, counts, ids, details)
        row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit_outbox").fetchone()
        delivered = (self.audit_anchor() or {}).get("outbox", 0)  # numbers never repeat
        db.execute(
            "INSERT INTO audit_outbox (seq, op, body) VALUES (?, ?, ?)",
            (max(int(row[0]), int(delivered)) + 1, op, audit_outbox.encode(args)),
        )

    def _queue_plan_audit(self, db: BaseDatabase, plan_id: str, status: PlanStatus) -> None:
        row = db.execute(
            "SELECT event_id, payload FROM plan_log WHERE plan_id = ?", (plan_id,)
        ).fetchone()
        payload = json.loads(row[1]) if row else {}
        ops = payload.get("ops", {}) if isinstance(payload, dict) else {}
        decided = audit_outbox.current().details.get("decided_by", "")
        self._queue_audit(
            db,
            "fusion_plan",
            {"ops": sum(int(n) for n in ops.values()) if isinstance(ops, dict) else 0},
            [i for i in (row[0] if row else None, plan_id) if i],
            {"status": "accepted" if status == "done" else "rejected", "decided_by": decided},
        )

    def queue_audit(
        self,
        op: str,
        counts: Mapping[str, int],
        ids: Sequence[str] = (),
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue an entry for a change the caller makes in the same `transaction()`."""
        with self._db.transaction() as db:
            self._queue_audit(db, op, counts, ids, details)

    def audit_outbox(self) -> list[QueuedEntry]:
        """Entries committed with their changes and not yet delivered to the log, in order."""
        rows = self._db.execute("SELECT seq, op, body FROM audit_outbox ORDER BY seq")
        return [audit_outbox.decode(*row) for row in rows.fetchall()]

    def ack_audit(
        self, through: int, head: Mapping[str, Any] | None, *, scrub: bool = False
    ) -> None:
        """Entries up to `through` are in the log, whose last entry is now `head` (the anchor
        `AuditLog.verify_anchored` checks the log against). `scrub`: a delivered entry named
        forgotten ids, so the WAL's old page images of its row are truncated away too."""
        anchor = {**(head or {}), "outbox": int(through)}
        with self._db.transaction() as db:
            db.execute("DELETE FROM audit_outbox WHERE seq <= ?", (int(through),))
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (ANCHOR_KEY, json.dumps(anchor, sort_keys=True)),
            )
        if scrub:
            self._db.truncate_wal()

    def audit_anchor(self) -> dict[str, Any] | None:
        """The last delivered entry's seq and hash and the outbox number it reached."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (ANCHOR_KEY,)).fetchone()
        return json.loads(row[0]) if row else None

    # --- plan log (the fusion commit's write-ahead log) --------------------------------

    def log_plan(
        self, plan_id: str, event_id: str | None, payload: Mapping[str, Any] | BaseModel
    ) -> bool:
        """Record a plan as `pending` before applying it. False if plan_id is already logged
        (the first record is kept, so a replay re-applies exactly what was logged)."""
        body = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
        created = format_timestamp(datetime.now(UTC).replace(tzinfo=None))
        with self._db.transaction() as db:
            cursor = db.execute(
                "INSERT INTO plan_log (plan_id, event_id, payload, status, reason, created_at) "
                "VALUES (?, ?, ?, 'pending', NULL, ?) ON CONFLICT DO NOTHING",
                (plan_id, event_id, json.dumps(body, sort_keys=True), created),
            )
            return cursor.rowcount == 1

    def mark_plan(self, plan_id: str, status: PlanStatus, reason: str | None = None) -> None:
        if status not in _PLAN_STATUSES:
            raise ValueError(f"expected a plan status in {_PLAN_STATUSES}, got {status!r}")
        with self._db.transaction() as db:
            cursor = db.execute(
                "UPDATE plan_log SET status = ?, reason = ? WHERE plan_id = ?",
                (status, reason, plan_id),
            )
            if cursor.rowcount == 0:
                raise NodeNotFoundError(plan_id, "plan")
            if status != "pending":  # the plan's event is fused, in the same transaction
                db.execute(
                    "DELETE FROM pending_fusion WHERE event_id = "
                    "(SELECT event_id FROM plan_log WHERE plan_id = ?)",
                    (plan_id,),
                )
                self._queue_plan_audit(db, plan_id, status)

    def pending_plans(self) -> list[tuple[str, dict[str, Any]]]:
        """(plan_id, payload) of every plan still pending, in the order they were logged."""
        rows = self._db.execute(
            "SELECT plan_id, payload FROM plan_log WHERE status = 'pending' ORDER BY rowid"
        ).fetchall()
        return [(plan_id, json.loads(payload)) for plan_id, payload in rows]

    def plan_status(self, plan_id: str) -> tuple[PlanStatus, str | None]:
        row = self._db.execute(
            "SELECT status, reason FROM plan_log WHERE plan_id = ?", (plan_id,)
        ).fetchone()
        if row is None:
            raise NodeNotFoundError(plan_id, "plan")
        return row[0], row[1]

    def plan_attempts(self, event_id: str) -> int:
        """How many plans the log holds for `event_id` (an index lookup: fusion asks this for
        every event, and counting the whole log made each event cost O(log size))."""
        row = self._db.execute("SELECT COUNT(*) FROM plan_log WHERE event_id = ?", (event_id,))
        return int(row.fetchone()[0])

    def plan_counts(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(_PLAN_STATUSES, 0)
        counts.update(self._db.execute("SELECT status, COUNT(*) FROM plan_log GROUP BY status"))
        return counts
