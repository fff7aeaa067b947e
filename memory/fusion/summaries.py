"""Extractive pack summaries for the offline twin (no LLM to write prose).

A summary must still serve retrieval and the reader: it names who, where, when and by
which sources, quotes the most representative member description, and lists the content
words the members share (the evidence that made them one segment).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

from memory.fusion.candidates import CandidateRecord
from memory.models import Event
from memory.text import tokenize

Member = Event | CandidateRecord


class _Item:
    """The fields a summary reads, from an Event or from the agent's CandidateRecord."""

    __slots__ = ("characters", "description", "devices", "locations", "node_id", "timestamp")

    def __init__(self, member: Member):
        if isinstance(member, Event):
            self.timestamp, self.node_id = member.timestamp, member.event_id
            self.description, self.characters = member.description, tuple(member.characters)
            self.locations: tuple[str, ...] = (member.location,) if member.location else ()
            self.devices: tuple[str, ...] = (member.device,)
        else:
            if member.is_fused:
                raise ValueError(
                    f"{member.node_id!r} is a fused node; summaries read member events"
                )
            self.timestamp, self.node_id = member.timestamp, member.node_id
            self.description, self.characters = member.text, member.people
            self.locations, self.devices = member.locations, member.devices


_SURFACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]*")


@functools.lru_cache(maxsize=1 << 14)
def _stem_surfaces(text: str) -> tuple[tuple[str, str], ...]:
    """Each token of `text` with the first surface word that produced it (for display).
    Cached: a pack's members are summarised again every time the pack grows."""
    out: dict[str, str] = {}
    for word in _SURFACE.findall(text):
        for token in tokenize(word):
            out.setdefault(token, word.strip(".:-").lower())
    return tuple(out.items())


@functools.lru_cache(maxsize=1 << 14)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def _join_names(names: Sequence[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _part_of_day(hour: int) -> str:
    if hour < 5:
        return "night"
    if hour < 12:
        return "morning"
    if hour < 17:
        return "afternoon"
    if hour < 21:
        return "evening"
    return "night"


def _span(events: Sequence[_Item]) -> str:
    """Coarse on purpose (date and part of day): the exact range is on the FusedNode itself,
    and a summary that does not change with every new member need not be re-embedded."""
    start, end = events[0].timestamp, events[-1].timestamp
    first = f"{start.date().isoformat()} {_part_of_day(start.hour)}"
    last = f"{end.date().isoformat()} {_part_of_day(end.hour)}"
    if first == last:
        return first
    if start.date() == end.date():
        return f"{first} to {_part_of_day(end.hour)}"
    return f"{first} to {last}"


def key_terms(members: Sequence[Member | _Item], limit: int = 6) -> list[str]:
    """The content words shared by the most members, in order of first mention; names and
    devices excluded. Words seen once count only when no word is shared."""
    events = [m if isinstance(m, _Item) else _Item(m) for m in members]
    skip = {t for e in events for t in tokenize(" ".join((*e.characters, *e.devices)))}
    counts: Counter[str] = Counter()
    surfaces: dict[str, str] = {}
    first: dict[str, int] = {}
    for e in events:
        for token, surface in _stem_surfaces(e.description):
            if token in skip or len(token) < 3 or token.replace(".", "").isdigit():
                continue
            counts[token] += 1
            surfaces.setdefault(token, surface)
            first.setdefault(token, len(first))
    min_count = 2 if len(events) > 1 and any(c >= 2 for c in counts.values()) else 1
    ranked = sorted(
        (t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], first[t])
    )
    chosen = sorted(ranked[:limit], key=lambda t: first[t])  # stable order as the pack grows
    return [surfaces[t] for t in chosen]


def lead_description(members: Sequence[Member | _Item]) -> str:
    """The member description sharing the most tokens with the others (the pack's centroid)."""
    events = [m if isinstance(m, _Item) else _Item(m) for m in members]
    token_sets = [_token_set(e.description) for e in events]

    def overlap(i: int) -> int:
        return sum(len(token_sets[i] & token_sets[j]) for j in range(len(events)) if j != i)

    best = max(range(len(events)), key=lambda i: (overlap(i), -i))
    return events[best].description


def extractive_summary(
    members: Sequence[Member], max_terms: int = 6, max_lead_chars: int = 240
) -> str:
    """`{people} at {places}, {date part-of-day} (seen by {devices}): {lead}. Shared details: …`

    Who, where, when and which sources, the most central member description, and the content
    words the members share. No member count and only a coarse time, so that a pack that grows
    by one more observation of the same scene usually keeps its summary (and its embedding).
    """
    if not members:
        raise ValueError("a summary needs at least one member event")
    events = sorted((_Item(m) for m in members), key=lambda e: (e.timestamp, e.node_id))
    people = sorted({c for e in events for c in e.characters})
    places = sorted({p for e in events for p in e.locations})
    devices = sorted({d for e in events for d in e.devices})
    who = _join_names(people) or "Household"
    where = f" at {_join_names(places)}" if places else ""
    lead = lead_description(events).strip().rstrip(".")
    if len(lead) > max_lead_chars:
        lead = lead[: max_lead_chars - 3].rstrip() + "..."
    head = f"{who}{where}, {_span(events)} (seen by {_join_names(devices)}): {lead}."
    terms = key_terms(events, max_terms)
    return f"{head} Shared details: {', '.join(terms)}." if terms else head
