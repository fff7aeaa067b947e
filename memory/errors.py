"""Typed errors of the memory layer.

Every error builds its own one-line message so that the CLI can print it as is,
and carries the fields a caller needs to react (which event, which field).
"""

from __future__ import annotations

import errno
import sqlite3


class MemFuseError(Exception):
    """Base of every error MemFuse raises on purpose (bad input, conflicts, rejections)."""


class InvalidEventError(MemFuseError):
    """An event failed validation; names the event and the field at fault."""

    def __init__(self, event_id: str | None, field: str, problem: str, position: int | None = None):
        self.event_id = event_id
        self.field = field
        self.problem = problem
        self.position = position
        where = f"event {event_id!r}" if event_id else "event"
        if position is not None:
            where += f" (record {position})"
        super().__init__(f"{where}: field '{field}': {problem}")


class EventConflictError(MemFuseError):
    """An event id already exists in the store with different content (events are immutable)."""

    def __init__(self, event_id: str, fields: list[str]):
        self.event_id = event_id
        self.fields = fields
        super().__init__(
            f"event {event_id!r} already exists with different content "
            f"(differs in: {', '.join(fields)}); events are immutable"
        )


class NodeNotFoundError(MemFuseError):
    """A referenced event or fused node does not exist."""

    def __init__(self, node_id: str, kind: str = "node"):
        self.node_id = node_id
        self.kind = kind
        super().__init__(f"{kind} {node_id!r} not found")


class InvalidEdgeError(MemFuseError):
    """An edge is illegal for its type (wrong endpoint kinds, self-loop, duplicate)."""

    def __init__(self, src: str, dst: str, edge_type: str, problem: str):
        self.src, self.dst, self.edge_type = src, dst, edge_type
        super().__init__(f"{edge_type} edge {src!r} -> {dst!r}: {problem}")


class InputFormatError(MemFuseError):
    """An input file cannot be read in the expected format."""


class ConfigurationError(MemFuseError):
    """A setting is missing or inconsistent (e.g. an LLM path asked for with no endpoint)."""


class InvalidPlanError(MemFuseError):
    """A fusion plan cannot be read (malformed JSON, unknown operation, missing field).

    The fusion graph turns it into a validation failure, so a bad plan is rejected, never a crash.
    """

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"malformed fusion plan: {problem}")


class InvalidQueryError(MemFuseError):
    """A search was asked with an empty or malformed query."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"invalid query: {problem}")


class PermissionDeniedError(MemFuseError):
    """Someone asked for a change or a read the memory's rules do not allow them."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"not allowed: {problem}")


class UnknownRecipeError(ConfigurationError):
    """A search recipe was named that does not exist."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = known
        super().__init__(f"unknown search recipe {name!r} (expected one of: {', '.join(known)})")


class InvalidFusedNodeError(MemFuseError):
    """A fused node cannot be stored (id without the `fused_` prefix, repeated members)."""

    def __init__(self, node_id: str, problem: str):
        self.node_id = node_id
        self.problem = problem
        super().__init__(f"fused node {node_id!r}: {problem}")


class PlanConflictError(MemFuseError):
    """A plan id is already in the store's plan log (ids must be unique per attempt)."""

    def __init__(self, plan_id: str):
        self.plan_id = plan_id
        super().__init__(f"plan {plan_id!r} is already in the plan log; refusing to log it twice")


class ProgramVersionError(ConfigurationError):
    """A compiled program was saved for another version of its decision's signature."""

    def __init__(self, path: str, saved: str, expected: str):
        self.path, self.saved, self.expected = path, saved, expected
        super().__init__(
            f"program {path!r} was compiled for signature {saved}, but this MemFuse has "
            f"{expected}; re-run `memfuse optimize` for it"
        )


class DataDirBusyError(MemFuseError):
    """Another process holds the data dir's writer lock."""

    def __init__(self, path: str, holder: str, waited: float):
        self.path = path
        waited_text = f" after waiting {waited:.0f}s" if waited > 0 else ""
        super().__init__(
            f"another process ({holder}) is writing to {path}{waited_text}; "
            "try again when it has finished (reading is not blocked)"
        )


class DataDirError(MemFuseError):
    """The data dir, or a file in it, cannot be used (not a directory, no rights, a failing
    disk); names the path, because the fix is always done there, by hand."""

    def __init__(self, path: object, problem: str, message: str | None = None):
        self.path = str(path)
        self.problem = problem
        super().__init__(message or f"{path}: {problem}")

    @classmethod
    def not_a_directory(cls, path: object) -> DataDirError:
        """A data dir that is a file: said the same way by a read's check and by opening."""
        return cls(
            path,
            "not a directory",
            f"data dir {path} is a file, not a directory; point it at a folder",
        )


class ReadOnlyDataDirError(DataDirError):
    """A write was asked of a data dir (or store file) that cannot be written.

    Raised before anything is written, or after the transaction rolled back: never half-written.
    """

    def __init__(self, path: object):
        super().__init__(
            path,
            "read-only",
            f"{path} is read-only: nothing was written (reading still works: stats, search, ask)",
        )


