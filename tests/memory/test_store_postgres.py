"""The store on a real PostgreSQL server (`initdb` + `pg_ctl`, see tests/support/postgres_server).

Every test of test_store.py runs here again with the store on PostgreSQL (`database_url`), the
vectors in embedded Chroma; then what only PostgreSQL shows: the SQL dialect layer, one schema
per namespace, `data_version` across connections and processes, two processes ingesting into
two namespaces of one server at once, the writer lock as an advisory lock, the audit log in
the namespace's schema, and forgetting.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from memory.backends import backend_for
from memory.backends.postgres import (
    PostgresDatabase,
    PostgresWriterLock,
    schema_for,
    translate,
)
from memory.backends.postgres_audit import PostgresAuditLog
from memory.backends.sqlite import Database
from memory.edge_store import EdgeStore
from memory.errors import DataDirBusyError, EventConflictError, ReadOnlyDataDirError
from memory.models import Edge, EdgeType, Event, FusedNode
from memory.store import MemoryStore
from tests.memory import test_edge_store as _edges_on_sqlite
from tests.memory import test_store as _on_sqlite
from tests.support.embedders import HashEmbedder

pytestmark = pytest.mark.server

# The SQLite suite, collected again here (the fixtures below move it onto PostgreSQL). Left
# out: what is about the SQLite file itself, and a check of the class, not of a backend.
_SQLITE_ONLY = {
    "test_a_missing_sqlite_next_to_its_vectors_is_an_error_not_a_wipe",
    "test_memory_store_implements_the_protocol",
}
for _name in dir(_on_sqlite):
    if _name.startswith("test_") and _name not in _SQLITE_ONLY:
        globals()[_name] = getattr(_on_sqlite, _name)
# And the edge store's and Database's own tests (the `db` fixture below), but the WAL's.
for _name in dir(_edges_on_sqlite):
    if _name.startswith("test_") and _name != "test_wal_mode":
        assert _name not in globals(), f"{_name} is in both suites"
        globals()[_name] = getattr(_edges_on_sqlite, _name)

T0 = datetime(2024, 3, 1, 8, 0, 0)


@pytest.fixture
def chroma_endpoint() -> tuple[str, int] | None:
    """Embedded Chroma (test_store.py's server run covers the Chroma server)."""
    return None


@pytest.fixture
def database_url(postgres_url: str) -> str:
    return postgres_url


@pytest.fixture
def db(postgres_url: str) -> Iterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_url, _namespace())
    yield database
    database.close()


@pytest.fixture
def edges(db: PostgresDatabase) -> EdgeStore:
    return EdgeStore(db, _edges_on_sqlite.KINDS.get)


def _namespace() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def _events(prefix: str, count: int, start: int = 0) -> list[Event]:
    devices = ("watch_david", "cam_hall", "speaker_kitchen", "phone_emma")
    return [
        Event(
            event_id=f"{prefix}{i:05d}",
            timestamp=T0 + timedelta(minutes=i),
            device=devices[i % len(devices)],
            modality="health",
            location="home",
            description=f"{prefix} reading number {i} of the day",
            characters=("David",) if i % 2 else ("Emma",),
        )
        for i in range(start, start + count)
    ]


# --- the dialect layer -------------------------------------------------------------------


def test_translate_keeps_one_sql_for_both_backends() -> None:
    assert translate("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)"
    )
    assert translate("SELECT '?', '%' FROM t WHERE a LIKE ?") == (
        "SELECT '?', '%%' FROM t WHERE a LIKE %s"
    ), "a quoted ? is no parameter; every % is escaped for psycopg"
    made = translate("CREATE TABLE IF NOT EXISTS p (k TEXT PRIMARY KEY, w REAL NOT NULL)")
    assert made == (
        'CREATE TABLE IF NOT EXISTS p (k TEXT COLLATE "C" PRIMARY KEY, '
        "w DOUBLE PRECISION NOT NULL, rowid BIGINT GENERATED ALWAYS AS IDENTITY)"
    )
    assert translate("CREATE TABLE e (a TEXT, PRIMARY KEY (a)) WITHOUT ROWID") == (
        'CREATE TABLE e (a TEXT COLLATE "C", PRIMARY KEY (a))'
    )
    for sqlite_only in (
        "INSERT OR IGNORE INTO t VALUES (?)",
        "insert or replace into t values (?)",
        "PRAGMA data_version",
    ):
        with pytest.raises(ValueError, match="SQLite's own"):
            translate(sqlite_only)


