"""One opener over the backends: `backend_for` chooses, `open_store` opens, `store_exists` looks.

Every store of the production code is opened through `memory.opener.open_store` (which alone
calls `MemoryStore.open`, which alone asks a backend for its database), and "is there a store?"
is one question whatever the backend: a store on PostgreSQL is found through the graphs'
resources too (they used to look for `<namespace>.sqlite` only).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from graphs.context import RunContext
from graphs.resources import close_stores, resources_for
from memory.backends import backend_for
from memory.backends.base import Backend, BaseDatabase
from memory.backends.sqlite import SQLiteBackend
from memory.backends.vectors import VectorBackend
from memory.errors import ConfigurationError, DataDirError
from memory.models import Edge, EdgeType, Event, FusedNode
from memory.opener import open_store, read_stats, require_store, store_exists
from memory.settings import MemFuseSettings

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = ("memory", "graphs", "memfuse", "signatures", "eval")


def _settings(data_dir: Path, database_url: str | None = None) -> MemFuseSettings:
    return MemFuseSettings(
        data_dir=data_dir,
        database_url=database_url,
        embedding_provider="hashing",
        chroma_host=None,
        _env_file=None,  # type: ignore[call-arg]
    )


def _event() -> Event:
    return Event(
        event_id="e1",
        timestamp=datetime(2024, 3, 1, 8, 0),
        device="watch_david",
        modality="health",
        location="home",
        description="David slept eight hours",
        characters=("David",),
    )


def _calls(path: Path) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)]


def _called(call: ast.Call) -> str:
    """`Name` or `owner.attr` of what a call calls ('' for anything else)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return f"{owner}.{func.attr}"
    return ""


def test_every_backend_is_opened_only_through_open_store() -> None:
    """Production code opens a store only in `open_store`, a backend's database only in the
    store's opening, and makes a database object only inside its backend's module."""
    from memory.backends import postgres, sqlite  # so every backend's database class is known

    databases = {cls.__name__ for cls in BaseDatabase.__subclasses__()}
    assert databases >= {postgres.PostgresDatabase.__name__, sqlite.Database.__name__}
    where: dict[str, set[str]] = {"MemoryStore.open": set(), ".database": set(), "new db": set()}
    for package in PRODUCTION:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            for call in _calls(path):
                called = _called(call)
                if called == "MemoryStore.open":
                    where["MemoryStore.open"].add(name)
                if called.endswith(".database"):
                    where[".database"].add(name)
                if called.split(".")[-1] in databases:
                    where["new db"].add(name)
    assert where["MemoryStore.open"] == {"memory/opener.py"}
    assert where[".database"] == {"memory/store/opening.py"}
    assert {n.rsplit("/", 1)[0] for n in where["new db"]} <= {"memory/backends"}


def test_backend_for_chooses_by_the_database_url(tmp_path: Path) -> None:
    assert isinstance(backend_for(None, tmp_path), SQLiteBackend)
    assert isinstance(backend_for("", tmp_path), SQLiteBackend)
    assert isinstance(backend_for(_settings(tmp_path), tmp_path), SQLiteBackend)
    for url in ("postgresql://u:secret@db/m", "postgres://u:secret@db/m"):
        chosen = backend_for(_settings(tmp_path, url), tmp_path)  # nothing connects yet
        assert isinstance(chosen, Backend) and chosen.name == "postgresql"
        assert chosen.location("data dir x") == url.replace(":secret@", ":***@")
    with pytest.raises(ConfigurationError, match=r"must start with postgresql://"):
        backend_for("mysql://db/m", tmp_path)


def test_store_exists_and_require_store_on_sqlite(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert not store_exists(settings, data_dir=tmp_path, namespace="default")
    with pytest.raises(DataDirError, match=f"data dir {tmp_path} holds no store 'default'"):
        require_store(settings, data_dir=tmp_path, namespace="default")
    open_store(settings).close()
    assert (tmp_path / "default.sqlite").is_file()
    assert store_exists(settings, data_dir=tmp_path, namespace="default")
    require_store(settings, data_dir=tmp_path, namespace="default")


def _files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes but SQLite's WAL sidecars, which any reader of the file opens."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(("-shm", "-wal"))
    }


