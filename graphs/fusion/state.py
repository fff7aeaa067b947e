"""The fusion graph's input, output and state (run semantics: `graphs.state`).

The agent's budget (`turns`, `searches`, `lookups`) and trajectory (`tool_history`,
`candidates`, `inspected`) belong to one event: `begin` clears them, so every run on a
thread starts with the full budget.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from graphs.state import Input, keep_recent
from memory.fusion.candidates import CandidateRecord
from memory.fusion.commit import CommitReport
from memory.fusion.ops import FusionPlan
from memory.models import Event
from signatures.fusion import ToolStep

Outcome = Literal["pending", "committed", "rejected"]


class ToolCall(BaseModel):
    """A tool call the agent asked for and the graph has not executed yet."""

    tool: Literal["search_memory", "get_pack_members"] = Field(description="Which tool.")
    argument: str = Field(description="Query or fused id.")


class Turn(BaseModel):
    """What the routers decide on: LangGraph reads (and validates) only these channels."""

    pending: ToolCall | None = None
    turns: int = 0
    violations: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """What commit and reject read: the plan and its verdict, not the agent's trajectory
    (LangGraph reads and validates only these channels for them)."""

    event_id: str = ""
    current: Event | None = None
    plan: FusionPlan | None = None
    plan_id: str = ""
    violations: list[str] = Field(default_factory=list)
    neighbors: list[tuple[str, float]] = Field(default_factory=list)
    decided_by: str = ""


class PastEvent(BaseModel):
    """What a thread keeps of one finished run (read by people, never by decisions)."""

    event_id: str = Field(description="The event fused.")
    outcome: Outcome = Field(description="committed or rejected.")
    decided_by: str = Field(description="llm or offline.")
    plan_id: str = Field(description="The plan's id in the store's plan log.")


class FusionInput(BaseModel):
    """What a caller gives: one event, optionally the recent-event window."""

    event: Event = Field(
        description="The incoming event (its JSON record), validated by the first node."
    )
    session: list[Event] = Field(
        default_factory=list,
        description="Recently processed events (the accumulation window), oldest first; "
        "empty = read the window from the store.",
    )


class FusionOutput(BaseModel):
    """What a run reports."""

    event_id: str = Field(default="", description="The processed event.")
    outcome: Outcome = Field(
        default="pending",
        description="committed (plan applied) or rejected (one rule broken; nothing but the "
        "rejection stored).",
    )
    plan: FusionPlan | None = Field(
        default=None,
        description="The submitted plan (None when the agent's answer could not be read).",
    )
    violations: list[str] = Field(
        default_factory=list,
        description="Every rule the plan broke (empty when committed); an unreadable LLM plan "
        "is one, with what was expected and what came back.",
    )
    decided_by: str = Field(
        default="",
        description="Who submitted the plan: llm (the DSPy agent) or offline (the deterministic "
        "twin). An LLM endpoint that fails raises instead: the event stays queued for the next "
        "ingest.",
    )
    report: CommitReport | None = Field(
        default=None,
        description="What the commit did (created/updated packs, edges added), or the recorded "
        "rejection.",
    )
    turns: int = Field(
        default=0, description="Tool calls the agent made (the initial system search not counted)."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="Where the memory is, when that needs saying (a data dir this run created).",
    )


class State(FusionOutput):
    """Everything the nodes work with for one event, plus the thread's history."""

    event: Input[Any] = None
    session: Input[list[Any]] = Field(default_factory=list)

    current: Event | None = Field(default=None, description="The validated current event.")
    given_window: list[Event] | None = Field(
        default=None, description="The caller's session window (None: read from the store)."
    )
    current_record: CandidateRecord | None = None
    accumulation: list[CandidateRecord] = Field(
        default_factory=list, description="Accumulation zone: the recent-event window."
    )
    candidates: list[CandidateRecord] = Field(
        default_factory=list, description="Temporary zone: grown by search_memory results."
    )
    neighbors: list[tuple[str, float]] = Field(
        default_factory=list, description="(id, cosine) of the initial candidates to the event."
    )
    tool_history: Annotated[list[ToolStep], operator.add] = Field(
        default_factory=list, description="Executed tool calls (the first: the system's search)."
    )
    pending: ToolCall | None = None
    searches: int = 0
    lookups: int = 0
    inspected: dict[str, list[str]] = Field(
        default_factory=dict, description="Packs looked up -> the member ids shown."
    )
    plan_error: str | None = None
    plan_id: str = ""
    history: Annotated[list[PastEvent], keep_recent] = Field(
        default_factory=list, description="What the thread keeps: its fused events."
    )