class DiskFullError(DataDirError):
    """The disk filled up during a write; the write's transaction was rolled back."""

    def __init__(self, path: object):
        super().__init__(
            path,
            "disk full",
            f"disk full at {path}: the failing write was undone, nothing of it is kept; free "
            "some space and run the command again (a re-run skips what is already stored)",
        )


STORE_RECOVERY = (
    "restore it from a backup, or move it and the data dir's chroma/ folder aside and run "
    "`memfuse ingest` on your sources again"
)
CACHE_RECOVERY = "it is only a cache: delete it and it is rebuilt on the next run"


class DamagedFileError(DataDirError):
    """A file of the data dir is not what it should be (garbage, truncated, foreign); says how
    to recover, since MemFuse never repairs its source of truth on its own."""

    def __init__(self, path: object, detail: str, recovery: str = STORE_RECOVERY):
        self.detail = detail
        self.recovery = recovery
        super().__init__(path, detail, f"{path} is damaged ({detail}); {recovery}")


# SQLite's primary result codes (Python >= 3.11 exposes them on the exception as well).
_SQLITE_BUSY, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CORRUPT = 5, 8, 10, 11
_SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 13, 14, 26
_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_NO_RIGHTS_ERRNOS = frozenset({errno.EACCES, errno.EPERM})
_FILE_ERRNOS = (
    _DISK_FULL_ERRNOS
    | _NO_RIGHTS_ERRNOS
    | {  # not a refused connection, a timeout…
        errno.EROFS,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.ENOENT,
        errno.EISDIR,
        errno.EIO,
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.EFBIG,
        errno.EMFILE,
        errno.ENFILE,
    }
)


def _sqlite_code(exc: sqlite3.Error) -> int | None:
    """The primary result code: from the exception when SQLite set it, else from the message
    (an error raised by hand, or by an older Python, has only the message)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc).lower()
    for needle, guess in (
        ("disk is full", _SQLITE_FULL),
        ("readonly", _SQLITE_READONLY),
        ("not a database", _SQLITE_NOTADB),
        ("malformed", _SQLITE_CORRUPT),
        ("unable to open", _SQLITE_CANTOPEN),
        ("locked", _SQLITE_BUSY),
        ("disk i/o", _SQLITE_IOERR),
    ):
        if needle in text:
            return guess
    return None


def storage_fault(
    exc: BaseException, path: object = None, damaged_recovery: str = STORE_RECOVERY
) -> MemFuseError | None:
    """The one-line error a low-level storage failure stands for, or None if it is not one.

    `path` is the file or folder being used (an OSError's own file name wins when it has one);
    callers at the store boundary pass it so the message can say where to look. Programming
    errors (sqlite3.ProgrammingError, IntegrityError…) are not storage faults and stay None.
    """
    if isinstance(exc, MemFuseError):
        return exc
    if isinstance(exc, OSError) and exc.errno in _FILE_ERRNOS:
        where = exc.filename if exc.filename is not None else path
        if where is None:
            where = "the data dir"
        if exc.errno in _DISK_FULL_ERRNOS:
            return DiskFullError(where)
        if exc.errno == errno.EROFS:
            return ReadOnlyDataDirError(where)
        if exc.errno in _NO_RIGHTS_ERRNOS:
            return DataDirError(where, "permission denied")
        if exc.errno == errno.ENOTDIR:
            return DataDirError(where, "part of this path is a file, not a directory")
        if exc.errno == errno.EEXIST:
            return DataDirError(where, "already exists")
        if exc.errno == errno.ENOENT:
            return DataDirError(where, "no such file or directory")
        return DataDirError(where, (exc.strerror or str(exc)).lower())
    if type(exc) in (sqlite3.DatabaseError, sqlite3.OperationalError):
        where = path if path is not None else "the SQLite store"
        code = _sqlite_code(exc)  # type: ignore[arg-type]
        name = getattr(exc, "sqlite_errorname", None)
        if code == _SQLITE_FULL or name == "SQLITE_IOERR_SHMSIZE":  # -shm could not grow
            return DiskFullError(where)
        if code == _SQLITE_READONLY:
            return ReadOnlyDataDirError(where)
        if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return DamagedFileError(where, str(exc), damaged_recovery)
        if code == _SQLITE_CANTOPEN:
            return DataDirError(
                where,
                "SQLite cannot open it (check that it and its folder exist "
                "and that you may read and write them)",
            )
        if code == _SQLITE_IOERR:
            return DataDirError(
                where,
                f"disk I/O error ({name or exc}); is the disk full or "
                "failing? Free some space or check the disk, then run the "
                "command again",
            )
        if code == _SQLITE_BUSY:
            return DataDirError(where, "locked by another process; try again when it is done")
        return DataDirError(where, f"SQLite failed: {exc}")
    if type(exc).__module__.split(".")[0] == "chromadb":  # not imported here: it is slow
        where = path if path is not None else "the vector index (Chroma)"
        if "disk is full" in str(exc).lower() or "no space" in str(exc).lower():
            return DiskFullError(where)
        return DataDirError(where, f"Chroma failed: {' '.join(str(exc).split())}")
    return None
