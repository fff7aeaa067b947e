"""The deterministic reviewers of the Scene-to-Sensor stage artifacts, and of a whole file.

The synthesis pipeline validates every artifact before the next stage reads it; whatever a
program can decide (references resolve, devices can produce what they claim, times line up,
evidence is not a distractor) is decided here, before the LLM reviewer, so the reviewer spends
its judgement on meaning and the dataset checker (`memfuse check-dataset`) applies exactly
the same rules to a finished file. Every function is pure and returns `Issue`s found by code
(`by="code"`) with stable `code` strings; an empty list means the artifact passes.

`memory.formats.memfusebench_io.validate` stops at the first broken cross-reference (the
loader must refuse such a file); these checks report every problem, including the ones the
loader tolerates, for a corrector to repair.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta

from eval.synth.artifacts import Issue, QuestionPool, Stream, Timeline
from eval.synth.graph.checks_questions import (
    NEAR_DUPLICATE_JACCARD,
    check_answer_facts,
    check_filtered,
    check_questions,
    issue,
)
from eval.synth.graph.checks_stream import check_stream
from memory.formats.memfusebench import (
    DEVICE_CAPABILITIES,
    BenchEvent,
    MemFuseBench,
    Persona,
    Scenario,
)
from memory.models import Modality

__all__ = [
    "NEAR_DUPLICATE_JACCARD",
    "check_answer_facts",
    "check_benchmark",
    "check_filtered",
    "check_persona",
    "check_questions",
    "check_sample",
    "check_stream",
    "check_timeline",
    "device_type_key",
]

_MODALITIES = frozenset(m.value for m in Modality)


def device_type_key(device_type: str) -> str:
    """The taxonomy key a device type spells: the paper's files write "Smart Speaker" or
    "Kids Smartwatch" where the taxonomy says smart_speaker / kids_smartwatch."""
    return re.sub(r"[^a-z0-9]+", "_", device_type.lower()).strip("_")


# ------------------------------------------------------------------ stage 1: persona


def check_persona(persona: Persona) -> list[Issue]:
    """The persona-source graph constrains every later stage, so its references must close:
    unique devices and people, producible modalities, owners and device lists that agree."""
    names = [c.name for c in persona.characters]
    issues = [
        issue("persona", "duplicate_character", [name], f"character {name!r} appears twice")
        for name, n in Counter(names).items()
        if n > 1
    ]
    seen: set[str] = set()
    for device in persona.all_devices:
        if device.device_id in seen:
            issues.append(
                issue(
                    "persona",
                    "duplicate_device",
                    [device.device_id],
                    f"device id {device.device_id!r} appears twice in all_devices",
                )
            )
        seen.add(device.device_id)
        issues += _device_modalities(device.device_id, device.device_type, device.modality)
        if device.owner != "shared" and device.owner not in names:
            issues.append(
                issue(
                    "persona",
                    "unknown_owner",
                    [device.device_id],
                    f"device {device.device_id!r} is owned by {device.owner!r}, "
                    "neither a character nor 'shared'",
                )
            )
    return issues + _device_lists(persona)


def _device_modalities(device_id: str, device_type: str, modalities: list[Modality]) -> list[Issue]:
    declared = [str(m) for m in modalities]
    invalid = [m for m in declared if m not in _MODALITIES]
    issues = []
    if invalid:
        issues.append(
            issue(
                "persona",
                "invalid_modality",
                [device_id],
                f"device {device_id!r} declares unknown modalities {', '.join(invalid)}",
            )
        )
    capable = DEVICE_CAPABILITIES.get(device_type_key(device_type))
    beyond = [m for m in declared if capable is not None and m in _MODALITIES and m not in capable]
    if beyond:
        issues.append(
            issue(
                "persona",
                "modality_beyond_type",
                [device_id],
                f"device {device_id!r} is a {device_type} and cannot produce "
                f"{', '.join(beyond)} (it can: {', '.join(capable or [])})",
            )
        )
    return issues


def _device_lists(persona: Persona) -> list[Issue]:
    """Each character's devices and the shared devices exist and are owned accordingly."""
    issues: list[Issue] = []
    lists = [(c.name, c.devices) for c in persona.characters]
    for owner, device_ids in [*lists, ("shared", persona.shared_devices)]:
        whose = "the shared devices" if owner == "shared" else f"{owner}'s devices"
        for device_id in device_ids:
            device = persona.device(device_id)
            if device is None:
                issues.append(
                    issue(
                        "persona",
                        "unknown_listed_device",
                        [device_id],
                        f"{whose} list {device_id!r}, which is not in all_devices",
                    )
                )
            elif device.owner != owner:
                issues.append(
                    issue(
                        "persona",
                        "listed_device_owner",
                        [device_id],
                        f"{whose} list {device_id!r}, which is owned by {device.owner!r}",
                    )
                )
    return issues


# ------------------------------------------------------------------ stage 2: scenario


