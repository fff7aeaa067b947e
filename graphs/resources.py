"""One resources layer: what a run works with, opened once per process and shared.

`resources_for(context)` is the one way a graph (and `memfuse.api`) gets its settings, store
(with its embedder), decision LM, compiled programs and reader. Each part comes from what the
caller injected into the context (see `graphs.context`) or else is opened here:

- settings: the `MEMFUSE_*` environment and `.env`, read once per process, with the
  context's llm_* fields laid over them;
- stores: one per (data dir, namespace) per process, with the embedder the MEMFUSE_EMBEDDING_*
  settings name, shared by every graph and by `MemFuse.open` (which counts its holders, so
  its `close()` closes a store only no graph still uses);
- decision LMs: one per distinct LLM setting (`signatures.lm`), compiled programs and tuned
  policies from the programs dir (`signatures.programs` caches them by file and mtime).

A store opened once goes stale when another process writes (a CLI ingest while `langgraph
dev` serves): every run calls `Resources.refresh()` in its first node, one PRAGMA when
nothing changed (`MemoryStore.refresh`).

A read never creates a data dir: when the directory or its store is missing, `store` is
None and `notes` says so (the run returns no evidence and that note). A write (fusion)
creates it and notes that it did.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphs.context import Injected, RunContext
from memory import heap
from memory.access import request_view
from memory.audit import AuditLog
from memory.backends import backend_for
from memory.errors import ConfigurationError, PermissionDeniedError
from memory.opener import open_store, store_exists
from memory.read_request import ReadRequest
from memory.settings import MemFuseSettings, load_settings
from memory.store_api import MemoryStoreAPI

if TYPE_CHECKING:  # DSPy and the programs load when a decision needs them, not with a store
    import dspy

    from signatures.programs import FusionPolicy, PlannerPolicy

Reader = Callable[..., str]

_LOCK = threading.RLock()
_LMS: dict[tuple[Any, ...], Any] = {}


@lru_cache(maxsize=1)
def process_settings() -> MemFuseSettings:
    """The `MEMFUSE_*` settings of this process, read once."""
    return load_settings()


# --- stores ----------------------------------------------------------------------------------


@dataclass
class _Held:
    store: MemoryStoreAPI
    holders: int = 0  # MemFuse objects holding it
    pinned: bool = False  # a graph run opened it: kept for the life of the process
    replayed: bool = False  # unfinished plans re-applied (first write through a graph)


_STORES: dict[tuple[str, str], _Held] = {}


def _key(data_dir: Path | str, namespace: str) -> tuple[str, str]:
    return str(Path(data_dir).expanduser().resolve()), namespace


def _open(
    data_dir: Path | str,
    namespace: str,
    settings: MemFuseSettings,
    read_only: bool | None = None,
) -> _Held:
    key = _key(data_dir, namespace)
    held = _STORES.get(key)
    if held is None:
        store = open_store(settings, data_dir=data_dir, namespace=namespace, read_only=read_only)
        held = _STORES[key] = _Held(store)
    return held


def shared_store(data_dir: Path | str, namespace: str, settings: MemFuseSettings) -> MemoryStoreAPI:
    """The process's store of (data dir, namespace), opened on first use and kept open."""
    with _LOCK:
        held = _open(data_dir, namespace, settings)
        if not held.pinned:  # loaded for the life of the process: out of the collector's way
            heap.settle()
        held.pinned = True
        return held.store


def acquire_store(
    data_dir: Path | str,
    namespace: str,
    settings: MemFuseSettings,
    *,
    read_only: bool | None = None,
) -> tuple[MemoryStoreAPI, Callable[[], None]]:
    """The shared store and its release: the last release closes it unless a graph uses it.
    `read_only`: what the caller's `prepare_data_dir` found (see `open_store`)."""
    with _LOCK:
        held = _open(data_dir, namespace, settings, read_only)
        held.holders += 1
    key = _key(data_dir, namespace)
    released = threading.Event()

    def release() -> None:
        if released.is_set():
            return
        released.set()
        with _LOCK:
            held.holders -= 1
            if held.holders <= 0 and not held.pinned:
                if _STORES.get(key) is held:
                    del _STORES[key]
                held.store.close()

    return held.store, release


