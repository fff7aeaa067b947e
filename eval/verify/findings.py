"""What verification finds and decides, as plain records the graph, the report and the CLI share.

A finding is one reason to doubt one question; an edit is what the corrector decided about a
flagged question. Both are pydantic models so they travel through the graph's state as JSON.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field

Kind = Literal[
    "answer_unsupported",
    "household_inconsistent",
    "role_error",
    "record_conflict",
    "unused_evidence",
    "unanswered",
    "time_anchor_mismatch",
    "reader_disagrees",
]
"""The kinds of doubt: a–g of the offline verifiers (issue 26), then the LLM readers'."""

KINDS: tuple[str, ...] = get_args(Kind)
Outcome = Literal["revised", "dropped", "kept"]


class Finding(BaseModel):
    """One reason to doubt one question."""

    scenario_id: str = Field(description="The scenario the question belongs to.")
    question_id: str = Field(description="The question doubted.")
    kind: Kind = Field(description="Which verifier's rule it breaks.")
    reason: str = Field(description="What was found, in one line a person can check.")
    event_ids: list[str] = Field(
        default_factory=list,
        description="The events the reason is about (for unused_evidence: the ones to drop).",
    )
    by: str = Field(default="code", description="Who found it: code, or reader:<name>.")


class Edit(BaseModel):
    """The corrector's decision about one flagged question."""

    scenario_id: str
    question_id: str
    outcome: Outcome = Field(description="revised (fields below replace the old), dropped, kept.")
    reason: str = Field(description="Why, in one line.")
    question: str | None = Field(default=None, description="Revised question text (None: same).")
    answer: str | None = Field(default=None, description="Revised gold answer (None: same).")
    evidence_event_ids: list[str] | None = Field(
        default=None, description="Revised gold evidence (None: same)."
    )
    by: str = Field(default="offline", description="Who decided: offline, llm, offline fallback.")


def finding_for(
    scenario_id: str, question_id: str, kind: Kind, reason: str, event_ids: list[str] | None = None
) -> Finding:
    """A code verifier's finding."""
    return Finding(
        scenario_id=scenario_id,
        question_id=question_id,
        kind=kind,
        reason=reason,
        event_ids=list(event_ids or []),
    )
