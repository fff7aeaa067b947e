"""The MemFuseBench file format: its pydantic models (the validator and writer are in
`memory.formats.memfusebench_io`).

Models keep unknown fields (``extra="allow"``) so a foreign file survives a round trip.
`DEVICE_CAPABILITIES` is the paper's device taxonomy, the format's reference vocabulary of
device types: a generator builds devices from it, while a file is validated against the
modalities each of its own devices declares (a foreign file may name other device types).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory.errors import MemFuseError
from memory.models import Event, Modality, SourceKind, parse_event, parse_timestamp

VERSION: Literal["memfusebench-1"] = "memfusebench-1"

# Which modalities each device type can produce (the paper's sensing taxonomy).
DEVICE_CAPABILITIES: dict[str, list[str]] = {
    "smartwatch": ["health", "motion", "location"],
    "kids_smartwatch": ["health", "motion", "location"],
    "smartphone": ["location", "app_usage", "dialogue"],
    "laptop": ["app_usage"],
    "tablet": ["app_usage"],
    "smart_speaker": ["audio", "dialogue"],
    "smart_display": ["audio", "dialogue", "vision"],
    "doorbell_camera": ["vision", "audio", "location"],
    "indoor_camera": ["vision", "audio"],
    "smart_lock": ["location"],
    "motion_sensor": ["motion"],
    "door_window_sensor": ["device_status"],
    "smart_thermostat": ["environment"],
    "air_quality_monitor": ["environment"],
    "air_purifier": ["environment", "device_status"],
    "smart_tv": ["app_usage", "device_status"],
    "smart_fridge": ["vision", "device_status"],
    "smart_washer_dryer": ["device_status"],
    "robot_vacuum": ["device_status"],
    "smart_light": ["device_status"],
    "smart_curtain": ["device_status"],
    "smart_scale": ["health"],
    "car_system": ["location", "dialogue"],
    "gaming_console": ["app_usage", "device_status"],
}

# Generator labels that travel into Event.metadata; a fair system under test ignores them.
GENERATOR_LABELS: tuple[str, ...] = ("storyline_event_id", "target_question")


class DatasetError(MemFuseError):
    """A benchmark file is malformed or inconsistent; the message names scenario and item."""

    def __init__(self, problem: str, scenario_id: str | None = None, item: str | None = None):
        self.scenario_id = scenario_id
        self.item = item
        self.problem = problem
        where = [f"scenario {scenario_id!r}"] if scenario_id is not None else []
        if item:
            where.append(item)
        prefix = ": ".join(where)
        super().__init__(f"{prefix}: {problem}" if prefix else problem)


def _open_model() -> ConfigDict:
    return ConfigDict(extra="allow", populate_by_name=True)


class Routine(BaseModel):
    """A character's typical day; free text because foreign generators word it freely."""

    model_config = _open_model()

    weekday: str = ""
    weekend: str = ""


class Character(BaseModel):
    """One household member and the personal devices that observe them."""

    model_config = _open_model()

    name: str = Field(min_length=1)
    age: int | None = None
    role: str = ""
    interests: list[str] = Field(default_factory=list)
    health: str = ""
    routine: Routine = Field(default_factory=Routine)
    devices: list[str] = Field(default_factory=list)