def test_text_orders_bytewise_and_weights_keep_double_precision(
    postgres_url: str, tmp_path: Path
) -> None:
    """What the translation is for: ORDER BY gives SQLite's order (BINARY), on a server of
    any locale; an edge weight comes back exactly, not as a 4-byte float."""
    namespace = _namespace()
    ids = ["b", "B", "a", "_x", "A", "é", "10", "9"]
    weight = 0.123456789012345
    results = []
    for db in (Database(tmp_path / "x.sqlite"), PostgresDatabase(postgres_url, namespace)):
        db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, w REAL NOT NULL)")
        with db.transaction():
            db.executemany("INSERT INTO t (k, w) VALUES (?, ?)", [(i, weight) for i in ids])
        results.append(db.execute("SELECT k, w FROM t ORDER BY k").fetchall())
        db.close()
    assert results[0] == results[1]
    assert results[1][0][1] == weight


def test_a_failed_statement_rolls_back_the_server_and_memory(
    db: PostgresDatabase, edges: EdgeStore
) -> None:
    """PostgreSQL aborts a transaction at its first failed statement: the rollback and every
    undo still run, and the connection is usable at once."""
    edges.add(Edge(src="a", dst="b", type=EdgeType.CAUSAL))
    undone: list[str] = []
    with pytest.raises(psycopg.errors.UniqueViolation), db.transaction():
        edges.add(Edge(src="b", dst="c", type=EdgeType.CAUSAL))
        db.on_rollback(lambda: undone.append("undo"))
        db.execute(
            "INSERT INTO edges (src, dst, type, weight) VALUES (?, ?, ?, ?)",
            ("a", "b", "causal", 1.0),
        )
    assert undone == ["undo"]
    assert edges.counts()["causal"] == 1 and not edges.has("b", "c", EdgeType.CAUSAL)
    assert db.execute("SELECT src, dst FROM edges").fetchall() == [("a", "b")]
    assert not db.in_transaction
    assert edges.add(Edge(src="b", dst="c", type=EdgeType.CAUSAL))


# --- namespaces: one schema each -----------------------------------------------------------


def test_each_namespace_is_its_own_schema(
    postgres_url: str, tmp_path: Path, household: list[Event]
) -> None:
    first, second = _namespace(), _namespace()
    a = MemoryStore.open(tmp_path / "a", first, embedder=HashEmbedder(), database_url=postgres_url)
    b = MemoryStore.open(tmp_path / "b", second, embedder=HashEmbedder(), database_url=postgres_url)
    a.add_events(household[:4])
    b.add_events(household[4:])
    assert {e.event_id for e in a.all_events()} == {e.event_id for e in household[:4]}
    assert {e.event_id for e in b.all_events()} == {e.event_id for e in household[4:]}
    a.close()
    b.close()
    with psycopg.connect(postgres_url) as conn:
        for namespace, count in ((first, 4), (second, len(household) - 4)):
            schema = schema_for(namespace)
            assert conn.execute(f'SELECT count(*) FROM "{schema}".events').fetchone()[0] == count
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema_for(first),)
            )
        }
    assert tables >= {"events", "fused_nodes", "edges", "plan_log", "pending_fusion", "meta"}
    assert not (tmp_path / "a" / f"{first}.sqlite").exists(), "no SQLite file beside it"


def test_a_long_namespace_gets_a_valid_schema_name() -> None:
    long = "h" * 63
    assert len(schema_for(long)) <= 63 and schema_for(long) != schema_for("h" * 62 + "i")
    assert schema_for("kitchen-42") == "memfuse_kitchen-42"


# --- data_version: another connection's commits, never our own ---------------------------


def test_data_version_moves_only_for_other_connections(postgres_url: str) -> None:
    namespace = _namespace()
    one, two = PostgresDatabase(postgres_url, namespace), PostgresDatabase(postgres_url, namespace)
    one.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")
    seen_by_two = two.data_version()
    mine = one.data_version()
    with one.transaction():
        one.execute("INSERT INTO t (k) VALUES (?)", ("x",))
    assert one.data_version() == mine, "our own commit does not move it (as in SQLite)"
    assert two.data_version() != seen_by_two
    again = two.data_version()
    assert two.data_version() == again, "steady while nobody commits"
    with pytest.raises(RuntimeError), one.transaction():
        one.execute("INSERT INTO t (k) VALUES (?)", ("y",))
        raise RuntimeError("rolled back")
    assert two.data_version() == again, "a rolled-back write is no change"
    with two.transaction():  # two commits while one's last view is current
        two.execute("INSERT INTO t (k) VALUES (?)", ("z",))
    with one.transaction():  # one commits after two did: two's commit still counts for one
        one.execute("INSERT INTO t (k) VALUES (?)", ("w",))
    assert one.data_version() != mine
    one.close()
    two.close()


