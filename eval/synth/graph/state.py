"""The synthesis graph's input, output and state (run semantics: `graphs.state`).

One run builds one household-week of MemFuseBench through the six stages of
`eval.synth.artifacts.STAGES`. What a stage accepted is kept in `artifacts`; the draft under
review is `candidate`, kept as the JSON record of its stage's model (`eval.synth.artifacts`)
dumped with only the fields that were set, so a scenario that goes through the graph is written
to a file byte for byte as one that did not.
"""

from __future__ import annotations

import operator
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from eval.synth.artifacts import Artifacts, Issue, Stage
from graphs.state import Input, keep_recent
from memory.formats.memfusebench import Scenario

Status = Literal["running", "accepted", "failed"]
Reviewer = Literal["code", "llm"]

DEFAULT_START = date(2026, 5, 11)  # a Monday: the week the procedural generator writes
DEFAULT_DAYS = 7
DEFAULT_QUESTIONS = 60


class SynthesisRequest(BaseModel):
    """One household-week to synthesize, as `begin` read the caller's input."""

    scenario_index: int = Field(ge=0, description="The household's place in the benchmark.")
    scenario_id: str = Field(description="S<index+1>: the id the finished scenario carries.")
    household_type: str | None = Field(
        default=None, description="The household's type; None: the generator's choice."
    )
    seed: int = Field(description="The benchmark's seed (the offline twins are deterministic).")
    start: date = Field(description="The first day of the week.")
    days: int = Field(ge=1, le=31, description="Days covered.")
    questions: int = Field(ge=1, description="Questions the filtering stage keeps at most.")

    def week(self) -> list[date]:
        return [self.start + timedelta(days=n) for n in range(self.days)]


class SynthesisInput(BaseModel):
    """What a caller gives: which household-week to build."""

    scenario_index: int = Field(
        default=0,
        description="Which household of the benchmark (0-based): the scenario's id is "
        "S<index+1>, and the procedural twin also picks the household type and its random "
        "streams from it.",
    )
    household_type: str | None = Field(
        default=None,
        description="The household's type (young_family, family_with_teens, ...); empty: the "
        "procedural twin's type for the index, or the LLM's choice.",
    )
    seed: int = Field(default=7, description="The benchmark's seed.")
    start: date = Field(
        default=DEFAULT_START,
        description="First day of the week (ISO date). The procedural twin writes the week of "
        "2026-05-11 only.",
    )
    days: int = Field(
        default=DEFAULT_DAYS, description="Days the week covers (the procedural twin: 7)."
    )
    questions: int = Field(
        default=DEFAULT_QUESTIONS,
        description="Questions per scenario the filtering stage keeps at most (paper: about 60).",
    )


class ReviewRound(BaseModel):
    """One review of one draft: who reviewed it and what they found."""

    stage: Stage = Field(description="The stage reviewed.")
    attempt: int = Field(description="Which generation of the stage (1 = first, 2 = regenerated).")
    round: int = Field(description="Review round within that generation (1-based).")
    reviewers: list[Reviewer] = Field(
        description="Who reviewed: code (the deterministic checks) always, llm only when an LM is "
        "in play and the code found nothing."
    )
    issues: int = Field(description="Issues found (0: the draft is accepted).")
    codes: list[str] = Field(default_factory=list, description="The issues' codes, in order.")
    decided_by: str = Field(
        default="code",
        description="Whose verdict stood: code, llm, or 'offline fallback: <why>' when the LLM "
        "reviewer's reply could not be used (the code's verdict stood).",
    )


class PastScenario(BaseModel):
    """What a thread keeps of one finished run (read by people, never by decisions)."""

    scenario_id: str = Field(description="The scenario built.")
    status: Status = Field(description="accepted or failed.")
    failed_stage: Stage | None = Field(default=None, description="Where a failed run stopped.")


class SynthesisOutput(BaseModel):
    """What a run reports: the scenario, or the stage that could not be accepted and why."""

    request: SynthesisRequest | None = Field(
        default=None, description="The household-week as this run read it."
    )
    status: Status = Field(
        default="running",
        description="accepted (every stage passed review), failed (a stage still had issues "
        "after its corrections and regeneration; nothing of it was accepted) or running.",
    )
    scenario: Scenario | None = Field(
        default=None, description="The finished scenario (MemFuseBench format) when accepted."
    )
    accepted: list[Stage] = Field(
        default_factory=list, description="The stages accepted so far, in order."
    )
    failed_stage: Stage | None = Field(
        default=None, description="The stage a failed run stopped at."
    )
    issues: list[Issue] = Field(
        default_factory=list,
        description="The issues of the draft under review; for a failed run, those that remained.",
    )
    review_log: list[ReviewRound] = Field(
        default_factory=list, description="Every review round, oldest first."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What went differently than planned: an unusable LLM reply, a regeneration, "
        "the report of a failed stage.",
    )


class Progress(BaseModel):
    """What the routers decide on (LangGraph reads and validates only these channels)."""

    stage: Stage | None = None
    issues: list[Issue] = Field(default_factory=list)
    corrections: int = 0
    regenerations: int = 0
    candidate: Any = None


class State(SynthesisOutput):
    """Everything the nodes work with for one household-week, plus the thread's history."""

    scenario_index: Input[int] = 0
    household_type: Input[str | None] = None
    seed: Input[int] = 7
    start: Input[date | str] = DEFAULT_START
    days: Input[int] = DEFAULT_DAYS
    questions: Input[int] = DEFAULT_QUESTIONS

    stage: Stage | None = Field(default=None, description="The stage at work (None: all done).")
    artifacts: Artifacts = Field(default_factory=Artifacts, description="What was accepted.")
    candidate: dict[str, Any] | None = Field(
        default=None, description="The draft under review (None: the generator gave none)."
    )
    corrections: int = Field(default=0, description="Corrections of the current draft.")
    regenerations: int = Field(default=0, description="Regenerations of the current stage.")
    rounds: int = Field(default=0, description="Review rounds of the current draft.")
    review_log: Annotated[list[ReviewRound], operator.add] = Field(default_factory=list)
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    history: Annotated[list[PastScenario], keep_recent] = Field(
        default_factory=list, description="What the thread keeps: its finished runs."
    )
