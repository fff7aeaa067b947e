"""Opening a data dir: the namespace and the data dir checked, the database opened through its
backend (`memory.backends`: the SQLite file or a PostgreSQL schema) and its schema made, a
second embedding model or orphaned vectors refused, the vector index opened through its
vector backend (embedded Chroma or a server), and the vectors reconciled.

Its own part because it runs once, before there is a store, from the data dir alone.
"""

from __future__ import annotations

import errno
import os
import re
import uuid
from pathlib import Path
from typing import Self

from memory.audit_outbox import OUTBOX_SCHEMA
from memory.backends import backend_for
from memory.backends.base import BaseDatabase
from memory.backends.vectors import VectorBackend, vector_backend_for
from memory.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingConfig,
    embedding_cache,
    make_embedder,
)
from memory.errors import ConfigurationError, DataDirError, storage_fault
from memory.lexical_index import BM25Params
from memory.store.core import StoreCore
from memory.vector_index import VectorIndexConfig

_NAMESPACE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?")
_SCHEMA_VERSION = "1"

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
    # the plans still pending, which every ingest replays first (`pending_plans`): without it
    # that look scanned the whole log, a cost per streamed event growing with the memory
    # (`memfuse bench-perf --mode fused --stream` on a large store)
    "CREATE INDEX IF NOT EXISTS plan_log_pending ON plan_log (status) WHERE status = 'pending'",
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


def prepare_data_dir(data_dir: Path) -> bool:
    """Make sure `data_dir` is a directory (creating it if missing); True if it is writable.

    A data dir we may not write is opened for reading only (see `MemoryStore.open`); what
    cannot be a data dir at all (a file, a path through a file) is a one-line error.
    """
    path = Path(data_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise DataDirError.not_a_directory(path)
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


class StoreOpening(StoreCore):
    """`MemoryStore.open` and the checks it makes before the store exists."""

    # --- opening --------------------------------------------------------------------

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
        *,
        read_only: bool | None = None,
        vectors: bool = True,
        vector_backend: VectorBackend | None = None,
    ) -> Self:
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
        log live on that PostgreSQL server, in the namespace's own schema (see
        `memory.backends`), instead of `<data_dir>/<namespace>.sqlite`; the data dir keeps
        the rest.

        `read_only` is what the caller's own `prepare_data_dir(data_dir)` found (True: the
        data dir is not writable), so that it does not run twice; None: it runs here.

        `vectors=False` opens an existing store for its counts alone (`stats`): read-only,
        without Chroma (most of a short command's start-up) and without reconciling it.

        `vector_backend`: where the vectors live, as the opener chose it from the settings
        (`memory.backends.vectors.vector_backend_of`); None: `chroma_host`/`chroma_port`.
        """
        if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
            raise ConfigurationError(
                f"namespace must be 1-63 letters, digits, '-' or '_' (starting and ending "
                f"with a letter or digit), got {namespace!r}"
            )
        if embedder is not None and embedding is not None:
            raise ConfigurationError("give either an embedder or an embedding config, not both")
        data_dir = Path(data_dir).expanduser()
        dir_read_only = not prepare_data_dir(data_dir) if read_only is None else read_only
        dir_read_only = dir_read_only or not vectors
        backend = backend_for(database_url, data_dir)
        read_only = backend.opens_read_only(namespace, dir_read_only)
        vector_backend = vector_backend or vector_backend_for(chroma_host, chroma_port, data_dir)
        owns_embedder = embedder is None
        if embedder is None:
            embedder = make_embedder(embedding or EmbeddingConfig(), embedding_cache(data_dir))
        try:
            db = backend.database(namespace, read_only)
        except BaseException:
            if owns_embedder and isinstance(embedder, CachedEmbedder):
                embedder.close()
            raise
        try:
            if not read_only:
                for statement in _SCHEMA:
                    db.execute(statement)
            store_id, created = cls._check_meta(db, embedder)
            if created:
                vector_backend.refuse_orphans(db, namespace)
            index = (
                vector_backend.open(namespace, store_id, vector_config, read_only)
                if vectors
                else vector_backend.unopened(vector_config)
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
                vectors=index,
                bm25=bm25,
            )
            if vectors:
                store.open_repairs = store._reconcile_vectors()
        except BaseException as exc:
            index.close(flush=False)
            db.close()
            if owns_embedder and isinstance(embedder, CachedEmbedder):
                embedder.close()
            if fault := db.fault(exc):
                raise fault from exc  # e.g. a page of the file is garbage: names the file
            raise
        return store

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