def replay_once(store: MemoryStoreAPI) -> None:
    """Re-apply plans a crash left pending, the first time a graph writes to a shared store."""
    from memory.fusion.commit import replay_pending

    with _LOCK:
        held = next((h for h in _STORES.values() if h.store is store), None)
        if held is None or held.replayed:
            return
        replay_pending(store)
        held.replayed = True


def close_stores() -> None:
    """Close and forget every shared store (tests; a process about to reopen its data dirs)."""
    with _LOCK:
        for held in _STORES.values():
            held.store.close()
        _STORES.clear()
        heap.thaw()


# --- the bundle --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resources:
    """What one run works with (see the module docstring)."""

    settings: MemFuseSettings
    store: MemoryStoreAPI | None
    """None when a read found no store (then `notes` says why)."""
    lm: Any | None
    """The decision LM, or None: the offline twins decide."""
    injected: Injected = field(default_factory=Injected)
    notes: tuple[str, ...] = ()
    """What the run's output should say about where its memory is."""
    _views: dict[tuple[str | None, bool, datetime], MemoryStoreAPI] = field(
        default_factory=dict, repr=False, compare=False
    )

    def view(self, request: ReadRequest) -> MemoryStoreAPI:
        """The store as this request may read it, as of its time: every event up to then for
        an administrative read, else the requester's view (`memory.access`). Built once per
        run, on first use, so every node of the run reads the same view."""
        key = (request.requester, request.admin, request.question_time)
        view = self._views.get(key)
        if view is None:
            self._views.clear()  # a context reused for another read keeps only its own view
            view = self._views[key] = request_view(self.require_store(), request)
        return view

    @property
    def decided_by(self) -> str:
        return "llm" if self.lm is not None else "offline"

    def refresh(self) -> None:
        """Catch up with other processes' commits (call once, when a run begins); the run
        reads through a new view (a view remembers what it read, see `memory.access`)."""
        self._views.clear()
        if self.store is not None:
            self.store.refresh()

    @property
    def served(self) -> bool:
        """A store this run opened itself (a served run), rather than one handed in by its
        holder (MemFuse, an ingest), which takes the writer lock and delivers the audit log."""
        return self.store is not None and self.injected.store is None

    def served_audit_log(self) -> AuditLog | None:
        """The audit log of a served run's store; None when the store was handed in."""
        store = self.store
        if store is None or not self.served:
            return None
        backend = backend_for(self.settings, store.data_dir)
        return backend.audit_log(store.namespace, read_only=store.read_only)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A served run writes under the data dir's writer lock, as every CLI and API writer
        does, so its writes never interleave with another writer's; it waits up to
        `served_write_wait_seconds`, then fails naming the holder. A run whose store was
        handed in writes under its holder's lock (MemFuse, an ingest) and takes none."""
        store = self.store
        if store is None or not self.served or store.read_only:
            yield  # a read-only store refuses the write itself, with the reason
            return
        backend = backend_for(self.settings, store.data_dir)
        lock = backend.writer_lock(store.namespace, self.settings.served_write_wait_seconds)
        with lock:
            self.refresh()  # what the previous holder wrote, before this write reads or adds
            yield

    def deliver_audit(self) -> None:
        """A served run's committed writes go into the log now (memory.audit_outbox)."""
        log = self.served_audit_log()
        if log is not None:
            log.deliver(self.store)

    def record_admin_read(self, what: str, actor: str | None) -> None:
        """A served admin read is recorded before it runs; refused where the log is
        read-only (an unrecorded admin read is what the log exists to prevent)."""
        log = self.served_audit_log()
        if log is None:
            return
        if log.read_only:
            raise PermissionDeniedError(
                f"{what}: admin reads are recorded in the audit log, which is read-only here"
            )
        log.append("admin_read", actor=actor or "server", details={"what": what})

    def require_store(self) -> MemoryStoreAPI:
        if self.store is None:
            raise ConfigurationError("; ".join(self.notes) or "no memory store")
        return self.store

    @property
    def programs_dir(self) -> str | None:
        folder = self.settings.programs_dir
        return str(folder) if folder else None

    def program(self, target: str) -> dspy.Module:
        """The decision program: an injected one (fusion), a compiled one, else the plain one."""
        from signatures.programs import program_for

        if target == "fusion" and self.injected.program is not None:
            return self.injected.program
        return program_for(target, self.programs_dir)

    def planner_policy(self) -> PlannerPolicy:
        from signatures.programs import planner_policy

        return planner_policy(self.programs_dir)

    def fusion_policy(self) -> FusionPolicy:
        from signatures.programs import fusion_policy

        return fusion_policy(self.programs_dir)

    def reader(self) -> Reader | None:
        """The injected reader, the configured LLM's, or None (no LLM: evidence only)."""
        if self.injected.reader is not None:
            reader: Reader = self.injected.reader
            return reader
        if not self.settings.llm_model:
            return None
        from graphs.reader import read_answer  # needs langchain-openai: load lazily

        return read_answer


