"""The store's SQL backends, and the one place that chooses between them (`backend_for`).

Without a database URL every store is a file in the data dir (`sqlite`); a URL's scheme names
the server that keeps them instead. A new SQL backend is one module here (a `Backend`
subclass: its `BaseDatabase`, writer lock and audit log; a part may have a sibling module, as
PostgreSQL's audit log has) and one line in `_BY_SCHEME`; its module loads only when a URL
names it, so a client library (psycopg) costs nothing until used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memory.backends.base import Backend
from memory.backends.sqlite import SQLiteBackend
from memory.errors import ConfigurationError
from memory.settings import MemFuseSettings

Source = MemFuseSettings | str | None
"""Settings (their `database_url`), a database URL, or None: where stores keep their SQL state."""


def _postgres(url: str, data_dir: Path) -> Backend:
    from memory.backends.postgres import PostgresBackend

    return PostgresBackend(url, data_dir)


# A database URL's scheme → how to make the backend that keeps stores there.
_BY_SCHEME: dict[str, Callable[[str, Path], Backend]] = {
    "postgresql": _postgres,
    "postgres": _postgres,
}


def backend_for(source: Source, data_dir: Path) -> Backend:
    """The backend of the data dir's stores: the settings' (or the given) database URL's, or
    the data dir's SQLite files when there is none. A URL no backend takes is a one-line
    ConfigurationError before anything is opened or made."""
    url = source.database_url if isinstance(source, MemFuseSettings) else source
    if not url:
        return SQLiteBackend(data_dir)
    make = _BY_SCHEME.get(str(url).split(":", 1)[0])
    if make is None:
        raise ConfigurationError(
            "database URL must start with postgresql:// (or postgres://); unset it to keep "
            "the store in the data dir's SQLite file"
        )
    return make(url, Path(data_dir))


__all__ = ["Backend", "Source", "backend_for"]
