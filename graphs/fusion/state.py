"""State of the fusion graph: what a caller gives, what nodes accumulate, what comes out."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from memory.fusion.candidates import CandidateRecord
from memory.fusion.commit import CommitReport
from memory.fusion.ops import FusionPlan
from memory.models import Event
from signatures.fusion import ToolStep

Outcome = Literal["pending", "committed", "rejected"]


class ToolCall(BaseModel):
    """A tool call the agent asked for and the graph has not executed yet."""

    tool: Literal["search_memory", "get_pack_members"]
    argument: str = Field(description="Query or fused id.")


@dataclass(kw_only=True)
class InputState:
    """What a caller gives: one event, optionally the recent-event window."""

    event: Event | dict[str, Any]
    """The incoming event: an Event or its JSON record (validated by the first node)."""

    session: list[Event | dict[str, Any]] = field(default_factory=list)
    """Recently processed events (accumulation window); empty = read the window from the store."""


@dataclass(kw_only=True)
class OutputState:
    """What a run reports."""

    event_id: str = ""
    """The processed event."""

    outcome: Outcome = "pending"
    """committed (plan applied) or rejected (one rule broken; nothing but the rejection stored)."""

    plan: FusionPlan | None = None
    """The submitted plan (None when the agent's answer could not be read)."""

    violations: list[str] = field(default_factory=list)
    """Every rule the plan broke (empty when committed); an unreadable LLM plan is one, with
    what was expected and what came back."""

    decided_by: str = ""
    """Who submitted the plan: `llm` (the DSPy agent) or `offline` (the deterministic twin).
    An LLM whose endpoint fails raises instead: the event stays queued for the next ingest."""

    report: CommitReport | None = None
    """What the commit did (created/updated packs, edges added), or the recorded rejection."""

    turns: int = 0
    """Tool calls the agent made (the initial system search not counted)."""


@dataclass(kw_only=True)
class State(InputState, OutputState):
    """Everything the nodes accumulate for one event."""

    current: Event | None = None
    """The validated, stored current event."""

    current_record: CandidateRecord | None = None
    """The current event as the agent sees it."""

    accumulation: list[CandidateRecord] = field(default_factory=list)
    """Accumulation zone: the recent-event window, oldest first."""

    candidates: list[CandidateRecord] = field(default_factory=list)
    """Temporary zone: candidate memories, grown by search_memory results."""

    neighbors: list[tuple[str, float]] = field(default_factory=list)
    """(id, cosine) of the initial candidates to the event, for automatic semantic edges."""

    tool_history: Annotated[list[ToolStep], operator.add] = field(default_factory=list)
    """Executed tool calls with their results (the first is the system's own search)."""

    pending: ToolCall | None = None
    """The tool call the agent asked for, executed by the next node."""

    searches: int = 0
    """search_memory calls the agent made."""

    lookups: int = 0
    """get_pack_members calls the agent made."""

    inspected: dict[str, list[str]] = field(default_factory=dict)
    """Packs looked up in this trajectory -> the member ids the look-up showed."""

    plan_error: str | None = None
    """Why the agent's plan could not be read (becomes a violation)."""

    plan_id: str = ""
    """Id of the plan in the store's plan log."""
