"""Typed errors of the memory layer.

Every error builds its own one-line message so that the CLI can print it as is,
and carries the fields a caller needs to react (which event, which field).
"""

from __future__ import annotations


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
