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
