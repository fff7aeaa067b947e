"""The synthesis graph's offline corrector: the repairs a rule can make without an LLM.

A question pool (the questions and filtering stages) is repaired by dropping what its review
named: a question whose evidence, asking context, checklist or answer is at fault; the later of
two duplicates; the later copies of a reused id; the questions past the brief's budget. Nothing
is rewritten: a rule cannot tell what a flawed question should have asked, and dropping keeps
every remaining question exactly as the generator made it (the filtering review checks that).
What dropping cannot fix — a category left without questions, a flawed persona, timeline,
stream or sample — is not repaired: the graph regenerates the stage, then reports it.
"""

from __future__ import annotations

from pydantic import BaseModel

from eval.synth.artifacts import Issue, QuestionPool, Stage

POOL_STAGES: tuple[Stage, ...] = ("questions", "filtering")
UNREPAIRABLE = frozenset({"missing_category", "invalid_artifact", "no_draft"})


def repairable(stage: Stage, issues: list[Issue]) -> bool:
    """Can dropping questions address every issue? (Otherwise a repair would be wasted.)"""
    return (
        stage in POOL_STAGES
        and bool(issues)
        and not any(issue.code in UNREPAIRABLE for issue in issues)
    )


def repair(stage: Stage, draft: BaseModel, issues: list[Issue], budget: int) -> BaseModel | None:
    """The draft without what its issues named, or None when nothing could be dropped."""
    if not repairable(stage, issues) or not isinstance(draft, QuestionPool):
        return None
    questions = draft.questions
    ids = {q.question_id for q in questions}
    dropped: set[str] = set()
    reused: set[str] = set()
    trim = False
    for issue in issues:
        if issue.code == "duplicate_question":  # ids: the first asked, then its repeat
            first, *later = issue.ids
            dropped.update(i for i in later if i in ids and i != first)
            reused.update(i for i in later if i == first)
        elif issue.code == "duplicate_question_id":
            reused.update(issue.ids)
        elif issue.code == "too_many_questions":
            trim = True
        else:  # a question's own flaw: its id comes first, the events it names after it
            dropped.update(i for i in issue.ids[:1] if i in ids)
    seen: set[str] = set()
    kept = []
    for question in questions:
        qid = question.question_id
        if qid in dropped or (qid in reused and qid in seen):
            continue
        seen.add(qid)
        kept.append(question)
    if trim:
        kept = kept[:budget]
    if len(kept) == len(questions):
        return None
    return QuestionPool(questions=kept)