def test_refresh_sees_what_another_process_committed(
    postgres_url: str, tmp_path: Path, household: list[Event]
) -> None:
    namespace = _namespace()
    reader = MemoryStore.open(
        tmp_path / "reader", namespace, embedder=HashEmbedder(), database_url=postgres_url
    )
    assert reader.refresh() is False
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from memory.models import Event\n"
        "from memory.store import MemoryStore\n"
        "from tests.support.embedders import HashEmbedder\n"
        "events = [Event.model_validate(e) for e in json.loads(sys.stdin.read())]\n"
        "with MemoryStore.open(Path(sys.argv[1]), sys.argv[2], embedder=HashEmbedder(),\n"
        "                      database_url=sys.argv[3]) as store:\n"
        "    store.add_events(events, pending=True)\n"
        "    store.log_plan('p1', events[0].event_id, {'ops': []})\n"
    )
    payload = json.dumps([e.model_dump(mode="json") for e in household])
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "writer"), namespace, postgres_url],
        input=payload,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert reader.refresh() is True
    assert reader.refresh() is False
    assert reader.stats().events == len(household)
    assert reader.lexical_search("cycling", 1)[0][0] == "e06"
    assert reader.pending_plans() == [("p1", {"ops": []})]
    assert len(reader.pending_fusion()) == len(household)
    reader.close()


# --- the store's tables, one by one ----------------------------------------------------------


def test_visibility_pending_fusion_and_conflicts_on_postgres(
    open_store: Callable[..., MemoryStore], household: list[Event]
) -> None:
    store = open_store()
    store.add_events(household, pending=True, visibility={"e01": "private:David"})
    assert store.visibility_of("e01") == "private:David"
    changed = store.set_visibility({"e01": "household", "e02": "private:David"})
    assert changed == ["e01", "e02"]
    with pytest.raises(EventConflictError):
        store.add_events([household[0].model_copy(update={"description": "other"})])
    store.note_pending("e03", "endpoint down")
    store.mark_fused("e04")
    store.close()
    again = open_store()
    assert again.visibility_of("e01") == "household"
    assert again.visibility_of("e02") == "private:David"
    assert "e04" not in again.pending_fusion() and again.pending_reasons() == {
        "e03": "endpoint down"
    }


def test_forget_removes_rows_edges_and_plans_and_rewrites_the_tables(
    open_store: Callable[..., MemoryStore], household: list[Event], postgres_url: str
) -> None:
    store = open_store()
    store.add_events(household)
    pack = FusedNode.from_members(
        "fused_knee", "David hurt his knee", store.get_events(["e02", "e05", "e08"])
    )
    store.put_fused(pack)
    store.add_edge(Edge(src="e01", dst="e02", type=EdgeType.CAUSAL))
    store.log_plan("plan_e02", "e02", {"events": ["e02"]})
    store.log_plan("plan_other", "e07", {"events": ["e07", "e02"]})
    store.log_plan("plan_kept", "e07", {"events": ["e07"]})
    with store.transaction():
        counts = store.forget_events(["e02"])
        store.put_fused(pack.model_copy(update={"members": ["e05", "e08"]}))
    assert counts == {"events": 1, "edges": 2, "plans": 2}
    done = store.scrub_forgotten(["e02 text"])
    assert done["wal_truncated"] == 1
    assert not store.has_node("e02") and store.pending_plans() == [
        ("plan_kept", {"events": ["e07"]})
    ]
    schema = schema_for(store.namespace)
    with psycopg.connect(postgres_url) as conn:
        for table in ("events", "event_visibility", "edges"):
            hits = conn.execute(
                f"SELECT count(*) FROM \"{schema}\".{table} WHERE {table}::text LIKE '%%e02%%'"
            ).fetchone()[0]
            assert hits == 0, table
    store.close()
    again = open_store()
    assert not again.has_node("e02") and again.fused_of("e05") == ["fused_knee"]


