"""Typed edges between events and fused nodes: in-process adjacency, persisted in SQL.

The edges live in the store's database (`memory.backends`, any backend), written inside the
store's transactions, so a fusion plan's edges commit or roll back with the rest of it.

The in-process side is compact because a fused store holds about two edges per event: a
million fused events are two million edges, and an `Edge` model under a tuple key in three
dicts cost about a kilobyte each (measured: 114.6 MiB for 119,269 edges at 60k events). Here a
node id is interned once as a small int, an edge is one int code (source, destination, type)
with its weight, and a node's adjacency is a list of those codes; `Edge` models are built only
when a caller reads them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from memory.backends.base import BaseDatabase
from memory.errors import InvalidEdgeError, NodeNotFoundError
from memory.models import Edge, EdgeType, Link, NodeKind

__all__ = ["EdgeStore"]

_TYPES: tuple[EdgeType, ...] = tuple(EdgeType)
_TYPE_CODE = {edge_type: code for code, edge_type in enumerate(_TYPES)}
_TYPE_BITS = 2  # three edge types
_NODE_BITS = 32  # node numbers below 2**32: more nodes than any one store holds
_TYPE_MASK = (1 << _TYPE_BITS) - 1
_NODE_MASK = (1 << _NODE_BITS) - 1


def _encode(src: int, dst: int, edge_type: EdgeType) -> int:
    """One int for an edge: its endpoints' numbers and its type."""
    return (((src << _NODE_BITS) | dst) << _TYPE_BITS) | _TYPE_CODE[edge_type]


def _by_type(codes: list[int]) -> list[int]:
    """A node's edge codes by type, in the order the node first met each type, then in the
    order they were stored (the order `neighbors` and `links` give)."""
    first_seen = {code & _TYPE_MASK: 0 for code in codes}
    return [code for wanted in first_seen for code in codes if code & _TYPE_MASK == wanted]


def _type_of(code: int) -> EdgeType:
    return _TYPES[code & _TYPE_MASK]


def _ordered(src: str, dst: str, edge_type: EdgeType) -> tuple[str, str]:
    """The endpoints in stored order (a semantic edge is looked up in either order)."""
    return (dst, src) if edge_type == EdgeType.SEMANTIC and src > dst else (src, dst)


