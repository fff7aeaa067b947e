"""Typed edges between events and fused nodes: in-process adjacency, persisted in SQL.

Also home of `BaseDatabase`, the store's one connection, and of `Database`, its SQLite
implementation (the default; `memory.pg.PostgresDatabase` is the other): a fusion plan
writes fused rows, belong/causal/semantic edges and index entries together, and either all
of that happens or none of it. `transaction()` gives one database transaction (nested calls
join the outer one) plus an undo log, so in-memory structures touched inside a failed
transaction are put back exactly as they were.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from memory.errors import (
    DataDirError,
    InvalidEdgeError,
    MemFuseError,
    NodeNotFoundError,
    storage_fault,
)
from memory.models import Edge, EdgeType, NodeKind

_EdgeKey = tuple[str, str, str]


def sqlite_writable(path: Path) -> bool:
    """Whether SQLite may write `path`: its folder (journal, -wal, -shm beside it) and, when
    it exists, the file itself. A file we may only read (mode 444 in a writable folder) is
    opened read-only, so reads still work; a read-write open would fail on the first pragma."""
    path = Path(path)
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def connect_sqlite(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), or a read-only one.

    A WAL database in a folder we cannot write opens read-only only while its -shm file
    exists (a writer is connected); otherwise nothing could create it, so the file is read
    as immutable: a read-only dir has no writer that could change it underneath.
    """
    if not read_only:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        return conn
    if not Path(path).is_file():  # mode=ro would say "unable to open"; say what is wrong
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    uri = Path(path).resolve().as_uri()
    try:
        return _probed(uri + "?mode=ro")
    except sqlite3.OperationalError:  # no -shm file, and none can be made
        wal = Path(f"{path}-wal")
        if wal.is_file() and wal.stat().st_size > 0:  # immutable would silently skip them
            raise DataDirError(
                wal,
                "unmerged writes",
                f"{wal} holds writes not yet merged into "
                f"{Path(path).name}, which a read-only dir cannot take in; open the data dir "
                "once with write access (any command does it)",
            ) from None
        return _probed(uri + "?mode=ro&immutable=1")


def _probed(uri: str) -> sqlite3.Connection:
    """Connect and read the schema once, so a file that cannot be read fails here."""
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


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
    writes is SQLite's, in the subset both backends run (see `memory.pg.translate`).
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

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """All writes inside commit together; on any exception the backend rolls back and
        every registered undo runs (newest first). Nested calls join the outermost one."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            try:
                self._begin()
            except Exception as exc:
                if fault := self.fault(exc):
                    raise fault from exc
                raise
            self._depth = 1
            undo: list[Callable[[], None]] = []
            after: list[Callable[[], None]] = []
            self._undo, self._after = undo, after
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
            for hook in after:
                hook()

    @contextmanager
    def snapshot(self) -> Iterator[Self]:
        """A read transaction: several reads see one committed state (no write lock taken)."""
        with self.lock:
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


class Database(BaseDatabase):
    """One SQLite connection in WAL mode (the default backend: a file in the data dir)."""

    dialect = "sqlite"

    def __init__(self, path: Path, read_only: bool = False):
        super().__init__(read_only)
        self.path = Path(path)
        self.where = str(self.path)
        try:
            self.conn = connect_sqlite(self.path, read_only)
            if not read_only:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints
                # A forgotten event must leave no bytes behind: deleted content is zeroed
                # (see MemoryStore.forget_events, which also truncates the WAL after).
                self.conn.execute("PRAGMA secure_delete=ON")
        except sqlite3.Error as exc:
            if fault := storage_fault(exc, self.path):
                raise fault from exc
            raise

    def _begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        self.conn.execute("COMMIT")

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def _begin_read(self) -> None:
        self.conn.execute("BEGIN")  # deferred: a read snapshot, no write lock taken

    def _end_read(self) -> None:
        self.conn.execute("COMMIT")

    def fault(self, exc: BaseException) -> MemFuseError | None:
        return storage_fault(exc, self.path) if isinstance(exc, sqlite3.Error) else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        return self.conn.executemany(sql, rows)

    def truncate_wal(self, attempts: int = 20) -> bool:
        """Merge the WAL into the database and empty it, so the old page images it holds (of
        rows deleted since) are gone from disk. A reader in the middle of a read keeps the
        WAL busy: retried for about a second, then False (the next forget truncates it)."""
        if self.read_only:
            return True
        for attempt in range(attempts):
            with self.lock:
                busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                return True
            time.sleep(0.05 * (attempt + 1) / attempts)
        return False

    def data_version(self) -> int:
        """SQLite's counter of commits made by *other* connections (ours do not move it)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def discard_new(self) -> None:
        """Close, and delete the empty file (and its WAL and shared memory) this open made."""
        self.close()
        for leftover in (
            self.path,
            *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")),
        ):
            leftover.unlink(missing_ok=True)

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _stored(edge: Edge) -> Edge:
    """The canonical stored form: a semantic edge keeps its endpoints in sorted order."""
    if edge.type == EdgeType.SEMANTIC and edge.src > edge.dst:
        return Edge(src=edge.dst, dst=edge.src, type=edge.type, weight=edge.weight)
    return edge


