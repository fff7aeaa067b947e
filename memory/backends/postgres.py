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
the namespace's schema (`PostgresAuditLog`, the file log's chain and checks over rows).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.pq import TransactionStatus

from memory.audit import (
    GENESIS_PREV,
    RECOVERY,
    AuditEntry,
    AuditLog,
    AuditReadOnlyError,
    VerifyReport,
    _BadLine,
    _draft,
    _fields,
    _line,
    _parsed,
    _sealed,
    _utc,
    id_digest,
    walk_chain,
)
from memory.backends.base import POLL_SECONDS, Backend, BaseDatabase, WriterLock
from memory.errors import (
    DamagedFileError,
    DataDirBusyError,
    DataDirError,
    DiskFullError,
    MemFuseError,
    ReadOnlyDataDirError,
)

SCHEMA_PREFIX = "memfuse_"
CHANGES_TABLE = "memfuse_changes"
# Advisory locks take two int4 keys: a class (which lock) and the namespace's key.
TRANSACTION_LOCK = 0x4D46  # "MF": one write transaction at a time per namespace
WRITER_LOCK = 0x4D47  # a writer session (PostgresWriterLock), held across transactions
AUDIT_LOCK = 0x4D48  # one audit append at a time per namespace
CONNECT_TIMEOUT = 10

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


def schema_for(namespace: str) -> str:
    """The namespace's schema: `memfuse_<namespace>`, shortened with a digest past
    PostgreSQL's 63-byte names (namespaces are ASCII, so bytes are characters)."""
    name = SCHEMA_PREFIX + namespace
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(namespace.encode()).hexdigest()[:8]
    return f"{SCHEMA_PREFIX}{namespace[:45]}_{digest}"


def lock_key(schema: str) -> int:
    """The namespace's advisory-lock key (int4); a collision only serializes two namespaces."""
    return int.from_bytes(hashlib.sha256(schema.encode()).digest()[:4], "big", signed=True)


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the PostgreSQL server"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def pg_fault(exc: BaseException, where: str) -> MemFuseError | None:
    """The one-line error a PostgreSQL failure stands for (as `storage_fault` does for
    SQLite), or None for a programming error (bad SQL, a broken constraint): those stay loud."""
    if isinstance(exc, MemFuseError):
        return exc
    if not isinstance(exc, psycopg.Error):
        return None
    first = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, pg_errors.DiskFull):
        return DiskFullError(where)
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return ReadOnlyDataDirError(where)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return DataDirError(where, "permission denied", f"{where}: permission denied ({first})")
    if isinstance(exc, psycopg.OperationalError):
        return DataDirError(where, "PostgreSQL failed", f"{where}: PostgreSQL failed: {first}")
    return None


def connect(url: str, where: str | None = None, **options: Any) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit), or a one-line DataDirError."""
    where = where or redacted(url)
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, **options)
    except psycopg.Error as exc:
        raise (pg_fault(exc, where) or exc) from exc


def ensure_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Make the schema unless it exists (a role may use a schema made for it by an
    administrator without the right to create schemas: only a missing one is created)."""
    found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if found is None:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))


def store_exists(url: str, namespace: str) -> bool:
    """Whether the server holds the namespace's store (its schema with an events table)."""
    with connect(url) as conn:
        row = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'events'",
            (schema_for(namespace),),
        ).fetchone()
    return row is not None


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


