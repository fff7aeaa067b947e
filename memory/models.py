"""The data model: atomic events, fused nodes, typed edges.

Events are immutable observations; fused nodes are mutable summaries that point
back to their member events; edges are typed relations between the two layers.
Timestamps are naive datetimes in UTC: a timestamp given without an offset is kept as
given (and read as UTC, as every comparison, window and audit time does); one with an offset
(``+05:00``, ``Z``) is converted to UTC, so two reports of different instants never become equal.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from memory.errors import InvalidEventError
from memory.jsontext import json_problem
from memory.text import single_line


class Modality(StrEnum):
    """The nine sensing modalities of the MemFuse taxonomy."""

    HEALTH = "health"
    MOTION = "motion"
    VISION = "vision"
    AUDIO = "audio"
    ENVIRONMENT = "environment"
    LOCATION = "location"
    APP_USAGE = "app_usage"
    DIALOGUE = "dialogue"
    DEVICE_STATUS = "device_status"


class SourceKind(StrEnum):
    """Why an event exists; benchmark generators label it, users' own events are `user`."""

    STORYLINE = "storyline"
    ROUTINE = "routine"
    PERIODIC = "periodic"
    NOISE = "noise"
    CONFLICT = "conflict"
    ADVERSARIAL = "adversarial"
    USER = "user"


class EdgeType(StrEnum):
    """The three typed relations of the dual-layer graph."""

    BELONG = "belong"  # event -> fused node (membership)
    CAUSAL = "causal"  # event -> event, stored directed, walked both ways
    SEMANTIC = "semantic"  # any node <-> any node, weighted by similarity


class NodeKind(StrEnum):
    EVENT = "event"
    FUSED = "fused"


FUSED_PREFIX = "fused_"


def utc_now() -> datetime:
    """Now, as stored timestamps are kept: naive UTC, to the second. A local wall clock would
    put "now" hours before or after events just stored, and as-of reads would hide them."""
    return datetime.now(UTC).replace(microsecond=0, tzinfo=None)


def parse_timestamp(value: Any) -> datetime:
    """Accept a datetime or an ISO-8601 string (``T`` or space, optional seconds/offset/``Z``).

    An offset is never dropped: an aware time becomes the same instant in UTC (naive, like
    every stored time), so ``10:00+05:00`` and ``10:00-08:00`` stay 13 hours apart."""
    if isinstance(value, datetime):
        return _in_range(_as_utc(value))
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}")
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}") from None
    return _in_range(_as_utc(parsed))


def _as_utc(moment: datetime) -> datetime:
    """Naive as given (read as UTC); aware converted to UTC, then naive. Shifting past year 1
    or 9999 is out of range, not an OverflowError."""
    offset = moment.utcoffset()
    if offset is None:
        return moment
    try:
        return moment.replace(tzinfo=None) - offset
    except OverflowError:
        raise ValueError(
            f"timestamp {moment.isoformat()} is outside the supported range "
            f"{EARLIEST.date().isoformat()} to {LATEST.date().isoformat()}"
        ) from None


# Time arithmetic (windows reaching days back, fusion gaps, spans) must never overflow
# datetime's years 1..9999, so accepted times keep a year of margin at both ends.
EARLIEST = datetime(2, 1, 1)
LATEST = datetime(9998, 12, 31, 23, 59, 59)


def _in_range(moment: datetime) -> datetime:
    if not EARLIEST <= moment <= LATEST:
        raise ValueError(
            f"timestamp {moment.isoformat()} is outside the supported range "
            f"{EARLIEST.date().isoformat()} to {LATEST.date().isoformat()}"
        )
    return moment


# One observation, in words. Embedders read only the first few hundred tokens and the reader
# shows each event on one line of a bounded context, so a longer "description" is a document
# to split into events, not one event; refusing it whole beats storing a text nobody sees.
MAX_DESCRIPTION_CHARS = 8_000
MAX_ID_CHARS = 256


# Names and ids (event id, device, location, owner, people, episode) are one plain line: no
# C0 control (NUL cuts C strings, a newline forges log and prompt lines, ESC drives
# terminals), no DEL, no C1. A description may span lines (tab, newline, carriage return
# stay) but holds no other C0 control and no DEL. Refused, never silently removed.
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STRIPPED = ("device", "description")


def _refuse_controls(value: str, pattern: re.Pattern[str]) -> None:
    if (found := pattern.search(value)) is not None:
        raise ValueError(
            f"control character U+{ord(found.group()):04X} at position {found.start() + 1} "
            "is not allowed in this field"
        )


def _refuse_path_like(event_id: str) -> None:
    """An id names files, URLs and log lines downstream (exports, per-event caches): a path
    separator or a dot segment in it could climb out of a folder, so it is refused."""
    for separator in ("/", "\\"):
        if separator in event_id:
            raise ValueError(f"an id may not contain the path separator {separator!r}")
    if event_id.strip() in (".", ".."):
        raise ValueError(f"an id may not be the path segment {event_id.strip()!r}")


