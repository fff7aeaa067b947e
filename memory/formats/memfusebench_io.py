"""Reading and writing MemFuseBench files: a validating loader and a deterministic writer.

A benchmark file is only useful if every reference in it resolves and every event could
really have come from the device it names, so `load` checks the cross-references that
evaluation relies on (evidence ids, devices, modalities, question times) and fails with a
one-line `DatasetError` naming the scenario and the event or question at fault. `dump`
writes back unknown fields, and only the fields a file set, sorted, so equal benches give
equal bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memory.errors import InputFormatError
from memory.formats.memfusebench import (
    VERSION,
    BenchEvent,
    DatasetError,
    Device,
    MemFuseBench,
    Scenario,
)
from memory.jsontext import decode_utf8, load_json


def validate(bench: MemFuseBench) -> MemFuseBench:
    """Check every cross-reference evaluation relies on; raise DatasetError on the first fault."""
    seen_scenarios: set[str] = set()
    for scenario in bench.scenario_data:
        if scenario.scenario_id in seen_scenarios:
            raise DatasetError("duplicate scenario id", scenario.scenario_id)
        seen_scenarios.add(scenario.scenario_id)
        _validate_scenario(scenario)
    return bench


def _validate_scenario(scenario: Scenario) -> None:
    sid = scenario.scenario_id
    devices: dict[str, Device] = {}
    for device in scenario.persona.all_devices:
        if device.device_id in devices:
            raise DatasetError(
                "duplicate device id in all_devices", sid, f"device {device.device_id!r}"
            )
        devices[device.device_id] = device
    events: dict[str, BenchEvent] = {}
    for episode in scenario.episodes:
        for event in episode.events:
            where = f"event {event.event_id!r}"
            if event.event_id in events:
                raise DatasetError("duplicate event id", sid, where)
            events[event.event_id] = event
            known = devices.get(event.device)
            if known is None:
                raise DatasetError(
                    f"unknown device {event.device!r} (not in all_devices)", sid, where
                )
            if event.modality not in known.modality:
                allowed = ", ".join(m.value for m in known.modality)
                raise DatasetError(
                    f"device {event.device!r} cannot produce modality {event.modality.value!r} "
                    f"(it produces: {allowed})",
                    sid,
                    where,
                )
    question_ids: set[str] = set()
    for question in scenario.questions:
        where = f"question {question.question_id!r}"
        if question.question_id in question_ids:
            raise DatasetError("duplicate question id", sid, where)
        question_ids.add(question.question_id)
        references = [("evidence_event_ids", i) for i in question.evidence_event_ids]
        for n, item in enumerate(question.checklist, start=1):
            references += [(f"checklist item {n}", i) for i in item.evidence_event_ids]
        for field, event_id in references:
            cited = events.get(event_id)
            if cited is None:
                raise DatasetError(
                    f"{field}: evidence id {event_id!r} does not resolve to an event", sid, where
                )
            if cited.is_adversarial:
                raise DatasetError(
                    f"{field}: evidence id {event_id!r} is an adversarial distractor", sid, where
                )
        if question.question_time is not None:
            latest = max(events[i].timestamp for i in question.evidence_event_ids)
            if question.question_time < latest:
                raise DatasetError(
                    f"question_time {question.question_time.isoformat()} is before its latest "
                    f"evidence ({latest.isoformat()})",
                    sid,
                    where,
                )


# ---------------------------------------------------------------- reading and writing


def parse(raw: Any, origin: str = "<data>") -> MemFuseBench:
    """Build and validate a bench from already-decoded JSON."""
    if not isinstance(raw, dict):
        raise DatasetError(f"{origin}: expected a JSON object, got {type(raw).__name__}")
    if raw.get("version") != VERSION:
        raise DatasetError(
            f"{origin}: unsupported version {raw.get('version')!r} (expected {VERSION!r})"
        )
    scenarios = raw.get("scenario_data")
    if not isinstance(scenarios, list):
        raise DatasetError(f"{origin}: 'scenario_data' must be a list of scenarios")
    parsed: list[Scenario] = []
    for position, data in enumerate(scenarios, start=1):
        parsed.append(_parse_scenario(data, position))
    header = {k: v for k, v in raw.items() if k != "scenario_data"}
    bench = MemFuseBench.model_validate({**header, "scenario_data": []})
    bench.scenario_data = parsed
    return validate(bench)


def _parse_scenario(data: Any, position: int) -> Scenario:
    sid = data.get("scenario_id") if isinstance(data, dict) else None
    label = str(sid) if sid else f"#{position}"
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DatasetError(f"{_loc(data, err['loc'])}: {err['msg']}", label) from None


def _loc(data: Any, loc: tuple[Any, ...]) -> str:
    """Render a pydantic error location with the ids of the records it passes through."""
    parts: list[str] = []
    node = data
    for key in loc:
        named = ""
        try:
            node = node[key]
            if isinstance(node, dict):
                for id_key in ("event_id", "question_id", "episode_id", "device_id", "name"):
                    if id_key in node:
                        named = f" ({id_key.split('_')[0]} {node[id_key]!r})"
                        break
        except (KeyError, IndexError, TypeError):
            node = None
        parts.append((f"[{key}]" if isinstance(key, int) else f".{key}") + named)
    return "".join(parts).lstrip(".") or "<scenario>"


def load(path: str | Path) -> MemFuseBench:
    """Read and validate a MemFuseBench JSON file."""
    path = Path(path)
    try:
        raw = load_json(decode_utf8(path.read_bytes(), path.name), path.name)
    except OSError as exc:
        raise DatasetError(f"cannot read {str(path)!r}: {exc}") from None
    except InputFormatError as exc:
        raise DatasetError(str(exc)) from None
    return parse(raw, origin=path.name)


def to_json(bench: MemFuseBench) -> str:
    """Deterministic text: only the fields that were set (plus extras), keys sorted."""
    data = bench.model_dump(mode="json", exclude_unset=True)
    data["version"] = bench.version
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def dump(bench: MemFuseBench, path: str | Path) -> Path:
    """Write the bench; the same bench always gives byte-identical files."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(to_json(bench), encoding="utf-8")
    tmp.replace(path)
    return path
