"""The deterministic review of a draft, run before any LLM reviewer.

Two parts: the benchmark format's own checks (`eval.synth.graph.checks`, one per stage, each
returning `list[Issue]`), and the rules only the graph can check, because they compare a draft
with the artifacts accepted before it:

- filtering keeps questions, never rewrites them: every kept question is a question of the
  accepted pool (its id aside), and no more are kept than the brief allows;
- adversarial injection preserves the answers: the persona and every event of the accepted
  stream are unchanged (only ids are renumbered), every question keeps its text, answer,
  checklist and asking context, its evidence and checklist events are the same observations
  as before, and no distractor is cited as evidence; the sample carries the request's id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from eval.synth.artifacts import Artifacts, Issue, QuestionPool, Stage, Stream, Timeline
from eval.synth.graph.signatures import SPECS
from eval.synth.graph.state import SynthesisRequest
from memory.formats.memfusebench import BenchEvent, Persona, Question, Scenario

Observation = tuple[str, str, str, str]
SHOWN = 5  # ids named in one issue at most


def parse_draft(stage: Stage, draft: dict[str, Any] | BaseModel) -> BaseModel | Issue:
    """The draft as its stage's model, or the issue saying why it is not one."""
    model = SPECS[stage].model
    if isinstance(draft, model):
        return draft
    try:
        data = draft.model_dump(mode="json") if isinstance(draft, BaseModel) else draft
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or model.__name__
        return Issue(
            stage=stage,
            code="invalid_artifact",
            message=f"not a valid {model.__name__}: {where}: {problem['msg']} "
            f"({exc.error_count()} error(s))",
        )


def code_review(
    stage: Stage, artifacts: Artifacts, draft: BaseModel, request: SynthesisRequest
) -> list[Issue]:
    """Every issue the deterministic checks find in `draft` (empty: nothing found)."""
    persona = artifacts.persona
    if stage == "persona":
        return format_checks(stage, draft)
    assert persona is not None, f"stage {stage} reviewed before the persona was accepted"
    issues = format_checks(stage, draft, persona, artifacts)
    if stage == "filtering" and artifacts.questions is not None:
        pool = _as(QuestionPool, draft)
        issues += kept_not_rewritten(artifacts.questions, pool, request.questions)
    if stage == "adversarial" and artifacts.stream is not None and artifacts.filtered is not None:
        sample = _as(Scenario, draft)
        issues += answers_preserved(persona, artifacts.stream, artifacts.filtered, sample)
        if sample.scenario_id != request.scenario_id:
            issues.append(
                Issue(
                    stage=stage,
                    code="wrong_scenario_id",
                    message=f"the sample is {sample.scenario_id!r}, expected "
                    f"{request.scenario_id!r}",
                    ids=[sample.scenario_id],
                )
            )
    return issues


def format_checks(
    stage: Stage,
    draft: BaseModel,
    persona: Persona | None = None,
    artifacts: Artifacts | None = None,
) -> list[Issue]:
    """The stage's check of `eval.synth.graph.checks` (imported here, on first review)."""
    from eval.synth.graph import checks

    if stage == "persona":
        return checks.check_persona(_as(Persona, draft))
    assert persona is not None and artifacts is not None
    if stage == "scenario":
        return checks.check_timeline(persona, _as(Timeline, draft))
    if stage == "stream":
        return checks.check_stream(persona, _as(Stream, draft), artifacts.timeline)
    if stage == "adversarial":
        return checks.check_sample(_as(Scenario, draft))
    stream = artifacts.stream
    assert stream is not None
    if stage == "questions":
        return checks.check_questions(persona, stream, _as(QuestionPool, draft))
    return checks.check_filtered(persona, stream, _as(QuestionPool, draft))


def _as(model: type[Any], value: BaseModel) -> Any:
    if not isinstance(value, model):  # pragma: no cover - parse_draft made it one
        raise TypeError(f"expected a {model.__name__}, got {type(value).__name__}")
    return value


