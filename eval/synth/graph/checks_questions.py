"""The deterministic reviewers of the question pool (stages 4 and 5 of Scene-to-Sensor).

A question is only worth asking if everything it leans on is real: its evidence resolves to
non-distractor events of the stream, it is asked after that evidence by a household member
on a household device, and its answer states no fact (a number, a proper name) that none of
its evidence mentions. The filtered pool must also be free of duplicates and span every
category. These are the checks a program can make, so they run before any LLM reviewer and
the dataset checker shares them. `eval.synth.graph.checks` re-exports the public functions.
"""

from __future__ import annotations

import re

from eval.categories import CATEGORIES
from eval.synth.artifacts import Issue, QuestionPool, Stage, Stream
from eval.synth.graph.checks_answers import unsupported_facts
from memory.formats.memfusebench import BenchEvent, Persona, Question
from memory.text import tokenize

NEAR_DUPLICATE_JACCARD = 0.9

_PUNCT = re.compile(r"[^a-z0-9]+")


def issue(stage: Stage, code: str, ids: list[str], message: str) -> Issue:
    """An issue found by code (not by the LLM reviewer)."""
    return Issue(stage=stage, code=code, message=message, ids=ids, by="code")


def event_index(stream: Stream) -> dict[str, BenchEvent]:
    """Every event of the stream by id (the first of a duplicated id wins)."""
    index: dict[str, BenchEvent] = {}
    for episode in stream.episodes:
        for event in episode.events:
            index.setdefault(event.event_id, event)
    return index


def cited_ids(question: Question) -> list[str]:
    """The question's gold evidence, then its checklist evidence, each id once."""
    ids = list(question.evidence_event_ids)
    ids += [i for item in question.checklist for i in item.evidence_event_ids]
    return list(dict.fromkeys(ids))


def check_questions(persona: Persona, stream: Stream, pool: QuestionPool) -> list[Issue]:
    """Stage 4: each question must rest on real, non-distractor evidence it is asked after."""
    return _pool_issues(persona, stream, pool, "questions")


def check_filtered(persona: Persona, stream: Stream, pool: QuestionPool) -> list[Issue]:
    """Stage 5: everything of stage 4, plus no duplicates and every category present."""
    issues = _pool_issues(persona, stream, pool, "filtering")
    return issues + _duplicates(pool) + _missing_categories(pool)


def _pool_issues(persona: Persona, stream: Stream, pool: QuestionPool, stage: Stage) -> list[Issue]:
    events = event_index(stream)
    names = {c.name for c in persona.characters}
    devices = {d.device_id for d in persona.all_devices}
    issues: list[Issue] = []
    seen: set[str] = set()
    for question in pool.questions:
        qid = question.question_id
        if qid in seen:
            issues.append(
                issue(
                    stage,
                    "duplicate_question_id",
                    [qid],
                    f"question id {qid!r} is used more than once",
                )
            )
        seen.add(qid)
        if question.category not in CATEGORIES:
            issues.append(
                issue(
                    stage,
                    "unknown_category",
                    [qid],
                    f"question {qid!r} has category {question.category!r}, not one of "
                    f"the benchmark's ({', '.join(CATEGORIES)})",
                )
            )
        issues += _evidence(question, events, stage)
        issues += _asking_context(question, events, names, devices, stage)
        issues += _checklist(question, stage)
        issues += check_answer_facts(question, events, names, stage)
    return issues


def _evidence(question: Question, events: dict[str, BenchEvent], stage: Stage) -> list[Issue]:
    qid, cited = question.question_id, cited_ids(question)
    issues: list[Issue] = []
    missing = [i for i in cited if i not in events]
    if missing:
        issues.append(
            issue(
                stage,
                "unknown_evidence",
                [qid, *missing],
                f"question {qid!r} cites events that are not in the stream: {', '.join(missing)}",
            )
        )
    distractors = [i for i in cited if i in events and events[i].is_adversarial]
    if distractors:
        issues.append(
            issue(
                stage,
                "adversarial_evidence",
                [qid, *distractors],
                f"question {qid!r} cites adversarial distractors as evidence: "
                f"{', '.join(distractors)}",
            )
        )
    return issues


