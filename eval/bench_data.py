"""The format-neutral view of a benchmark that the harness runs on.

MemFuseBench and LoCoMo differ in layout, ids and categories; the harness only
needs events, questions with gold evidence ids, and (when the format has them)
checklists. Each loader maps its file onto these models once, so metrics, systems
and reports never look at a source format.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.errors import InputFormatError
from memory.models import Event, parse_timestamp

DatasetFormat = Literal["memfusebench", "locomo"]
FORMATS: tuple[str, ...] = ("memfusebench", "locomo")


class ChecklistItem(BaseModel):
    """One key point a complete answer must cover, with the events that support it."""

    model_config = ConfigDict(frozen=True)

    item: str = Field(description="The key point, in words.")
    evidence_ids: list[str] = Field(default_factory=list, description="Events supporting it.")


class BenchQuestion(BaseModel):
    """A question as the harness sees it: text, reference, gold evidence and asking context."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    category: str = Field(description="Diagnostic category; reports break metrics down by it.")
    question: str
    answer: str = Field(description="Reference answer (stringified when the source has a number).")
    evidence_ids: list[str] = Field(default_factory=list, description="Gold evidence event ids.")
    checklist: list[ChecklistItem] | None = Field(
        default=None, description="Answer checklist; None when the format has none (LoCoMo)."
    )
    user: str | None = Field(default=None, description="Who asks; None when unknown.")
    time: datetime = Field(description="When it is asked; events after it are not yet known.")
    device: str | None = Field(default=None, description="Device the question is asked on.")


class BenchScenario(BaseModel):
    """One independent memory: its event stream and the questions asked of it."""

    scenario_id: str
    events: list[Event]
    questions: list[BenchQuestion]
    labelled_events: list[Event] = Field(
        default_factory=list,
        description="The same events WITH the generator's labels (source, episode, storyline "
        "event), for diagnostics such as fusion purity only; never what a system ingests.",
    )


class BenchDataset(BaseModel):
    """A loaded benchmark file, identified by the hash of its bytes (the ingest cache key)."""

    name: str = Field(description="File stem, used in reports.")
    format: DatasetFormat
    content_hash: str = Field(description="sha256 of the file bytes.")
    scenarios: list[BenchScenario]
    apart_categories: list[str] = Field(
        default_factory=list,
        description="Categories reported apart and left out of Overall (LoCoMo adversarial).",
    )
    notes: list[str] = Field(
        default_factory=list, description="Load-time warnings worth reporting."
    )

    def n_questions(self) -> int:
        return sum(len(s.questions) for s in self.scenarios)

    def n_events(self) -> int:
        return sum(len(s.events) for s in self.scenarios)


def detect_format(raw: Any) -> DatasetFormat:
    """A dict with `scenario_data` is MemFuseBench; a list of samples with `conversation`
    and `qa` is LoCoMo. Anything else is refused rather than guessed."""
    if isinstance(raw, dict) and "scenario_data" in raw:
        return "memfusebench"
    if (
        isinstance(raw, list)
        and raw
        and all(isinstance(s, dict) and "conversation" in s and "qa" in s for s in raw)
    ):
        return "locomo"
    kind = type(raw).__name__
    raise InputFormatError(
        "cannot detect the benchmark format: expected a MemFuseBench object with "
        f"'scenario_data' or a LoCoMo list of samples with 'conversation' and 'qa', got a {kind}"
    )


def load_dataset(path: str | Path, format: DatasetFormat | None = None) -> BenchDataset:
    """Read a benchmark file in either supported format (autodetected when `format` is None)."""
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise InputFormatError(
            f"unknown dataset format {format!r} (expected one of: {', '.join(FORMATS)})"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFormatError(
            f"cannot read dataset {str(path)!r}: {exc.strerror or exc}"
        ) from None
    content_hash = hashlib.sha256(data).hexdigest()
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"dataset {str(path)!r} is not valid JSON: {exc}") from None
    fmt = format or detect_format(raw)
    if fmt == "locomo":
        from eval.locomo import locomo_from_raw

        scenarios, apart, notes = locomo_from_raw(raw)
    else:
        scenarios, apart, notes = _memfusebench_scenarios(raw, path.name), [], []
    return BenchDataset(
        name=path.stem,
        format=fmt,
        content_hash=content_hash,
        scenarios=scenarios,
        apart_categories=apart,
        notes=notes,
    )


def _memfusebench_scenarios(raw: Any, origin: str) -> list[BenchScenario]:
    """Map MemFuseBench scenarios (validated by eval.dataset) onto the neutral view.

    Events are taken without the generator's labels (source kind, episode, distractor
    target): those reveal answers and a fair system under test never sees them.
    """
    from eval.dataset import parse

    bench = parse(raw, origin=origin)
    scenarios = []
    for scenario in bench.scenario_data:
        events = scenario.memory_events(labels=False)
        stream_end = max((e.timestamp for e in events), default=None)
        questions = [_memfusebench_question(q, stream_end) for q in scenario.questions]
        scenarios.append(
            BenchScenario(
                scenario_id=scenario.scenario_id,
                events=events,
                questions=questions,
                labelled_events=scenario.memory_events(labels=True),
            )
        )
    return scenarios


def _memfusebench_question(q: Any, stream_end: datetime | None) -> BenchQuestion:
    """A question without `question_time` is asked at the end of the stream (all events known)."""
    when = q.question_time or stream_end
    if when is None:
        raise InputFormatError(
            f"question {q.question_id!r} has no question_time and its scenario no events"
        )
    checklist = [
        ChecklistItem(item=c.item, evidence_ids=list(c.evidence_event_ids)) for c in q.checklist
    ]
    return BenchQuestion(
        question_id=q.question_id,
        category=str(q.category),
        question=q.question,
        answer=str(q.answer),
        evidence_ids=list(q.evidence_event_ids),
        checklist=checklist or None,
        user=q.question_user or None,
        time=parse_timestamp(when),
        device=q.question_device or None,
    )