def _names(ids: Iterable[str]) -> str:
    ids = list(ids)
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def _without_id(question: Question) -> str:
    record = question.model_dump(mode="json", exclude={"question_id"})
    return json.dumps(record, sort_keys=True)


def kept_not_rewritten(pool: QuestionPool, filtered: QuestionPool, budget: int) -> list[Issue]:
    """Filtering selects from the pool: no kept question differs from every pooled one."""
    pooled = {_without_id(q) for q in pool.questions}
    rewritten = [q.question_id for q in filtered.questions if _without_id(q) not in pooled]
    issues = []
    if rewritten:
        issues.append(
            Issue(
                stage="filtering",
                code="question_rewritten",
                message=f"kept questions that are not in the pool as written: {_names(rewritten)}",
                ids=rewritten,
            )
        )
    if len(filtered.questions) > budget:
        issues.append(
            Issue(
                stage="filtering",
                code="too_many_questions",
                message=f"{len(filtered.questions)} questions kept, at most {budget} allowed",
            )
        )
    return issues


def _observation(event: BenchEvent) -> Observation:
    return (event.timestamp.isoformat(), event.device, str(event.modality), event.description)


def _context(question: Question) -> str:
    record = question.model_dump(mode="json", exclude={"evidence_event_ids", "checklist"})
    record["checklist"] = [item.item for item in question.checklist]
    return json.dumps(record, sort_keys=True)


def answers_preserved(
    persona: Persona, stream: Stream, filtered: QuestionPool, sample: Scenario
) -> list[Issue]:
    """Distractors may only add events: see the module docstring for what must not change."""

    def issue(code: str, message: str, ids: list[str]) -> Issue:
        return Issue(stage="adversarial", code=code, message=message, ids=ids)

    issues: list[Issue] = []
    if sample.persona.model_dump(mode="json") != persona.model_dump(mode="json"):
        issues.append(issue("persona_changed", "the persona differs from the accepted one", []))
    before = {e.event_id: e for episode in stream.episodes for e in episode.events}
    after = sample.event_index()
    kept = Counter(_observation(e) for e in after.values() if not e.is_adversarial)
    lost = Counter(_observation(e) for e in before.values()) - kept
    if lost:
        lost_ids = [i for i, e in before.items() if _observation(e) in lost]
        issues.append(
            issue("stream_changed", f"stream events lost or altered: {_names(lost_ids)}", lost_ids)
        )
    asked = {q.question_id: q for q in sample.questions}
    if set(asked) != {q.question_id for q in filtered.questions}:
        changed = sorted(set(asked) ^ {q.question_id for q in filtered.questions})
        issues.append(
            issue("questions_changed", f"questions added or dropped: {_names(changed)}", changed)
        )

    def seen(events: dict[str, BenchEvent], ids: list[str]) -> list[Observation] | None:
        found = [events[i] for i in ids if i in events]
        return sorted(map(_observation, found)) if len(found) == len(ids) else None

    for gold in filtered.questions:
        now = asked.get(gold.question_id)
        if now is None:
            continue
        qid = [gold.question_id]
        if _context(now) != _context(gold):
            issues.append(issue("answer_changed", f"{qid[0]}: question or answer changed", qid))
        if seen(after, now.evidence_event_ids) != seen(before, gold.evidence_event_ids):
            issues.append(issue("evidence_changed", f"{qid[0]}: gold evidence changed", qid))
        items = [seen(after, item.evidence_event_ids) for item in now.checklist]
        if items != [seen(before, item.evidence_event_ids) for item in gold.checklist]:
            issues.append(issue("checklist_changed", f"{qid[0]}: checklist evidence changed", qid))
        cited = [i for i in now.evidence_event_ids if i in after and after[i].is_adversarial]
        if cited:
            issues.append(
                issue(
                    "distractor_as_evidence",
                    f"{qid[0]} cites distractors as evidence: {_names(cited)}",
                    [*qid, *cited],
                )
            )
    return issues
