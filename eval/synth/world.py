"""In-memory artifacts passed between the six synthesis stages.

Stage 2 writes `StoryEvent`s with the `View`s each device could have of them (the
latent ground truth); stage 3 renders views and background activity into `Obs`; stage 4
turns `QuestionDraft`s, whose checklist points at views or observations, into concrete
questions. Nothing here is written to the file as is: `eval.synth.assemble` converts
the final observations and questions into `memory.formats.memfusebench` models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class View:
    """What one device can sense of a storyline event (before wording is chosen)."""

    device: str
    modality: str
    clauses: list[str]
    offset: int = 0  # minutes after the story event's time
    gist: str = ""  # how an answer describes this view
    anchors: tuple[str, ...] = ()  # strings the rendered text must contain
    people: list[str] | None = None
    place: str | None = None
    facts: dict[str, Any] | None = None  # structured values (topic, person, date, numbers)
    framed: bool = True  # wrap the clause in a device voice frame
    obs_key: str | None = None  # set by stage 3
    story_id: str = ""  # the story event it observes
    ambient: bool = False  # added in passing by `Ep.fill`, not named by the template


@dataclass
class StoryEvent:
    """One latent happening of an episode: when, who, where, what, and why (causes)."""

    story_id: str
    episode_id: str
    ts: datetime
    people: list[str]
    place: str
    fact: str
    causes: list[str] = field(default_factory=list)
    views: list[View] = field(default_factory=list)


@dataclass
class EpisodePlan:
    episode_id: str
    template: str
    title: str
    events: list[StoryEvent] = field(default_factory=list)
    questions: list[QuestionDraft] = field(default_factory=list)


@dataclass
class Obs:
    """A rendered observation: a future file event under a provisional key."""

    key: str
    ts: datetime
    device: str
    modality: str
    location: str
    description: str
    characters: list[str]
    source: str
    episode_id: str | None = None
    story_id: str | None = None
    target_question: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    anchors: tuple[str, ...] = ()
    gist: str = ""


Ref = View | StoryEvent | Obs


@dataclass
class CheckDraft:
    item: str
    refs: list[Ref]
    anchors: list[str] = field(default_factory=list)


@dataclass
class QuestionDraft:
    """A candidate question; its text may hold `{when:KEY}` / `{day:KEY}` placeholders that
    stage 4 resolves against the question time (KEY names an entry of `moments`)."""

    category: str
    asker: str
    texts: list[str]
    answer: str
    checklist: list[CheckDraft]
    topic: str
    subject: str | None = None
    device: str | None = None
    moments: dict[str, datetime] = field(default_factory=dict)
    delay_hours: tuple[float, float] = (2.0, 30.0)
    origin: str = ""  # which builder made it, for filtering reports


@dataclass
class Question:
    """A resolved question (stage 4 output) with observation keys as evidence."""

    qid: str
    category: str
    question: str
    answer: str
    evidence: list[str]
    checklist: list[tuple[str, list[str]]]
    anchors: list[list[str]]
    asker: str
    time: datetime
    device: str
    topic: str
    subject: str | None
    origin: str
    plain: str = ""  # the text before eval.synth.paraphrase varied it (filtering compares these)