def test_a_read_only_data_dir_reads_postgres_and_refuses_writes(
    open_store: Callable[..., MemoryStore],
    household: list[Event],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A data dir we may not write opens the store read-only, on PostgreSQL too (root may
    write any folder, so the data dir says it is read-only here)."""
    writer = open_store(tmp_path / "rw")
    writer.add_events(household)
    writer.close()
    monkeypatch.setattr("memory.store.opening.prepare_data_dir", lambda _: False)
    reader = open_store(tmp_path / "ro")
    assert reader.read_only and reader.stats().events == len(household)
    assert reader.lexical_search("cycling", 1)[0][0] == "e06"
    with pytest.raises(ReadOnlyDataDirError):
        reader.log_plan("p", None, {})
    with pytest.raises(ReadOnlyDataDirError):
        reader.add_events([household[0].model_copy(update={"event_id": "new"})])
    assert reader.stats().events == len(household) and not reader.has_node("new")


def test_a_read_only_session_refuses_writes(postgres_url: str) -> None:
    """The same, below the data dir (root can write any folder, so tested on the database)."""
    namespace = _namespace()
    writer = PostgresDatabase(postgres_url, namespace)
    writer.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")
    writer.close()
    reader = PostgresDatabase(postgres_url, namespace, read_only=True)
    assert reader.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    reader.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")  # skipped, no error
    with pytest.raises(ReadOnlyDataDirError), reader.transaction():
        reader.execute("INSERT INTO t (k) VALUES (?)", ("x",))
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        reader.execute("INSERT INTO t (k) VALUES (?)", ("x",))
    reader.close()
    from memory.errors import DataDirError

    with pytest.raises(DataDirError, match="holds no store"):
        PostgresDatabase(postgres_url, _namespace(), read_only=True)


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    from memory.errors import DataDirError
    from tests.support.chroma_server import free_port

    url = f"postgresql://memfuse:secret@127.0.0.1:{free_port()}/memfuse"
    with pytest.raises(DataDirError, match="PostgreSQL failed") as raised:
        MemoryStore.open(tmp_path, embedder=HashEmbedder(), database_url=url)
    assert "secret" not in str(raised.value) and "***" in str(raised.value)


# --- two processes, two namespaces, one server -----------------------------------------------


def _ingest(args: tuple[str, str, str, int]) -> tuple[str, int, float]:
    data_dir, namespace, url, count = args
    import time

    events = _events(namespace[-4:] + "_", count)
    started = time.perf_counter()
    with MemoryStore.open(
        Path(data_dir), namespace, embedder=HashEmbedder(), database_url=url
    ) as store:
        for start in range(0, count, 100):  # many commits, interleaving with the other process
            store.add_events(events[start : start + 100], pending=True)
            store.log_plan(f"plan-{start}", events[start].event_id, {"start": start})
        return namespace, store.stats().events, time.perf_counter() - started


def test_two_processes_ingest_into_two_namespaces_of_one_server(
    postgres_url: str, tmp_path: Path
) -> None:
    namespaces = [_namespace(), _namespace()]
    count = 600
    jobs = [(str(tmp_path / n), n, postgres_url, count) for n in namespaces]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_ingest, jobs)
    assert sorted((n, c) for n, c, _ in results) == sorted((n, count) for n in namespaces)
    for namespace in namespaces:
        store = MemoryStore.open(
            tmp_path / f"check-{namespace}",
            namespace,
            embedder=HashEmbedder(),
            database_url=postgres_url,
        )
        prefix = namespace[-4:] + "_"
        assert store.stats().events == count
        assert all(e.event_id.startswith(prefix) for e in store.all_events()), "only its own"
        assert len(store.pending_plans()) == count // 100
        assert len(store.pending_fusion()) == count
        store.close()


# --- the writer lock: an advisory lock per namespace -------------------------------------------


HOLD = """
import sys, time
from memory.backends import backend_for
lock = backend_for(sys.argv[2], ".").writer_lock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_the_writer_lock_is_an_advisory_lock_per_namespace(postgres_url: str) -> None:
    namespace = _namespace()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, namespace, postgres_url],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lock = backend_for(postgres_url, Path(".")).writer_lock(namespace, 0.3)
        assert isinstance(lock, PostgresWriterLock)
        with pytest.raises(DataDirBusyError, match=f"memfuse pid {holder.pid}"):
            lock.acquire()
        other = backend_for(postgres_url, Path(".")).writer_lock(_namespace())
        with other:  # another namespace (household) is not blocked
            assert other.held
        holder.kill()  # the server drops a dead holder's lock
        holder.wait()
        lock.wait_seconds = 10
        with lock:
            assert lock.held
        assert not lock.held
    finally:
        holder.kill()
        holder.wait()


# --- the audit log in the namespace's schema ----------------------------------------------------


