"""The dense index: one Chroma collection per store over events and fused summaries,
fronted by an in-memory table of the same vectors.

Chroma is the persistent (and, with a server, shareable) vector store and the ANN
index for broad queries. The in-memory table exists because the engine scores every
candidate by cosine and must never round-trip to Chroma for that; it also lets a
narrow query (a time window, only fused nodes) be answered exactly in well under a
millisecond, where a Chroma `where` filter costs tens of milliseconds on 10k nodes.
Chroma writes are buffered and flushed in batches (a single-row upsert costs ~8 ms);
vectors waiting in the buffer are still searched, exactly, from the table. The SQLite
store is the source of truth: `reconcile` repairs Chroma after a crash or an edit.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import shutil
import sqlite3
import threading
import time
import uuid
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.errors import ConfigurationError
from memory.models import NodeKind

_KIND_CODE = {NodeKind.EVENT: 1, NodeKind.FUSED: 2}
_CODE_KIND = {code: kind for kind, code in _KIND_CODE.items()}


class VectorIndexConfig(BaseModel):
    """Knobs of the dense index; the defaults keep a 10k-node store at a few ms per query."""

    model_config = ConfigDict(frozen=True)

    exact_scan_limit: int = Field(
        default=4096,
        ge=0,
        description="A query whose kind/time filter admits at most this many nodes is scored "
        "exactly in memory instead of asking Chroma.",
    )
    oversample: float = Field(
        default=2.0,
        ge=1.0,
        description="Broad filtered queries fetch n·(all/admitted)·oversample unfiltered hits "
        "and filter them in memory; Chroma's `where` is the fallback when too few pass.",
    )
    max_fetch: int = Field(default=1000, ge=1, description="Cap on one unfiltered Chroma fetch.")
    flush_every: int = Field(
        default=512, ge=1, description="Buffered Chroma writes that trigger a flush."
    )


def epoch_seconds(ts: datetime) -> float:
    """Naive household-local time as a sortable number (read as UTC; only order matters)."""
    return ts.replace(tzinfo=UTC).timestamp()


def text_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class IndexedVector:
    """One node as the dense index holds it. Events have start == end."""

    node_id: str
    vector: np.ndarray
    kind: NodeKind
    start: datetime
    end: datetime
    text: str


# --- Chroma clients: one per path (or host:port) per process, released with its last user --

_CLIENTS: dict[str, tuple[Any, int]] = {}  # key -> (client, number of open indexes using it)
_CLIENTS_LOCK = threading.Lock()


def _client_key(path: Path | None, host: str | None, port: int) -> str:
    if host:
        return f"http://{host}:{port}"
    if path is not None:
        return str(Path(path).resolve())
    raise ConfigurationError("a Chroma client needs either a data path or a host")


def acquire_chroma_client(
    path: Path | None = None, host: str | None = None, port: int = 8000
) -> tuple[str, Any]:
    """(key, client): an embedded client for `path` or an HTTP client for `host:port`.

    Chroma keeps one system per persist directory (two differently configured clients on a
    path fail), so every index on a path shares one client; each embedded client holds
    open files, so the last `release_chroma_client(key)` closes it.
    """
    import chromadb
    from chromadb.config import Settings

    key = _client_key(path, host, port)
    with _CLIENTS_LOCK:
        if key in _CLIENTS:
            client, users = _CLIENTS[key]
            _CLIENTS[key] = (client, users + 1)
            return key, client
        settings = Settings(anonymized_telemetry=False)
        try:
            if host:
                client = chromadb.HttpClient(host=host, port=port, settings=settings)
            else:
                client = chromadb.PersistentClient(path=key, settings=settings)
        except Exception as exc:  # chromadb raises assorted types for an unreachable server
            raise ConfigurationError(f"cannot open Chroma at {key}: {exc}") from exc
        _CLIENTS[key] = (client, 1)
        return key, client


def release_chroma_client(key: str) -> None:
    with _CLIENTS_LOCK:
        entry = _CLIENTS.get(key)
        if entry is None:
            return
        client, users = entry
        if users > 1:
            _CLIENTS[key] = (client, users - 1)
            return
        del _CLIENTS[key]
        close = getattr(client, "close", None)
        if callable(close):
            close()


# --- scrubbing (VectorIndex.scrub) ---------------------------------------------------------

_LIVE_INDEXES: weakref.WeakSet[VectorIndex] = weakref.WeakSet()  # the indexes with a client
_SCRUB_LOCK = threading.Lock()  # one scrub at a time: the malloc setting is process-wide
_M_PERTURB = -6  # glibc's mallopt parameter: fill allocated (~byte) and freed (byte) memory


def _rebuild_folder(key: str, batch: int) -> dict[str, int]:
    """Steps 1-4 of `VectorIndex.scrub` for the embedded client at path `key`."""
    with _CLIENTS_LOCK:
        client = _CLIENTS[key][0]
    users = [index for index in list(_LIVE_INDEXES) if index._client_key == key]
    kept = 0
    with ExitStack() as locks:
        for index in sorted(users, key=id):  # one global order: no deadlock
            locks.enter_context(index._lock)
        for index in users:
            index.flush()
        with _filled_heap() as filled:
            collections = list(client.list_collections())
            for old in collections:

                def adopt(fresh: Any, name: str = old.name) -> None:
                    count = int(fresh.count())
                    for index in users:
                        if index.collection_name == name:
                            index._col, index._chroma_count = fresh, count

                kept += _rebuild_collection(client, old, batch, adopt)
        removed = _remove_unused_segment_dirs(Path(key))
    return {
        "rebuilt": len(collections),
        "kept": kept,
        "segment_dirs_removed": removed,
        "heap_filled": int(filled),
        "indexes": len(users),
    }


def _rebuild_collection(client: Any, old: Any, batch: int, adopt: Callable[[Any], None]) -> int:
    """Delete `old` and create it again holding the same rows; `adopt` gets the new collection
    (also after a failure: never leave an index on a deleted collection — what is missing
    then, the store's reconcile puts back at the next open). Returns the number of rows."""
    rows = old.get(include=["embeddings", "metadatas", "documents"])
    ids: list[str] = rows["ids"]
    hnsw = {k: v for k, v in (old.configuration_json.get("hnsw") or {}).items() if v is not None}
    client.delete_collection(old.name)
    fresh = None
    try:
        fresh = client.create_collection(
            old.name,
            configuration={"hnsw": {**hnsw, "sync_threshold": max(1, len(ids))}},
            metadata=old.metadata or None,
            embedding_function=None,
        )
        for start in range(0, len(ids), batch):
            end = start + batch
            documents = rows["documents"][start:end] if rows["documents"] else None
            fresh.upsert(
                ids=ids[start:end],
                embeddings=rows["embeddings"][start:end],
                metadatas=rows["metadatas"][start:end],
                documents=None if documents is None or not any(documents) else documents,
            )
        with warnings.catch_warnings():  # chromadb: "legacy embedding function config"
            warnings.simplefilter("ignore", DeprecationWarning)
            restored = {"sync_threshold": int(hnsw.get("sync_threshold", 1000))}
            fresh.modify(configuration={"hnsw": restored})
    except BaseException:
        fresh = client.get_or_create_collection(
            old.name, configuration={"hnsw": hnsw}, embedding_function=None
        )
        raise
    finally:
        if fresh is not None:
            adopt(fresh)
    return len(ids)


def _remove_unused_segment_dirs(folder: Path) -> int:
    """Remove the HNSW segment folders (named by segment uuid) no vector segment uses."""
    with closing(sqlite3.connect(folder / "chroma.sqlite3")) as conn:
        used = {str(r[0]) for r in conn.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")}
    removed = 0
    for child in folder.iterdir():
        try:
            is_segment = child.is_dir() and str(uuid.UUID(child.name)) == child.name
        except ValueError:
            is_segment = False
        if is_segment and child.name not in used:
            shutil.rmtree(child)
            removed += 1
    return removed


@contextmanager
def _filled_heap() -> Iterator[bool]:
    """While the block runs, glibc fills every block malloc hands out or takes back, so
    buffers hnswlib writes without initialising hold filler, not old heap contents. Yields
    whether that is in effect (False off glibc); a process started with MALLOC_PERTURB_ or
    the glibc.malloc.perturb tunable already has it and keeps its setting."""
    preset = os.environ.get("MALLOC_PERTURB_", "").lstrip("0")  # "0" leaves it off
    if preset or "glibc.malloc.perturb" in os.environ.get("GLIBC_TUNABLES", ""):
        yield True
        return
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            raise ValueError("not glibc")
        libc = ctypes.CDLL(None)
        libc.malloc_trim(0)  # hand free heap pages back: they come back zeroed
        filled = libc.mallopt(_M_PERTURB, 0x5A) == 1
    except (AttributeError, OSError, ValueError):
        filled = False
    try:
        yield filled
    finally:
        if filled:
            libc.mallopt(_M_PERTURB, 0)


def _vacuum(path: Path) -> None:
    """Rewrite the SQLite file at `path` without its freed pages (deleted rows' bytes)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("VACUUM")
    finally:
        conn.close()


def collection_name(namespace: str, store_id: str) -> str:
    """One collection per store: the namespace for people, the store id for safety — two
    data dirs with the same namespace on one Chroma server never share (or erase) vectors."""
    return f"memfuse-{namespace}-{store_id}"


def collection_prefix(namespace: str) -> str:
    return f"memfuse-{namespace}-"


class VectorIndex:
    """Dense search over events and fused nodes (see the module docstring for the design)."""

    def __init__(
        self,
        collection: Any,
        config: VectorIndexConfig | None = None,
        max_batch: int = 1000,
        client_key: str | None = None,
    ):
        self._col = collection
        self._client_key = client_key
        self.config = config or VectorIndexConfig()
        self._max_batch = max(1, min(5000, max_batch))
        self._lock = threading.RLock()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._kind = np.zeros(0, dtype=np.int8)
        self._start = np.zeros(0, dtype=np.float64)
        self._end = np.zeros(0, dtype=np.float64)
        self._text_fp: dict[str, str] = {}
        self._pending: dict[str, Literal["upsert", "delete"]] = {}
        # pending nodes Chroma has never held: no row of theirs can be stale there, so a
        # query need not fetch extra rows for them (a fused ingest buffers hundreds)
        self._not_in_chroma: set[str] = set()
        self._chroma_count = 0
        if client_key is not None:
            _LIVE_INDEXES.add(self)  # so that a scrub can re-point every user of its collection

    @classmethod
    def open(
        cls,
        namespace: str,
        store_id: str,
        path: Path | None = None,
        host: str | None = None,
        port: int = 8000,
        config: VectorIndexConfig | None = None,
    ) -> VectorIndex:
        key, client = acquire_chroma_client(path=path, host=host, port=port)
        try:
            collection = client.get_or_create_collection(
                collection_name(namespace, store_id),
                # Inner product, not cosine: our vectors are unit length, so the ranking is
                # the same, and Chroma gives back exactly the floats it was given (its cosine
                # space re-normalises in float32, so a reopen loaded some vectors an ulp
                # away and broke exact ties). A collection made before keeps its space.
                configuration={"hnsw": {"space": "ip"}},
                embedding_function=None,  # we always pass our own vectors
            )
            try:
                max_batch = int(client.get_max_batch_size())
            except Exception:  # noqa: BLE001 - a server without the pre-flight endpoint
                max_batch = 1000
        except BaseException:
            release_chroma_client(key)
            raise
        return cls(collection, config, max_batch, client_key=key)

    @property
    def collection_name(self) -> str:
        return str(self._col.name)

    def close(self, flush: bool = True) -> None:
        """Flush buffered writes (unless told not to, after a failure) and release the Chroma
        client, which closes with its last user."""
        with self._lock:
            try:
                if flush:
                    self.flush()
            finally:
                if self._client_key is not None:
                    release_chroma_client(self._client_key)
                    self._client_key = None

    # --- the in-memory table ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._slot_of

    def get(self, node_id: str) -> np.ndarray | None:
        slot = self._slot_of.get(node_id)
        return None if slot is None else self._matrix[slot]

    def _grow(self, dim: int) -> None:
        if len(self._ids) < self._matrix.shape[0]:
            return
        capacity = max(1024, 2 * self._matrix.shape[0])
        matrix = np.zeros((capacity, dim), dtype=np.float32)
        if self._matrix.shape[1] == dim:
            matrix[: self._matrix.shape[0]] = self._matrix
        self._matrix = matrix
        for name in ("_kind", "_start", "_end"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)

    def _put(
        self, node_id: str, vector: np.ndarray, kind: int, start: float, end: float, text_fp: str
    ) -> None:
        if self._matrix.shape[1] not in (0, vector.shape[0]):
            raise ConfigurationError(
                f"vector of {node_id!r} has dimension {vector.shape[0]}, "
                f"the index {self._matrix.shape[1]} (was the embedding model changed?)"
            )
        slot = self._slot_of.get(node_id)
        if slot is None:
            if self._free:
                slot = self._free.pop()
                self._ids[slot] = node_id
            else:
                self._grow(vector.shape[0])
                slot = len(self._ids)
                self._ids.append(node_id)
            self._slot_of[node_id] = slot
        self._matrix[slot] = vector
        self._kind[slot] = kind
        self._start[slot] = start
        self._end[slot] = end
        self._text_fp[node_id] = text_fp

    def _drop(self, node_id: str) -> None:
        slot = self._slot_of.pop(node_id)
        self._ids[slot] = None
        self._kind[slot] = 0
        self._free.append(slot)
        self._text_fp.pop(node_id, None)

    def _snapshot(self, node_id: str) -> tuple[Any, ...] | None:
        slot = self._slot_of.get(node_id)
        if slot is None:
            return None
        return (
            self._matrix[slot].copy(),
            int(self._kind[slot]),
            float(self._start[slot]),
            float(self._end[slot]),
            self._text_fp[node_id],
        )

    def _restorer(self, node_ids: Sequence[str]) -> Callable[[], None]:
        """Capture the current state of node_ids; the returned function puts it back."""
        before = {i: self._snapshot(i) for i in node_ids}
        pending_before = {i: self._pending.get(i) for i in node_ids}
        outside_before = {i for i in node_ids if i in self._not_in_chroma}

        def restore() -> None:
            with self._lock:
                for node_id, state in before.items():
                    if state is None:
                        if node_id in self._slot_of:
                            self._drop(node_id)
                    else:
                        self._put(node_id, *state)
                    previous = pending_before[node_id]
                    if previous is None:
                        self._pending.pop(node_id, None)
                    else:
                        self._pending[node_id] = previous
                    if node_id in outside_before:
                        self._not_in_chroma.add(node_id)
                    else:
                        self._not_in_chroma.discard(node_id)

        return restore

    # --- writes -----------------------------------------------------------------------

    def upsert(self, items: Sequence[IndexedVector]) -> Callable[[], None]:
        """Insert or replace nodes now (searchable at once); Chroma follows on flush.

        Returns a function that undoes exactly this call (for a rolled-back transaction).
        """
        with self._lock:
            undo = self._restorer([item.node_id for item in items])
            try:
                for item in items:
                    if item.node_id not in self._slot_of and item.node_id not in self._pending:
                        self._not_in_chroma.add(item.node_id)  # brand new since the last flush
                    vector = np.asarray(item.vector, dtype=np.float32).reshape(-1)
                    self._put(
                        item.node_id,
                        vector,
                        _KIND_CODE[item.kind],
                        epoch_seconds(item.start),
                        epoch_seconds(item.end),
                        text_fingerprint(item.text),
                    )
                    self._pending[item.node_id] = "upsert"
            except BaseException:
                undo()  # all of the call or none of it
                raise
            return undo

    def delete(self, node_ids: Sequence[str]) -> Callable[[], None]:
        with self._lock:
            present = [i for i in node_ids if i in self._slot_of]
            undo = self._restorer(present)
            for node_id in present:
                self._drop(node_id)
                self._pending[node_id] = "delete"
            return undo

    @property
    def pending(self) -> int:
        return len(self._pending)

    def scrub(self) -> dict[str, int]:
        """Leave nothing of deleted nodes in Chroma's files; call after `delete(...)` + `flush()`.

        Embedded Chroma (1.5) keeps a deleted node's id, metadata (text_sha) and vector on disk:
        in its write-ahead log (the `embeddings_queue` table, purged only once the HNSW segment
        has persisted past the entry, i.e. after `sync_threshold` = 1000 writes), in freed
        pages of chroma.sqlite3 (no secure_delete), as a tombstone in the HNSW files
        (data_level0.bin keeps a deleted element's vector; index_metadata.pickle keeps its id
        until the next persist), and as stray heap bytes: hnswlib writes buffers it never
        initialised (the unused slots of data_level0.bin, length.bin), so any collection whose
        index this process created or grew while the node was in memory — of any namespace
        in the folder — can hold its id, text_sha or vector. No Chroma call purges these,
        so every collection of the folder is rebuilt:

        1. every index of this process on the client is flushed and locked;
        2. each collection's rows are read back (bit-exact: inner-product space returns the
           floats it was given), the collection is deleted (which empties its log rows) and
           created again with the same name, metadata and HNSW settings, then refilled. Its
           sync_threshold is set to the row count for the refill, so the new HNSW segment is
           persisted (and the refill's log purged) at once, then put back: otherwise the next
           open in this process would re-create the segment files from process memory;
        3. on glibc, malloc is told (mallopt M_PERTURB) to fill what it hands out and takes
           back while this runs, so the new files get filler, not heap leftovers (reported as
           "heap_filled"; elsewhere 0, and the new files may hold such leftovers);
        4. segment folders no collection uses any more (Chroma leaves them behind) are removed;
        5. chroma.sqlite3 is VACUUMed through a separate connection, which drops the freed
           pages; the client stays open (Chroma's idle connections do not block it).

        Indexes of this process on the client are re-pointed to their rebuilt collections and
        keep working. An embedded client in *another process* on the same data dir (another
        namespace's writer, a reader) holds collections that no longer exist: it must reopen.
        It costs about as much as ingesting every vector of the folder again (HNSW build).

        With a Chroma server (`host`) the data lives on the server, not in the data dir:
        scrub only flushes (the deletes reach the server) and reports {"server": 1}; purging
        the server's log, freed pages and HNSW tombstones is the operator's job (for example
        `chroma vacuum` with the server stopped, or re-creating the collection).

        Not covered: afterwards hnswlib still writes 4 uninitialised bytes per new vector to
        length.bin (and a new index's unused slots), which may pick up anything this process
        freed, forgotten nodes included; starting the process with MALLOC_PERTURB_ (or
        GLIBC_TUNABLES=glibc.malloc.perturb) set, or forgetting in a short-lived process,
        closes that. Returns what was done, with "elapsed_ms".
        """
        started = time.perf_counter()
        report = {"server": 0, "rebuilt": 0, "kept": 0, "segment_dirs_removed": 0}
        report |= {"vacuumed": 0, "heap_filled": 0, "indexes": 0}
        with self._lock:
            self.flush()
            key = self._client_key
        if key is None or key.startswith("http://"):  # no Chroma of ours, or a server
            report["server"] = int(key is not None)
        else:
            with _SCRUB_LOCK:
                report |= _rebuild_folder(key, self._max_batch)
            _vacuum(Path(key) / "chroma.sqlite3")
            report["vacuumed"] = 1
        report["elapsed_ms"] = round(1000 * (time.perf_counter() - started))
        return report

    def maybe_flush(self) -> None:
        if len(self._pending) >= self.config.flush_every:
            self.flush()

    def flush(self) -> None:
        """Write buffered upserts/deletes to Chroma in batches Chroma accepts."""
        with self._lock:
            if not self._pending:
                return
            batch = self._max_batch
            deletes = [i for i, op in self._pending.items() if op == "delete"]
            upserts = [i for i, op in self._pending.items() if op == "upsert"]
            for start in range(0, len(deletes), batch):
                self._col.delete(ids=deletes[start : start + batch])
            for start in range(0, len(upserts), batch):
                chunk = upserts[start : start + batch]
                slots = [self._slot_of[i] for i in chunk]
                self._col.upsert(
                    ids=chunk,
                    embeddings=self._matrix[slots],
                    metadatas=[self._metadata(i, s) for i, s in zip(chunk, slots)],
                )
            self._pending.clear()
            self._not_in_chroma.clear()
            self._chroma_count = self._col.count()

    def _metadata(self, node_id: str, slot: int) -> dict[str, Any]:
        return {
            "kind": _CODE_KIND[int(self._kind[slot])].value,
            "ts": float(self._start[slot]),
            "ts_end": float(self._end[slot]),
            "text_sha": self._text_fp[node_id],
        }

    # --- opening: load from Chroma, then make it agree with the source of truth ---------

    def load(self, page: int = 5000) -> None:
        """Fill the in-memory table with everything Chroma holds for this namespace."""
        with self._lock:
            offset = 0
            while True:
                got = self._col.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
                ids = got["ids"]
                if not ids:
                    break
                for node_id, vector, meta in zip(ids, got["embeddings"], got["metadatas"]):
                    kind = _KIND_CODE.get(NodeKind(meta.get("kind", "event")), 1)
                    self._put(
                        node_id,
                        np.asarray(vector, dtype=np.float32),
                        kind,
                        float(meta.get("ts", 0.0)),
                        float(meta.get("ts_end", 0.0)),
                        str(meta.get("text_sha", "")),
                    )
                offset += len(ids)
            self._chroma_count = offset

    def reconcile(
        self,
        expected: Mapping[str, tuple[NodeKind, datetime, datetime, str]],
        embed: Callable[[list[str]], np.ndarray],
    ) -> dict[str, int]:
        """Make Chroma hold exactly `expected` (node → kind, start, end, text).

        Loads Chroma, drops ids the store no longer has, re-embeds nodes that are missing or
        whose text changed (the embedding cache makes this cheap), fixes stale metadata,
        then flushes. Returns how many nodes each repair touched.
        """
        self.load()
        stale = [i for i in self._slot_of if i not in expected]
        self.delete(stale)
        to_embed: list[str] = []
        retag: list[IndexedVector] = []
        for node_id, (kind, start, end, text) in expected.items():
            slot = self._slot_of.get(node_id)
            if slot is None or self._text_fp.get(node_id) != text_fingerprint(text):
                to_embed.append(node_id)
            elif (
                self._kind[slot] != _KIND_CODE[kind]
                or self._start[slot] != epoch_seconds(start)
                or self._end[slot] != epoch_seconds(end)
            ):
                retag.append(
                    IndexedVector(node_id, self._matrix[slot].copy(), kind, start, end, text)
                )
        if to_embed:
            vectors = embed([expected[i][3] for i in to_embed])
            self.upsert(
                [
                    IndexedVector(
                        i, v, expected[i][0], expected[i][1], expected[i][2], expected[i][3]
                    )
                    for i, v in zip(to_embed, vectors)
                ]
            )
        self.upsert(retag)
        self.flush()
        return {"deleted": len(stale), "embedded": len(to_embed), "retagged": len(retag)}

    def reload_mirror(
        self,
        expected: Mapping[str, tuple[NodeKind, datetime, datetime, str]],
        embed: Callable[[list[str]], np.ndarray],
    ) -> int:
        """A reader's catch-up with another process's writes: start from the table it holds,
        keep only `expected` nodes, and embed (in memory only) the new or changed ones — cache
        hits, since the writer embedded them through the same on-disk embedding cache. Chroma
        is neither read nor written: the writer owns it, and an embedded Chroma client in
        another process serves stale segments ("Error finding id" for the writer's new ids).
        The new table replaces the old one in one step under the lock, so a concurrent search
        sees one or the other. Returns how many vectors were embedded locally."""
        fresh = VectorIndex(self._col, self.config, self._max_batch)
        with self._lock:
            self.flush()  # nothing should be buffered in a reader; never drop it if it is
            for node_id, slot in self._slot_of.items():
                fresh._put(
                    node_id,
                    self._matrix[slot].copy(),
                    int(self._kind[slot]),
                    float(self._start[slot]),
                    float(self._end[slot]),
                    self._text_fp[node_id],
                )
            fresh._chroma_count = self._chroma_count
        for node_id in [i for i in fresh._slot_of if i not in expected]:
            fresh._drop(node_id)
        missing = [
            node_id
            for node_id, (_, _, _, text) in expected.items()
            if fresh._text_fp.get(node_id) != text_fingerprint(text)
        ]
        if missing:
            for node_id, vector in zip(missing, embed([expected[i][3] for i in missing])):
                kind, start, end, text = expected[node_id]
                fresh._put(
                    node_id,
                    vector,
                    _KIND_CODE[kind],
                    epoch_seconds(start),
                    epoch_seconds(end),
                    text_fingerprint(text),
                )
        with self._lock:
            for name in (
                "_slot_of",
                "_ids",
                "_free",
                "_matrix",
                "_kind",
                "_start",
                "_end",
                "_text_fp",
                "_chroma_count",
            ):
                setattr(self, name, getattr(fresh, name))
        return len(missing)

    # --- queries ----------------------------------------------------------------------

    def _mask(self, kind: NodeKind | None, between: tuple[datetime, datetime] | None) -> np.ndarray:
        size = len(self._ids)
        mask: np.ndarray = self._kind[:size] != 0
        if kind is not None:
            mask &= self._kind[:size] == _KIND_CODE[kind]
        if between is not None:
            lo, hi = epoch_seconds(between[0]), epoch_seconds(between[1])
            mask &= (self._start[:size] <= hi) & (self._end[:size] >= lo)
        return mask

    def _similarities(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Cosines of `slots` to `query`. When they are a good share of the index, one pass
        over the contiguous matrix beats gathering their rows first (measured here: 1,300 of
        1,300 rows, 0.1 ms against 3.7 ms for the gather, which copies the rows out)."""
        size = len(self._ids)
        if slots.size * 8 >= size:
            sims: np.ndarray = (self._matrix[:size] @ query)[slots]
            return sims
        gathered: np.ndarray = self._matrix[slots] @ query
        return gathered

    def _top(self, query: np.ndarray, slots: np.ndarray, n: int) -> list[tuple[str, float]]:
        sims = self._similarities(query, slots)
        if slots.size > n:
            # The n best, ties at the cut broken by id: which of several equally similar nodes
            # make the cut must not depend on slot order, which a reopen reshuffles.
            cut = np.partition(sims, slots.size - n)[slots.size - n]
            above = np.flatnonzero(sims > cut)
            tied = sorted(np.flatnonzero(sims == cut), key=lambda j: self._ids[slots[j]])
            keep = np.concatenate([above, np.asarray(tied[: n - above.size], dtype=np.int64)])
            slots, sims = slots[keep], sims[keep]
        order = sorted(range(slots.size), key=lambda j: (-float(sims[j]), self._ids[slots[j]]))
        return [(str(self._ids[slots[j]]), float(sims[j])) for j in order]

    def search(
        self,
        query: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        """Top-n nodes by cosine, best first; `between` keeps nodes whose time span meets it.

        Similarities are computed from the in-memory vectors (equal to Chroma's 1 − cosine
        distance up to rounding, and right for writes still waiting in the flush buffer).
        """
        with self._lock:
            if n <= 0 or not self._slot_of:
                return []
            q = np.asarray(query, dtype=np.float32).reshape(-1)
            if q.shape[0] != self._matrix.shape[1]:
                raise ConfigurationError(
                    f"query vector has dimension {q.shape[0]}, the index {self._matrix.shape[1]}"
                )
            mask = self._mask(kind, between)
            admitted = int(mask.sum())
            if admitted == 0:
                return []
            if admitted <= self.config.exact_scan_limit or self._chroma_count == 0:
                return self._top(q, np.flatnonzero(mask), n)
            candidates = self._chroma_candidates(q, n, kind, between, mask, admitted)
            candidates.update(i for i, op in self._pending.items() if op == "upsert")
            slots = np.fromiter(
                (s for i in candidates if (s := self._slot_of.get(i)) is not None and mask[s]),
                dtype=np.int64,
            )
            return self._top(q, slots, n) if slots.size else []

    def _chroma_candidates(
        self,
        q: np.ndarray,
        n: int,
        kind: NodeKind | None,
        between: tuple[datetime, datetime] | None,
        mask: np.ndarray,
        admitted: int,
    ) -> set[str]:
        """Ids worth rescoring: an unfiltered ANN fetch sized to the filter's selectivity, then
        Chroma's `where` only if too few of those pass. Buffered updates and deletes leave that
        many Chroma rows stale, so every fetch asks for that many extra rows; buffered new
        nodes have no row there (the caller rescores them from memory)."""
        stale = len(self._pending) - len(self._not_in_chroma)  # updated or deleted rows only
        ratio = len(self._slot_of) / admitted
        oversampled = math.ceil(n * ratio * (self.config.oversample if ratio > 1 else 1.0))
        fetch = min(self._chroma_count, max(n, min(self.config.max_fetch, oversampled)) + stale)
        ids = self._query_ids(q, fetch)
        if fetch >= self._chroma_count or (kind is None and between is None):
            return ids  # unfiltered: at most `stale` of the fetched rows can fail
        passing = sum(1 for i in ids if (s := self._slot_of.get(i)) is not None and mask[s])
        if passing >= n:
            return ids
        return ids | self._query_ids(
            q, min(self._chroma_count, n + stale), self._where(kind, between)
        )

    def _query_ids(self, q: np.ndarray, n: int, where: dict[str, Any] | None = None) -> set[str]:
        got = self._col.query(
            query_embeddings=q[None, :], n_results=max(n, 1), where=where, include=["distances"]
        )
        return set(got["ids"][0])

    @staticmethod
    def _where(kind: NodeKind | None, between: tuple[datetime, datetime] | None) -> dict[str, Any]:
        conditions: list[dict[str, Any]] = []
        if kind is not None:
            conditions.append({"kind": {"$eq": kind.value}})
        if between is not None:
            conditions.append({"ts": {"$lte": epoch_seconds(between[1])}})
            conditions.append({"ts_end": {"$gte": epoch_seconds(between[0])}})
        return conditions[0] if len(conditions) == 1 else {"$and": conditions}
