"""The retrieval controller's input, output and state (run semantics: `graphs.state`).

Candidates are merged across rounds by id, keeping each id's best score and the trace that
earned it, so the final selection can back-fill from any round. Channels hold JSON data, so
the reducers read plain dicts (typed objects are accepted too).
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from graphs.state import Input, keep_recent
from memory.read_request import ReadRequest
from memory.records import Candidate, ContextEntry
from memory.search.plan import RoundPlan
from signatures.evidence import FacetCoverage


def _score(candidate: Any) -> float:
    return float(candidate["score"] if isinstance(candidate, dict) else candidate.score)


def keep_best(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge candidate pools by id; the higher score (and its trace) wins."""
    merged = dict(left or {})
    for node_id, candidate in (right or {}).items():
        held = merged.get(node_id)
        if held is None or _score(candidate) > _score(held):
            merged[node_id] = candidate
    return merged


def keep_first(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge (round, rank) records by id; the earliest sighting wins."""
    merged = dict(left or {})
    for node_id, seen in (right or {}).items():
        if node_id not in merged or tuple(seen) < tuple(merged[node_id]):
            merged[node_id] = seen
    return merged


def first_seen(left: dict[str, str] | None, right: dict[str, str] | None) -> dict[str, str]:
    """Merge by id; a value already held is kept (rounds run in order: the earliest wins)."""
    return {**(right or {}), **(left or {})}


def add_unique(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Append new strings, keeping first-seen order and dropping repeats."""
    return list(dict.fromkeys([*(left or []), *(right or [])]))


class Judgement(BaseModel):
    """One round's evidence judgement, as recorded in the trace."""

    round: int = Field(description="The round it judged (1-based).")
    source: Literal["llm", "offline"] = Field(description="Which judge produced it.")
    coverage: list[FacetCoverage] = Field(
        default_factory=list, description="Each material facet and the ids supporting it."
    )
    sufficient: bool = Field(default=False, description="Whether the evidence was judged enough.")
    missing_facets: list[str] = Field(
        default_factory=list, description="Facets still unsupported ('keyword: milk', ...)."
    )
    selected_ids: list[str] = Field(
        default_factory=list, description="The judged shortlist, pinned first in the context."
    )
    next_plan: RoundPlan | None = Field(
        default=None, description="The plan the judge proposed for the next round, if any."
    )


class Decision(BaseModel):
    """Who made one decision of a run, so a trace shows when the LLM was not the one."""

    step: str = Field(description="Which decision: 'round 1 planner', 'round 2 judge', 'reader'.")
    decided_by: str = Field(
        description="'llm', 'offline' (no LLM in play) or 'offline fallback: <why the LLM's "
        "decision could not be used>'."
    )


class PastQuestion(BaseModel):
    """What a thread keeps of one finished run (read by people, never by decisions)."""

    question: str = Field(description="The question.")
    question_time: datetime = Field(description="When it was asked.")
    requester: str | None = Field(default=None, description="Who asked.")
    event_ids: list[str] = Field(default_factory=list, description="The context's event ids.")
    answer: str | None = Field(default=None, description="The answer (answer graph only).")


class RetrievalInput(BaseModel):
    """What a caller gives the retrieval controller."""

    question: str = Field(default="", description="The question, verbatim.")
    question_time: datetime | None = Field(
        default=None,
        description="When it is asked (ISO 8601); relative dates resolve against it; the wall "
        "clock when unset.",
    )
    requester: str | None = Field(
        default=None,
        description="Who asks: the search sees only the events this person may see, and "
        '"I/me/my" in the question mean them. Required unless `admin` is set.',
    )
    admin: bool = Field(
        default=False,
        description="An administrative read: search every event whoever may see it (recorded "
        "in the audit log). Without it, `requester` is required.",
    )
    k: int | None = Field(
        default=None, description="Events in the final context; the run context's k when unset."
    )


class RetrievalOutput(BaseModel):
    """What the controller returns (the answer graph returns this plus the answer)."""

    request: ReadRequest | None = Field(
        default=None, description="The question as this run read it."
    )
    event_ids: list[str] = Field(
        default_factory=list, description="Event ids of the final context, best first."
    )
    context: list[ContextEntry] = Field(
        default_factory=list, description="The final reader context, in time order."
    )
    added: list[list[str]] = Field(
        default_factory=list,
        description="Per round, the final context's events that round was the first to find "
        "(what each round added).",
    )
    found_by: dict[str, str] = Field(
        default_factory=dict,
        description="For each event of the final context that a later round added, what found "
        "it: a pivot list (pivot:colocated, pivot:series, pivot:feedback) or `search`, that "
        "round's own search of its plan.",
    )
    pooled: dict[str, int] = Field(
        default_factory=dict,
        description="Every event the rounds found, in the context or not, with the round that "
        "found it first: what the final selection chose from (a gold event missing from the "
        "context was either never found or found and ranked out; eval.missing_evidence).",
    )
    round: int = Field(default=0, description="Rounds searched.")
    plans: list[RoundPlan] = Field(
        default_factory=list, description="Every executed plan, oldest first."
    )
    judgements: list[Judgement] = Field(
        default_factory=list, description="One judgement per judged round."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What went differently than planned: a missing data dir, an unusable LLM "
        "reply, a repeated plan replaced.",
    )
    decisions: list[Decision] = Field(
        default_factory=list, description="Who made each planner and judge decision, in order."
    )
    stop_reason: str = Field(default="", description="Why the loop ended.")


class Progress(BaseModel):
    """What the routers decide on: LangGraph reads (and validates) only these channels for
    them, not the whole pool."""

    round: int = 0
    plan: RoundPlan | None = None
    judgements: list[Judgement] = Field(default_factory=list)


class State(BaseModel):
    """The controller's full state: the input (one step), this run's work, the history."""

    question: Input[str] = ""
    question_time: Input[datetime | str | None] = None
    requester: Input[str | None] = None
    admin: Input[bool] = False
    k: Input[int | None] = None

    request: ReadRequest | None = None
    round: int = 0
    plan: RoundPlan | None = Field(
        default=None, description="The plan the next search executes (None: nothing left)."
    )
    plans: Annotated[list[RoundPlan], operator.add] = Field(default_factory=list)
    searched_queries: Annotated[list[str], add_unique] = Field(default_factory=list)
    candidates: Annotated[dict[str, Candidate], keep_best] = Field(default_factory=dict)
    found: Annotated[dict[str, tuple[int, int]], keep_first] = Field(
        default_factory=dict, description="Where each event was first found: (round, rank)."
    )
    finders: Annotated[dict[str, str], first_seen] = Field(
        default_factory=dict,
        description="What first found each event: a pivot list, else `search`.",
    )
    fused: Annotated[dict[str, Candidate], keep_best] = Field(default_factory=dict)
    judgements: Annotated[list[Judgement], operator.add] = Field(default_factory=list)
    guard_ids: list[str] = Field(
        default_factory=list,
        description="Round 1's reserved unconstrained (hybrid) top: kept in the final context "
        "whatever the later rounds and the judge choose (see memory.search.guard).",
    )
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    decisions: Annotated[list[Decision], operator.add] = Field(default_factory=list)
    stop_reason: str = ""
    event_ids: list[str] = Field(default_factory=list)
    added: list[list[str]] = Field(default_factory=list)
    found_by: dict[str, str] = Field(default_factory=dict)
    pooled: dict[str, int] = Field(default_factory=dict)
    context: list[ContextEntry] = Field(default_factory=list)
    history: Annotated[list[PastQuestion], keep_recent] = Field(
        default_factory=list, description="What the thread keeps: its finished runs."
    )
