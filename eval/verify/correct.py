"""The corrector: what to do with a flagged question. The offline twin repairs what a rule can
and drops the rest; the LLM corrector (`signatures.QuestionCorrector`) may revise text, and its
reply is accepted only when it keeps to the scenario (every cited id exists, nothing is empty),
else the offline twin decides ('offline fallback: <why>').

Repairable offline: evidence the answer does not use (`unused_evidence`) is dropped from the
gold evidence and the checklist, provided some evidence remains. Regenerating a question is out
of scope: anything else is dropped with its reasons.
"""

from __future__ import annotations

from typing import Any

from eval.verify.findings import Edit, Finding
from eval.verify.view import VerifyScenario, evidence_lines
from memory.formats.memfusebench import Question
from signatures.lm import describe_failure, offline_fallback

REPAIRABLE = frozenset({"unused_evidence"})
NEARBY = 40  # other events shown to the LLM corrector around the cited ones


def offline_edit(scenario: VerifyScenario, question: Question, findings: list[Finding]) -> Edit:
    """Drop unused evidence when that is all that is wrong; else drop the question."""
    kinds = sorted({f.kind for f in findings})
    base: dict[str, Any] = {
        "scenario_id": scenario.scenario_id,
        "question_id": question.question_id,
    }
    if set(kinds) <= REPAIRABLE:
        unused = {i for f in findings for i in f.event_ids}
        kept = [i for i in question.evidence_event_ids if i not in unused]
        if kept:
            return Edit(
                **base,
                outcome="revised",
                reason=f"dropped evidence the answer does not use: {', '.join(sorted(unused))}",
                evidence_event_ids=kept,
            )
    reasons = "; ".join(f"{f.kind}: {f.reason}" for f in findings)
    return Edit(**base, outcome="dropped", reason=f"no rule repairs it ({reasons})")


def llm_edit(
    corrector: Any, scenario: VerifyScenario, question: Question, findings: list[Finding]
) -> Edit:
    """The LLM corrector's decision, checked; the offline twin's when it cannot be used."""
    try:
        reply = corrector(
            question=question.question,
            answer=question.answer,
            evidence=evidence_lines(scenario, list(question.evidence_event_ids)),
            nearby=_nearby(scenario, question),
            findings=[f"{f.kind}: {f.reason}" for f in findings],
        )
        edit = _checked(scenario, question, reply)
    except Exception as exc:  # noqa: BLE001 - any unusable reply falls back, named
        fallback = offline_edit(scenario, question, findings)
        return fallback.model_copy(update={"by": offline_fallback(describe_failure(exc))})
    return edit


def _checked(scenario: VerifyScenario, question: Question, reply: Any) -> Edit:
    base: dict[str, Any] = {
        "scenario_id": scenario.scenario_id,
        "question_id": question.question_id,
        "by": "llm",
    }
    reason = str(reply.reason or "").strip() or "(no reason given)"
    if reply.action == "drop":
        return Edit(**base, outcome="dropped", reason=reason)
    if reply.action == "keep":
        return Edit(**base, outcome="kept", reason=reason)
    ids = [str(i) for i in reply.revised_evidence_ids or []]
    unknown = [i for i in ids if i not in scenario.events]
    text, answer = str(reply.revised_question).strip(), str(reply.revised_answer).strip()
    if unknown or not ids or not text or not answer:
        why = f"unknown ids {unknown}" if unknown else "an empty question, answer or evidence"
        raise ValueError(f"the revision cites {why}")
    return Edit(
        **base,
        outcome="revised",
        reason=reason,
        question=text if text != question.question else None,
        answer=answer if answer != question.answer else None,
        evidence_event_ids=ids,
    )


def _nearby(scenario: VerifyScenario, question: Question) -> list[str]:
    """Events around the cited ones (by time), which a revision may cite instead."""
    order = list(scenario.events)
    cited = {i for i in question.evidence_event_ids if i in scenario.events}
    positions = sorted(order.index(i) for i in cited)
    picked: list[str] = []
    for position in positions:
        for index in range(max(0, position - 3), min(len(order), position + 4)):
            if order[index] not in cited and order[index] not in picked:
                picked.append(order[index])
    return evidence_lines(scenario, picked[:NEARBY])
