"""The public face of MemFuse: one object over one data directory and namespace.

It wires settings to the store, the fusion graph (write path) and the retrieval
controller / recipes (read path), so that the CLI, notebooks and services share
one way of doing each thing. The store comes from `graphs.resources`, which opens it through
`memory.opener.open_store`: a memory and the graphs of one process share it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Self

from graphs.resources import acquire_store
from memfuse.agent_api import AgentAPI
from memfuse.results import (
    AskResult,
    IngestMode,
    IngestSummary,
    SearchResult,
    decision_lines,
)
from memfuse.settings import MemFuseSettings, load_settings
from memory.audit import AuditLog
from memory.audit_outbox import audited_as
from memory.backends import backend_for
from memory.backends.base import WriterLock
from memory.errors import MemFuseError
from memory.models import Event, as_events, utc_now
from memory.opener import require_store as _require_store
from memory.read_request import ReadRequest, read_request
from memory.search.config import RECIPES
from memory.store_api import MemoryStoreAPI, StoreStats

__all__ = ["AskResult", "IngestSummary", "MemFuse", "SearchResult", "decision_lines"]

#: Systems `search` can run: the full controller, or one of the single-call recipes.
SEARCH_SYSTEMS = ("memfuse", "naive_rag", "bm25", "hybrid")


def require_store(root: Path, namespace: str, database_url: str | None = None) -> None:
    """A read needs a memory to read: a missing data dir or store is a one-line error
    (`memory.opener.require_store`). The store is the SQLite file, or with a database URL
    (default: MEMFUSE_DATABASE_URL) the namespace's PostgreSQL schema."""
    database_url = database_url if database_url is not None else load_settings().database_url
    _require_store(database_url, data_dir=root, namespace=namespace)


class _Opened(NamedTuple):
    store: MemoryStoreAPI
    settings: MemFuseSettings
    lock: WriterLock
    release: Callable[[], None]


def _open_store(
    data_dir: Path | str | None,
    namespace: str | None,
    settings: MemFuseSettings | None,
    *,
    writer: bool,
    wait_seconds: float,
    must_exist: bool,
) -> _Opened:
    """The store of a data dir and namespace (settings fill what is not given), with its
    writer lock, taken first when `writer`: the store then reads its view after every earlier
    write. `must_exist`: a missing data dir or store is an error, not a new memory."""
    from memory.store import prepare_data_dir  # the store's machinery: with the first store

    settings = settings or load_settings()
    root = Path(data_dir) if data_dir is not None else settings.data_dir
    name = namespace or settings.namespace
    if must_exist:
        _require_store(settings, data_dir=root, namespace=name)
    read_only = not prepare_data_dir(root)  # once: the store's opening is told what it found
    backend = backend_for(settings, root)
    if writer:
        backend.refuse_writes(name, read_only)
    lock = backend.writer_lock(name, wait_seconds)
    if writer:
        lock.acquire()
    try:
        store, release = acquire_store(root, name, settings, read_only=read_only)
    except BaseException:
        lock.release()
        raise
    store.refresh()  # a store this process already held catches up with the lock's holder
    return _Opened(store, settings, lock, release)


