"""The deterministic reviewer of the event stream (stage 3 of Scene-to-Sensor).

The stream is what a system under test reads, so each observation must be one a real
household device could have made: from a device the persona has, in a modality it declares,
once per device and moment, in time order within its episode. Given the scenario timeline,
observations must also fall inside its week and storyline ones inside planned episodes.
`eval.synth.graph.checks` re-exports `check_stream`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise

from eval.synth.artifacts import Issue, Stream, Timeline
from eval.synth.graph.checks_questions import issue
from memory.formats.memfusebench import BenchEvent, Persona
from memory.models import SourceKind


def check_stream(persona: Persona, stream: Stream, timeline: Timeline | None = None) -> list[Issue]:
    """Every observation must come from a device that exists and can sense it, once per
    device and moment, in order within its episode, and (given the timeline) inside the week
    and, for storyline observations, inside a planned episode.

    Event `characters` are not checked against the household: visitors and neighbours are
    legitimately named, and no rule tells a typo from a guest.
    """
    issues: list[Issue] = []
    seen: set[str] = set()
    slots: dict[tuple[str, datetime], str] = {}
    for episode in stream.episodes:
        issues += _episode_order(episode.episode_id, episode.events)
        for event in episode.events:
            if event.event_id in seen:
                issues.append(
                    issue(
                        "stream",
                        "duplicate_event",
                        [event.event_id],
                        f"event id {event.event_id!r} appears more than once",
                    )
                )
            seen.add(event.event_id)
            issues += _event_source(persona, event)
            if event.episode_id is not None and event.episode_id != episode.episode_id:
                issues.append(
                    issue(
                        "stream",
                        "episode_mismatch",
                        [event.event_id],
                        f"event {event.event_id!r} says episode {event.episode_id!r} but is "
                        f"listed under {episode.episode_id!r}",
                    )
                )
            slot = (event.device, event.timestamp)
            if slot in slots:
                issues.append(
                    issue(
                        "stream",
                        "duplicate_device_timestamp",
                        [slots[slot], event.event_id],
                        f"events {slots[slot]!r} and {event.event_id!r} are both on "
                        f"{event.device!r} at {event.timestamp.isoformat()}",
                    )
                )
            slots.setdefault(slot, event.event_id)
    return issues + (_against_timeline(stream, timeline) if timeline is not None else [])


def _event_source(persona: Persona, event: BenchEvent) -> list[Issue]:
    device = persona.device(event.device)
    if device is None:
        return [
            issue(
                "stream",
                "unknown_device",
                [event.event_id],
                f"event {event.event_id!r} is on {event.device!r}, not a device of the persona",
            )
        ]
    if event.modality not in device.modality:
        declared = ", ".join(str(m) for m in device.modality)
        return [
            issue(
                "stream",
                "device_modality",
                [event.event_id],
                f"event {event.event_id!r} is {event.modality!s} but {event.device!r} "
                f"only produces {declared}",
            )
        ]
    if not event.description.strip():
        return [
            issue(
                "stream",
                "empty_description",
                [event.event_id],
                f"event {event.event_id!r} has a blank description",
            )
        ]
    return []


def _episode_order(episode_id: str, events: list[BenchEvent]) -> list[Issue]:
    issues = []
    for before, after in pairwise(events):
        if after.timestamp < before.timestamp:
            issues.append(
                issue(
                    "stream",
                    "episode_out_of_order",
                    [before.event_id, after.event_id],
                    f"in episode {episode_id!r}, event {after.event_id!r} "
                    f"({after.timestamp.isoformat()}) follows the later {before.event_id!r}",
                )
            )
    return issues


def _against_timeline(stream: Stream, timeline: Timeline) -> list[Issue]:
    planned = {ep.episode_id for ep in timeline.episodes}
    end = timeline.start + timedelta(days=timeline.days)
    issues: list[Issue] = []
    for episode in stream.episodes:
        for event in episode.events:
            if not timeline.start <= event.timestamp.date() < end:
                issues.append(
                    issue(
                        "stream",
                        "outside_week",
                        [event.event_id],
                        f"event {event.event_id!r} at {event.timestamp.isoformat()} is outside "
                        f"the week from {timeline.start.isoformat()}",
                    )
                )
            storyline = event.source == SourceKind.STORYLINE
            if storyline and episode.episode_id not in planned:
                issues.append(
                    issue(
                        "stream",
                        "unplanned_episode",
                        [event.event_id],
                        f"storyline event {event.event_id!r} is in episode "
                        f"{episode.episode_id!r}, which the timeline does not plan",
                    )
                )
    return issues
