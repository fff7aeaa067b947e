"""How MemFuse reaches a PostgreSQL server: connections, a namespace's schema and lock keys,
and the one-line errors its failures stand for.

Shared by the backend's database and writer lock (`memory.backends.postgres`) and its audit
log (`memory.backends.postgres_audit`), so that neither of those imports the other's module.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from memory.errors import DataDirError, DiskFullError, MemFuseError, ReadOnlyDataDirError

SCHEMA_PREFIX = "memfuse_"
CHANGES_TABLE = "memfuse_changes"
# Advisory locks take two int4 keys: a class (which lock) and the namespace's key.
TRANSACTION_LOCK = 0x4D46  # "MF": one write transaction at a time per namespace
WRITER_LOCK = 0x4D47  # a writer session (PostgresWriterLock), held across transactions
AUDIT_LOCK = 0x4D48  # one audit append at a time per namespace
CONNECT_TIMEOUT = 10


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
