"""The PostgreSQL backend: the store, its plan log, writer lock and audit log on a shared server.

Chosen by a database URL (`MEMFUSE_DATABASE_URL`, e.g. `postgresql://memfuse@db:5432/memfuse`);
without one every store is its SQLite file in the data dir, as before. Many households share
one server: each namespace is one PostgreSQL schema (`memfuse_<namespace>`) holding the same
tables as a SQLite store, so nothing of one household is in another's tables.

The store's SQL is written once, in the subset of SQLite that PostgreSQL also runs; what
differs is translated here and nowhere else (`translate`):

- `?` parameters become psycopg's `%s` (and every `%` becomes `%%`, quoted ones too);
- `CREATE TABLE`: `REAL` is a double (SQLite's REAL is 8 bytes, PostgreSQL's 4), `TEXT`
  compares bytewise (`COLLATE "C"`, SQLite's BINARY: `ORDER BY` gives the same order on any
  server locale), and a table SQLite gives an implicit `rowid` gets an explicit identity
  column of that name (so `ORDER BY rowid`, insertion order, means the same); `WITHOUT ROWID`
  tables get none;
- `INSERT OR IGNORE` / `INSERT OR REPLACE` and `PRAGMA` are refused: the store says
  `INSERT ... ON CONFLICT`, which both run, and backend settings live in the `Database`
  classes.

SQLite's transaction semantics are kept: `BEGIN IMMEDIATE` (one writer at a time) is a
transaction-scoped advisory lock per namespace; `PRAGMA data_version` (commits by *other*
connections) is a per-namespace change counter bumped by every committing write transaction,
this connection discounting the bumps it made itself (see `PostgresDatabase.data_version`).
The writer lock is a session advisory lock (`PostgresWriterLock`), the audit log two tables of
the namespace's schema (`PostgresAuditLog`, the file log's chain and checks over rows, in
`memory/backends/postgres_audit.py`); both connect through `memory/backends/postgres_connect.py`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from memory.audit import AuditLog
from memory.backends.base import POLL_SECONDS, Backend, BaseDatabase, WriterLock
from memory.backends.postgres_audit import PostgresAuditLog
from memory.backends.postgres_connect import (
    CHANGES_TABLE,
    TRANSACTION_LOCK,
    WRITER_LOCK,
    connect,
    ensure_schema,
    lock_key,
    pg_fault,
    redacted,
    schema_for,
    store_exists,
)
from memory.errors import (
    DataDirBusyError,
    DataDirError,
    MemFuseError,
    ReadOnlyDataDirError,
)

_QUOTED = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")
_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\b", re.IGNORECASE)
_WITHOUT_ROWID = re.compile(r"\)\s*WITHOUT\s+ROWID\s*$", re.IGNORECASE)
_SQLITE_ONLY = re.compile(r"^\s*(PRAGMA\b|INSERT\s+OR\s+\w+)", re.IGNORECASE)
_DDL = re.compile(r"^\s*CREATE\b", re.IGNORECASE)


@lru_cache(maxsize=512)
def translate(statement: str) -> str:
    """The store's SQL (SQLite's dialect) as PostgreSQL runs it; ValueError on what only
    SQLite runs, so a statement that would mean something else is never guessed at."""
    if match := _SQLITE_ONLY.match(statement):
        raise ValueError(
            f"{match.group(1).split()[0].upper()} {match.group(1).split()[-1].upper()} is "
            "SQLite's own: write INSERT ... ON CONFLICT (both dialects run it), and put backend "
            f"settings in the Database class: {statement!r}"
        )
    create = bool(_CREATE_TABLE.match(statement))
    parts = [part.replace("%", "%%") for part in _QUOTED.split(statement)]  # psycopg's escape
    for index in range(0, len(parts), 2):  # the even parts are outside quotes
        part = parts[index].replace("?", "%s")
        if create:
            part = re.sub(r"\bREAL\b", "DOUBLE PRECISION", part, flags=re.IGNORECASE)
            part = re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', part, flags=re.IGNORECASE)
        parts[index] = part
    translated = "".join(parts)
    if create:
        if _WITHOUT_ROWID.search(translated):
            translated = _WITHOUT_ROWID.sub(")", translated)
        else:
            end = translated.rstrip().rindex(")")
            rowid = ", rowid BIGINT GENERATED ALWAYS AS IDENTITY"
            translated = translated[:end] + rowid + translated[end:]
    return translated


class PostgresDatabase(BaseDatabase):
    """One namespace's schema on a PostgreSQL server, through one connection.

    The same surface as the SQLite `Database` (transactions with an undo log, snapshots,
    `data_version`), so `MemoryStore` and `EdgeStore` run unchanged on it. A `read_only`
    store (a data dir we may not write) opens a read-only session on an existing schema.
    """

    dialect = "postgresql"

    def __init__(self, url: str, namespace: str, read_only: bool = False):
        super().__init__(read_only)
        self.url = url
        self.namespace = namespace
        self.schema = schema_for(namespace)
        self.where = f"{redacted(url)} (schema {self.schema})"
        self._key = lock_key(self.schema)
        self._last_seen = 0  # the change counter as this connection last read or wrote it
        self._foreign = 0  # how many times it was seen moved by another connection
        self.conn = connect(url, self.where, application_name=f"memfuse pid {os.getpid()}")
        try:
            self._prepare()
        except BaseException as exc:
            self.conn.close()
            if fault := pg_fault(exc, self.where):
                raise fault from exc
            raise

    def _prepare(self) -> None:
        schema = sql.Identifier(self.schema)
        if self.read_only:
            if not self._has_store():
                raise DataDirError(
                    self.where,
                    "read-only, no store",
                    f"the data dir is read-only and {self.where} holds no store "
                    f"{self.namespace!r}, so none can be made there",
                )
            self.conn.execute("SET default_transaction_read_only = on")
        else:
            with self.conn.transaction():  # two first opens at once: one makes, one waits
                self.conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", (TRANSACTION_LOCK, self._key)
                )
                ensure_schema(self.conn, self.schema)
                table = sql.Identifier(self.schema, CHANGES_TABLE)
                self.conn.execute(
                    sql.SQL(
                        "CREATE TABLE IF NOT EXISTS {} (id INT PRIMARY KEY CHECK (id = 0), "
                        "version BIGINT NOT NULL)"
                    ).format(table)
                )
                self.conn.execute(
                    sql.SQL("INSERT INTO {} VALUES (0, 0) ON CONFLICT DO NOTHING").format(table)
                )
        self.conn.execute(sql.SQL("SET search_path TO {}").format(schema))
        self._last_seen = self._counter()

    def _has_store(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = %s",
            (self.schema, CHANGES_TABLE),
        ).fetchone()
        return row is not None

    def _counter(self) -> int:
        row = self.conn.execute(f"SELECT version FROM {CHANGES_TABLE} WHERE id = 0").fetchone()
        return int(row[0]) if row else 0

    # --- transactions -------------------------------------------------------------------

    def _begin(self) -> None:
        if self.read_only:
            raise ReadOnlyDataDirError(self.where)
        # SQLite's BEGIN IMMEDIATE: the namespace's write lock, released by COMMIT/ROLLBACK
        self.conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({TRANSACTION_LOCK}, {self._key})")

    def _commit(self) -> None:
        # one round trip: the bump's result is the first of the two statements' results
        row = self.conn.execute(
            f"UPDATE {CHANGES_TABLE} SET version = version + 1 WHERE id = 0 RETURNING version; "
            "COMMIT"
        ).fetchone()
        version = int(row[0]) if row else self._last_seen
        if version != self._last_seen + 1:  # others committed since this connection looked
            self._foreign += 1
        self._last_seen = version

    def _rollback(self) -> None:
        if self.conn.closed or self.conn.info.transaction_status == TransactionStatus.IDLE:
            return
        try:
            self.conn.execute("ROLLBACK")
        except psycopg.Error:  # the connection broke: the server rolled back on its own
            pass

    def _transaction_open(self) -> bool:
        return not self.conn.closed and self.conn.info.transaction_status in (
            TransactionStatus.INTRANS,
            TransactionStatus.INERROR,
        )

    def _begin_read(self) -> None:
        # one snapshot for every statement (READ COMMITTED would take one per statement)
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _end_read(self) -> None:
        self.conn.execute("COMMIT")

    def fault(self, exc: BaseException) -> MemFuseError | None:
        return pg_fault(exc, self.where) if isinstance(exc, psycopg.Error) else None

    # --- statements -----------------------------------------------------------------------

    def execute(self, sql_text: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        statement = translate(sql_text)
        with self.lock:
            if _DDL.match(sql_text) and not self._depth:
                if self.read_only:  # the schema exists (checked on open): nothing to make
                    return self.conn.execute("SELECT 1 WHERE false")
                with self.conn.transaction():  # two processes making one table: one waits
                    self.conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)", (TRANSACTION_LOCK, self._key)
                    )
                    return self.conn.execute(statement, tuple(params))
            return self.conn.execute(statement, tuple(params))

    def executemany(self, sql_text: str, rows: Iterable[Sequence[Any]]) -> psycopg.Cursor[Any]:
        statement = translate(sql_text)
        with self.lock:
            cursor = self.conn.cursor()
            cursor.executemany(statement, [tuple(row) for row in rows])
            return cursor

    def data_version(self) -> int:
        """Changes when another connection committed to this namespace since the last call
        (SQLite's `PRAGMA data_version`): every write transaction bumps the namespace's
        counter as it commits, and `_commit` discounts a bump that was this connection's own
        (one round trip, like the PRAGMA)."""
        with self.lock:
            if self._depth:  # inside our own write: nothing foreign can be seen now
                return self._foreign
            version = self._counter()
            if version != self._last_seen:
                self._foreign += 1
                self._last_seen = version
            return self._foreign

    def truncate_wal(self, attempts: int = 20) -> bool:
        """After a forget: rewrite the namespace's tables (`VACUUM FULL`), so the deleted
        rows' old tuples are in no table file any more. PostgreSQL's own WAL, archives and
        backups are the server operator's (see the README's scale-out section)."""
        if self.read_only:
            return True
        with self.lock:
            if self._depth:
                return False
            tables = [
                row[0]
                for row in self.conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s", (self.schema,)
                )
            ]
            for table in tables:
                self.conn.execute(
                    sql.SQL("VACUUM FULL {}").format(sql.Identifier(self.schema, table))
                )
        return True

    def close(self) -> None:
        with self.lock:
            self.conn.close()


class PostgresWriterLock(WriterLock):
    """The writer lock of a namespace on a PostgreSQL server: a session advisory lock, held
    on a connection of its own for the whole write session, so writers on different machines
    exclude each other as the file lock does on one. The server drops it when its holder's
    connection ends, even after a `kill -9`."""

    def __init__(self, url: str, namespace: str, wait_seconds: float = 0.0):
        self.url = url
        self.namespace = namespace
        self.schema = schema_for(namespace)
        self.where = f"{redacted(url)} (schema {self.schema})"
        super().__init__(wait_seconds)

    def _take(self) -> psycopg.Connection[Any]:
        conn = connect(self.url, self.where, application_name=f"memfuse pid {os.getpid()}")
        key = lock_key(self.schema)
        deadline = time.monotonic() + self.wait_seconds
        try:
            while True:
                row = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", (WRITER_LOCK, key)
                ).fetchone()
                if row and row[0]:
                    break
                if time.monotonic() >= deadline:
                    raise DataDirBusyError(
                        self.where, self._holder_of(conn, key), self.wait_seconds
                    )
                time.sleep(POLL_SECONDS)
        except BaseException as exc:
            conn.close()
            if fault := pg_fault(exc, self.where):
                raise fault from exc
            raise
        return conn

    @staticmethod
    def _holder_of(conn: psycopg.Connection[Any], key: int) -> str:
        row = conn.execute(
            "SELECT a.application_name, a.client_addr FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.classid::bigint = %s AND l.objid::bigint = %s AND l.objsubid = 2 AND l.granted "
            "AND l.database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())",
            (WRITER_LOCK, key & 0xFFFFFFFF),
        ).fetchone()
        if row is None:
            return "unknown process"
        name, address = row
        where = f" on {address}" if address else ""
        return f"{name or 'a session'}{where}"

    def _give_back(self, holding: psycopg.Connection[Any]) -> None:
        holding.close()  # ending the session releases its advisory locks


class PostgresBackend(Backend):
    """Stores as schemas on the server a database URL names (`memfuse_<namespace>`): the
    store, its writer lock and its audit log all there, none of them in the data dir."""

    name = "postgresql"

    def __init__(self, url: str, data_dir: Path):
        super().__init__(data_dir)
        self.url = url

    def database(self, namespace: str, read_only: bool) -> BaseDatabase:
        return PostgresDatabase(self.url, namespace, read_only=read_only)

    def opens_read_only(self, namespace: str, dir_read_only: bool) -> bool:
        """Only the data dir decides; a read-only session on a namespace without a schema
        is refused when it connects (`PostgresDatabase`)."""
        return dir_read_only

    def writer_lock(self, namespace: str, wait_seconds: float = 0.0) -> WriterLock:
        return PostgresWriterLock(self.url, namespace, wait_seconds)

    def audit_log(self, namespace: str, read_only: bool = False) -> AuditLog:
        return PostgresAuditLog(self.url, namespace, read_only=read_only)

    def exists(self, namespace: str) -> bool:
        return store_exists(self.url, namespace)

    def location(self, data_dir: str) -> str:
        return redacted(self.url)