def check_timeline(persona: Persona, timeline: Timeline) -> list[Issue]:
    """The latent timeline must be non-empty, inside its week, about the household's people,
    and causal: an episode follows only from episodes that exist and do not come later."""
    if not timeline.episodes:
        return [issue("scenario", "empty_timeline", [], "the timeline plans no episode")]
    names = {c.name for c in persona.characters}
    end = timeline.start + timedelta(days=timeline.days)
    days: dict[str, date] = {}
    issues: list[Issue] = []
    for ep in timeline.episodes:
        if ep.episode_id in days:
            issues.append(
                issue(
                    "scenario",
                    "duplicate_episode",
                    [ep.episode_id],
                    f"episode id {ep.episode_id!r} is planned twice",
                )
            )
        days.setdefault(ep.episode_id, ep.day)
        if not ep.title.strip():
            issues.append(
                issue(
                    "scenario",
                    "empty_title",
                    [ep.episode_id],
                    f"episode {ep.episode_id!r} has a blank title",
                )
            )
        if not timeline.start <= ep.day < end:
            issues.append(
                issue(
                    "scenario",
                    "day_out_of_range",
                    [ep.episode_id],
                    f"episode {ep.episode_id!r} is on {ep.day.isoformat()}, outside "
                    f"{timeline.start.isoformat()} to {(end - timedelta(days=1)).isoformat()}",
                )
            )
        strangers = [p for p in ep.people if p not in names]
        if strangers:
            issues.append(
                issue(
                    "scenario",
                    "unknown_person",
                    [ep.episode_id],
                    f"episode {ep.episode_id!r} involves {', '.join(strangers)}, "
                    "who are not characters of the persona",
                )
            )
    return issues + _causes(timeline, days)


def _causes(timeline: Timeline, days: dict[str, date]) -> list[Issue]:
    issues: list[Issue] = []
    for ep in timeline.episodes:
        for cause in ep.causes:
            day = days.get(cause)
            if day is None:
                issues.append(
                    issue(
                        "scenario",
                        "unknown_cause",
                        [ep.episode_id, cause],
                        f"episode {ep.episode_id!r} follows from {cause!r}, "
                        "which is not a planned episode",
                    )
                )
            elif cause == ep.episode_id or day > ep.day:
                issues.append(
                    issue(
                        "scenario",
                        "cause_not_earlier",
                        [ep.episode_id, cause],
                        f"episode {ep.episode_id!r} follows from {cause!r}, which is not earlier",
                    )
                )
    return issues


# ------------------------------------------------------------------ stage 6 and whole files


def check_sample(scenario: Scenario) -> list[Issue]:
    """The finished scenario: every check above (each issue keeps the stage whose artifact
    is at fault), plus answer preservation: distractors are never evidence, and each names
    the question it targets. A fault involving a distractor is the adversarial stage's."""
    stream = Stream(episodes=scenario.episodes)
    pool = QuestionPool(questions=scenario.questions)
    distractors = {e.event_id for ep in scenario.episodes for e in ep.events if e.is_adversarial}
    issues = check_persona(scenario.persona) + check_stream(scenario.persona, stream)
    issues += check_filtered(scenario.persona, stream, pool)
    issues = [_blame_distractor(i, distractors) for i in issues]
    return issues + _targets(scenario, distractors)


def _blame_distractor(found: Issue, distractors: set[str]) -> Issue:
    if found.stage != "adversarial" and distractors.intersection(found.ids):
        return found.model_copy(update={"stage": "adversarial"})
    return found


def _targets(scenario: Scenario, distractors: set[str]) -> list[Issue]:
    questions = {q.question_id for q in scenario.questions}
    issues = []
    for event in scenario.all_events():
        target = event.target_question or _extra_label(event, "target_question")
        if event.event_id in distractors and target is not None and target not in questions:
            issues.append(
                issue(
                    "adversarial",
                    "unknown_target_question",
                    [event.event_id],
                    f"distractor {event.event_id!r} targets question {target!r}, "
                    "which the scenario does not ask",
                )
            )
    return issues


def _extra_label(event: BenchEvent, label: str) -> str | None:
    """A generator label kept in a `metadata` object instead of a top-level field."""
    metadata = (event.model_extra or {}).get("metadata")
    value = metadata.get(label) if isinstance(metadata, dict) else None
    return str(value) if value is not None else None


def check_benchmark(bench: MemFuseBench) -> dict[str, list[Issue]]:
    """`check_sample` on every scenario, by scenario id (every id present, even when clean)."""
    result: dict[str, list[Issue]] = {}
    for scenario in bench.scenario_data:
        issues = check_sample(scenario)
        if scenario.scenario_id in result:
            issues.insert(
                0,
                issue(
                    "adversarial",
                    "duplicate_scenario",
                    [scenario.scenario_id],
                    f"scenario id {scenario.scenario_id!r} is used twice",
                ),
            )
        result.setdefault(scenario.scenario_id, []).extend(issues)
    return result
