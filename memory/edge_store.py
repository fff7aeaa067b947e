"""Typed edges between events and fused nodes: in-process adjacency, persisted in SQL.

The edges live in the store's database (`memory.backends`, any backend), written inside the
store's transactions, so a fusion plan's edges commit or roll back with the rest of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from memory.backends.base import BaseDatabase
from memory.errors import InvalidEdgeError, NodeNotFoundError
from memory.models import Edge, EdgeType, NodeKind

__all__ = ["EdgeStore"]

_EdgeKey = tuple[str, str, str]


def _stored(edge: Edge) -> Edge:
    """The canonical stored form: a semantic edge keeps its endpoints in sorted order."""
    if edge.type == EdgeType.SEMANTIC and edge.src > edge.dst:
        return Edge(src=edge.dst, dst=edge.src, type=edge.type, weight=edge.weight)
    return edge


class EdgeStore:
    """Typed adjacency (node → type → edges) mirrored in the `edges` table.

    Legal edges: belong = event → fused node; causal = event → event (directed; the
    reverse of an existing causal edge is a contradiction); semantic = any ↔ any, one row
    per unordered pair. No self-loops; both endpoints must exist.
    """

    def __init__(self, db: BaseDatabase, kind_of: Callable[[str], NodeKind | None]):
        self._db = db
        self._kind_of = kind_of
        self._edges: dict[_EdgeKey, Edge] = {}
        self._adj: dict[str, dict[EdgeType, dict[_EdgeKey, Edge]]] = {}
        self._counts: Counter[str] = Counter()
        db.execute(
            "CREATE TABLE IF NOT EXISTS edges (src TEXT NOT NULL, dst TEXT NOT NULL, "
            "type TEXT NOT NULL, weight REAL NOT NULL, PRIMARY KEY (src, dst, type)) "
            "WITHOUT ROWID"
        )
        db.execute("CREATE INDEX IF NOT EXISTS edges_dst ON edges (dst)")
        self.reload()

    def reload(self) -> None:
        """Re-read every edge (a reader catching up with another process's commits); the
        new adjacency replaces the old in one step."""
        fresh = EdgeStore.__new__(EdgeStore)
        fresh._edges, fresh._adj, fresh._counts = {}, {}, Counter()
        for src, dst, kind, weight in self._db.execute("SELECT src, dst, type, weight FROM edges"):
            fresh._link(Edge(src=src, dst=dst, type=EdgeType(kind), weight=weight))
        self._edges, self._adj, self._counts = fresh._edges, fresh._adj, fresh._counts

    # --- in-memory adjacency ----------------------------------------------------------

    def _link(self, edge: Edge) -> None:
        key = edge.key()
        self._edges[key] = edge
        for node in (edge.src, edge.dst):
            self._adj.setdefault(node, {}).setdefault(edge.type, {})[key] = edge
        self._counts[edge.type.value] += 1

    def _unlink(self, edge: Edge) -> None:
        key = edge.key()
        del self._edges[key]
        for node in (edge.src, edge.dst):
            by_type = self._adj[node]
            del by_type[edge.type][key]
            if not by_type[edge.type]:
                del by_type[edge.type]
            if not by_type:
                del self._adj[node]
        self._counts[edge.type.value] -= 1

    # --- validation -------------------------------------------------------------------

    def check(self, edge: Edge) -> None:
        """Raise InvalidEdgeError (or NodeNotFoundError) if `edge` may not be stored."""
        kind = edge.type.value
        if edge.src == edge.dst:
            raise InvalidEdgeError(edge.src, edge.dst, kind, "self-loops are not allowed")
        src_kind, dst_kind = self._kind_of(edge.src), self._kind_of(edge.dst)
        if src_kind is None:
            raise NodeNotFoundError(edge.src)
        if dst_kind is None:
            raise NodeNotFoundError(edge.dst)
        if edge.type == EdgeType.BELONG:
            if src_kind != NodeKind.EVENT or dst_kind != NodeKind.FUSED:
                raise InvalidEdgeError(
                    edge.src,
                    edge.dst,
                    kind,
                    f"must go from an event to a fused node, got {src_kind} -> {dst_kind}",
                )
        elif edge.type == EdgeType.CAUSAL:
            if src_kind != NodeKind.EVENT or dst_kind != NodeKind.EVENT:
                raise InvalidEdgeError(
                    edge.src,
                    edge.dst,
                    kind,
                    f"must join two events, got {src_kind} -> {dst_kind}",
                )
            if (edge.dst, edge.src, kind) in self._edges:
                raise InvalidEdgeError(
                    edge.src, edge.dst, kind, "the reverse causal edge already exists"
                )

    # --- writes (each joins the caller's transaction, or runs in its own) -------------

    def add(self, edge: Edge) -> bool:
        """Store a legal edge; False if it is already stored (semantic: in either order)."""
        self.check(edge)
        edge = _stored(edge)
        if edge.key() in self._edges:
            return False
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO edges (src, dst, type, weight) VALUES (?, ?, ?, ?)",
                (edge.src, edge.dst, edge.type.value, edge.weight),
            )
            self._link(edge)
            db.on_rollback(lambda: self._unlink(edge))
        return True

    def remove(self, edge: Edge) -> bool:
        stored = self._edges.get(_stored(edge).key())
        if stored is None:
            return False
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?",
                (stored.src, stored.dst, stored.type.value),
            )
            self._unlink(stored)
            db.on_rollback(lambda: self._link(stored))
        return True

    def set_members(self, fused_id: str, member_ids: Sequence[str]) -> None:
        """Make the belong edges into `fused_id` exactly `member_ids`."""
        wanted = [Edge(src=m, dst=fused_id, type=EdgeType.BELONG) for m in member_ids]
        for edge in wanted:
            self.check(edge)
        wanted_keys = {edge.key() for edge in wanted}
        current = self.neighbors(fused_id, EdgeType.BELONG)
        with self._db.transaction():
            for edge in current:
                if edge.key() not in wanted_keys:
                    self.remove(edge)
            for edge in wanted:
                self.add(edge)

    def remove_node(self, node_id: str) -> int:
        """Drop every edge touching `node_id` (so none dangles); returns how many."""
        touching = self.neighbors(node_id)
        with self._db.transaction():
            for edge in touching:
                self.remove(edge)
        return len(touching)

    @contextmanager
    def transaction(self) -> Iterator[EdgeStore]:
        """Commit several edge writes atomically."""
        with self._db.transaction():
            yield self

    # --- reads ------------------------------------------------------------------------

    def has(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        """Causal and belong edges are directed here; a semantic edge matches either order."""
        if edge_type == EdgeType.SEMANTIC:
            src, dst = sorted((src, dst))
        return (src, dst, edge_type.value) in self._edges

    def get(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None:
        if edge_type == EdgeType.SEMANTIC:
            src, dst = sorted((src, dst))
        return self._edges.get((src, dst, edge_type.value))

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching `node_id` in either direction, as stored (use Edge.other)."""
        by_type = self._adj.get(node_id)
        if not by_type:
            return []
        if edge_type is not None:
            return list(by_type.get(edge_type, {}).values())
        return [edge for edges in by_type.values() for edge in edges.values()]

    def counts(self) -> dict[str, int]:
        return {t.value: self._counts[t.value] for t in EdgeType}

    def __len__(self) -> int:
        return len(self._edges)
