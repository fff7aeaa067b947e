"""State of the retrieval controller: what a caller gives, what the rounds accumulate.

Candidates are merged across rounds by id, keeping each id's best score and the trace
that earned it, so the final selection can back-fill from any round.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from memory.records import Candidate, ContextEntry
from memory.search.plan import RoundPlan
from signatures.evidence import FacetCoverage


def keep_best(left: dict[str, Candidate], right: dict[str, Candidate]) -> dict[str, Candidate]:
    """Merge candidate pools by id; the higher score (and its trace) wins."""
    merged = dict(left or {})
    for node_id, candidate in (right or {}).items():
        held = merged.get(node_id)
        if held is None or candidate.score > held.score:
            merged[node_id] = candidate
    return merged


def keep_first(left: dict[str, tuple[int, int]], right: dict[str, tuple[int, int]]
               ) -> dict[str, tuple[int, int]]:
    """Merge (round, rank) records by id; the earliest sighting wins."""
    merged = dict(left or {})
    for node_id, seen in (right or {}).items():
        if node_id not in merged or tuple(seen) < tuple(merged[node_id]):
            merged[node_id] = seen
    return merged


def add_unique(left: list[str], right: list[str]) -> list[str]:
    """Append new strings, keeping first-seen order and dropping repeats."""
    return list(dict.fromkeys([*(left or []), *(right or [])]))


class Judgement(BaseModel):
    """One round's evidence judgement, as recorded in the trace."""

    round: int = Field(description="The round it judged (1-based).")
    source: Literal["llm", "offline"] = Field(description="Which judge produced it.")
    coverage: list[FacetCoverage] = Field(default_factory=list)
    sufficient: bool = False
    missing_facets: list[str] = Field(default_factory=list)
    selected_ids: list[str] = Field(default_factory=list)
    next_plan: RoundPlan | None = None


class Decision(BaseModel):
    """Who made one decision of a run, so a trace shows when the LLM was not the one."""

    step: str = Field(description="Which decision: 'round 1 planner', 'round 2 judge', 'reader'.")
    decided_by: str = Field(
        description="'llm', 'offline' (no LLM in play) or 'offline fallback: <why the LLM's "
        "decision could not be used>'."
    )


@dataclass
class InputState:
    """What a caller gives the retrieval controller."""

    question: str = ""
    """The question, verbatim."""
    question_time: datetime | str | None = None
    """When it is asked (ISO 8601 or datetime); relative dates resolve against it; now if unset."""
    requester: str | None = None
    """Who asks; "I/me/my" in the question mean this person."""
    k: int | None = None
    """Events in the final context; the runtime context's k when unset."""


@dataclass
class State(InputState):
    """The controller's full state."""

    round: int = 0
    """Rounds searched so far."""
    plan: RoundPlan | None = None
    """The plan the next search executes (None: nothing left to search)."""
    plans: Annotated[list[RoundPlan], operator.add] = field(default_factory=list)
    """Every executed plan, oldest first."""
    searched_queries: Annotated[list[str], add_unique] = field(default_factory=list)
    """Every query string searched (focus, rewrites, lexical query)."""
    candidates: Annotated[dict[str, Candidate], keep_best] = field(default_factory=dict)
    """Accumulated event candidates by id, best score and trace kept."""
    found: Annotated[dict[str, tuple[int, int]], keep_first] = field(default_factory=dict)
    """Where each event candidate was first found: (round, rank in that round)."""
    fused: Annotated[dict[str, Candidate], keep_best] = field(default_factory=dict)
    """Accumulated fused-node candidates by id, best score kept."""
    judgements: Annotated[list[Judgement], operator.add] = field(default_factory=list)
    """One judgement per judged round."""
    guard_ids: list[str] = field(default_factory=list)
    """Round 1's reserved unconstrained (hybrid) top: kept in the final context whatever the
    later rounds and the judge choose (see memory.search.guard)."""
    notes: Annotated[list[str], operator.add] = field(default_factory=list)
    """What went differently than planned (LLM output unusable, a repeated plan replaced…)."""
    decisions: Annotated[list[Decision], operator.add] = field(default_factory=list)
    """Who made each planner and judge decision, in order."""
    stop_reason: str = ""
    """Why the loop ended."""
    event_ids: list[str] = field(default_factory=list)
    """Event ids of the final context, best first."""
    context: list[ContextEntry] = field(default_factory=list)
    """The final reader context, in time order."""


@dataclass
class OutputState:
    """What the controller returns."""

    event_ids: list[str] = field(default_factory=list)
    """Event ids of the final context, best first."""
    context: list[ContextEntry] = field(default_factory=list)
    """The final reader context, in time order."""
    round: int = 0
    """Rounds searched."""
    plans: list[RoundPlan] = field(default_factory=list)
    """Every executed plan, oldest first."""
    judgements: list[Judgement] = field(default_factory=list)
    """One judgement per judged round."""
    notes: list[str] = field(default_factory=list)
    """What went differently than planned."""
    decisions: list[Decision] = field(default_factory=list)
    """Who made each planner and judge decision, in order."""
    stop_reason: str = ""
    """Why the loop ended."""
