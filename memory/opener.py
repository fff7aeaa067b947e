"""The one way a store is opened, or looked for, from the settings.

Every opener of a store (the graphs' shared stores, and through them the API and the CLI; the
benchmark's and the optimizer's scratch stores) calls `open_store`, and every "is there a
store to read?" is `store_exists` / `require_store`, so the backend (`memory.backends`), the
embedding and its cache, and the Chroma the settings name are decided here and nowhere else.
A read never creates anything: `store_exists` and `require_store` only look.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory.backends import Source, backend_for
from memory.embeddings import Embedder, EmbeddingConfig, embedding_cache
from memory.errors import DataDirError
from memory.settings import MemFuseSettings

if TYPE_CHECKING:  # the store pulls in Chroma: loaded when a store is opened, not looked for
    from memory.store import MemoryStore
    from memory.store_api import StoreStats

_DEFAULTS = MemFuseSettings.model_construct()
"""Every setting's default, whatever the environment says: a scratch store's settings."""


def embedding_config(settings: MemFuseSettings, data_dir: Path) -> EmbeddingConfig:
    """The embedding the settings name, with its on-disk cache next to the stores."""
    return EmbeddingConfig(
        provider=settings.embedding_provider,  # type: ignore[arg-type]
        model=settings.embedding_model,
        base_url=settings.embedding_base_url,
        api_key=settings.embedding_key(),
        precision=settings.embedding_precision,
        runtime=settings.embedding_runtime,
        cache_path=embedding_cache(data_dir),
    )


def open_store(
    settings: MemFuseSettings | None,
    *,
    data_dir: Path | str | None = None,
    namespace: str | None = None,
    embedder: Embedder | None = None,
    read_only: bool | None = None,
    vectors: bool = True,
) -> MemoryStore:
    """Open (or create) the store of a data dir and namespace (default: the settings'), on the
    backend, Chroma and embedding the settings name (`embedder`: this one instead, e.g. one
    shared by many scratch stores). `settings` None: every default, not the environment's —
    a scratch store in its own folder. `read_only`: what the caller's `prepare_data_dir`
    found, so it does not run twice (None: it runs here; see `MemoryStore.open`).
    `vectors=False`: read-only, without Chroma, for counts alone (see `read_stats`)."""
    from memory.backends.vectors import vector_backend_of
    from memory.store import MemoryStore

    settings = settings or _DEFAULTS
    folder = Path(data_dir if data_dir is not None else settings.data_dir).expanduser()
    return MemoryStore.open(
        folder,
        namespace=namespace or settings.namespace,
        embedder=embedder,
        embedding=None if embedder is not None else embedding_config(settings, folder),
        database_url=settings.database_url,
        read_only=read_only,
        vectors=vectors,
        vector_backend=vector_backend_of(settings, folder),
    )


def read_stats(settings: MemFuseSettings, *, data_dir: Path, namespace: str) -> StoreStats:
    """The counts of an existing store (`memfuse stats`), read without opening its vectors:
    loading Chroma is most of such a short command's start-up, and counts need none of it.
    The store opened for this never leaves here, so nothing can search its empty index."""
    require_store(settings, data_dir=data_dir, namespace=namespace)
    with open_store(settings, data_dir=data_dir, namespace=namespace, vectors=False) as store:
        return store.stats()


def store_exists(source: Source, *, data_dir: Path, namespace: str) -> bool:
    """Whether the namespace's store is there to be read, wherever its backend keeps it (the
    SQLite file in the data dir, or its schema on the settings' PostgreSQL server)."""
    return backend_for(source, data_dir).exists(namespace)


def require_store(source: Source, *, data_dir: Path, namespace: str) -> None:
    """A read needs a memory to read: a missing data dir or store is a one-line error, never
    an empty result that looks like "you have no memories". The store is wherever the
    backend of `source` (settings, or a database URL) keeps it."""
    root = Path(data_dir).expanduser()
    if root.exists() and not root.is_dir():
        raise DataDirError.not_a_directory(root)
    if not root.exists() and any(p.exists() and not p.is_dir() for p in root.parents):
        raise DataDirError(root, "part of this path is a file, not a directory")
    if not root.is_dir():
        raise DataDirError(
            root,
            "missing",
            f"data dir {root} does not exist: nothing to read (ingest first, or point "
            "--data-dir / MEMFUSE_DATA_DIR at your memory)",
        )
    backend = backend_for(source, root)
    if not backend.exists(namespace):
        raise DataDirError(
            backend.location(str(root)),
            "no store",
            f"{backend.location(f'data dir {root}')} holds no store {namespace!r}: nothing to "
            "read (ingest first, or check --namespace)",
        )
