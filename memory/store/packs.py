"""Fused nodes (packs) and the typed edges between nodes: a pack written with its summary's
vector, index entry and belong edges, and causal or semantic edges added and removed.

Its own part because the fusion commit writes it, over events it only reads.
"""

from __future__ import annotations

import math
from collections import Counter

from memory.errors import InvalidEdgeError, InvalidFusedNodeError, NodeNotFoundError
from memory.models import FUSED_PREFIX, Edge, EdgeType, FusedNode, Link, NodeKind, is_fused_id
from memory.store.core import StoreCore
from memory.vector_index import IndexedVector


def _copy_fused(node: FusedNode) -> FusedNode:
    """A copy the caller may change: its lists fresh, the immutable rest shared (a deep copy
    cost ~0.3 ms, and fusion reads thousands of packs per household)."""
    return node.model_copy(
        update={
            "members": list(node.members),
            "subjects": list(node.subjects),
            "devices": list(node.devices),
        }
    )


class FusedPacks(StoreCore):
    """Writes and reads fused nodes and edges."""

    # --- fused nodes ------------------------------------------------------------------

    def get_fused(self, node_id: str) -> FusedNode:
        node = self._fused.get(node_id)
        if node is None:
            raise NodeNotFoundError(node_id, "fused node")
        return _copy_fused(node)

    def all_fused(self) -> list[FusedNode]:
        with self._db.lock:
            return [_copy_fused(self._fused[i]) for i in sorted(self._fused)]

    def fused_of(self, event_id: str) -> list[str]:
        """Fused nodes the event belongs to (sorted)."""
        return sorted(self._edges.others(event_id, EdgeType.BELONG))

    def _check_fused(self, node: FusedNode) -> None:
        if not is_fused_id(node.node_id):
            raise InvalidFusedNodeError(node.node_id, f"id must start with {FUSED_PREFIX!r}")
        repeated = sorted(m for m, n in Counter(node.members).items() if n > 1)
        if repeated:
            raise InvalidFusedNodeError(node.node_id, f"repeated members: {', '.join(repeated)}")
        for member in node.members:
            kind = self._kind_of(member)
            if kind is None:
                raise NodeNotFoundError(member, "event")
            if kind != NodeKind.EVENT:
                raise InvalidEdgeError(
                    member,
                    node.node_id,
                    EdgeType.BELONG.value,
                    "must go from an event to a fused node, got fused -> fused",
                )
        if node.start > node.end:
            raise InvalidFusedNodeError(node.node_id, "start is after end")

    def put_fused(self, node: FusedNode) -> None:
        """Insert or replace a fused node: re-embed its summary (unless unchanged), re-index
        it, and make its belong edges exactly its members. The caller sets `version`."""
        with self._db.lock:
            self._put_fused(node)

    def _put_fused(self, node: FusedNode) -> None:
        self._check_fused(node)
        node = node.model_copy(deep=True)
        node_id, text = node.node_id, node.index_text()
        previous = self._fused.get(node_id)
        current = self._vectors.get(node_id)
        if previous is not None and previous.index_text() == text and current is not None:
            vector = current.copy()
        else:
            vector = self._embed([text], False)[0]
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO fused_nodes (node_id, body) VALUES (?, ?) "
                "ON CONFLICT (node_id) DO UPDATE SET body = excluded.body",
                (node_id, node.model_dump_json()),
            )
            self._fused[node_id] = node
            db.on_rollback(lambda: self._restore_fused(node_id, previous))
            self._edges.set_members(node_id, node.members)
            db.on_rollback(
                self._vectors.upsert(
                    [IndexedVector(node_id, vector, NodeKind.FUSED, node.start, node.end, text)]
                )
            )
            db.on_rollback(self._lexical.add(node_id, text, NodeKind.FUSED, (node.start, node.end)))
            db.after_commit(self._vectors.maybe_flush)

    def _restore_fused(self, node_id: str, previous: FusedNode | None) -> None:
        if previous is None:
            self._fused.pop(node_id, None)
        else:
            self._fused[node_id] = previous

    def delete_fused(self, node_id: str) -> None:
        """Remove a fused node with its belong edges and any semantic edge touching it."""
        previous = self._fused.get(node_id)
        if previous is None:
            raise NodeNotFoundError(node_id, "fused node")
        with self._db.transaction() as db:
            db.execute("DELETE FROM fused_nodes WHERE node_id = ?", (node_id,))
            self._edges.remove_node(node_id)
            db.on_rollback(self._vectors.delete([node_id]))
            db.on_rollback(self._lexical.remove(node_id))
            del self._fused[node_id]
            db.on_rollback(lambda: self._restore_fused(node_id, previous))
            db.after_commit(self._vectors.maybe_flush)

    # --- edges ------------------------------------------------------------------------

    def check_edge(self, edge: Edge) -> None:
        """Raise InvalidEdgeError / NodeNotFoundError if add_edge would refuse `edge`."""
        if edge.type == EdgeType.BELONG:
            raise InvalidEdgeError(
                edge.src,
                edge.dst,
                edge.type.value,
                "belong edges follow fused-node membership; use put_fused",
            )
        self._edges.check(edge)

    def add_edge(self, edge: Edge) -> bool:
        """Add a causal or semantic edge; False if it already exists (semantic: either order)."""
        self.check_edge(edge)
        return self._edges.add(edge)

    def remove_edge(self, edge: Edge) -> bool:
        """Remove a causal or semantic edge (a re-fused pack's recomputed ones); False if absent."""
        if edge.type == EdgeType.BELONG:
            raise InvalidEdgeError(
                edge.src, edge.dst, edge.type.value, "belong edges follow fused-node membership"
            )
        return self._edges.remove(edge)

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool:
        """Causal/belong: in the stored direction; semantic: in either order."""
        return self._edges.has(src, dst, edge_type)

    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching node_id in either direction (as stored; use Edge.other)."""
        return self._edges.neighbors(node_id, edge_type)

    def links(self, node_id: str) -> list[Link]:
        return self._edges.links(node_id)

    def links_of(
        self, node_id: str, edge_type: EdgeType, min_weight: float = -math.inf
    ) -> list[Link]:
        """`links` of one type weighing at least `min_weight` (see `EdgeStore.links_of`)."""
        return self._edges.links_of(node_id, edge_type, min_weight)

    def edge_counts(self) -> dict[str, int]:
        return self._edges.counts()