class PostgresAuditLog(AuditLog):
    """The audit log of a store kept on PostgreSQL (this backend): the same entries, chain,
    redaction and `verify`, in two tables of the namespace's schema. `audit_log` holds each
    entry's JSON line exactly as the file would (keyed by seq), `audit_head` the latest seq and
    hash. An append is one transaction under the namespace's audit lock (the file's `flock`),
    so log and head move together and no tail is ever cut short: a head that disagrees with
    the rows, like any line that fails the chain, means someone changed the tables by hand."""

    def __init__(
        self,
        url: str,
        namespace: str,
        *,
        read_only: bool = False,
        clock: Callable[[], datetime] | None = None,
    ):

        self.url = url
        self.schema = schema_for(namespace)
        super().__init__(Path(f"{self.schema}.audit_log"), read_only=read_only, clock=clock)
        self.where = f"{redacted(url)} (table {self.schema}.audit_log)"
        self.head_path = Path("audit_head")  # named in verify's problems
        self._ready = False

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        conn = connect(self.url, self.where)
        try:
            yield conn
        finally:
            conn.close()

    def _ensure_tables(self, conn: Any) -> None:
        if self._ready:
            return

        schema = sql.Identifier(self.schema)
        with conn.transaction():
            self._lock(conn)
            ensure_schema(conn, self.schema)
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.audit_log "
                    "(seq BIGINT PRIMARY KEY, line TEXT NOT NULL)"
                ).format(schema)
            )
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.audit_head (id INT PRIMARY KEY CHECK (id = 0), "
                    "seq BIGINT NOT NULL, hash TEXT NOT NULL)"
                ).format(schema)
            )
        self._ready = True

    def _lock(self, conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (AUDIT_LOCK, lock_key(self.schema)))

    def _table(self, name: str) -> Any:
        return sql.Identifier(self.schema, name)

    def _has_tables(self, conn: Any) -> bool:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s "
            "AND tablename IN ('audit_log', 'audit_head')",
            (self.schema,),
        ).fetchone()
        return bool(row and row[0] == 2)

    def _rows(self, conn: Any) -> list[tuple[int, str]]:
        if not self._has_tables(conn):
            return []
        query = sql.SQL("SELECT seq, line FROM {} ORDER BY seq").format(self._table("audit_log"))
        return [(int(seq), str(line)) for seq, line in conn.execute(query)]

    def _damaged(self, line: str, where: str) -> AuditEntry:
        try:
            return _parsed(line.encode())
        except _BadLine as exc:
            raise DamagedFileError(self.where, f"{where} is not a valid entry: {exc}", RECOVERY)

    def _salt_of(self, conn: Any) -> str:
        query = sql.SQL("SELECT line FROM {} ORDER BY seq LIMIT 1").format(self._table("audit_log"))
        row = conn.execute(query).fetchone() if self._has_tables(conn) else None
        if row is None:
            raise LookupError(f"audit log {self.where} has no complete entry yet")
        genesis = self._damaged(row[0], "the first entry")
        if genesis.op != "genesis" or not isinstance(salt := genesis.details.get("salt"), str):
            raise DamagedFileError(self.where, "the first entry is not a genesis entry", RECOVERY)
        return salt

    def append_many(self, entries: Sequence[tuple[str, dict[str, Any]]]) -> list[AuditEntry]:
        if self.read_only:
            raise AuditReadOnlyError(self.where)
        drafts = [_draft(op, args) for op, args in entries]
        if not drafts:
            return []

        with self._connection() as conn:
            self._ensure_tables(conn)
            with conn.transaction():
                self._lock(conn)  # under it: another process may have appended
                last_row = conn.execute(
                    sql.SQL("SELECT line FROM {} ORDER BY seq DESC LIMIT 1").format(
                        self._table("audit_log")
                    )
                ).fetchone()
                time = _utc(self._clock()).strftime("%Y-%m-%dT%H:%M:%SZ")
                made: list[AuditEntry] = []
                if last_row is None:
                    salt = secrets.token_hex(16)
                    details = {"salt": salt, "format": 1}
                    genesis = AuditEntry(
                        0, "", drafts[0].actor, "genesis", {}, [], [], details, "", ""
                    )
                    made.append(_sealed(0, time, genesis, salt, GENESIS_PREV))
                else:
                    made.append(self._damaged(last_row[0], "the last entry"))
                    salt = self._salt_of(conn)
                for draft in drafts:
                    made.append(_sealed(made[-1].seq + 1, time, draft, salt, made[-1].hash))
                new = made if last_row is None else made[1:]
                with conn.cursor() as cursor:
                    cursor.executemany(
                        sql.SQL("INSERT INTO {} (seq, line) VALUES (%s, %s)").format(
                            self._table("audit_log")
                        ),
                        [(e.seq, _line(_fields(e))[:-1].decode()) for e in new],
                    )
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (id, seq, hash) VALUES (0, %s, %s) ON CONFLICT (id) "
                        "DO UPDATE SET seq = excluded.seq, hash = excluded.hash"
                    ).format(self._table("audit_head")),
                    (new[-1].seq, new[-1].hash),
                )
        return new[-len(drafts) :]

    def _all_entries(self) -> list[AuditEntry]:
        with self._connection() as conn:
            rows = self._rows(conn)
        return [self._damaged(line, f"entry {seq}") for seq, line in rows]

    def digest(self, node_id: str) -> str:
        with self._connection() as conn:
            return id_digest(self._salt_of(conn), node_id)

    def redact(self, ids: Iterable[str]) -> int:
        """Null every plaintext occurrence of `ids` in one transaction, then rewrite the table
        (`VACUUM FULL`) so no old row version keeps them; the chain stays valid."""
        if self.read_only:
            raise AuditReadOnlyError(self.where)
        targets = {node_id for node_id in ids if node_id}
        if not targets:
            return 0

        redacted = 0
        with self._connection() as conn:
            if not self._has_tables(conn):
                return 0
            table = self._table("audit_log")
            with conn.transaction():
                self._lock(conn)
                changed: list[tuple[str, int]] = []
                for seq, line in self._rows(conn):
                    try:
                        raw = json.loads(line)
                        hits = sum(node_id in targets for node_id in raw["ids"])
                    except (ValueError, TypeError, KeyError):  # not an entry: never guess
                        if any(target in line for target in targets):
                            raise DamagedFileError(
                                self.where, f"entry {seq} cannot be redacted", RECOVERY
                            ) from None
                        continue
                    if hits:
                        raw["ids"] = [None if i in targets else i for i in raw["ids"]]
                        changed.append((_line(raw)[:-1].decode(), seq))
                        redacted += hits
                if changed:
                    with conn.cursor() as cursor:
                        cursor.executemany(
                            sql.SQL("UPDATE {} SET line = %s WHERE seq = %s").format(table),
                            changed,
                        )
            if redacted:
                conn.execute(sql.SQL("VACUUM FULL {}").format(table))
        return redacted

    def verify(self) -> VerifyReport:
        """Walk the whole chain as of one snapshot; each problem names its entry (by row)."""
        with self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = self._rows(conn)
            head_row = (
                conn.execute(
                    sql.SQL("SELECT seq, hash FROM {} WHERE id = 0").format(
                        self._table("audit_head")
                    )
                ).fetchone()
                if rows or self._has_tables(conn)
                else None
            )
        problems, count, previous, redactions = walk_chain(line.encode() for _, line in rows)
        head = None if head_row is None else json.dumps({"seq": head_row[0], "hash": head_row[1]})
        problems += self._head_problems(None if head is None else head.encode(), previous)
        problems += redactions.problems()
        return VerifyReport(ok=not problems, entries=count, problems=problems)


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
