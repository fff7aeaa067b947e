"""What every SQL backend of the store provides: its connection, its writer lock, its audit log.

A store keeps its events, fused nodes, edges, plan log and audit log in one SQL backend: the
SQLite file in the data dir (`memory.backends.sqlite`, the default) or a schema on a
PostgreSQL server (`memory.backends.postgres`). A `Backend` bundles the four things that
differ between them, so the rest of MemFuse never asks which one it runs on:

- the connection (`database`): a `BaseDatabase`, whose nestable, undo-logged transactions
  are written once, here, for every backend;
- the writer lock (`writer_lock`): one writer per namespace for a whole write session;
- the audit log (`audit_log`), kept wherever the store itself lives;
- whether a namespace's store exists (`exists`) and how messages name where it is
  (`location`).

`memory.backends.backend_for` chooses one from the settings (their database URL's scheme).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from memory.audit import AuditLog
from memory.errors import MemFuseError, ReadOnlyDataDirError

POLL_SECONDS = 0.1
"""How often a writer waiting for the writer lock tries again."""


@dataclass
class _Group:
    """The state of one `BaseDatabase.grouped()` transaction."""

    savepoints: int = 0
    lost: bool = False
    """The database rolled the whole transaction back (then nothing of the group is kept)."""


class Cursor(Protocol):
    """What `execute` hands back on every backend (sqlite3's cursor, psycopg's)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class BaseDatabase(ABC):
    """The store's one connection, on any backend, with nestable, undo-logged transactions.

    The undo log lives here, the same for every backend: a backend only says how to begin,
    commit and roll back one transaction (`_begin`, `_commit`, `_rollback`), which of its
    errors are storage faults (`fault`), and how it runs the store's SQL. The SQL the store
    writes is SQLite's, in the subset both backends run (see `memory.backends.postgres`).
    A fusion plan writes fused rows, belong/causal/semantic edges and index entries together,
    and either all of that happens or none of it: `transaction()` gives one database
    transaction (nested calls join the outer one) plus an undo log, so in-memory structures
    touched inside a failed transaction are put back exactly as they were.
    """

    dialect: ClassVar[str]
    where: str
    """The store's location, for messages: a file, or a server and schema."""

    def __init__(self, read_only: bool):
        self.read_only = read_only
        self.lock = threading.RLock()
        self._depth = 0
        self._undo: list[Callable[[], None]] = []
        self._after: list[Callable[[], None]] = []
        self._group: _Group | None = None  # set while a `grouped()` transaction is open
        self.transactions_ended = 0
        """Outermost write transactions ended, committed or rolled back: in-memory state
        derived from the store is current while this (with the store's reloads) is unchanged."""

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """All writes inside commit together; on any exception the backend rolls back and
        every registered undo runs (newest first). Nested calls join the outermost one."""
        with self.lock:
            if self._depth == 1 and self._group is not None:
                with self._savepoint():
                    yield self
                return
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            undo, after = self._begin_outermost()
            try:
                yield self
                self._commit()
            except BaseException as exc:
                self._rollback()
                for restore in reversed(undo):
                    restore()
                if fault := self.fault(exc):
                    raise fault from exc  # rolled back: the message may say nothing was kept
                raise
            finally:
                self._depth = 0
                self._undo, self._after = [], []
                self.transactions_ended += 1
            for hook in after:
                hook()

    def _begin_outermost(self) -> tuple[list[Callable[[], None]], list[Callable[[], None]]]:
        """Begin the outermost write transaction; its (fresh) undo log and after-commit hooks."""
        try:
            self._begin()
        except Exception as exc:
            if fault := self.fault(exc):
                raise fault from exc
            raise
        self._depth = 1
        self._undo, self._after = [], []
        return self._undo, self._after

    @contextmanager
    def grouped(self) -> Iterator[Self]:
        """One database commit for many write transactions (a bulk fusion's plans, two
        commits an event otherwise). Inside, each outermost `transaction()` is a
        savepoint: one that fails is rolled back alone, in the database and in memory, as it
        would have been on its own, and those before it stay. The group commits when it
        ends, also when an error leaves it (what finished is kept, as if each had committed,
        and the error goes on); after-commit hooks run then. A crash before the end keeps
        nothing of the group, so a caller groups only work it can redo (fusion: the events
        stay on the fusion queue until their plan commits). Inside a transaction already,
        the group joins it."""
        with self.lock:
            if self._depth:
                with self.transaction():
                    yield self
                return
            undo, after = self._begin_outermost()
            group = self._group = _Group()
            failure: BaseException | None = None
            try:
                try:
                    yield self
                except BaseException as exc:  # noqa: BLE001 — kept, re-raised after the commit
                    failure = exc
                if group.lost:
                    self._rollback()  # the savepoint's own undo already put memory back
                else:
                    self._commit()
            except BaseException as exc:  # the commit failed: nothing of the group is kept
                self._rollback()
                for restore in reversed(undo):
                    restore()
                after.clear()
                if fault := self.fault(exc):
                    raise fault from exc
                raise
            finally:
                self._depth = 0
                self._group = None
                self._undo, self._after = [], []
                self.transactions_ended += 1
            for hook in after:
                hook()
            if failure is not None:
                raise failure

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """One outermost write transaction inside a group (see `grouped`)."""
        group = self._group
        assert group is not None
        if group.lost:
            raise MemFuseError(
                f"{self.where}: the database rolled back this group of writes after an error; "
                "nothing more is written in it"
            )
        name = f"memfuse_write_{group.savepoints}"
        group.savepoints += 1
        try:
            self._execute_control(f"SAVEPOINT {name}")
        except Exception as exc:
            if fault := self.fault(exc):
                raise fault from exc
            raise
        undo_mark, after_mark = len(self._undo), len(self._after)
        self._depth = 2
        try:
            yield
            self._execute_control(f"RELEASE SAVEPOINT {name}")
        except BaseException as exc:
            undone = self._roll_back_savepoint(name, undo_mark, after_mark)
            for restore in reversed(undone):
                restore()
            if fault := self.fault(exc):
                raise fault from exc
            raise
        finally:
            self._depth = 1
            self.transactions_ended += 1

    def _roll_back_savepoint(
        self, name: str, undo_mark: int, after_mark: int
    ) -> list[Callable[[], None]]:
        """Roll the database back to the savepoint and hand back the undo entries to run:
        the savepoint's own, or every one of the group when the database had already rolled
        the whole transaction back (SQLite does on some errors, a full disk among them)."""
        group = self._group
        assert group is not None
        if self._transaction_open():
            try:
                self._execute_control(f"ROLLBACK TO SAVEPOINT {name}")
                self._execute_control(f"RELEASE SAVEPOINT {name}")
                undone = self._undo[undo_mark:]
                del self._undo[undo_mark:]
                del self._after[after_mark:]
                return undone
            except Exception:  # noqa: BLE001 — the savepoint went with the transaction: lost
                self._rollback()
        group.lost = True
        undone = list(self._undo)
        self._undo.clear()
        self._after.clear()
        return undone

    def _execute_control(self, sql: str) -> None:
        """A transaction-control statement (savepoints), the same on every backend."""
        self.execute(sql)

    @abstractmethod
    def _transaction_open(self) -> bool:
        """Whether the backend still holds the write transaction begun by `_begin` (an
        error may have ended it)."""

    @contextmanager
    def snapshot(self) -> Iterator[Self]:
        """A read transaction: several reads see one committed state (no write lock taken)."""
        with self.lock:
            if self._depth:  # inside a write transaction: its own state is the one to read
                yield self
                return
            self._begin_read()
            try:
                yield self
            finally:
                self._end_read()

    def on_rollback(self, restore: Callable[[], None]) -> None:
        """Register how to undo an in-memory change made inside the current transaction."""
        if not self._depth:
            raise RuntimeError("on_rollback outside a transaction")
        self._undo.append(restore)

    def after_commit(self, hook: Callable[[], None]) -> None:
        """Run `hook` once the outermost transaction has committed (never on rollback)."""
        if not self._depth:
            raise RuntimeError("after_commit outside a transaction")
        self._after.append(hook)

    def discard_new(self) -> None:
        """Close, and remove what opening a new, empty store made (never user data)."""
        self.close()

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Cursor | None: ...

    @abstractmethod
    def data_version(self) -> int:
        """A number that changes when *another* connection commits (our commits keep it)."""

    @abstractmethod
    def truncate_wal(self, attempts: int = 20) -> bool:
        """After a forget: leave no copy of deleted rows in the backend's files (a reader
        can keep them busy: False then, and the next forget tries again)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _begin(self) -> None:
        """Begin a write transaction, taking the store's write lock (one writer at a time)."""

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _rollback(self) -> None:
        """Roll back the open transaction, if the backend still has one."""

    @abstractmethod
    def _begin_read(self) -> None: ...

    @abstractmethod
    def _end_read(self) -> None: ...

    @abstractmethod
    def fault(self, exc: BaseException) -> MemFuseError | None:
        """The one-line error a backend failure stands for (see `storage_fault`), or None."""


