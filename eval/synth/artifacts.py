"""The artifacts of MemFuseBench's six synthesis stages, as the synthesis graph carries them.

Each stage of the Scene-to-Sensor pipeline (persona construction, scenario construction,
event-stream synthesis, question generation, QA filtering, adversarial noise injection)
hands the next one an artifact built from the benchmark format's own models, so what the
graph accepts at the end is exactly what `memory.formats.loader` reads. Review issues are
one model too, whoever raised them: the deterministic checks (`eval.synth.graph.checks`) or
an LLM reviewer.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.formats.memfusebench import Episode, Persona, Question, Scenario

Stage = Literal["persona", "scenario", "stream", "questions", "filtering", "adversarial"]
STAGES: tuple[Stage, ...] = (
    "persona",
    "scenario",
    "stream",
    "questions",
    "filtering",
    "adversarial",
)


class PlannedEpisode(BaseModel):
    """One storyline episode as the scenario stage plans it, before any device observes it."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str = Field(min_length=1)
    title: str = Field(min_length=1, description="What happens, in a few words.")
    day: date = Field(description="The day it starts.")
    people: list[str] = Field(default_factory=list, description="Who takes part.")
    beats: list[str] = Field(
        default_factory=list,
        description="What happens, step by step, in plain words (each beat becomes one or "
        "more device observations in the stream stage).",
    )
    causes: list[str] = Field(
        default_factory=list, description="Earlier episodes this one follows from (their ids)."
    )


class Timeline(BaseModel):
    """The scenario stage's artifact: the household's week of storyline episodes."""

    model_config = ConfigDict(extra="forbid")

    start: date = Field(description="The first day of the week.")
    days: int = Field(default=7, ge=1, le=31)
    episodes: list[PlannedEpisode] = Field(default_factory=list)


class Stream(BaseModel):
    """The stream stage's artifact: every device observation, grouped in episodes."""

    model_config = ConfigDict(extra="forbid")

    episodes: list[Episode] = Field(default_factory=list)


class QuestionPool(BaseModel):
    """The questions stage's artifact (and, filtered, the filtering stage's)."""

    model_config = ConfigDict(extra="forbid")

    questions: list[Question] = Field(default_factory=list)


class Issue(BaseModel):
    """One problem a reviewer found in an artifact; the corrector gets the list."""

    model_config = ConfigDict(extra="forbid")

    stage: Stage
    code: str = Field(description="A short stable name, e.g. 'unknown_device'.")
    message: str = Field(description="What is wrong, in one sentence, naming the items.")
    ids: list[str] = Field(default_factory=list, description="The items at fault.")
    by: Literal["code", "llm"] = Field(default="code", description="Who found it.")


class Artifacts(BaseModel):
    """Everything accepted so far; a stage reads the ones before it."""

    model_config = ConfigDict(extra="forbid")

    persona: Persona | None = None
    timeline: Timeline | None = None
    stream: Stream | None = None
    questions: QuestionPool | None = None
    filtered: QuestionPool | None = None
    sample: Scenario | None = None
