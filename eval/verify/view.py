"""A benchmark file as the verifiers read it, whichever of the two supported formats it is in.

MemFuseBench carries a household (persona), labelled events and questions with checklists;
LoCoMo carries a two-person chat and questions with evidence turns. Both become one
`VerifyScenario`: events as `BenchEvent`, questions as the MemFuseBench `Question`, and the
household's members when the file has them (None when it does not, so that a verifier that
needs them reports nothing). The raw JSON is kept as read: the corrected dataset is the raw
document with the edits applied (`apply_edits`), so a foreign file keeps every field we do not
know about.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval.verify.findings import Edit
from memory.errors import InputFormatError
from memory.formats.locomo import locomo_from_raw
from memory.formats.memfusebench import (
    BenchEvent,
    DatasetError,
    MemFuseBench,
    Question,
)
from memory.formats.memfusebench_io import parse
from memory.formats.models import DatasetFormat
from memory.formats.sniff import dataset_format, read_json


@dataclass(frozen=True)
class Member:
    """One person of the household, with what the file says about them."""

    name: str
    age: int | None
    role: str


@dataclass
class VerifyScenario:
    """One scenario: its people (None: unknown), events by id in time order, questions."""

    scenario_id: str
    members: list[Member] | None
    events: dict[str, BenchEvent]
    questions: list[Question]
    episode_of: dict[str, str] = field(default_factory=dict)  # event id -> episode id
    episode_titles: dict[str, str] = field(default_factory=dict)
    storyline_episodes: set[str] = field(default_factory=set)  # episodes that are storylines

    def names(self) -> set[str]:
        """Everyone the scenario names: members and the people its events tag."""
        found = {m.name for m in self.members or []}
        for event in self.events.values():
            found.update(event.characters)
        return found


@dataclass
class LoadedBench:
    """A file as read: its format, its raw JSON (what edits apply to) and its scenarios."""

    path: Path
    format: DatasetFormat
    raw: Any
    scenarios: list[VerifyScenario]

    def scenario(self, scenario_id: str) -> VerifyScenario:
        for scenario in self.scenarios:
            if scenario.scenario_id == scenario_id:
                return scenario
        raise DatasetError(f"no scenario {scenario_id!r}")

    def n_questions(self) -> int:
        return sum(len(s.questions) for s in self.scenarios)


def load_bench(path: Path) -> LoadedBench:
    """Read a MemFuseBench or LoCoMo file; a missing or unreadable file raises a one-line
    `InputFormatError`/`DatasetError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"cannot read {str(path)!r}: no such file")
    try:
        _, raw = read_json(path)
    except OSError as exc:
        raise InputFormatError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    fmt = dataset_format(raw)
    if fmt is None:
        raise InputFormatError(
            f"{path.name}: not a benchmark file (expected a MemFuseBench object with "
            f"'scenario_data' or a LoCoMo list of samples with 'conversation')"
        )
    return LoadedBench(path=path, format=fmt, raw=raw, scenarios=scenarios_of(raw, fmt, path.name))


def scenarios_of(raw: Any, fmt: DatasetFormat, origin: str) -> list[VerifyScenario]:
    """The verifiers' view of a decoded document in the given format."""
    if fmt == "locomo":
        return _locomo(raw)
    return _memfusebench(raw, origin)


def _memfusebench(raw: Any, origin: str) -> list[VerifyScenario]:
    try:
        bench = parse(raw, origin=origin)
    except DatasetError as refusal:  # a broken reference: still verify what the models accept
        try:
            bench = MemFuseBench.model_validate(raw)
        except ValidationError:
            raise refusal from None
    result = []
    for scenario in bench.scenario_data:
        members = [Member(c.name, c.age, c.role) for c in scenario.persona.characters]
        events = {e.event_id: e for e in scenario.all_events()}
        episode_of = {e.event_id: ep.episode_id for ep in scenario.episodes for e in ep.events}
        result.append(
            VerifyScenario(
                scenario_id=scenario.scenario_id,
                members=members or None,
                events=events,
                questions=list(scenario.questions),
                episode_of=episode_of,
                episode_titles={ep.episode_id: ep.title for ep in scenario.episodes},
                storyline_episodes={
                    ep.episode_id
                    for ep in scenario.episodes
                    if ep.kind not in ("background",) and ep.events
                },
            )
        )
    return result


def _locomo(raw: Any) -> list[VerifyScenario]:
    scenarios, _, _ = locomo_from_raw(raw)
    dropped = {
        f"{sample.get('sample_id')}_q{index}"
        for sample in raw
        for index, qa in enumerate(sample.get("qa") or [], start=1)
        if isinstance(qa, dict) and qa.get(DROPPED)
    }
    result = []
    for scenario in scenarios:
        events = {
            e.event_id: BenchEvent(
                event_id=e.event_id,
                timestamp=e.timestamp,
                device=e.device,
                modality=e.modality,
                location=e.location,
                description=e.description,
                characters=list(e.characters),
            )
            for e in sorted(scenario.events, key=lambda e: (e.timestamp, e.event_id))
        }
        questions = [
            Question.model_construct(
                question_id=q.question_id,
                category=q.category,
                question=q.question,
                answer=q.answer,
                evidence_event_ids=list(q.evidence_ids),
                checklist=[],
                question_user=None,
                question_time=q.time,
                question_device=None,
            )
            for q in scenario.questions
            if q.question_id not in dropped
        ]
        result.append(VerifyScenario(scenario.scenario_id, None, events, questions))
    return result


# ------------------------------------------------------------------ edits


DROPPED = "_verify_dropped"  # marks a LoCoMo qa entry dropped between rounds (ids stay put)


def apply_edits(bench: LoadedBench, edits: list[Edit], final: bool = True) -> Any:
    """The raw document with every edit applied (a deep copy; the input is never changed).

    LoCoMo numbers its questions by position, so between rounds (`final=False`) a dropped
    entry is only marked, and every question keeps its id; the final document removes it."""
    raw = copy.deepcopy(bench.raw)
    by_id = {(e.scenario_id, e.question_id): e for e in edits if e.outcome != "kept"}
    if not by_id:
        return raw
    if bench.format == "locomo":
        return _edit_locomo(raw, by_id, final)
    for scenario in raw.get("scenario_data") or []:
        sid = str(scenario.get("scenario_id"))
        kept = []
        for record in scenario.get("questions") or []:
            edit = by_id.get((sid, str(record.get("question_id"))))
            if edit is None:
                kept.append(record)
            elif edit.outcome == "revised":
                kept.append(_revised_record(record, edit))
        scenario["questions"] = kept
        _untarget(scenario, {str(q.get("question_id")) for q in kept})
    return raw


def _untarget(scenario: dict[str, Any], asked: set[str]) -> None:
    """A distractor aimed at a dropped question stays in the stream, aimed at nothing."""
    for episode in scenario.get("episodes") or []:
        for event in episode.get("events") or []:
            if event.get("target_question") not in (None, *asked):
                event["target_question"] = None


def _revised_record(record: dict[str, Any], edit: Edit) -> dict[str, Any]:
    record = dict(record)
    if edit.question is not None:
        record["question"] = edit.question
    if edit.answer is not None:
        record["answer"] = edit.answer
    if edit.evidence_event_ids is not None:
        keep = set(edit.evidence_event_ids)
        record["evidence_event_ids"] = list(edit.evidence_event_ids)
        checklist = []
        for item in record.get("checklist") or []:
            ids = [i for i in item.get("evidence_event_ids") or [] if i in keep]
            if ids:
                checklist.append({**item, "evidence_event_ids": ids})
        if "checklist" in record:
            record["checklist"] = checklist
    return record


def _edit_locomo(raw: Any, by_id: dict[tuple[str, str], Edit], final: bool) -> Any:
    """LoCoMo question ids are `<sample>_q<n>` (n counts the sample's qa list from 1)."""
    for sample in raw:
        sid = str(sample.get("sample_id") or "")
        kept = []
        for index, qa in enumerate(sample.get("qa") or [], start=1):
            edit = by_id.get((sid, f"{sid}_q{index}"))
            if edit is None:
                kept.append(qa)
            elif edit.outcome == "dropped" and not final:
                kept.append({**qa, DROPPED: True})
            elif edit.outcome == "revised":
                qa = dict(qa)
                if edit.question is not None:
                    qa["question"] = edit.question
                if edit.answer is not None:
                    key = "adversarial_answer" if "adversarial_answer" in qa else "answer"
                    qa[key] = edit.answer
                if edit.evidence_event_ids is not None:
                    prefix = f"{sid}_"
                    qa["evidence"] = [i.removeprefix(prefix) for i in edit.evidence_event_ids]
                kept.append(qa)
        sample["qa"] = kept
    return raw


def evidence_lines(scenario: VerifyScenario, ids: list[str]) -> list[str]:
    """Cited events as a reader sees them: `id [time] [device] [location] description`."""
    return [line(scenario.events[i]) for i in ids if i in scenario.events]


def line(event: BenchEvent) -> str:
    when = event.timestamp.strftime("%Y-%m-%d %H:%M (%a)")
    return f"{event.event_id} [{when}] [{event.device}] [{event.location}] {event.description}"
