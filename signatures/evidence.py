"""Judging the accumulated evidence of a round: the `JudgeEvidence` decision.

The judge restates the paper's round evidence controller: it checks every material
facet of the question against the evidence gathered so far, shortlists the direct
evidence, and, while rounds remain and something is missing, proposes the next plan
under the same rules as the planner. Outputs are typed (pydantic), so a malformed
answer fails to parse and the controller falls back to the offline twin
(`evidence_offline.py`) for that round instead of crashing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import dspy
from pydantic import BaseModel, Field

from memory.models import NodeKind, format_timestamp
from memory.search.plan import RoundPlan
from memory.text import single_line
from signatures.planning import PLANNING_RULES
from signatures.time_resolution import calendar_reference
from signatures.untrusted import DATA_NOTICE


class EvidenceItem(BaseModel):
    """One accumulated candidate as the judge sees it (an event or a fused summary)."""

    node_id: str
    kind: NodeKind = NodeKind.EVENT
    timestamp: datetime = Field(description="Event time, or a fused node's first member time.")
    end: datetime | None = Field(default=None, description="A fused node's last member time.")
    device: str = ""
    location: str = ""
    text: str = Field(description="Description, or a fused node's summary.")
    characters: list[str] = Field(default_factory=list)
    score: float = 0.0

    def line(self) -> str:
        """``[id] [time] [device] [location] text (people: …)`` — one line per candidate."""
        when = format_timestamp(self.timestamp)
        if self.end is not None and self.end != self.timestamp:
            when = f"{when} - {format_timestamp(self.end)}"
        tag = "fused summary: " if self.kind == NodeKind.FUSED else ""
        people = f" (people: {', '.join(self.characters)})" if self.characters else ""
        line = (
            f"[{self.node_id}] [{when}] [{self.device}] [{self.location}] {tag}{self.text}{people}"
        )
        return single_line(line)


class FacetCoverage(BaseModel):
    """Whether one material facet of the question is directly supported, and by which ids."""

    facet: str = Field(description="The required fact, person, time or link.")
    covered: bool = False
    evidence_ids: list[str] = Field(
        default_factory=list, description="Candidate ids supporting it."
    )


JUDGE_RULES = """\
You control evidence-aware memory retrieval: judge the evidence accumulated so far, pick the
direct evidence ids, and when another round is needed emit one executable plan. You never
answer the question.

- Split the question into its material facets: each required person, event, time
  constraint, causal link, comparison and cross-device fact that matters is its own facet.
  For every facet say whether it is covered and cite the candidate ids that support it. A
  fused summary counts only when it states the needed fact itself.
- `sufficient` is true only when every material facet has direct support; a plausible answer
  is not enough. Before the minimum number of rounds it stays false even when everything
  looks covered: then propose a verification plan that looks for independent direct evidence
  of the covered facets, so that one search cannot approve its own stop.
- When a facet lacks direct evidence, list it in `missing_facets` and aim `next_plan` at the
  most important missing facts, keeping every person, date, time range, device and the answer
  shape of the question. Never repeat a plan from the executed history.
- To reach evidence the question's words cannot find (the other side of a conversation,
  another device in the same room and minutes, a cause recorded earlier on another device),
  enable `next_plan.pivot` with the ids of the best evidence so far as `anchors`: the search
  then brings in new events close to them in time that share their place or people, and
  searches again with their most distinctive words. For a question over several days (a
  count, a busiest or quietest day, a habit over the week) also set `pivot.series`: each
  anchor's device is searched for the same kind of record near the same time of day on the
  other days of the window. When the question names no days but the best evidence is one
  device's record on several days, set `pivot.series` with `pivot.series_from` and
  `pivot.series_to` bounding the days to search.
- On the final round, claim sufficiency only if all facets really are covered; still give
  the best selection.
- `selected_ids` is an ordered priority shortlist of candidate ids (it need not reach top_k;
  the system fills the remaining slots from the accumulated pool).
- `next_plan` is null when `sufficient` is true or on the final round; otherwise it is one plan
  that follows the planning rules below.

Planning rules for `next_plan`:
"""

JUDGE_INSTRUCTIONS = JUDGE_RULES + PLANNING_RULES + DATA_NOTICE


class JudgeEvidence(dspy.Signature):
    __doc__ = JUDGE_INSTRUCTIONS

    question: str = dspy.InputField(desc="The user's question, verbatim.")
    question_time: str = dspy.InputField(desc="Frozen question time, ISO 8601 (local clock).")
    calendar: str = dspy.InputField(desc="Weekday and recent dates relative to the question time.")
    current_plan: RoundPlan = dspy.InputField(desc="The plan executed in the round just completed.")
    searched_queries: list[str] = dspy.InputField(desc="Every query searched so far.")
    plan_history: list[RoundPlan] = dspy.InputField(desc="Every executed plan, oldest first.")
    round: int = dspy.InputField(desc="The round just completed (1-based).")
    min_rounds: int = dspy.InputField(desc="Rounds required before sufficient may be true.")
    final_round: bool = dspy.InputField(desc="True when no further round is allowed.")
    top_k: int = dspy.InputField(desc="Size of the final context.")
    evidence: list[str] = dspy.InputField(
        desc="Accumulated candidates, one line each: [id] [time] …"
    )
    coverage: list[FacetCoverage] = dspy.OutputField(desc="One entry per material facet.")
    sufficient: bool = dspy.OutputField(desc="Every material facet directly supported.")
    missing_facets: list[str] = dspy.OutputField(desc="Facets still lacking direct evidence.")
    selected_ids: list[str] = dspy.OutputField(desc="Ordered shortlist of direct evidence ids.")
    next_plan: RoundPlan | None = dspy.OutputField(desc="The next round's plan, or null.")


def judge_inputs(
    question: str,
    question_time: datetime,
    current_plan: RoundPlan,
    searched_queries: list[str],
    plan_history: list[RoundPlan],
    round_number: int,
    min_rounds: int,
    final_round: bool,
    top_k: int,
    evidence: list[EvidenceItem],
) -> dict[str, Any]:
    """The keyword arguments both judges take (evidence as items; the LLM judge renders lines)."""
    return {
        "question": question,
        "question_time": question_time.isoformat(timespec="seconds"),
        "calendar": calendar_reference(question_time),
        "current_plan": current_plan,
        "searched_queries": list(searched_queries),
        "plan_history": list(plan_history),
        "round": round_number,
        "min_rounds": min_rounds,
        "final_round": final_round,
        "top_k": top_k,
        "evidence": list(evidence),
    }


class EvidenceJudge(dspy.Module):
    """The LLM judge: one prediction of `JudgeEvidence`, outputs re-validated as typed models."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict(JudgeEvidence)

    def forward(self, evidence: list[EvidenceItem], **inputs: Any) -> dspy.Prediction:
        lines = [item.line() for item in evidence]
        result = self.judge(evidence=lines, **inputs)
        known = {item.node_id for item in evidence}
        coverage = [
            FacetCoverage.model_validate(c) if not isinstance(c, FacetCoverage) else c
            for c in (result.coverage or [])
        ]
        next_plan = result.next_plan
        if next_plan is not None and not isinstance(next_plan, RoundPlan):
            next_plan = RoundPlan.model_validate(next_plan)
        return dspy.Prediction(
            coverage=coverage,
            sufficient=bool(result.sufficient),
            missing_facets=[str(m) for m in (result.missing_facets or [])],
            # An id the judge invented cannot enter the context; unknown ids are dropped.
            selected_ids=[i for i in dict.fromkeys(result.selected_ids or []) if i in known],
            next_plan=next_plan,
        )
