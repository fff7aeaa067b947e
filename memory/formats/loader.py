"""One entry point for reading a benchmark file in either supported format.

`load_dataset` is what `memfuse ingest` and the benchmark harness both call: it detects
the format from the content (refusing to guess), hashes the bytes (the harness's ingest
cache key) and hands the decoded JSON to the format's reader.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.errors import InputFormatError
from memory.formats.locomo import locomo_from_raw
from memory.formats.memfusebench import Question
from memory.formats.memfusebench_io import parse
from memory.formats.models import (
    FORMATS,
    BenchDataset,
    BenchQuestion,
    BenchScenario,
    ChecklistItem,
    DatasetFormat,
)
from memory.formats.sniff import Sniffed, dataset_format, read_json
from memory.models import parse_timestamp


def benchmark_format(raw: Any) -> DatasetFormat:
    """The benchmark format of a decoded document (`sniff.dataset_format`, the rule `memfuse
    ingest` uses too); anything else is refused rather than guessed."""
    if (fmt := dataset_format(raw)) is not None:
        return fmt
    kind = type(raw).__name__
    raise InputFormatError(
        "cannot detect the benchmark format: expected a MemFuseBench object with "
        f"'scenario_data' or a LoCoMo list of samples with 'conversation' and 'qa', got a {kind}"
    )


def load_dataset(
    path: str | Path, format: DatasetFormat | None = None, *, sniffed: Sniffed | None = None
) -> BenchDataset:
    """Read a benchmark file in either supported format (autodetected when `format` is None).
    `sniffed`: the file as `sniff` already read it, so it is neither read nor parsed again."""
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise InputFormatError(
            f"unknown dataset format {format!r} (expected one of: {', '.join(FORMATS)})"
        )
    if sniffed is not None and sniffed.data is not None:
        data, raw = sniffed.data, sniffed.raw
    else:
        try:
            data, raw = read_json(path)
        except OSError as exc:
            raise InputFormatError(
                f"cannot read dataset {str(path)!r}: {exc.strerror or exc}"
            ) from None
    content_hash = hashlib.sha256(data).hexdigest()
    fmt = format or benchmark_format(raw)
    if fmt == "locomo":
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
    """Map MemFuseBench scenarios (validated by `memfusebench_io.parse`) onto the neutral view.

    Events are taken without the generator's labels (source kind, episode, distractor
    target): those reveal answers and a fair system under test never sees them.
    """
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


def _memfusebench_question(q: Question, stream_end: datetime | None) -> BenchQuestion:
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