class Device(BaseModel):
    """One source: its type, owner (a character name or `shared`), place and modalities."""

    model_config = _open_model()

    device_id: str = Field(min_length=1)
    device_type: str = ""
    owner: str = "shared"
    location: str = ""
    modality: list[Modality] = Field(min_length=1)

    @field_validator("modality", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        # The paper's files store modalities as a comma-separated string.
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class Persona(BaseModel):
    """The persona-source graph: who lives here and which devices can see what."""

    model_config = _open_model()

    persona_id: str = ""
    type: str = ""
    characters: list[Character] = Field(default_factory=list)
    shared_devices: list[str] = Field(default_factory=list)
    all_devices: list[Device] = Field(min_length=1)

    def device(self, device_id: str) -> Device | None:
        for device in self.all_devices:
            if device.device_id == device_id:
                return device
        return None


class BenchEvent(BaseModel):
    """One atomic observation as stored in the file, generator labels included."""

    model_config = _open_model()

    event_id: str = Field(min_length=1)
    timestamp: datetime
    device: str = Field(min_length=1)
    modality: Modality
    location: str = ""
    description: str = Field(min_length=1)
    characters: list[str] = Field(default_factory=list)
    source: SourceKind | None = None
    episode_id: str | None = None
    storyline_event_id: str | None = None
    target_question: str | None = None

    @field_validator("timestamp", mode="before")
    @classmethod
    def _ts(cls, value: Any) -> datetime:
        return parse_timestamp(value)

    @field_validator("characters", mode="before")
    @classmethod
    def _chars(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @property
    def is_adversarial(self) -> bool:
        return self.source == SourceKind.ADVERSARIAL


class Episode(BaseModel):
    """A storyline episode, or a per-day `background` bucket for non-storyline events."""

    model_config = _open_model()

    episode_id: str = Field(min_length=1)
    title: str = ""
    kind: str | None = None
    events: list[BenchEvent] = Field(default_factory=list)


class ChecklistItem(BaseModel):
    """One key point a complete answer covers, with the events that support that point."""

    model_config = _open_model()

    item: str = Field(min_length=1)
    evidence_event_ids: list[str] = Field(default_factory=list)


class Question(BaseModel):
    """A question with its reference answer, gold evidence, checklist and asking context."""

    model_config = _open_model()

    question_id: str = Field(min_length=1)
    category: str = Field(
        min_length=1, description="Its category; the benchmark's list is eval.categories."
    )
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    evidence_event_ids: list[str] = Field(min_length=1)
    checklist: list[ChecklistItem] = Field(default_factory=list)
    question_user: str | None = None
    question_time: datetime | None = None
    question_device: str | None = None

    @field_validator("question_time", mode="before")
    @classmethod
    def _ts(cls, value: Any) -> datetime | None:
        return None if value in (None, "") else parse_timestamp(value)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value


class Scenario(BaseModel):
    """One household-week: persona, episodes of events, and the questions asked about them."""

    model_config = _open_model()

    scenario_id: str = Field(min_length=1)
    persona: Persona
    episodes: list[Episode] = Field(default_factory=list)
    questions: list[Question] = Field(default_factory=list)

    def all_events(self) -> list[BenchEvent]:
        """Every event of every episode, in time order (ties broken by id)."""
        events = [event for episode in self.episodes for event in episode.events]
        return sorted(events, key=lambda e: (e.timestamp, e.event_id))

    def event_index(self) -> dict[str, BenchEvent]:
        return {event.event_id: event for event in self.all_events()}

    def memory_events(self, labels: bool = True) -> list[Event]:
        """The stream as MemFuse events, time-ordered.

        With ``labels=False`` the generator's answer-revealing labels (source kind,
        episode, storyline id, distractor target) are stripped, which is the fair input
        for a system under test; with labels they ride along in `source`/`episode_id`/metadata.
        """
        owners = {d.device_id: d.owner for d in self.persona.all_devices}
        result: list[Event] = []
        for episode in self.episodes:
            for event in episode.events:
                record = event.model_dump(mode="json", exclude_none=True)
                record.setdefault("owner", owners.get(event.device))
                if labels:
                    record.setdefault("episode_id", episode.episode_id)
                else:
                    for key in ("source", "episode_id", *GENERATOR_LABELS):
                        record.pop(key, None)
                result.append(parse_event(record))
        return sorted(result, key=lambda e: (e.timestamp, e.event_id))

    def question(self, question_id: str) -> Question:
        for question in self.questions:
            if question.question_id == question_id:
                return question
        raise DatasetError(f"no question {question_id!r}", self.scenario_id)


class MemFuseBench(BaseModel):
    """A whole benchmark file."""

    model_config = _open_model()

    version: Literal["memfusebench-1"] = VERSION
    scenario_data: list[Scenario] = Field(default_factory=list)

    def scenario(self, scenario_id: str) -> Scenario:
        for scenario in self.scenario_data:
            if scenario.scenario_id == scenario_id:
                return scenario
        raise DatasetError(f"no scenario {scenario_id!r} in the benchmark")
