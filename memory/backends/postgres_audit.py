"""The PostgreSQL backend's audit log (`PostgresAuditLog`): the file log's entries, chain and
checks kept as rows in two tables of the namespace's schema.

Its own module so `memory/backends/postgres.py` holds the store's side of the server (SQL
translation, the database, the writer lock); it reaches the server through that module's
connection helpers and takes the namespace's audit advisory lock (`AUDIT_LOCK`) from there.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from psycopg import sql

from memory.audit import RECOVERY, AuditEntry, AuditLog, AuditReadOnlyError, VerifyReport
from memory.audit_chain import (
    GENESIS_PREV,
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
from memory.backends.postgres_connect import (
    AUDIT_LOCK,
    connect,
    ensure_schema,
    lock_key,
    redacted,
    schema_for,
)
from memory.errors import DamagedFileError


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
                last_row = self._last_row(conn)
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
                    made.append(self._damaged(last_row[1], "the last entry"))
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

    def _last_row(self, conn: Any) -> tuple[int, str] | None:
        """(seq, line) of the log's last row; None when it has none (its tables must exist)."""
        query = sql.SQL("SELECT seq, line FROM {} ORDER BY seq DESC LIMIT 1")
        row = conn.execute(query.format(self._table("audit_log"))).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def _last_entry(self) -> AuditEntry | None:
        """The last row alone (every delivery asks; see `AuditLog._last_entry`)."""
        with self._connection() as conn:
            row = self._last_row(conn) if self._has_tables(conn) else None
        return None if row is None else self._damaged(row[1], f"entry {row[0]}")

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
