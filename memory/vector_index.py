"""The dense index: one Chroma collection per store over events and fused summaries,
fronted by an in-memory table of the same vectors.

Chroma is the persistent (and, with a server, shareable) vector store and the ANN
index for broad queries. The in-memory table exists because the engine scores every
candidate by cosine and must never round-trip to Chroma for that; it also lets a
narrow query (a time window, only fused nodes) be answered exactly in well under a
millisecond, where a Chroma `where` filter costs tens of milliseconds on 10k nodes.
Chroma writes are buffered and flushed in batches (a single-row upsert costs ~8 ms);
vectors waiting in the buffer are still searched, exactly, from the table. The SQLite
store is the source of truth: `reconcile` repairs Chroma after a crash or an edit. The table
and its write buffer are `memory.vector_table`; the Chroma clients, which every index on a
path shares, `memory.chroma_clients`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.chroma_clients import (
    _LIVE_INDEXES,
    _SCRUB_LOCK,
    _rebuild_folder,
    _vacuum,
    acquire_chroma_client,
    release_chroma_client,
)
from memory.errors import ConfigurationError
from memory.models import NodeKind
from memory.vector_table import _CODE_KIND, _KIND_CODE, VectorTable, epoch_seconds, text_fingerprint


class VectorIndexConfig(BaseModel):
    """Knobs of the dense index; the defaults keep a 10k-node store at a few ms per query."""

    model_config = ConfigDict(frozen=True)

    exact_scan_limit: int = Field(
        default=4096,
        ge=0,
        description="A query whose kind/time filter admits at most this many nodes is scored "
        "exactly in memory instead of asking Chroma.",
    )
    exact_span_limit: int = Field(
        default=16_384,
        ge=0,
        description="…or whose admitted rows all lie within this many consecutive rows (a time "
        "window of a memory written in time order, scored in place): asked early in a long "
        "memory, an as-of view admits the first few thousand rows, and an approximate fetch "
        "found too few of them before falling back to that very scan.",
    )
    oversample: float = Field(
        default=2.0,
        ge=1.0,
        description="Broad filtered queries fetch n·(all/admitted)·oversample unfiltered hits "
        "and filter them in memory; an exact scan of the admitted rows is the fallback when "
        "too few pass.",
    )
    max_fetch: int = Field(default=1000, ge=1, description="Cap on one unfiltered Chroma fetch.")
    flush_every: int = Field(
        default=512, ge=1, description="Buffered Chroma writes that trigger a flush."
    )


@dataclass(frozen=True)
class IndexedVector:
    """One node as the dense index holds it. Events have start == end."""

    node_id: str
    vector: np.ndarray
    kind: NodeKind
    start: datetime
    end: datetime
    text: str


def collection_name(namespace: str, store_id: str) -> str:
    """One collection per store: the namespace for people, the store id for safety — two
    data dirs with the same namespace on one Chroma server never share (or erase) vectors."""
    return f"memfuse-{namespace}-{store_id}"


def collection_prefix(namespace: str) -> str:
    return f"memfuse-{namespace}-"


class VectorIndex(VectorTable):
    """Dense search over events and fused nodes (see the module docstring for the design)."""

    def __init__(
        self,
        collection: Any,
        config: VectorIndexConfig | None = None,
        max_batch: int = 1000,
        client_key: str | None = None,
    ):
        super().__init__()
        self._col = collection
        self._client_key = client_key
        self.config = config or VectorIndexConfig()
        self._max_batch = max(1, min(5000, max_batch))
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

    # --- Chroma's side of the writes (the table's: memory.vector_table) ---------------

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
           "heap_filled"; elsewhere 0);
        4. segment folders no collection uses any more (Chroma leaves them behind) are removed;
        5. the new HNSW files' bytes that hnswlib copies from buffers it never filled (length.bin
           outside cosine space, data_level0.bin past the last element) are overwritten with
           zeros ("hnsw_bytes_blanked"): the fill of step 3 misses a small buffer that a
           thread's malloc cache hands out, and one such length.bin held a forgotten text_sha;
        6. chroma.sqlite3 is VACUUMed through a separate connection, which drops the freed
           pages; the client stays open (Chroma's idle connections do not block it).

        Indexes of this process on the client are re-pointed to their rebuilt collections and
        keep working. An embedded client in *another process* on the same data dir (another
        namespace's writer, a reader) holds collections that no longer exist: it must reopen.
        It costs about as much as ingesting every vector of the folder again (HNSW build).

        With a Chroma server (`host`) the data lives on the server, not in the data dir:
        scrub only flushes (the deletes reach the server) and reports {"server": 1}; purging
        the server's log, freed pages and HNSW tombstones is the operator's job (for example
        `chroma vacuum` with the server stopped, or re-creating the collection).

        Not covered: the rebuilt index in this process's memory still holds those buffers, and
        afterwards hnswlib writes 4 of their bytes per new vector to length.bin (and a new
        index's unused slots), which may pick up anything this process freed, forgotten nodes
        included; forgetting in a short-lived process closes that. Returns what was done, with
        "elapsed_ms".
        """
        started = time.perf_counter()
        report = {"server": 0, "rebuilt": 0, "kept": 0, "segment_dirs_removed": 0}
        report |= {"vacuumed": 0, "heap_filled": 0, "hnsw_bytes_blanked": 0, "indexes": 0}
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

    shared = False
    """Whether other processes read this collection (a Chroma server; set by the backend).
    An embedded collection is read by this process only: a reader elsewhere embeds new nodes
    from the shared cache instead (`reload_mirror`)."""

    def maybe_flush(self) -> None:
        if len(self._pending) >= self.config.flush_every:
            self.flush()

    def settle(self) -> None:
        """The end of one write call (an ingest, an `add`): a shared collection gets the
        buffered writes now, for its other readers; an embedded one when the buffer is full
        or the store closes, so a one-event write does not pay a Chroma upsert (the
        streaming case). Nothing is at risk: the database holds every node, and an open
        after a crash re-embeds from the cache what Chroma lacks (`reconcile`)."""
        if self.shared:
            self.flush()
        else:
            self.maybe_flush()

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
                    embeddings=self._matrix.take(slots),
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
                    IndexedVector(node_id, self._matrix.row(slot).copy(), kind, start, end, text)
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
                    self._matrix.row(slot).copy(),
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
                "_zone_start",
                "_zone_end",
                "_text_fp",
                "_event_sum",
                "_event_rows",
                "_chroma_count",
                "_max_norm",
            ):
                setattr(self, name, getattr(fresh, name))
            self._held = None
        return len(missing)

    # --- queries ----------------------------------------------------------------------

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
            if q.shape[0] != self._matrix.dim:
                raise ConfigurationError(
                    f"query vector has dimension {q.shape[0]}, the index {self._matrix.dim}"
                )
            unfiltered = kind is None and between is None
            # every live row, unfiltered: counted without listing them (Chroma answers such a
            # query once the table outgrows the exact scan)
            slots = None if unfiltered else self._admitted(kind, between)
            admitted = len(self._slot_of) if slots is None else int(slots.size)
            if admitted == 0:
                return []
            narrow = self._chroma_count == 0 or self._exact_filter(slots, admitted)
            # a narrow filter, or one too few approximate hits pass (None): scanned exactly
            candidates = None if narrow else self._chroma_candidates(q, n, slots, admitted)
            if candidates is None:
                return self._top(q, self._admitted(kind, between) if slots is None else slots, n)
            candidates.update(i for i, op in self._pending.items() if op == "upsert")
            found = np.fromiter(
                (s for i in candidates if (s := self._slot_of.get(i)) is not None),
                dtype=np.int64,
            )
            found = found[_within(found, slots)]
            return self._top(q, found, n) if found.size else []

    def _exact_filter(self, slots: np.ndarray | None, admitted: int) -> bool:
        """Whether a filter admitting `slots` (`admitted` rows) is scanned exactly however
        many rows Chroma holds: few rows, or rows close together."""
        return admitted <= self.config.exact_scan_limit or (
            slots is not None and int(slots[-1]) - int(slots[0]) < self.config.exact_span_limit
        )

    def prime(
        self, queries: np.ndarray, windows: Sequence[tuple[datetime, datetime] | None]
    ) -> int:
        """Announce searches to come: score `queries` (one a row) against every row the
        `windows` admit, in one matrix product, and keep the products for the `search` calls
        with those query vectors (any kind, any window), until the next `prime`. Returns the
        rows scored (0: nothing held).

        A fused ingest searches, for each event, the window of the events and packs just
        before it: consecutive events' windows are nearly the same rows, and one product of
        those rows with a group's queries costs a fraction of a product per search. A search
        answers exactly as it would have (its n best are picked by exact cosine, `_select`);
        rows written since are scored afresh (`_screen`). Nothing is held when the windows lie
        far apart (the rows between them would cost more than they save) or admit more rows
        than a search scans exactly."""
        with self._lock:
            self._held = None
            qs = np.asarray(queries, dtype=np.float32)
            if qs.ndim != 2 or qs.shape[0] == 0 or qs.shape[1] != self._matrix.dim:
                return 0
            spans = []
            for window in windows:
                slots = self._admitted(None, window)
                if slots.size == 0:
                    continue
                if not self._exact_filter(slots, int(slots.size)):
                    return 0
                spans.append((int(slots[0]), int(slots[-1]) + 1))
            if not spans:
                return 0
            lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
            if hi - lo > sum(b - a for a, b in spans):
                return 0  # windows far apart: one product over all of them saves nothing
            self._hold(qs, lo, hi)
            return hi - lo

    def _chroma_candidates(
        self, q: np.ndarray, n: int, slots: np.ndarray | None, admitted: int
    ) -> set[str] | None:
        """Ids worth rescoring: an unfiltered ANN fetch sized to the filter's selectivity;
        None when too few of those pass the filter (`slots`, the admitted rows; None: every
        live row), and the caller scans the admitted rows exactly instead. (Chroma's own
        `where` was the fallback: on 108k vectors, 8,300 of them packs, it took 65 ms a pack
        search and 177 ms a month's events, p50, where the exact scan of the admitted rows took
        8 ms.) Buffered updates and deletes leave that many Chroma rows stale, so every fetch
        asks for that many extra rows; buffered new nodes have no row there (the caller
        rescores them from memory)."""
        stale = len(self._pending) - len(self._not_in_chroma)  # updated or deleted rows only
        ratio = len(self._slot_of) / admitted
        oversampled = math.ceil(n * ratio * (self.config.oversample if ratio > 1 else 1.0))
        fetch = min(self._chroma_count, max(n, min(self.config.max_fetch, oversampled)) + stale)
        ids = self._query_ids(q, fetch)
        if fetch >= self._chroma_count or slots is None:
            return ids  # unfiltered: at most `stale` of the fetched rows can fail
        found = np.fromiter(
            (s for i in ids if (s := self._slot_of.get(i)) is not None), dtype=np.int64
        )
        passing = int(_within(found, slots).sum())
        return ids if passing >= n else None

    def _query_ids(self, q: np.ndarray, n: int) -> set[str]:
        self.ann_queries += 1
        # ids only: the caller rescores from the in-memory vectors (asking for distances
        # too cost a tenth more a call)
        got = self._col.query(query_embeddings=q[None, :], n_results=max(n, 1), include=[])
        return set(got["ids"][0])


def _within(found: np.ndarray, slots: np.ndarray | None) -> np.ndarray:
    """Which of `found` are among the ascending `slots` (None: every live row)."""
    if slots is None:
        return np.ones(found.size, dtype=bool)
    if slots.size == 0 or found.size == 0:
        return np.zeros(found.size, dtype=bool)
    at = np.minimum(np.searchsorted(slots, found), slots.size - 1)
    hit: np.ndarray = slots[at] == found
    return hit