class EdgeStore:
    """Typed adjacency (node → type → edges) mirrored in the `edges` table.

    Legal edges: belong = event → fused node; causal = event → event (directed; the
    reverse of an existing causal edge is a contradiction); semantic = any ↔ any, one row
    per unordered pair. No self-loops; both endpoints must exist.
    """

    def __init__(self, db: BaseDatabase, kind_of: Callable[[str], NodeKind | None]):
        self._db = db
        self._kind_of = kind_of
        self._edges: dict[_EdgeKey, Edge] = {}
        self._adj: dict[str, dict[EdgeType, dict[_EdgeKey, Edge]]] = {}
        self._counts: Counter[str] = Counter()
        db.execute(
            "CREATE TABLE IF NOT EXISTS edges (src TEXT NOT NULL, dst TEXT NOT NULL, "
            "type TEXT NOT NULL, weight REAL NOT NULL, PRIMARY KEY (src, dst, type)) "
            "WITHOUT ROWID"
        )
        db.execute("CREATE INDEX IF NOT EXISTS edges_dst ON edges (dst)")
        self.reload()

    def reload(self) -> None:
        """Re-read every edge (a reader catching up with another process's commits); the
        new adjacency replaces the old in one step."""
        fresh = EdgeStore.__new__(EdgeStore)
        fresh._edges, fresh._adj, fresh._counts = {}, {}, Counter()
        for src, dst, kind, weight in self._db.execute("SELECT src, dst, type, weight FROM edges"):
            fresh._link(Edge(src=src, dst=dst, type=EdgeType(kind), weight=weight))
        self._edges, self._adj, self._counts = fresh._edges, fresh._adj, fresh._counts

    # --- in-memory adjacency ----------------------------------------------------------

    def _link(self, edge: Edge) -> None:
        key = edge.key()
        self._edges[key] = edge
        for node in (edge.src, edge.dst):
            self._adj.setdefault(node, {}).setdefault(edge.type, {})[key] = edge
        self._counts[edge.type.value] += 1

    def _unlink(self, edge: Edge) -> None:
        key = edge.key()
        del self._edges[key]
        for node in (edge.src, edge.dst):
            by_type = self._adj[node]
            del by_type[edge.type][key]
            if not by_type[edge.type]:
                del by_type[edge.type]
            if not by_type:
                del self._adj[node]
        self._counts[edge.type.value] -= 1

    # --- validation -------------------------------------------------------------------

    def check(self, edge: Edge) -> None:
        """Raise InvalidEdgeError (or NodeNotFoundError) if `edge` may not be stored."""
        kind = edge.type.value
        if edge.src == edge.dst:
            raise InvalidEdgeError(edge.src, edge.dst, kind, "self-loops are not allowed")
        src_kind, dst_kind = self._kind_of(edge.src), self._kind_of(edge.dst)
        if src_kind is None:
            raise NodeNotFoundError(edge.src)
        if dst_kind is None:
            raise NodeNotFoundError(edge.dst)
        if edge.type == EdgeType.BELONG:
            if src_kind != NodeKind.EVENT or dst_kind != NodeKind.FUSED:
                raise InvalidEdgeError(
                    edge.src,
                    edge.dst,
                    kind,
                    f"must go from an event to a fused node, got {src_kind} -> {dst_kind}",
                )
        elif edge.type == EdgeType.CAUSAL:
            if src_kind != NodeKind.EVENT or dst_kind != NodeKind.EVENT:
                raise InvalidEdgeError(
                    edge.src,
                    edge.dst,
                    kind,
                    f"must join two events, got {src_kind} -> {dst_kind}",
                )
            if (edge.dst, edge.src, kind) in self._edges:
                raise InvalidEdgeError(
                    edge.src, edge.dst, kind, "the reverse causal edge already exists"
                )

    # --- writes (each joins the caller's transaction, or runs in its own) -------------

    def add(self, edge: Edge) -> bool:
        """Store a legal edge; False if it is already stored (semantic: in either order)."""
        self.check(edge)
        edge = _stored(edge)
        if edge.key() in self._edges:
            return False
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO edges (src, dst, type, weight) VALUES (?, ?, ?, ?)",
                (edge.src, edge.dst, edge.type.value, edge.weight),
            )
            self._link(edge)
            db.on_rollback(lambda: self._unlink(edge))
        return True

    def remove(self, edge: Edge) -> bool:
        stored = self._edges.get(_stored(edge).key())
        if stored is None:
            return False
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?",
                (stored.src, stored.dst, stored.type.value),
            )
            self._unlink(stored)
            db.on_rollback(lambda: self._link(stored))
        return True

    def set_members(self, fused_id: str, member_ids: Sequence[str]) -> None:
        """Make the belong edges into `fused_id` exactly `member_ids`."""
        wanted = [Edge(src=m, dst=fused_id, type=EdgeType.BELONG) for m in member_ids]
        for edge in wanted:
            self.check(edge)
        wanted_keys = {edge.key() for edge in wanted}
        current = self.neighbors(fused_id, EdgeType.BELONG)
        with self._db.transaction():
            for edge in current:
                if edge.key() not in wanted_keys:
                    self.remove(edge)
            for edge in wanted:
                self.add(edge)

    def remove_node(self, node_id: str) -> int:
        """Drop every edge touching `node_id` (so none dangles); returns how many."""
        touching = self.neighbors(node_id)
        with self._db.transaction():
            for edge in touching:
                self.remove(edge)
        return len(touching)

    @contextmanager
    def transaction(self) -> Iterator[EdgeStore]:
        """Commit several edge writes atomically."""
        with self._db.transaction():
            yield self

    # --- reads ------------------------------------------------------------------------

    def has(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        """Causal and belong edges are directed here; a semantic edge matches either order."""
        if edge_type == EdgeType.SEMANTIC:
            src, dst = sorted((src, dst))
        return (src, dst, edge_type.value) in self._edges

    def get(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None:
        if edge_type == EdgeType.SEMANTIC:
            src, dst = sorted((src, dst))
        return self._edges.get((src, dst, edge_type.value))

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching `node_id` in either direction, as stored (use Edge.other)."""
        by_type = self._adj.get(node_id)
        if not by_type:
            return []
        if edge_type is not None:
            return list(by_type.get(edge_type, {}).values())
        return [edge for edges in by_type.values() for edge in edges.values()]

    def counts(self) -> dict[str, int]:
        return {t.value: self._counts[t.value] for t in EdgeType}

    def __len__(self) -> int:
        return len(self._edges)
