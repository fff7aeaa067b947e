"""LoCoMo (`locomo10.json`) read as a benchmark: each dialogue turn becomes one chat event.

LoCoMo is single-source (two people chatting), so it tests the retrieval engine on a
public benchmark rather than multi-source fusion. The real file has quirks that are
handled here instead of failing the whole run: numeric answers, evidence strings
that hold several dia ids ("D8:6; D9:17"), zero-padded ids ("D30:05") and evidence
pointing at turns that do not exist (dropped and counted in the dataset notes).
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from typing import Any

from memory.errors import InputFormatError
from memory.formats.models import BenchQuestion, BenchScenario
from memory.models import Event, Modality, SourceKind, parse_event

CATEGORIES: dict[int, str] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
ADVERSARIAL = "adversarial"
logger = logging.getLogger(__name__)
TURN_SPACING = timedelta(seconds=30)  # turns of a session are this far apart
QUESTION_DELAY = timedelta(minutes=1)  # questions are asked this long after the last turn

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %B %Y", "%I:%M %p on %d %b, %Y")
_EVIDENCE_SPLIT = re.compile(r"[,;\s]+")


def parse_session_time(text: str) -> datetime:
    """Parse LoCoMo's "1:47 pm on 18 May, 2023"."""
    cleaned = " ".join(str(text).split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    raise InputFormatError(
        f"LoCoMo: unparseable session date {text!r} (expected like '1:47 pm on 18 May, 2023')"
    )


def event_id(sample_id: str, dia_id: str) -> str:
    """Event ids keep the dia id verbatim: `conv-26_D1:3`."""
    return f"{sample_id}_{dia_id}"


def split_evidence(entry: Any) -> list[str]:
    """One evidence string may hold several dia ids separated by commas, semicolons or spaces."""
    return [part for part in _EVIDENCE_SPLIT.split(str(entry)) if part]


def _canonical_dia(dia_id: str) -> str:
    """`D30:05` → `D30:5`, to match zero-padded references to the turn's own id."""
    return re.sub(r"\d+", lambda m: str(int(m.group())), dia_id.strip())


def _sessions(
    sample_id: str, conversation: dict[str, Any]
) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    sessions = []
    for key, turns in conversation.items():
        match = _SESSION_KEY.match(key)
        if not match or not isinstance(turns, list) or not turns:
            continue
        number = int(match.group(1))
        stamp = conversation.get(f"session_{number}_date_time")
        if not stamp:
            raise InputFormatError(
                f"LoCoMo sample {sample_id!r}: session {number} has no date_time"
            )
        sessions.append((number, parse_session_time(stamp), turns))
    if not sessions:
        raise InputFormatError(f"LoCoMo sample {sample_id!r}: conversation has no sessions")
    return sorted(sessions, key=lambda s: s[0])


def _turn_event(sample_id: str, session: int, when: datetime, turn: dict[str, Any]) -> Event:
    try:
        speaker, dia_id, text = str(turn["speaker"]), str(turn["dia_id"]), str(turn["text"])
    except KeyError as exc:
        raise InputFormatError(
            f"LoCoMo sample {sample_id!r} session {session}: turn without {exc.args[0]!r}"
        ) from None
    description = f"{speaker} said: {text.strip()}"
    caption = turn.get("blip_caption")
    if caption:
        description += f" [shared a photo: {str(caption).strip()}]"
    metadata: dict[str, Any] = {"dia_id": dia_id, "session": session}
    if turn.get("img_url"):
        metadata["img_url"] = turn["img_url"]
    record = {  # validated like any input record, so a refusal names the turn's event
        "event_id": event_id(sample_id, dia_id),
        "timestamp": when,
        "device": f"chat_{'_'.join(speaker.lower().split())}",
        "modality": Modality.DIALOGUE,
        "location": "chat",
        "description": description,
        "characters": (speaker,),
        "source": SourceKind.USER,
        "owner": speaker,
        "metadata": metadata,
    }
    return parse_event(record)


def _shared_by_speakers(events: list[Event]) -> list[Event]:
    """A conversation was heard by everyone in it: each turn is visible to all its speakers
    (not only to the one who said it, as the `owner` default would make it)."""
    speakers = sorted({p for e in events for p in e.characters})
    if len(speakers) < 2:
        return events
    shared = "people:" + ",".join(speakers)
    return [e.model_copy(update={"metadata": {**e.metadata, "visibility": shared}}) for e in events]


def sample_scenario(sample: dict[str, Any]) -> tuple[BenchScenario, int]:
    """One LoCoMo sample → one scenario; also returns how many evidence refs were dropped."""
    sample_id = str(sample.get("sample_id") or "")
    if not sample_id:
        raise InputFormatError("LoCoMo: a sample has no 'sample_id'")
    conversation = sample["conversation"]
    if not isinstance(conversation, dict):
        raise InputFormatError(f"LoCoMo sample {sample_id!r}: 'conversation' is not an object")
    events: list[Event] = []
    for number, start, turns in _sessions(sample_id, conversation):
        for order, turn in enumerate(turns):
            events.append(_turn_event(sample_id, number, start + order * TURN_SPACING, turn))
    events = _shared_by_speakers(events)
    by_dia = {_canonical_dia(e.metadata["dia_id"]): e.event_id for e in events}
    if len(by_dia) != len(events):
        raise InputFormatError(f"LoCoMo sample {sample_id!r}: duplicate dia_id among its turns")
    question_time = max(e.timestamp for e in events) + QUESTION_DELAY
    questions, dropped = [], 0
    for index, qa in enumerate(sample.get("qa") or [], start=1):
        question, lost = _question(sample_id, index, qa, by_dia, question_time)
        questions.append(question)
        dropped += lost
    return BenchScenario(scenario_id=sample_id, events=events, questions=questions), dropped


def _question(
    sample_id: str, index: int, qa: dict[str, Any], by_dia: dict[str, str], when: datetime
) -> tuple[BenchQuestion, int]:
    qid = f"{sample_id}_q{index}"
    category = CATEGORIES.get(qa.get("category"))  # type: ignore[arg-type]
    if category is None:
        raise InputFormatError(
            f"LoCoMo question {qid}: unknown category {qa.get('category')!r} (expected 1-5)"
        )
    answer = qa.get("adversarial_answer") if category == ADVERSARIAL else None
    if answer is None:
        answer = qa.get("answer")
    if answer is None or "question" not in qa:
        raise InputFormatError(f"LoCoMo question {qid}: missing 'question' or answer")
    evidence, dropped = [], 0
    for entry in qa.get("evidence") or []:
        for dia in split_evidence(entry):
            eid = by_dia.get(_canonical_dia(dia))
            if eid is None:
                dropped += 1
            elif eid not in evidence:
                evidence.append(eid)
    question = BenchQuestion(
        question_id=qid,
        category=category,
        question=str(qa["question"]),
        answer=str(answer),
        evidence_ids=evidence,
        checklist=None,
        user=None,
        time=when,
        device=None,
    )
    return question, dropped


def locomo_from_raw(raw: Any) -> tuple[list[BenchScenario], list[str], list[str]]:
    """Scenarios, categories reported apart (adversarial), and load notes."""
    if not isinstance(raw, list):
        raise InputFormatError(f"LoCoMo: expected a list of samples, got a {type(raw).__name__}")
    scenarios, dropped = [], 0
    for sample in raw:
        if not isinstance(sample, dict) or "conversation" not in sample or "qa" not in sample:
            raise InputFormatError("LoCoMo: every sample needs 'conversation' and 'qa'")
        scenario, lost = sample_scenario(sample)
        scenarios.append(scenario)
        dropped += lost
    seen: set[str] = set()
    for scenario in scenarios:
        if scenario.scenario_id in seen:
            raise InputFormatError(f"LoCoMo: duplicate sample_id {scenario.scenario_id!r}")
        seen.add(scenario.scenario_id)
    notes = []
    if dropped:
        note = f"LoCoMo: dropped {dropped} evidence reference(s) to non-existent dialogue turns"
        logger.warning(note)
        notes.append(note)
    return scenarios, [ADVERSARIAL], notes