def run_settings(context: RunContext) -> MemFuseSettings:
    """The injected settings, else the process's, with the context's llm_* fields over them."""
    base = context.injected.settings or process_settings()
    overrides = context.llm_overrides()
    return base.model_copy(update=overrides) if overrides else base


def decision_lm(context: RunContext, settings: MemFuseSettings) -> Any | None:
    """The LM the policy calls for: None offline, or for `auto` with no LLM configured."""
    from signatures.lm import lm_from_settings, lm_settings_key

    if context.policy == "offline":
        return None
    if context.injected.lm is not None:
        return context.injected.lm
    if not settings.llm_model:
        if context.policy == "llm":
            raise ConfigurationError(
                "policy 'llm' needs an LLM model: set MEMFUSE_LLM_MODEL (or the run context's "
                "llm_model) or inject an LM"
            )
        return None
    key = lm_settings_key(settings)
    with _LOCK:
        if key not in _LMS:
            _LMS[key] = lm_from_settings(settings)
        return _LMS[key]


def _locate(context: RunContext, settings: MemFuseSettings) -> tuple[Path, str, str]:
    """Data dir, namespace and where the data dir came from (for notes)."""
    if context.data_dir:
        return (
            Path(context.data_dir).expanduser(),
            context.namespace or settings.namespace,
            ("the run context's data_dir"),
        )
    origin = (
        "MEMFUSE_DATA_DIR"
        if "data_dir" in settings.model_fields_set
        else ("the default ./.memfuse (MEMFUSE_DATA_DIR unset)")
    )
    return Path(settings.data_dir).expanduser(), context.namespace or settings.namespace, origin


def _store(
    context: RunContext, settings: MemFuseSettings, write: bool
) -> tuple[MemoryStoreAPI | None, tuple[str, ...]]:
    if context.injected.store is not None:
        return context.injected.store, ()
    data_dir, namespace, origin = _locate(context, settings)
    where = f"data dir {data_dir.resolve()} (from {origin})"
    if write:
        created = not data_dir.exists()
        store = shared_store(data_dir, namespace, settings)
        return store, (f"created {where}",) if created else ()
    if not data_dir.is_dir():
        advice = "ingest first, or set MEMFUSE_DATA_DIR in .env or data_dir in the run context"
        return None, (f"{where} does not exist: nothing to search ({advice})",)
    if not store_exists(settings, data_dir=data_dir, namespace=namespace):
        place = backend_for(settings, data_dir).location(where)
        return None, (f"{place} holds no store {namespace!r}: nothing to search",)
    return shared_store(data_dir, namespace, settings), ()


def resources_for(context: RunContext, *, write: bool = False) -> Resources:
    """What a run with this context works with, resolved once per context object (a server
    run builds a new context per run; an ingest reuses one for all its events)."""
    cached: Resources | None = context.__dict__.get("_resources")
    if cached is not None:
        return cached
    settings = run_settings(context)
    lm = decision_lm(context, settings)
    store, notes = _store(context, settings, write)
    resources = Resources(
        settings=settings, store=store, lm=lm, injected=context.injected, notes=notes
    )
    context.__dict__["_resources"] = resources
    return resources