def format_timestamp(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S")


class Event(BaseModel):
    """One immutable, source-tagged observation: what one device sensed at one moment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: str = Field(min_length=1, description="Unique id; benchmark ids are kept as given.")
    timestamp: datetime = Field(
        description="When the device observed it (UTC: an offset is converted)."
    )
    device: str = Field(min_length=1, description="The source device id, e.g. `watch_david`.")
    modality: Modality = Field(description="Which of the nine sensing modalities produced it.")
    location: str = Field(default="", description="Where the device (or the person) was.")
    description: str = Field(min_length=1, description="What the device observed, in words.")
    characters: tuple[str, ...] = Field(default=(), description="People involved.")
    source: SourceKind = Field(default=SourceKind.USER, description="Why the event exists.")
    owner: str | None = Field(default=None, description="Owner of the device, or `shared`.")
    episode_id: str | None = Field(default=None, description="Storyline episode, if known.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Anything else, kept as given."
    )

    @field_validator("timestamp", mode="before")
    @classmethod
    def _parse_ts(cls, value: Any) -> datetime:
        return parse_timestamp(value)

    @field_validator(
        "event_id", "device", "location", "owner", "episode_id", "description", mode="before"
    )
    @classmethod
    def _plain_text(cls, value: Any, info: ValidationInfo) -> Any:
        """Controls are checked on the text as given, before device and description lose
        their surrounding white space (str.strip would quietly eat some controls)."""
        if not isinstance(value, str):
            return value
        _refuse_controls(
            value, _TEXT_CONTROL if info.field_name == "description" else _NAME_CONTROL
        )
        return value.strip() if info.field_name in _STRIPPED else value

    @field_validator("description")
    @classmethod
    def _bounded(cls, value: str) -> str:
        if len(value) > MAX_DESCRIPTION_CHARS:
            raise ValueError(
                f"{len(value):,} characters, more than the {MAX_DESCRIPTION_CHARS:,} one event "
                "may hold (split a long text into several events)"
            )
        return value

    @field_validator("event_id", "device")
    @classmethod
    def _short_id(cls, value: str, info: ValidationInfo) -> str:
        if len(value) > MAX_ID_CHARS:
            raise ValueError(
                f"{len(value):,} characters, more than the {MAX_ID_CHARS} an id may hold"
            )
        if info.field_name == "event_id":
            _refuse_path_like(value)
        return value

    @field_validator("metadata")
    @classmethod
    def _storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Metadata is kept as given, so it must be JSON that writes back as read: a NaN or
        1e400 would come back as null (or as a token other readers refuse)."""
        if (problem := json_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @field_validator("characters", mode="before")
    @classmethod
    def _chars(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str):
            _refuse_controls(value, _NAME_CONTROL)
            return tuple(p.strip() for p in value.split(",") if p.strip())
        if isinstance(value, list | tuple):
            for person in value:
                if isinstance(person, str):
                    _refuse_controls(person, _NAME_CONTROL)
        return value

    def index_text(self) -> str:
        """The text indexed densely and lexically: what was seen, by which source, of whom."""
        people = ", ".join(self.characters)
        extra = f" ({people})" if people else ""
        return f"{self.description} [{self.device} @ {self.location}]{extra}"

    def serialize(self) -> str:
        """The reader's line format: ``[time] [device] [location] description``, always one
        line (event text is untrusted: see `memory.text.single_line`)."""
        when = format_timestamp(self.timestamp)
        where = f"[{single_line(self.device)}] [{single_line(self.location)}]"
        return f"[{when}] {where} {single_line(self.description)}"

    def fingerprint(self) -> str:
        """Content hash of everything but the id, to tell an identical re-ingest from a conflict."""
        data = self.model_dump(mode="json", exclude={"event_id"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def differing_fields(self, other: Event) -> list[str]:
        mine, theirs = self.model_dump(mode="json"), other.model_dump(mode="json")
        return sorted(k for k in mine if mine[k] != theirs.get(k))


_EVENT_FIELDS = set(Event.model_fields)


def parse_event(record: dict[str, Any], position: int | None = None) -> Event:
    """Validate one raw record; unknown keys go into ``metadata``.

    Raises InvalidEventError naming the event id and the first field at fault.
    """
    if not isinstance(record, dict):
        raise InvalidEventError(
            None, "<record>", f"expected a JSON object, got {type(record).__name__}", position
        )
    event_id = record.get("event_id")
    if event_id is None or (isinstance(event_id, str) and not event_id.strip()):
        raise InvalidEventError(None, "event_id", "missing or empty", position)
    known = {k: v for k, v in record.items() if k in _EVENT_FIELDS}
    extra = {k: v for k, v in record.items() if k not in _EVENT_FIELDS}
    if extra:
        known["metadata"] = {**extra, **(known.get("metadata") or {})}
    for required in ("device", "description", "modality", "timestamp"):
        value = known.get(required)
        if value is None or (isinstance(value, str) and not value.strip()):
            problem = "missing" if value is None else "empty"
            raise InvalidEventError(str(event_id), required, problem, position)
    try:
        return Event.model_validate(known)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<record>"
        problem = err["msg"]
        if field == "modality":
            expected = ", ".join(m.value for m in Modality)
            problem = f"unknown modality {known.get('modality')!r} (expected one of: {expected})"
        elif field == "timestamp" and "supported range" not in problem:
            problem = f"unparseable timestamp {known.get('timestamp')!r}"
        elif problem.startswith("Value error, "):  # our own validators' messages
            problem = problem.removeprefix("Value error, ")
        raise InvalidEventError(str(event_id), field, problem, position) from None


def parse_events(records: Iterable[dict[str, Any]]) -> list[Event]:
    """Validate a whole batch before anything is written; the first bad record aborts it."""
    events: list[Event] = []
    seen: dict[str, Event] = {}
    for position, record in enumerate(records, start=1):
        event = parse_event(record, position)
        previous = seen.get(event.event_id)
        if previous is not None and previous.fingerprint() != event.fingerprint():
            raise InvalidEventError(
                event.event_id,
                "event_id",
                "duplicated in the batch with different content",
                position,
            )
        if previous is None:
            seen[event.event_id] = event
            events.append(event)
    return events


def as_events(items: Iterable[Event | dict[str, Any]]) -> list[Event]:
    """Events as given plus raw records validated as one batch (the first bad one aborts)."""
    items = list(items)
    raw = [e for e in items if not isinstance(e, Event)]
    return [e for e in items if isinstance(e, Event)] + (parse_events(raw) if raw else [])


class FusedNode(BaseModel):
    """A cluster-layer memory: a summary with back-pointers to its member events."""

    model_config = ConfigDict(extra="forbid")

    node_id: str = Field(description="Starts with `fused_`.")
    summary: str = Field(min_length=1, description="English summary of what the members share.")
    members: list[str] = Field(min_length=1, description="Member event ids (belong edges).")
    start: datetime = Field(description="Earliest member timestamp.")
    end: datetime = Field(description="Latest member timestamp.")
    subjects: list[str] = Field(default_factory=list, description="People among the members.")
    devices: list[str] = Field(default_factory=list, description="Devices among the members.")
    version: int = Field(default=1, description="Bumped on every update.")

    def index_text(self) -> str:
        return self.summary

    def serialize(self) -> str:
        span = f"{format_timestamp(self.start)} - {format_timestamp(self.end)}"
        devices = single_line(",".join(self.devices))
        return f"[{span}] [fused:{devices}] [-] {single_line(self.summary)}"

    @classmethod
    def from_members(
        cls, node_id: str, summary: str, members: list[Event], version: int = 1
    ) -> FusedNode:
        """Derive time range, subjects and devices from the member events."""
        ordered = sorted(members, key=lambda e: (e.timestamp, e.event_id))
        subjects = sorted({c for e in ordered for c in e.characters})
        devices = sorted({e.device for e in ordered})
        return cls(
            node_id=node_id,
            summary=summary,
            members=[e.event_id for e in ordered],
            start=ordered[0].timestamp,
            end=ordered[-1].timestamp,
            subjects=subjects,
            devices=devices,
            version=version,
        )


def is_fused_id(node_id: str) -> bool:
    return node_id.startswith(FUSED_PREFIX)


class Edge(BaseModel):
    """A typed relation. Causal edges keep their direction; traversal walks them both ways."""

    model_config = ConfigDict(frozen=True)

    src: str
    dst: str
    type: EdgeType
    weight: float = Field(default=1.0, ge=0.0, le=1.0, description="Similarity for semantic edges.")

    def key(self) -> tuple[str, str, str]:
        if self.type == EdgeType.SEMANTIC:  # undirected: one key for both orders
            a, b = sorted((self.src, self.dst))
            return (a, b, self.type.value)
        return (self.src, self.dst, self.type.value)

    def other(self, node_id: str) -> str:
        return self.dst if node_id == self.src else self.src


class Link(NamedTuple):
    """One edge as seen from one of its ends: what a graph walk reads, without an `Edge`
    model built for it (a search walks thousands; building them was a tenth of a search)."""

    type: EdgeType
    other: str  # the far end
    weight: float
    outgoing: bool  # the near end is the stored source (a causal edge walked forwards)

    @classmethod
    def of(cls, edge: Edge, node_id: str) -> Link:
        return cls(edge.type, edge.other(node_id), edge.weight, edge.src == node_id)


def links_weighing(links: Iterable[Link], edge_type: EdgeType, min_weight: float) -> list[Link]:
    """The links of one type weighing at least `min_weight`, in their order: what a store's
    `links_of` reads, for a store that only lists all of a node's links."""
    return [link for link in links if link.type == edge_type and link.weight >= min_weight]
