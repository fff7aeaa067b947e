"""The process-wide Chroma clients, and the folder rebuild that `VectorIndex.scrub` runs on one.

Chroma keeps one system per persist directory, so every index on a path (or a server) shares
one client, counted here and closed with its last user. A scrub rebuilds every collection of
the client's folder, so it works on all of this process's indexes on that client at once
(`_LIVE_INDEXES`), not on one index: both are process-wide state, kept apart from the index.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sqlite3
import struct
import threading
import uuid
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.errors import ConfigurationError

if TYPE_CHECKING:  # the index imports this module; it registers itself in _LIVE_INDEXES
    from memory.vector_index import VectorIndex

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
_HNSW_HEADER = struct.Struct("<iQQQQ")
"""The start of an HNSW segment's header.bin (hnswlib's persisted index, written field by field
without padding): format version, level-0 offset, capacity in elements, elements stored,
bytes per element in data_level0.bin."""
_HNSW_FORMAT = 1  # the only header version whose layout is read here
_LENGTH_BYTES = 4  # one float per element in length.bin
_ZERO_CHUNK = 1 << 20  # bytes written at a time when blanking


def _rebuild_folder(key: str, batch: int) -> dict[str, int]:
    """Steps 1-5 of `VectorIndex.scrub` for the embedded client at path `key`."""
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
            spaces = {old.name: _space_of(old) for old in collections}
            for old in collections:

                def adopt(fresh: Any, name: str = old.name) -> None:
                    count = int(fresh.count())
                    for index in users:
                        if index.collection_name == name:
                            index._col, index._chroma_count = fresh, count

                kept += _rebuild_collection(client, old, batch, adopt)
        segments = _vector_segments(Path(key))
        removed = _remove_unused_segment_dirs(Path(key), set(segments))
        blanked = _blank_unwritten_hnsw_bytes(Path(key), segments, spaces)
    return {
        "rebuilt": len(collections),
        "kept": kept,
        "segment_dirs_removed": removed,
        "heap_filled": int(filled),
        "hnsw_bytes_blanked": blanked,
        "indexes": len(users),
    }


def _space_of(collection: Any) -> str:
    """A collection's HNSW distance space (Chroma's default, l2, when it names none)."""
    return str((collection.configuration_json.get("hnsw") or {}).get("space") or "l2")


def _vector_segments(folder: Path) -> dict[str, str]:
    """The folder's vector segments (each one HNSW folder named by its id): collection name by
    segment id, from Chroma's own tables."""
    query = (
        "SELECT s.id, c.name FROM segments s JOIN collections c ON s.collection = c.id "
        "WHERE s.scope = 'VECTOR'"
    )
    with closing(sqlite3.connect(folder / "chroma.sqlite3")) as conn:
        return {str(segment): str(name) for segment, name in conn.execute(query)}


def _blank_unwritten_hnsw_bytes(
    folder: Path, segments: dict[str, str], spaces: dict[str, str]
) -> int:
    """Overwrite with zeros the bytes of each HNSW segment's files that hnswlib copies from
    buffers it never filled: data_level0.bin past the last stored element, and length.bin
    (read only in cosine space, where the stored elements' lengths are kept). The heap fill
    (`_filled_heap`) covers most such buffers but not all: a small one (length.bin's, four
    bytes per element of capacity) can come from a thread's malloc cache unfilled, and so hold
    bytes a forgotten node left there (seen once in a full test run: a text_sha in length.bin).
    `segments`: collection name by segment id (`_vector_segments`); `spaces`: distance space
    by collection name. A segment whose header is not the format read here is left alone.
    Returns the number of bytes overwritten."""
    blanked = 0
    for segment, name in segments.items():
        directory = folder / segment
        header = directory / "header.bin"
        if not header.is_file() or header.stat().st_size < _HNSW_HEADER.size:
            continue
        version, _, capacity, stored, per_element = _HNSW_HEADER.unpack_from(header.read_bytes())
        if version != _HNSW_FORMAT or per_element <= 0 or stored > capacity:
            continue
        lengths_kept = stored if spaces.get(name) == "cosine" else 0
        blanked += _zero_from(directory / "length.bin", lengths_kept * _LENGTH_BYTES)
        blanked += _zero_from(directory / "data_level0.bin", stored * per_element)
    return blanked


def _zero_from(path: Path, offset: int) -> int:
    """Zero `path` from `offset` to its end, in place and synced; the number of bytes."""
    if not path.is_file():
        return 0
    remaining = path.stat().st_size - offset
    if remaining <= 0:
        return 0
    zeros = bytes(min(remaining, _ZERO_CHUNK))
    with open(path, "r+b") as file:
        file.seek(offset)
        left = remaining
        while left:
            step = min(left, len(zeros))
            file.write(memoryview(zeros)[:step])
            left -= step
        file.flush()
        os.fsync(file.fileno())
    return remaining


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


def _remove_unused_segment_dirs(folder: Path, used: set[str]) -> int:
    """Remove the HNSW segment folders (named by segment uuid) not among the `used` vector
    segments' ids."""
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
    """While the block runs, glibc fills the blocks malloc hands out or takes back through its
    arenas, so most buffers hnswlib writes without initialising hold filler, not old heap
    contents; a small block that a thread's cache (tcache) serves is not filled, which is why
    the scrub also blanks those bytes in the files (`_blank_unwritten_hnsw_bytes`). Yields
    whether the fill is in effect (False off glibc); a process started with MALLOC_PERTURB_ or
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