class WriterLock(ABC):
    """One writer per data dir and namespace, held for a whole write session.

    Two processes fusing into one memory each decide from their own in-memory view, so the
    second would fuse against a stale graph (measured: 0 packs and 0 edges across two halves
    that fuse into 13 packs and 196 edges one after the other). A writer therefore takes the
    lock *before* it opens the store — so it loads what the previous writer committed — and
    keeps it until it closes. A second writer waits up to `wait_seconds`, then fails with one
    line naming the holder (DataDirBusyError). Readers never take the lock. Whatever holds it
    (an OS file lock, a server's advisory lock) is dropped when its holder dies, even by
    `kill -9`, so a crash never leaves a data dir locked. Exclusive and non-reentrant:
    `acquire` / `release`, or a `with` block.
    """

    def __init__(self, wait_seconds: float = 0.0):
        self.wait_seconds = max(wait_seconds, 0.0)
        self._holding: Any = None  # what holds the lock while held: an open file, a session

    @property
    def held(self) -> bool:
        return self._holding is not None

    def acquire(self) -> WriterLock:
        """Take the lock (waiting up to `wait_seconds`); a no-op when already held."""
        if self._holding is None:
            self._holding = self._take()
        return self

    def release(self) -> None:
        """Give the lock back; a no-op when not held."""
        if self._holding is None:
            return
        try:
            self._give_back(self._holding)
        finally:
            self._holding = None

    @abstractmethod
    def _take(self) -> Any:
        """Wait up to `wait_seconds` for the lock, then DataDirBusyError naming its holder;
        what holds it once taken (given back to `_give_back`)."""

    @abstractmethod
    def _give_back(self, holding: Any) -> None: ...

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Backend(ABC):
    """Where the stores of one data dir keep their SQL state, and what comes with it there.

    One subclass per SQL backend (a new backend is one new module here, registered in
    `memory.backends`); `data_dir` is the data dir as the caller named it, which keeps the
    rest of a store (embedding cache, embedded Chroma) on any backend.
    """

    name: ClassVar[str]
    """How the settings name the backend: a database URL's scheme ("sqlite": no URL)."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)

    @abstractmethod
    def database(self, namespace: str, read_only: bool) -> BaseDatabase:
        """The namespace's connection, its schema ready unless `read_only`."""

    @abstractmethod
    def opens_read_only(self, namespace: str, dir_read_only: bool) -> bool:
        """Whether the namespace's store must open read-only, the data dir being writable or
        not; a one-line DataDirError when it would, and nothing could be read."""

    def refuse_writes(self, namespace: str, dir_read_only: bool) -> None:
        """A write asked of a data dir we may only read is one line before any lock or file
        is touched (readers go on: the store opens read-only)."""
        if dir_read_only:
            raise ReadOnlyDataDirError(f"data dir {self.data_dir}")

    @abstractmethod
    def writer_lock(self, namespace: str, wait_seconds: float = 0.0) -> WriterLock:
        """The namespace's writer lock (not taken yet)."""

    @abstractmethod
    def audit_log(self, namespace: str, read_only: bool = False) -> AuditLog:
        """The namespace's audit log, kept wherever the store itself lives."""

    @abstractmethod
    def exists(self, namespace: str) -> bool:
        """Whether the namespace's store is there to be read (nothing is created)."""

    @abstractmethod
    def location(self, data_dir: str) -> str:
        """Where the stores are, for messages: `data_dir` (the caller's words for the data
        dir) when they are in it, else the server (its password hidden)."""
