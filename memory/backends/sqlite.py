"""The SQLite backend (the default): every store is a file in the data dir.

`<data_dir>/<namespace>.sqlite` holds the store (in WAL mode), `<namespace>.writer.lock` is
its writer lock (an OS file lock) and `<namespace>.audit.jsonl` its audit log. The file
helpers serve every SQLite file of a data dir, the embedding cache's too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from memory.audit import AuditLog
from memory.backends.base import POLL_SECONDS, Backend, BaseDatabase, WriterLock
from memory.errors import (
    DataDirBusyError,
    DataDirError,
    MemFuseError,
    ReadOnlyDataDirError,
    storage_fault,
)


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

    def _transaction_open(self) -> bool:
        return self.conn.in_transaction

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


class FileWriterLock(WriterLock):
    """The writer lock as an exclusive `flock` on one lock file, which names its holder
    (`pid N`) for the busy message; the OS drops the lock when the holder dies."""

    def __init__(self, path: Path, wait_seconds: float = 0.0):
        super().__init__(wait_seconds)
        self.path = Path(path)

    def _take(self) -> IO[str]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 — kept open while held
        deadline = time.monotonic() + self.wait_seconds
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self._holder(handle)
                    handle.close()
                    raise DataDirBusyError(str(self.path.parent), holder, self.wait_seconds)
                time.sleep(POLL_SECONDS)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        return handle

    def _give_back(self, holding: IO[str]) -> None:
        try:
            fcntl.flock(holding.fileno(), fcntl.LOCK_UN)
        finally:
            holding.close()

    @staticmethod
    def _holder(handle: IO[str]) -> str:
        handle.seek(0)
        return handle.read().strip() or "unknown process"


class SQLiteBackend(Backend):
    """Stores as files in the data dir: `<namespace>.sqlite`, `.writer.lock`, `.audit.jsonl`."""

    name = "sqlite"

    def store_file(self, namespace: str) -> Path:
        return self.data_dir / f"{namespace}.sqlite"

    def database(self, namespace: str, read_only: bool) -> BaseDatabase:
        return Database(self.store_file(namespace), read_only=read_only)

    def opens_read_only(self, namespace: str, dir_read_only: bool) -> bool:
        """Also a store file we may only read (mode 444) opens read-only; a read-only data
        dir without the file has nothing to read and nowhere to make it."""
        path = self.store_file(namespace)
        read_only = dir_read_only or not sqlite_writable(path)
        if read_only and not path.is_file():
            raise DataDirError(
                self.data_dir,
                "read-only, no store",
                f"data dir {self.data_dir} is read-only "
                f"and holds no store {namespace!r}, so none can be made there",
            )
        return read_only

    def refuse_writes(self, namespace: str, dir_read_only: bool) -> None:
        """Also a store file we may only read (mode 444 in a writable dir) takes no write."""
        super().refuse_writes(namespace, dir_read_only)
        if not sqlite_writable(path := self.store_file(namespace)):
            raise ReadOnlyDataDirError(path)

    def writer_lock(self, namespace: str, wait_seconds: float = 0.0) -> WriterLock:
        return FileWriterLock(self.data_dir / f"{namespace}.writer.lock", wait_seconds)

    def audit_log(self, namespace: str, read_only: bool = False) -> AuditLog:
        return AuditLog(self.data_dir / f"{namespace}.audit.jsonl", read_only=read_only)

    def exists(self, namespace: str) -> bool:
        return self.store_file(namespace).is_file()

    def location(self, data_dir: str) -> str:
        return data_dir
