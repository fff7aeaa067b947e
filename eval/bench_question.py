"""One benchmark question measured: its retrieval's metrics and questions.jsonl record
(`measure`) and, with an LLM configured, the reader's answer and the judge's checklist score
(`AnswerScorer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from eval.judge import JudgeError, judge_role
from eval.metrics import (
    QuestionMeasure,
    checklist_coverage,
    context_text,
    count_tokens,
    evidence_recall,
    full_evidence,
)
from eval.systems import BenchSystem, RetrievalOutcome, full_context
from graphs.llm import LLMProviderError, RetryPolicy, reader_role
from memfuse.settings import MemFuseSettings
from memory.formats.models import BenchQuestion, BenchScenario


@dataclass
class AnswerScorer:
    """Reader + judge for one run; None of it exists when no LLM is configured."""

    settings: MemFuseSettings
    retry: RetryPolicy | None = None

    def __post_init__(self) -> None:
        from eval.judge import Judge
        from graphs.reader import Reader

        self.reader = Reader(reader_role(self.settings, self.retry))
        self.judge = Judge(judge_role(self.settings, self.retry))

    def score(
        self, system: BenchSystem, question: BenchQuestion, outcome: RetrievalOutcome
    ) -> dict[str, Any]:
        """Answer + judgement; an unscorable question is recorded with its error, never zeroed."""
        items = [c.item for c in question.checklist] if question.checklist else [question.answer]
        try:
            answer = self.reader.answer(
                outcome.context,
                question=question.question,
                questioner=question.user,
                question_time=question.time,
                full_context=full_context(system),
            )
            verdict = self.judge.score(question.question_id, question.question, answer, items)
        except (JudgeError, LLMProviderError) as exc:
            return {"checklist_score": None, "unscorable": True, "error": str(exc)}
        return {
            "answer": answer,
            "checklist_score": verdict.score,
            "judge_attempts": verdict.attempts,
            "judgements": [
                {"index": j.index, "point": j.point, "covered": j.covered, "reason": j.reason}
                for j in verdict.judgements
            ],
            "unscorable": False,
        }


def measure(
    system: BenchSystem,
    scenario: BenchScenario,
    question: BenchQuestion,
    outcome: RetrievalOutcome,
    judged: Mapping[str, Any] | None,
    distractors: AbstractSet[str] = frozenset(),
    question_encode_ms: float = 0.0,
) -> tuple[QuestionMeasure, dict[str, Any]]:
    """The question's metrics and its questions.jsonl record; `distractors` are the events
    the generator wrote to mislead this question; `question_encode_ms` what encoding its
    text took, where the system read its vector (`eval.bench_queries`)."""
    ids = outcome.event_ids
    retrieved = set(ids)
    lines = [e.text for e in sorted(outcome.context, key=lambda e: e.timestamp)]
    tokens = count_tokens(context_text(lines))
    m = QuestionMeasure(
        category=question.category,
        recall=evidence_recall(question.evidence_ids, ids),
        full_evidence=full_evidence(question.evidence_ids, ids),
        checklist_coverage=checklist_coverage(question.checklist, ids),
        context_tokens=tokens,
        search_ms=outcome.elapsed_ms,
        checklist_score=judged.get("checklist_score") if judged else None,
        unscorable=bool(judged and judged.get("unscorable")),
        distractors=len(distractors),
        distractors_retrieved=len(distractors & retrieved),
        question_encode_ms=question_encode_ms,
    )
    record: dict[str, Any] = {
        "system": system.name,
        "scenario_id": scenario.scenario_id,
        "question_id": question.question_id,
        "category": question.category,
        "recall": m.recall,
        "full_evidence": m.full_evidence,
        "checklist_coverage": m.checklist_coverage,
        "context_tokens": tokens,
        "search_ms": round(outcome.elapsed_ms, 3),
        "question_encode_ms": round(question_encode_ms, 3),
        "rounds": outcome.rounds,
        "retrieved_ids": ids if len(ids) <= 200 else [*ids[:200], f"... {len(ids) - 200} more"],
        "gold_ids": question.evidence_ids,
        "missing_gold": [g for g in question.evidence_ids if g not in retrieved],
    }
    if outcome.found_by:
        record["found_by"] = outcome.found_by
    if outcome.pooled:  # eval.missing_evidence: which missing gold was found, and by what round
        record["missing_pooled"] = {
            g: outcome.pooled[g] for g in record["missing_gold"] if g in outcome.pooled
        }
    if distractors:
        record["distractors_retrieved"] = sorted(distractors & retrieved)
    if judged is not None:
        record.update(judged)
    return m, record
