"""One writer per data dir and namespace: an OS file lock held for a whole write session.

Two processes fusing into one memory each decide from their own in-memory view, so the
second would fuse against a stale graph (measured: 0 packs and 0 edges across two halves
that fuse into 13 packs and 196 edges one after the other). A writer therefore takes an
exclusive `flock` on `<data_dir>/<namespace>.writer.lock` *before* it opens the store —
so it loads what the previous writer committed — and keeps it until it closes. A second
writer waits up to `wait_seconds`, then fails with one line naming the holder. Readers
never take the lock. The OS drops the lock when its holder dies (even by `kill -9`), so
a crash never leaves a data dir locked. A store on PostgreSQL takes the namespace's advisory
lock on the server instead (see `memory.pg.PostgresWriterLock`), with the same behaviour.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import IO, Self

from memory.errors import DataDirBusyError

POLL_SECONDS = 0.1


class WriterLock:
    """An exclusive, non-reentrant lock on one lock file (`acquire` / `release`)."""

    def __init__(self, path: Path, wait_seconds: float = 0.0):
        self.path = Path(path)
        self.wait_seconds = max(wait_seconds, 0.0)
        self._file: IO[str] | None = None

    @classmethod
    def for_store(
        cls,
        data_dir: Path,
        namespace: str,
        wait_seconds: float = 0.0,
        database_url: str | None = None,
    ) -> WriterLock:
        """The file lock in the data dir; with a database URL the namespace's advisory lock on
        that PostgreSQL server (`memory.pg.PostgresWriterLock`): writers of one namespace may
        then run on different machines, and must still exclude each other."""
        if database_url:
            from memory.pg import PostgresWriterLock

            return PostgresWriterLock(database_url, namespace, wait_seconds)
        return cls(Path(data_dir) / f"{namespace}.writer.lock", wait_seconds)

    @property
    def held(self) -> bool:
        return self._file is not None

    def acquire(self) -> WriterLock:
        if self._file is not None:
            return self
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
        self._file = handle
        return self

    def release(self) -> None:
        if self._file is None:
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
        finally:
            self._file.close()
            self._file = None

    @staticmethod
    def _holder(handle: IO[str]) -> str:
        handle.seek(0)
        return handle.read().strip() or "unknown process"

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