class MemFuse(AgentAPI):
    """A memory over one data directory; open it, ingest, search, ask, govern, close.

    `MemFuse()` opens the settings' data dir and namespace (MEMFUSE_DATA_DIR, default
    ./.memfuse), creating it when new; `MemFuse(data_dir=…, namespace=…)` another one.
    `MemFuse.open` does the same with the writer lock and must-exist options."""

    def __init__(
        self,
        store: MemoryStoreAPI | None = None,
        settings: MemFuseSettings | None = None,
        writer_lock: WriterLock | None = None,
        *,
        data_dir: Path | str | None = None,
        namespace: str | None = None,
        release: Callable[[], None] | None = None,
        audit: AuditLog | None = None,
    ):
        """`store`: an open store to wrap (tests, the graphs' shared one); without it the
        memory opens its own. `release` gives a shared store back (see `open`); without it
        `close` closes it. `audit`: the data dir's log (default: the store's, beside it)."""
        if store is None:
            opened = _open_store(
                data_dir, namespace, settings, writer=False, wait_seconds=0.0, must_exist=False
            )
            store, settings, writer_lock, release = opened
        elif data_dir is not None or namespace is not None:
            raise MemFuseError("give an open store or a data dir and namespace, not both")
        settings = settings or load_settings()
        self.store = store
        self.settings = settings
        self._writer_lock = writer_lock
        self._release = release
        if audit is None:
            backend = backend_for(settings, store.data_dir)
            audit = backend.audit_log(store.namespace, read_only=store.read_only)
        self.audit = audit

    @classmethod
    def open(
        cls,
        data_dir: Path | str | None = None,
        namespace: str | None = None,
        settings: MemFuseSettings | None = None,
        *,
        writer: bool = False,
        wait_seconds: float = 0.0,
        must_exist: bool = False,
    ) -> MemFuse:
        """Open a memory; `writer` takes the data dir's writer lock first (one writer per
        data dir and namespace, see `memory.backends.base.WriterLock`), waiting up to
        `wait_seconds`.
        `must_exist`: a data dir or store that is not there is an error (a read), rather
        than a new, empty memory."""
        store, settings, lock, release = _open_store(
            data_dir,
            namespace,
            settings,
            writer=writer,
            wait_seconds=wait_seconds,
            must_exist=must_exist,
        )
        memory = cls(store, settings, lock, release=release)
        if writer:
            try:  # a writer's crash may have left entries committed but not yet in the log
                memory.audit.deliver(store)
            except BaseException:
                memory.close()
                raise
        return memory

    def close(self) -> None:
        try:
            if self._release is not None:
                self._release()
            else:
                self.store.close()
        finally:
            if self._writer_lock is not None:
                self._writer_lock.release()

    @property
    def namespace(self) -> str:
        return self.store.namespace

    def _take_writer(self) -> WriterLock | None:
        """Take the writer lock when not held yet (then the store catches up with what the
        previous holder wrote); returns the lock it took, None when it took none."""
        lock = self._writer_lock
        if lock is None or lock.held:
            return None
        lock.acquire()
        self.store.refresh()
        return lock

    def _writing(self) -> None:
        """Take the writer lock for a write through a memory opened for reading (open with
        `writer=True` to hold it from the start, before the store reads its state), then
        deliver what an earlier writer's crash left in the audit outbox."""
        self._take_writer()
        self.audit.deliver(self.store)

    @contextmanager
    def holding_writer(self) -> Iterator[None]:
        """Hold the writer lock for the block only, when not held already: a long-lived
        service (a served store) writes now and then and must not keep every other writer
        of the data dir out in between."""
        taken = self._take_writer()
        try:
            yield
        finally:
            if taken is not None:
                taken.release()

    @contextmanager
    def audited(self, user: str | None, **details: Any) -> Iterator[None]:
        """Writes inside are recorded as this actor (memory.audit_outbox) and delivered to the
        log when the block ends, failed or not: what committed is on record, nothing else."""
        try:
            with audited_as(self.actor(user), **details):
                yield
        finally:
            self.audit.deliver(self.store)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- write path ---
    def ingest(
        self,
        events: Iterable[Event | dict[str, Any]],
        *,
        mode: IngestMode = "fused",
        progress: bool = False,
        user: str | None = None,
    ) -> IngestSummary:
        """Validate the whole batch (visibility included), then store it; in `fused` mode each
        event goes through the fusion graph. The batch and every fusion plan are audited."""
        import time

        if mode not in ("fused", "plain"):  # before anything is read or written
            raise MemFuseError(f"mode: expected 'fused' or 'plain', got {mode!r}")
        batch = as_events(events)
        visibility = self.visibilities_for(batch)
        self._writing()
        started = time.perf_counter()
        with self.audited(user):
            if mode == "plain":
                report = self.store.add_events(batch, progress=progress, visibility=visibility)
                return IngestSummary(
                    received=len(batch),
                    added=len(report.added),
                    unchanged=len(report.unchanged),
                    seconds=time.perf_counter() - started,
                    mode=mode,
                )
            from graphs.fusion.context import FusionContext
            from graphs.fusion.ingest import ingest_events

            config = FusionContext(settings=self.settings)
            fusion = ingest_events(
                self.store, batch, config=config, progress=progress, visibility=visibility
            )
        return IngestSummary(
            received=len(batch),
            added=fusion.added,
            unchanged=len(batch) - fusion.added,
            seconds=time.perf_counter() - started,
            mode=mode,
            plans_accepted=fusion.accepted,
            plans_rejected=fusion.rejected,
            drained=fusion.drained,
            details={
                "ops": fusion.ops,
                "edges_added": fusion.edges_added,
                "events_per_s": fusion.events_per_s,
                "replayed": fusion.replayed,
                "rejections": fusion.rejections,
            },
        )

    def fuse_pending(self, *, progress: bool = False) -> IngestSummary:
        """Fuse what an interrupted ingest stored but never fused (the fusion queue)."""
        return self.ingest([], mode="fused", progress=progress)

    # --- read path ---
    def search(
        self,
        query: str,
        *,
        system: str = "memfuse",
        time: datetime | None = None,
        user: str | None = None,
        admin: bool = False,
        k: int = 20,
    ) -> SearchResult:
        """The context for a query with provenance, as `user` (only what they may see; default
        MEMFUSE_USER) or an audited `admin` read, as of `time` (default now): events after it
        are not seen. For `memfuse`, the trace too: rounds, who decided each, notes, stop
        reason."""
        if system not in SEARCH_SYSTEMS:
            raise MemFuseError(
                f"unknown system {system!r} (expected one of: {', '.join(SEARCH_SYSTEMS)})"
            )
        request = self._read_request(query, user, admin, time, k, what="query")
        self.store.refresh()  # another process (a CLI ingest) may have written since
        self.admit_read(request, what=f"search ({system})")
        if system == "memfuse":
            from dataclasses import replace

            from graphs.retrieval.run import MEMFUSE, retrieve

            output = retrieve(self.store, request, options=replace(MEMFUSE, settings=self.settings))
            return SearchResult.of_run(output)
        from memory.retrieval import run_recipe

        context, _ = run_recipe(
            self.view_for(request),
            request.question,
            RECIPES[system].sized(request.k),
            requester=request.requester,
            question_time=request.question_time,
        )
        return SearchResult(context=context)

    def ask(
        self,
        question: str,
        *,
        user: str | None = None,
        admin: bool = False,
        time: datetime | None = None,
        k: int = 20,
    ) -> AskResult:
        """Run the `answer` graph: retrieval, then the reader when an LLM is configured. A reader
        that fails leaves `answer` None, `reader_error` set and the evidence in `context`.
        Asked as `user` (default MEMFUSE_USER): the evidence and the answer's prompt hold
        only what they may see; `admin` (audited) reads everything."""
        from graphs.answer import answer_question

        request = self._read_request(question, user, admin, time, k, what="question")
        self.admit_read(request, what="ask")
        return AskResult.of_run(answer_question(self.store, request, settings=self.settings))

    def _read_request(
        self,
        text: object,
        user: str | None,
        admin: bool,
        time: datetime | None,
        k: object,
        *,
        what: str,
    ) -> ReadRequest:
        """The read checked once, here at the edge (`memory.read_request`): the graphs below
        run it as given. Who asks: `user`, else MEMFUSE_USER; the time: `time`, else now."""
        return read_request(
            text,
            question_time=time or utc_now(),
            requester=user or self.settings.user,
            admin=admin,
            k=k,
            what=what,
        )

    def stats(self) -> StoreStats:
        return self.store.stats()

    def get_events(self, ids: Sequence[str]) -> list[Event]:
        """Events by id, unfiltered (the store's own read; `events` lists with visibility)."""
        return self.store.get_events(ids)
