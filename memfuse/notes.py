"""Free text an agent or a person hands the memory, made into an ordinary event.

An agent's memory call says "remember this" with a string, not with a device reading. So the
string becomes one event like any other (same validation, fusion, visibility and audit): the
fields a sensor would have set are filled in from who said it and when. The id is derived from
those fields and the text, so handing the same note twice stores it once (a retried call
must not duplicate a memory).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memory.errors import MemFuseError
from memory.models import Event, Modality, SourceKind, parse_events
from memory.visibility import VISIBILITY_KEY

NOTE_PREFIX = "note_"
#: Device ids of notes: who handed the memory the text (`user:Anna`, `agent:planner`).
USER_DEVICE = "user:"
AGENT_DEVICE = "agent:"

Note = str | Event | Mapping[str, Any]


def note_id(device: str, timestamp: datetime, text: str, owner: str | None) -> str:
    """The same note from the same source at the same second is the same event."""
    key = json.dumps([device, timestamp.isoformat(), text, owner], ensure_ascii=False)
    return NOTE_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def note_event(
    text: str,
    *,
    user: str | None,
    agent: str | None = None,
    device: str | None = None,
    time: datetime,
    location: str | None = None,
    people: Sequence[str] | None = None,
    visibility: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Event:
    """The event for one note. It belongs to the user (private to them by default, as any
    event with an owner is; see `memory.visibility`), or to the agent when no user is named."""
    if not isinstance(text, str) or not text.strip():
        raise MemFuseError("a note must be non-empty text")
    owner = user or agent
    if owner is None:
        raise MemFuseError(
            "say whose note this is: user=NAME (or MEMFUSE_USER), or agent=NAME for an agent's "
            "own memory"
        )
    source = device or (f"{AGENT_DEVICE}{agent}" if agent else f"{USER_DEVICE}{user}")
    extra = dict(metadata or {})
    if visibility is not None:
        extra[VISIBILITY_KEY] = visibility
    if agent is not None:
        extra.setdefault("agent", agent)
    record = {
        "event_id": note_id(source, time, text.strip(), owner),
        "timestamp": time,
        "device": source,
        "modality": Modality.DIALOGUE,
        "location": location or "",
        "description": text,
        "characters": list(people) if people is not None else ([user] if user else []),
        "source": SourceKind.USER,
        "owner": owner,
        "metadata": extra,
    }
    return parse_events([record])[0]  # the one validation every ingested record gets


def note_events(
    content: Note | Sequence[Note],
    *,
    user: str | None,
    agent: str | None,
    time: datetime,
    fields: Mapping[str, Any],
) -> list[Event | dict[str, Any]]:
    """What `MemFuse.add` stores: each string made a note, events and event records kept as
    given. Note fields (device, location, …) describe free text only; given beside a full
    event they would be silently ignored, so they are refused."""
    items = list(content) if isinstance(content, list | tuple) else [content]
    if not items:
        raise MemFuseError("nothing to add: give a text, an event or a list of them")
    given = sorted(name for name, value in fields.items() if value is not None)
    out: list[Event | dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            out.append(note_event(item, user=user, agent=agent, time=time, **fields))
        elif isinstance(item, Event | Mapping):
            if given:
                raise MemFuseError(
                    f"{', '.join(given)}: these describe free text; an event carries its own"
                )
            out.append(item if isinstance(item, Event) else dict(item))
        else:
            raise MemFuseError(
                f"add takes text, an event or an event record, not {type(item).__name__}"
            )
    return out
