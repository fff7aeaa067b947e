"""EdgeStore and Database on their own: legality, storage form, persistence, atomicity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.backends.sqlite import Database
from memory.edge_store import EdgeStore
from memory.errors import InvalidEdgeError, MemFuseError, NodeNotFoundError
from memory.models import Edge, EdgeType, Link, NodeKind

KINDS = {
    "a": NodeKind.EVENT,
    "b": NodeKind.EVENT,
    "c": NodeKind.EVENT,
    "fused_x": NodeKind.FUSED,
    "fused_y": NodeKind.FUSED,
}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "edges.sqlite")
    yield database
    database.close()


@pytest.fixture
def edges(db: Database) -> EdgeStore:
    return EdgeStore(db, KINDS.get)


def rows(db: Database) -> list[tuple[str, str, str, float]]:
    return db.execute("SELECT src, dst, type, weight FROM edges ORDER BY src, dst, type").fetchall()


def causal(src: str, dst: str) -> Edge:
    return Edge(src=src, dst=dst, type=EdgeType.CAUSAL)


def test_wal_mode(db: Database) -> None:
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize(
    ("edge", "problem"),
    [
        (Edge(src="a", dst="fused_x", type=EdgeType.CAUSAL), "two events"),
        (Edge(src="fused_x", dst="a", type=EdgeType.BELONG), "from an event to a fused node"),
        (Edge(src="a", dst="b", type=EdgeType.BELONG), "from an event to a fused node"),
        (Edge(src="a", dst="a", type=EdgeType.SEMANTIC, weight=0.9), "self-loop"),
        (Edge(src="fused_x", dst="fused_x", type=EdgeType.BELONG), "self-loop"),
    ],
)
def test_illegal_edges_are_refused(
    edges: EdgeStore, db: Database, edge: Edge, problem: str
) -> None:
    with pytest.raises(InvalidEdgeError, match=problem):
        edges.add(edge)
    assert rows(db) == [] and len(edges) == 0


def test_unknown_endpoints(edges: EdgeStore) -> None:
    with pytest.raises(NodeNotFoundError, match="'zz'"):
        edges.add(causal("a", "zz"))


def test_legal_edges_duplicates_and_directions(edges: EdgeStore, db: Database) -> None:
    assert edges.add(Edge(src="a", dst="fused_x", type=EdgeType.BELONG))
    assert edges.add(causal("a", "b"))
    assert not edges.add(causal("a", "b"))
    with pytest.raises(InvalidEdgeError, match="reverse"):
        edges.add(causal("b", "a"))
    assert edges.add(Edge(src="fused_y", dst="a", type=EdgeType.SEMANTIC, weight=0.83))
    assert not edges.add(Edge(src="a", dst="fused_y", type=EdgeType.SEMANTIC, weight=0.9))
    assert edges.add(Edge(src="fused_x", dst="fused_y", type=EdgeType.SEMANTIC, weight=0.81))
    assert rows(db) == [
        ("a", "b", "causal", 1.0),
        ("a", "fused_x", "belong", 1.0),
        ("a", "fused_y", "semantic", 0.83),  # one row per unordered pair, endpoints sorted
        ("fused_x", "fused_y", "semantic", 0.81),
    ]
    assert edges.has("fused_y", "a", EdgeType.SEMANTIC) and edges.has(
        "a", "fused_y", EdgeType.SEMANTIC
    )
    assert edges.has("a", "b", EdgeType.CAUSAL) and not edges.has("b", "a", EdgeType.CAUSAL)
    assert {e.other("a") for e in edges.neighbors("a")} == {"b", "fused_x", "fused_y"}
    assert [e.other("b") for e in edges.neighbors("b", EdgeType.CAUSAL)] == ["a"]
    assert edges.neighbors("c") == [] and edges.neighbors("nobody") == []
    assert edges.counts() == {"belong": 1, "causal": 1, "semantic": 2}


def test_reload_from_sqlite(edges: EdgeStore, db: Database) -> None:
    edges.add(causal("a", "b"))
    edges.add(Edge(src="c", dst="a", type=EdgeType.SEMANTIC, weight=0.9))
    edges.set_members("fused_x", ["a", "b"])
    reloaded = EdgeStore(db, KINDS.get)
    assert sorted(e.key() for e in reloaded.neighbors("a")) == sorted(
        e.key() for e in edges.neighbors("a")
    )
    assert reloaded.counts() == {"belong": 2, "causal": 1, "semantic": 1}
    assert reloaded.get("a", "c", EdgeType.SEMANTIC) == Edge(
        src="a", dst="c", type=EdgeType.SEMANTIC, weight=0.9
    )


def test_set_members_replaces_and_remove_node_cleans(edges: EdgeStore, db: Database) -> None:
    edges.set_members("fused_x", ["a", "b"])
    edges.set_members("fused_x", ["b", "c"])
    assert sorted(e.src for e in edges.neighbors("fused_x", EdgeType.BELONG)) == ["b", "c"]
    assert edges.neighbors("a") == []
    with pytest.raises(InvalidEdgeError):
        edges.set_members("fused_x", ["c", "fused_y"])
    assert sorted(e.src for e in edges.neighbors("fused_x")) == ["b", "c"], "nothing changed"
    edges.add(Edge(src="fused_x", dst="a", type=EdgeType.SEMANTIC, weight=0.95))
    assert edges.remove_node("fused_x") == 3
    assert rows(db) == [] and edges.counts() == {"belong": 0, "causal": 0, "semantic": 0}


def test_transaction_rolls_back_sqlite_and_memory(edges: EdgeStore, db: Database) -> None:
    edges.add(causal("a", "b"))
    with pytest.raises(RuntimeError), edges.transaction():
        edges.add(causal("b", "c"))
        edges.remove(causal("a", "b"))
        edges.set_members("fused_x", ["a"])
        raise RuntimeError("plan rejected late")
    assert rows(db) == [("a", "b", "causal", 1.0)]
    assert edges.counts() == {"belong": 0, "causal": 1, "semantic": 0}
    assert [e.key() for e in edges.neighbors("b")] == [("a", "b", "causal")]


def _begun(db: Database) -> list[int]:
    """From now on, count the write transactions `db` begins."""
    count, real = [0], db._begin

    def counted() -> None:
        count[0] += 1
        real()

    db._begin = counted  # type: ignore[method-assign]
    return count


def test_a_group_commits_once_and_a_failing_write_rolls_back_alone(
    edges: EdgeStore, db: Database
) -> None:
    """Inside `grouped()` each transaction is a savepoint: the one that fails is undone in
    the database and in memory (a failed statement included: PostgreSQL aborts the whole
    transaction at one), the others stay, and the group is one commit."""
    begun, ran, undone = _begun(db), [], []
    with db.grouped():
        with edges.transaction():
            edges.add(causal("a", "b"))
            db.after_commit(lambda: ran.append("a-b"))
        with pytest.raises(RuntimeError), edges.transaction():
            edges.add(causal("b", "c"))
            db.on_rollback(lambda: undone.append("b-c"))
            db.after_commit(lambda: ran.append("b-c"))
            raise RuntimeError("plan rejected late")
        with pytest.raises(Exception, match="(?i)unique|duplicate"), edges.transaction():
            edges.add(Edge(src="c", dst="a", type=EdgeType.SEMANTIC, weight=0.9))
            db.execute(
                "INSERT INTO edges (src, dst, type, weight) VALUES (?, ?, ?, ?)",
                ("a", "b", "causal", 1.0),
            )
        with edges.transaction():
            edges.set_members("fused_x", ["c"])
        assert ran == [] and undone == ["b-c"]
        assert edges.has("a", "b", EdgeType.CAUSAL) and not edges.has("b", "c", EdgeType.CAUSAL)
    assert begun == [1] and ran == ["a-b"] and not db.in_transaction
    assert rows(db) == [("a", "b", "causal", 1.0), ("c", "fused_x", "belong", 1.0)]
    assert edges.counts() == {"belong": 1, "causal": 1, "semantic": 0}


def test_an_error_leaving_a_group_keeps_what_finished(edges: EdgeStore, db: Database) -> None:
    """What committed inside the group is kept when an error leaves it, and the error goes
    on: as if each write had committed on its own."""
    with pytest.raises(KeyError, match="outage"), db.grouped():
        with edges.transaction():
            edges.add(causal("a", "b"))
        raise KeyError("outage")
    assert rows(db) == [("a", "b", "causal", 1.0)] and not db.in_transaction
    assert edges.add(causal("b", "c"))  # the connection is usable at once


def test_a_group_the_database_rolled_back_is_undone_whole(edges: EdgeStore, db: Database) -> None:
    """When the database ends the transaction itself (SQLite does on a full disk), nothing
    of the group is kept: every write before the failing one is undone in memory too, and
    nothing more is written in it."""
    edges.add(causal("c", "a"))
    with pytest.raises(RuntimeError, match="disk full"), db.grouped():
        with edges.transaction():
            edges.add(causal("a", "b"))
        with edges.transaction():
            edges.add(causal("b", "c"))
            db.execute("ROLLBACK")  # what the database does on its own after some errors
            raise RuntimeError("disk full")
    assert rows(db) == [("c", "a", "causal", 1.0)] and not db.in_transaction
    assert edges.counts() == {"belong": 0, "causal": 1, "semantic": 0}
    with pytest.raises(MemFuseError, match="rolled back this group"), db.grouped():
        with pytest.raises(RuntimeError), edges.transaction():
            db.execute("ROLLBACK")
            raise RuntimeError("disk full")
        with edges.transaction():
            edges.add(causal("a", "b"))
    assert rows(db) == [("c", "a", "causal", 1.0)]


def test_after_commit_hooks_run_only_on_commit(db: Database) -> None:
    ran: list[str] = []
    with db.transaction():
        db.after_commit(lambda: ran.append("outer"))
        with db.transaction():  # nested: joins the outer transaction
            db.after_commit(lambda: ran.append("inner"))
        assert ran == []
    assert ran == ["outer", "inner"]
    with pytest.raises(KeyError), db.transaction():
        db.after_commit(lambda: ran.append("never"))
        raise KeyError("boom")
    assert ran == ["outer", "inner"]
    with pytest.raises(RuntimeError, match="outside a transaction"):
        db.on_rollback(lambda: None)


_NODES = ["a", "b", "c", "fused_x", "fused_y"]


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.booleans(),
            st.sampled_from(_NODES),
            st.sampled_from(_NODES),
            st.sampled_from(list(EdgeType)),
            st.floats(min_value=0.0, max_value=1.0),
        ),
        max_size=30,
    )
)
def test_compact_adjacency_matches_a_plain_model(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[bool, str, str, EdgeType, float]],
) -> None:
    """The interned, int-coded adjacency answers exactly as a dict of `Edge` models would,
    after any adds and removes, and again after a reload from SQL."""
    database = Database(tmp_path_factory.mktemp("edges") / "edges.sqlite")
    store = EdgeStore(database, KINDS.get)
    model: dict[tuple[str, str, str], Edge] = {}
    for adding, src, dst, edge_type, weight in ops:
        edge = Edge(src=src, dst=dst, type=edge_type, weight=weight)
        if adding:
            try:
                added = store.add(edge)
            except (InvalidEdgeError, NodeNotFoundError):
                continue
            assert added == (edge.key() not in model)
            model.setdefault(edge.key(), edge)
        else:
            assert store.remove(edge) == (model.pop(edge.key(), None) is not None)
    for current in (store, EdgeStore(database, KINDS.get)):
        assert len(current) == len(model)
        assert sorted(rows(database)) == sorted(
            (*_stored_ends(e), e.type.value, e.weight) for e in model.values()
        )
        for node in _NODES:
            touching = {k for k in model if node in k[:2]}
            assert {e.key() for e in current.neighbors(node)} == touching
            assert current.links(node) == [Link.of(e, node) for e in current.neighbors(node)]
            for edge_type in EdgeType:
                typed = current.neighbors(node, edge_type)
                assert {e.key() for e in typed} == {k for k in touching if k[2] == edge_type}
                assert current.others(node, edge_type) == [e.other(node) for e in typed]
                for least in (0.0, 0.5, 0.9):  # a walk's typed read: `links`, filtered
                    assert current.links_of(node, edge_type, least) == [
                        link
                        for link in current.links(node)
                        if link.type == edge_type and link.weight >= least
                    ]
        for key, edge in model.items():
            assert current.has(edge.dst, edge.src, edge.type) == (
                edge.type == EdgeType.SEMANTIC or (edge.dst, edge.src, key[2]) in model
            )
            found = current.get(edge.src, edge.dst, edge.type)
            assert found is not None and found.weight == edge.weight
    database.close()


def _stored_ends(edge: Edge) -> tuple[str, str]:
    if edge.type == EdgeType.SEMANTIC:
        return tuple(sorted((edge.src, edge.dst)))  # type: ignore[return-value]
    return edge.src, edge.dst