class EdgeStore:
    """Typed adjacency (node → edges) mirrored in the `edges` table.

    Legal edges: belong = event → fused node; causal = event → event (directed; the
    reverse of an existing causal edge is a contradiction); semantic = any ↔ any, one row
    per unordered pair. No self-loops; both endpoints must exist.
    """

    def __init__(self, db: BaseDatabase, kind_of: Callable[[str], NodeKind | None]):
        self._db = db
        self._kind_of = kind_of
        self._reset()
        db.execute(
            "CREATE TABLE IF NOT EXISTS edges (src TEXT NOT NULL, dst TEXT NOT NULL, "
            "type TEXT NOT NULL, weight REAL NOT NULL, PRIMARY KEY (src, dst, type)) "
            "WITHOUT ROWID"
        )
        db.execute("CREATE INDEX IF NOT EXISTS edges_dst ON edges (dst)")
        self.reload()

    def _reset(self) -> None:
        self._number: dict[str, int] = {}  # node id -> its number (interned, never reused)
        self._names: list[str] = []  # number -> node id
        self._weight: dict[int, float] = {}  # edge code -> weight
        self._adj: dict[int, list[int]] = {}  # node number -> codes of its edges, in order
        self._counts: Counter[str] = Counter()

    def reload(self) -> None:
        """Re-read every edge (a reader catching up with another process's commits); the
        new adjacency replaces the old in one step."""
        fresh = EdgeStore.__new__(EdgeStore)
        fresh._reset()
        for src, dst, kind, weight in self._db.execute("SELECT src, dst, type, weight FROM edges"):
            fresh._link(fresh._code(src, dst, EdgeType(kind)), weight)
        self._number, self._names = fresh._number, fresh._names
        self._weight, self._adj, self._counts = fresh._weight, fresh._adj, fresh._counts

    # --- in-memory adjacency ----------------------------------------------------------

    def _intern(self, node_id: str) -> int:
        number = self._number.get(node_id)
        if number is None:
            number = self._number[node_id] = len(self._names)
            self._names.append(node_id)
        return number

    def _code(self, src: str, dst: str, edge_type: EdgeType) -> int:
        """The edge's code, interning its endpoints (for an edge being stored)."""
        return _encode(self._intern(src), self._intern(dst), edge_type)

    def _find(self, src: str, dst: str, edge_type: EdgeType) -> int | None:
        """The code of a stored edge (endpoints in stored order), or None."""
        src_n, dst_n = self._number.get(src), self._number.get(dst)
        if src_n is None or dst_n is None:
            return None
        code = _encode(src_n, dst_n, edge_type)
        return code if code in self._weight else None

    def _edge(self, code: int) -> Edge:
        src, dst = self._ends(code)
        return Edge.model_construct(
            src=self._names[src],
            dst=self._names[dst],
            type=_type_of(code),
            weight=self._weight[code],
        )

    def _ends(self, code: int) -> tuple[int, int]:
        nodes = code >> _TYPE_BITS
        return nodes >> _NODE_BITS, nodes & _NODE_MASK

    def _codes_of(self, node_id: str) -> tuple[int | None, list[int]]:
        """The node's number (None if it never had an edge) and its edges' codes, in order."""
        number = self._number.get(node_id)
        return number, self._adj.get(number, []) if number is not None else []

    def _link(self, code: int, weight: float) -> None:
        self._weight[code] = weight
        for node in self._ends(code):
            self._adj.setdefault(node, []).append(code)
        self._counts[_type_of(code).value] += 1

    def _unlink(self, code: int) -> None:
        del self._weight[code]
        for node in self._ends(code):
            codes = self._adj[node]
            codes.remove(code)
            if not codes:
                del self._adj[node]
        self._counts[_type_of(code).value] -= 1

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
            if self._find(edge.dst, edge.src, EdgeType.CAUSAL) is not None:
                raise InvalidEdgeError(
                    edge.src, edge.dst, kind, "the reverse causal edge already exists"
                )

    # --- writes (each joins the caller's transaction, or runs in its own) -------------

    def add(self, edge: Edge) -> bool:
        """Store a legal edge; False if it is already stored (semantic: in either order)."""
        self.check(edge)
        src, dst = _ordered(edge.src, edge.dst, edge.type)
        if self._find(src, dst, edge.type) is not None:
            return False
        code, weight = self._code(src, dst, edge.type), edge.weight
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO edges (src, dst, type, weight) VALUES (?, ?, ?, ?)",
                (src, dst, edge.type.value, weight),
            )
            self._link(code, weight)
            db.on_rollback(lambda: self._unlink(code))
        return True

    def remove(self, edge: Edge) -> bool:
        src, dst = _ordered(edge.src, edge.dst, edge.type)
        code = self._find(src, dst, edge.type)
        if code is None:
            return False
        weight = self._weight[code]
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?",
                (src, dst, edge.type.value),
            )
            self._unlink(code)
            db.on_rollback(lambda: self._link(code, weight))
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
        return self._find(*_ordered(src, dst, edge_type), edge_type) is not None

    def get(self, src: str, dst: str, edge_type: EdgeType) -> Edge | None:
        code = self._find(*_ordered(src, dst, edge_type), edge_type)
        return None if code is None else self._edge(code)

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching `node_id` in either direction, as stored (use Edge.other): by type
        in the order the node first met each type, then in the order they were stored."""
        _, codes = self._codes_of(node_id)
        if not codes:
            return []
        if edge_type is not None:
            wanted = _TYPE_CODE[edge_type]
            return [self._edge(code) for code in codes if code & _TYPE_MASK == wanted]
        return [self._edge(code) for code in _by_type(codes)]

    def links(self, node_id: str) -> list[Link]:
        """`neighbors(node_id)` as links from the node, in the same order."""
        number, codes = self._codes_of(node_id)
        out = []
        for code in _by_type(codes):
            src, dst = self._ends(code)
            outgoing = src == number
            other = self._names[dst if outgoing else src]
            out.append(Link(_type_of(code), other, self._weight[code], outgoing))
        return out

    def links_of(
        self, node_id: str, edge_type: EdgeType, min_weight: float = -math.inf
    ) -> list[Link]:
        """`links(node_id)` of one type weighing at least `min_weight`, in the same order,
        without building the others (a search walks causal links and the semantic ones above
        its threshold: 60 % of a generated household's semantic links are below it)."""
        number, codes = self._codes_of(node_id)
        wanted, weights, out = _TYPE_CODE[edge_type], self._weight, []
        for code in codes:
            if code & _TYPE_MASK == wanted and weights[code] >= min_weight:
                src, dst = self._ends(code)
                outgoing = src == number
                other = self._names[dst if outgoing else src]
                out.append(Link(edge_type, other, weights[code], outgoing))
        return out

    def others(self, node_id: str, edge_type: EdgeType) -> list[str]:
        """The far ends of `node_id`'s edges of one type, in `neighbors` order — without
        building the edges (the fusion graph asks an event's packs ~25 times an event)."""
        number, codes = self._codes_of(node_id)
        wanted, out = _TYPE_CODE[edge_type], []
        for code in codes:
            if code & _TYPE_MASK == wanted:
                src, dst = self._ends(code)
                out.append(self._names[dst if src == number else src])
        return out

    def counts(self) -> dict[str, int]:
        return {t.value: self._counts[t.value] for t in EdgeType}

    def __len__(self) -> int:
        return len(self._weight)