def _asking_context(
    question: Question,
    events: dict[str, BenchEvent],
    names: set[str],
    devices: set[str],
    stage: Stage,
) -> list[Issue]:
    qid, issues = question.question_id, []
    times = [events[i].timestamp for i in cited_ids(question) if i in events]
    if question.question_time is not None and times and question.question_time < max(times):
        late = [
            i
            for i in cited_ids(question)
            if i in events and events[i].timestamp > question.question_time
        ]
        issues.append(
            issue(
                stage,
                "question_before_evidence",
                [qid, *late],
                f"question {qid!r} is asked at "
                f"{question.question_time.isoformat()}, before its evidence "
                f"{', '.join(late)}",
            )
        )
    if question.question_user and question.question_user not in names:
        issues.append(
            issue(
                stage,
                "unknown_question_user",
                [qid],
                f"question {qid!r} is asked by {question.question_user!r}, "
                "who is not a character of the persona",
            )
        )
    if question.question_device and question.question_device not in devices:
        issues.append(
            issue(
                stage,
                "unknown_question_device",
                [qid],
                f"question {qid!r} is asked on {question.question_device!r}, "
                "which is not a device of the persona",
            )
        )
    return issues


def _checklist(question: Question, stage: Stage) -> list[Issue]:
    blank = [n for n, item in enumerate(question.checklist, start=1) if not item.item.strip()]
    if not blank:
        return []
    qid = question.question_id
    return [
        issue(
            stage,
            "empty_checklist_item",
            [qid],
            f"question {qid!r} has blank checklist items (number {', '.join(map(str, blank))})",
        )
    ]


# ------------------------------------------------------------------ answer support


def check_answer_facts(
    question: Question, events: dict[str, BenchEvent], names: set[str], stage: Stage
) -> list[Issue]:
    """Numbers, clock times and names in the answer must appear in its evidence or question
    (see `eval.synth.graph.checks_answers` for what counts as support)."""
    cited = [events[i] for i in cited_ids(question) if i in events]
    if not cited:
        return []  # unresolvable evidence is its own issue
    missing = unsupported_facts(question, cited, names)
    if not missing:
        return []
    qid = question.question_id
    return [
        issue(
            stage,
            "answer_fact_unsupported",
            [qid],
            f"the answer of question {qid!r} states {', '.join(map(repr, missing))}, "
            "which neither its evidence nor the question mentions",
        )
    ]


# ------------------------------------------------------------------ duplicates and coverage


def _normalised(text: str) -> str:
    return " ".join(_PUNCT.split(text.lower())).strip()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _duplicates(pool: QuestionPool) -> list[Issue]:
    """Equal normalised text asked alike, or the same evidence and category with near-equal
    wording. "Where did I go yesterday?" asked by two people, or on two days, is two
    questions: equal text alone is a duplicate only with the same evidence or asking context."""
    issues: list[Issue] = []
    seen: list[tuple[Question, str, set[str]]] = []
    for question in pool.questions:
        text, tokens = _normalised(question.question), set(tokenize(question.question))
        for other, other_text, other_tokens in seen:
            evidence = set(question.evidence_event_ids) == set(other.evidence_event_ids)
            asked = (question.question_user, question.question_time) == (
                other.question_user,
                other.question_time,
            )
            same = text == other_text and (evidence or asked)
            near = (
                question.category == other.category
                and evidence
                and _jaccard(tokens, other_tokens) >= NEAR_DUPLICATE_JACCARD
            )
            if same or near:
                pair = [other.question_id, question.question_id]
                how = "asks the same as" if same else "nearly repeats (same evidence and category)"
                issues.append(
                    issue(
                        "filtering",
                        "duplicate_question",
                        pair,
                        f"question {pair[1]!r} {how} question {pair[0]!r}",
                    )
                )
                break
        seen.append((question, text, tokens))
    return issues


def _missing_categories(pool: QuestionPool) -> list[Issue]:
    present = {q.category for q in pool.questions}
    missing = [c for c in CATEGORIES if c not in present]
    if not missing:
        return []
    return [
        issue(
            "filtering",
            "missing_category",
            missing,
            f"the pool has no question of category {', '.join(missing)}",
        )
    ]
