"""What the memory's calls return: plain pydantic objects, printable and JSON-ready.

Kept apart from `memfuse.api` so that the API's halves (`memfuse.agent_api`, governance) and
their callers share one definition of each result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, Field

from memory.records import ContextEntry

IngestMode = Literal["fused", "plain"]


class IngestSummary(BaseModel):
    """What one ingest call did."""

    received: int
    added: int
    unchanged: int
    seconds: float
    mode: IngestMode
    plans_accepted: int = 0
    plans_rejected: int = 0
    drained: int = Field(
        default=0, description="Events an earlier, interrupted ingest had left queued, now fused."
    )
    details: dict[str, Any] = Field(default_factory=dict)


class AskResult(BaseModel):
    """An answer (None offline, or when the reader failed) with the evidence it rests on."""

    question: str
    answer: str | None
    note: str | None
    context: list[ContextEntry]
    rounds: int = 1
    reader_error: str | None = Field(
        default=None,
        description="Why the configured reader gave no usable answer (endpoint down past the "
        "retry budget, an empty reply…); the evidence is still there.",
    )
    decisions: list[dict[str, str]] = Field(
        default_factory=list,
        description="Who made each decision, in order: {'step', 'decided_by'} with decided_by "
        "'llm', 'offline' or 'offline fallback: <why>' (planner, judges, reader).",
    )
    notes: list[str] = Field(
        default_factory=list, description="What went differently in retrieval."
    )
    stop_reason: str = ""

    @classmethod
    def of_run(cls, output: Any) -> Self:
        """The answer graph's output (`graphs.answer.state.AnswerOutput`) as it is, under the
        API's names: `rounds` for the rounds searched, `question` as the run read it."""
        request = output.request
        return cls.model_validate(
            {
                **output.model_dump(),
                "question": request.question if request is not None else "",
                "rounds": output.round,
                "note": output.note or None,
            }
        )


class SearchResult(BaseModel):
    """A search's context and, for the `memfuse` system, how its rounds were decided."""

    context: list[ContextEntry]
    rounds: int = 1
    decisions: list[dict[str, str]] = Field(
        default_factory=list,
        description="memfuse only: who planned and judged each round ({'step', 'decided_by'}).",
    )
    notes: list[str] = Field(default_factory=list)
    stop_reason: str = ""

    @classmethod
    def of_run(cls, output: Any) -> Self:
        """The retrieval graph's output (`graphs.retrieval.state.RetrievalOutput`) as it is,
        under the API's names (`rounds` for the rounds searched)."""
        return cls.model_validate({**output.model_dump(), "rounds": output.round})


def decision_lines(decisions: Sequence[dict[str, str]]) -> list[str]:
    """Who decided, for a console: one line when every decision had the same maker."""
    makers = {d["decided_by"] for d in decisions}
    if len(makers) == 1:
        return [f"decided by: {makers.pop()} (all {len(decisions)} decisions)"]
    return [f"{d['step']}: decided by {d['decided_by']}" for d in decisions]


class AddResult(BaseModel):
    """What one `add` stored: its events' ids in the order given, which were new."""

    ids: list[str]
    added: list[str] = Field(description="Stored by this call.")
    unchanged: list[str] = Field(description="Already in memory exactly as given.")
    summary: IngestSummary
