"""Where a store's vectors live: embedded Chroma in the data dir, or a Chroma server.

`vector_backend_for` is the one place that chooses (a Chroma host in the settings: the
server). A backend opens the store's `VectorIndex` (the in-memory table in front of a
collection) and says what only it can see at a store's first open: vectors left behind by
a store whose database went missing. A new vector backend is a `VectorBackend` subclass
here (one not reached through a Chroma client overrides `open`, handing `VectorIndex` a
collection that answers Chroma's collection calls) and one line in `vector_backend_for`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from memory.backends.base import BaseDatabase
from memory.chroma_clients import acquire_chroma_client, release_chroma_client
from memory.errors import ConfigurationError
from memory.settings import MemFuseSettings
from memory.vector_index import VectorIndex, VectorIndexConfig, collection_prefix


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


class _UnopenedCollection:
    """Stands in for the collection of a store opened for its counts alone (`memfuse stats`):
    Chroma is never loaded, which is most of such a command's start-up. The store holding it
    never leaves the opener (see `memory.opener.read_stats`); a vector call is a bug there."""

    name = "unopened"

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise ConfigurationError("this store was opened for its counts only, without its vectors")

    get = upsert = delete = count = query = _refuse


class VectorBackend(ABC):
    """How a store's vector index is opened, and what its first open must refuse."""

    reads_read_only: ClassVar[bool] = True
    """Whether a read-only store can open its collection; else the vectors come from the
    embedding cache into the index's in-memory table only."""
    shared: ClassVar[bool] = False
    """Whether other processes read the collection (then every write call flushes to it)."""

    def open(
        self,
        namespace: str,
        store_id: str,
        config: VectorIndexConfig | None,
        read_only: bool,
    ) -> VectorIndex:
        """The store's index (its collection named after the namespace and the store id)."""
        if read_only and not self.reads_read_only:
            return VectorIndex(_MemoryOnlyCollection(), config)
        index = VectorIndex.open(namespace, store_id, config=config, **self._client())
        index.shared = self.shared
        return index

    @staticmethod
    def unopened(config: VectorIndexConfig | None) -> VectorIndex:
        """An index with no collection behind it, for a store opened for its counts only."""
        return VectorIndex(_UnopenedCollection(), config)

    @abstractmethod
    def _client(self) -> dict[str, Any]:
        """Where the Chroma client connects (`acquire_chroma_client`'s arguments)."""

    def refuse_orphans(self, db: BaseDatabase, namespace: str) -> None:
        """At a new store's first open: refuse to start over next to vectors its lost
        database left (nothing to see where vectors are shared, on a server)."""


class EmbeddedChroma(VectorBackend):
    """Chroma in `<data_dir>/chroma`, one client per folder per process; it cannot even
    open a folder it may not write."""

    reads_read_only = False

    def __init__(self, data_dir: Path, port: int = 8000):
        self.path = Path(data_dir) / "chroma"
        self.port = port

    def _client(self) -> dict[str, Any]:
        return {"path": self.path, "host": None, "port": self.port}

    def refuse_orphans(self, db: BaseDatabase, namespace: str) -> None:
        """A new SQLite file next to an embedded Chroma that already holds this namespace's
        vectors means the store's source of truth went missing: say so, never start over
        silently (the vectors alone cannot rebuild the events)."""
        chroma_dir = self.path
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


class ChromaServer(VectorBackend):
    """A Chroma server at `host:port`, which any number of data dirs may share (each store's
    collection is named after its namespace and store id). A read-only store reads it too."""

    shared = True

    def __init__(self, host: str, port: int = 8000):
        self.host = host
        self.port = port

    def _client(self) -> dict[str, Any]:
        return {"path": None, "host": self.host, "port": self.port}


def vector_backend_for(chroma_host: str | None, chroma_port: int, data_dir: Path) -> VectorBackend:
    """The Chroma server when a host is given, else embedded Chroma in the data dir."""
    if chroma_host:
        return ChromaServer(chroma_host, chroma_port)
    return EmbeddedChroma(data_dir, chroma_port)


def vector_backend_of(settings: MemFuseSettings, data_dir: Path) -> VectorBackend:
    """The vector backend the settings choose, for the opener (`memory.opener`): a new
    backend reads its own setting here, so that neither the opener nor the store hands
    it down."""
    return vector_backend_for(settings.chroma_host, settings.chroma_port, data_dir)