def test_the_audit_log_on_postgres_chains_finds_redacts_and_verifies(postgres_url: str) -> None:
    namespace = _namespace()
    log = backend_for(postgres_url, Path(".")).audit_log(namespace)
    assert isinstance(log, PostgresAuditLog)
    assert log.verify().ok and log.entries() == [] and log._last_entry() is None
    log.append("ingest", actor="david", counts={"events": 2}, ids=["e1", "e2"])
    assert log._last_entry() == log.entries()[-1]  # the last row alone, read as the log reads it
    log.append_many(
        [
            ("fusion_plan", {"actor": "fusion", "ids": ["e2"], "details": {"plan": "p1"}}),
            ("forget", {"actor": "david", "ids": ["e1"]}),
        ]
    )
    entries = log.entries()
    assert [e.op for e in entries] == ["genesis", "ingest", "fusion_plan", "forget"]
    assert [e.seq for e in entries] == [0, 1, 2, 3]
    assert [e.op for e in log.find("e2")] == ["ingest", "fusion_plan"]
    assert log.redact(["e1"]) == 2
    assert log.verify().ok, "ids are outside the hash: redaction keeps the chain"
    assert [e.op for e in log.find("e1")] == ["ingest", "forget"], "found by digest"
    assert all("e1" not in e.ids for e in log.entries())
    other = backend_for(postgres_url, Path(".")).audit_log(_namespace())
    other.append("ingest", actor="emma", counts={"events": 1})
    assert len(log.entries()) == 4 and len(other.entries()) == 2, "one chain per namespace"


def _tamper(url: str, namespace: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema_for(namespace)}"')
        conn.execute(statement)


@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        (
            (
                "UPDATE audit_log SET line = replace(line, '\"events\":2', '\"events\":3') "
                "WHERE seq = 1"
            ),
            "hash does not match",
        ),
        ("DELETE FROM audit_log WHERE seq = 2", "prev is not the hash"),
        ("DELETE FROM audit_log WHERE seq = 3", "lines were cut from the end"),
        ("DELETE FROM audit_log", "it was deleted"),
        ("DELETE FROM audit_head", "audit_head is missing"),
        ("UPDATE audit_log SET line = '{' WHERE seq = 2", "not a valid entry"),
    ],
)
def test_the_audit_log_on_postgres_detects_tampering(
    postgres_url: str, statement: str, problem: str
) -> None:
    namespace = _namespace()
    log = backend_for(postgres_url, Path(".")).audit_log(namespace)
    for n in range(3):
        log.append("ingest", actor="david", counts={"events": n + 2}, ids=[f"e{n}"])
    assert log.verify().ok
    _tamper(postgres_url, namespace, statement)
    report = log.verify()
    assert not report.ok
    assert any(problem in p for p in report.problems), report.problems


def test_two_processes_append_to_one_audit_chain(postgres_url: str) -> None:
    namespace = _namespace()
    code = (
        "import sys\nfrom pathlib import Path\nfrom memory.backends import backend_for\n"
        "log = backend_for(sys.argv[2], Path('.')).audit_log(sys.argv[1])\n"
        "for i in range(25):\n"
        "    log.append('ingest', actor=sys.argv[3], counts={'events': i})\n"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, namespace, postgres_url, who],
            cwd=Path(__file__).resolve().parents[2],
        )
        for who in ("a", "b")
    ]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    log = backend_for(postgres_url, Path(".")).audit_log(namespace)
    report = log.verify()
    assert report.ok and report.entries == 51, report.problems


def test_memfuse_on_postgres_keeps_store_audit_and_lock_on_the_server(
    postgres_url: str, tmp_path: Path, household: list[Event]
) -> None:
    """Through the public API, with MEMFUSE_DATABASE_URL's setting: the store, its audit log
    and its writer lock are all on the server; the data dir holds none of them."""
    from memfuse.api import MemFuse, require_store
    from memfuse.settings import load_settings
    from memory.errors import DataDirError

    namespace = _namespace()
    settings = load_settings(data_dir=tmp_path, namespace=namespace, database_url=postgres_url)
    with pytest.raises(DataDirError, match="holds no store"):
        require_store(tmp_path, namespace, postgres_url)
    lock = backend_for(settings, tmp_path).writer_lock(namespace).acquire()
    store = MemoryStore.open(
        tmp_path, namespace, embedder=HashEmbedder(), database_url=settings.database_url
    )
    with MemFuse(store, settings, lock) as memory:
        summary = memory.ingest([e.model_dump(mode="json") for e in household], mode="plain")
        assert summary.added == len(household)
        assert isinstance(memory.audit, PostgresAuditLog)
        assert [e.op for e in memory.audit.entries()] == ["genesis", "ingest"]
        assert memory.verify_audit().ok
        with pytest.raises(DataDirBusyError):
            backend_for(postgres_url, tmp_path).writer_lock(namespace).acquire()
    assert not lock.held
    require_store(tmp_path, namespace, postgres_url)
    left = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert not [n for n in left if n.endswith((".sqlite", ".jsonl", ".lock"))], left