def _stats_read_as_stored(settings: MemFuseSettings, namespace: str) -> None:
    """`read_stats` gives the open store's numbers, and a missing namespace one line."""
    second = _event().model_copy(
        update={
            "event_id": "e2",
            "device": "cam_hall",
            "characters": ("Ann",),
            "timestamp": datetime(2024, 3, 2, 9, 0),
            "description": "Ann came home",
        }
    )
    with open_store(settings, namespace=namespace) as store:
        store.add_events([_event(), second])
        store.put_fused(FusedNode.from_members("fused_1", "a morning at home", [_event(), second]))
        store.add_edge(Edge(src="e1", dst="e2", type=EdgeType.CAUSAL, weight=0.5))
        expected = store.stats()
    assert expected.events == 2 and expected.fused_nodes == 1 and expected.edges["causal"] == 1
    before = _files(settings.data_dir)
    assert read_stats(settings, data_dir=settings.data_dir, namespace=namespace) == expected
    assert _files(settings.data_dir) == before
    with pytest.raises(DataDirError, match=f"holds no store '{namespace}x'"):
        read_stats(settings, data_dir=settings.data_dir, namespace=f"{namespace}x")


def test_read_stats_counts_what_the_store_counts_without_opening_its_vectors(
    tmp_path: Path,
) -> None:
    """`memfuse stats` reads counts through `read_stats`: the same numbers as the open store's,
    without loading Chroma (most of a short command's start-up), and without writing a byte."""
    _stats_read_as_stored(_settings(tmp_path), "default")

    script = (
        "import sys; from pathlib import Path; from memory.opener import read_stats; "
        "from memory.settings import MemFuseSettings as S; "
        f"s = S(data_dir=Path({str(tmp_path)!r}), embedding_provider='hashing', chroma_host=None, "
        "_env_file=None); print(read_stats(s, data_dir=s.data_dir, namespace='default').events, "
        "'chromadb' in sys.modules)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert ran.stdout.split() == ["2", "False"]


def test_an_unopened_vector_index_refuses_every_vector_call() -> None:
    """The counts-only store's index has no collection: a vector call there is a bug, loud."""
    collection = VectorBackend.unopened(None)._col  # what stands behind it
    for call in ("get", "upsert", "delete", "query", "count"):
        with pytest.raises(ConfigurationError, match="opened for its counts only"):
            getattr(collection, call)(ids=["x"])


@pytest.mark.server
def test_a_store_on_postgres_is_found_through_the_graphs_resources(
    postgres_url: str, tmp_path: Path
) -> None:
    """`langgraph dev` reading a store kept on PostgreSQL finds it: the graphs' exists-check
    is `store_exists`, not a look for `<namespace>.sqlite` (the data dir holds none)."""
    settings = _settings(tmp_path, postgres_url)
    namespace = f"t{uuid.uuid4().hex[:12]}"
    store = open_store(settings, namespace=namespace)
    store.add_events([_event()])
    store.close()
    assert not (tmp_path / f"{namespace}.sqlite").exists()
    assert store_exists(settings, data_dir=tmp_path, namespace=namespace)
    assert not store_exists(settings, data_dir=tmp_path, namespace=f"{namespace}x")

    def context(name: str) -> RunContext:
        return RunContext(
            data_dir=str(tmp_path), namespace=name, policy="offline", settings=settings
        )

    try:
        found = resources_for(context(namespace))
        assert found.notes == () and found.store is not None
        assert found.store.stats().events == 1
        missing = resources_for(context(f"{namespace}x"))
        place = backend_for(settings, tmp_path).location("")
        assert missing.store is None and missing.notes == (
            f"{place} holds no store '{namespace}x': nothing to search",
        )
    finally:
        close_stores()


@pytest.mark.server
def test_read_stats_of_a_store_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    _stats_read_as_stored(_settings(tmp_path, postgres_url), f"t{uuid.uuid4().hex[:12]}")


@pytest.mark.server
def test_the_opener_puts_the_vectors_where_the_settings_say(
    tmp_path: Path, chroma_server: tuple[str, int]
) -> None:
    """The opener chooses the vector backend from the settings (`vector_backend_of`) and hands
    it to the store: a Chroma server named there holds the vectors, and a write call settles
    them at once, since other processes read that collection."""
    host, port = chroma_server
    settings = _settings(tmp_path).model_copy(
        update={"chroma_host": host, "chroma_port": port, "namespace": f"t{uuid.uuid4().hex[:8]}"}
    )
    with open_store(settings) as store:
        store.add_events([_event()])
        store.settle()
        assert store._vectors.shared and store._vectors._col.count() == 1
    assert not (tmp_path / "chroma").exists()
    with open_store(_settings(tmp_path / "embedded")) as embedded:
        assert not embedded._vectors.shared
