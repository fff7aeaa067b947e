"""Stage 5: keep only answerable, evidence-supported, non-duplicate, non-shortcut questions.

The checks are mechanical stand-ins for the paper's reviewer: every checklist item must
have evidence and its key facts (anchors) must be written in that evidence; fusion and
perspective questions must really span three or more devices; a question must not
already contain its answer (content-word overlap) or a checklist fact; and questions that
repeat another's text or evidence set are dropped. The answer's numbers, clock times and
names must be found in its evidence (`eval.synth.graph.checks_answers`, the same test
`memfuse check-dataset` applies to any file). Survivors are balanced across the six
categories and given their final scenario-qualified ids.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

from eval.categories import CATEGORIES
from eval.synth.assemble import to_event, to_question
from eval.synth.graph.checks_answers import unsupported_facts
from eval.synth.tables import load_table
from eval.synth.world import Obs, Question
from memory.text import stem

TABLE = load_table("filtering")

# The shortcut check's own stopwords, broader than memory.text's (numbers, days, parts of the
# day) and without its pronoun forms: which questions survive depends on this exact list.
STOPWORDS = frozenset(TABLE["STOPWORDS"])
WORD = re.compile(r"[a-z0-9][a-z0-9'.,:-]*[a-z0-9]|[a-z0-9]")

MIN_DEVICES = {"fusion": 3, "perspective": 3}
# Checklist items per question: two to five, as in the paper's release, except that a listing
# of a person's week (one item per day or session, as its answer lists them) may run to eight.
MAX_CHECKLIST = {"user_aggregation": 8, "user_query": 8}
MIN_EVIDENCE = {
    "causal": 3,
    "conflict": 3,
    "user_aggregation": 3,
    "fusion": 3,
    "perspective": 3,
    "user_query": 2,
}
SHORTCUT_RATIO = 0.6
DUPLICATE_JACCARD = 0.8


def content_words(text: str) -> set[str]:
    words = {w.strip(".,:'-") for w in WORD.findall(text.lower())}
    return {stem(w) for w in words if len(w) > 2 and w not in STOPWORDS}


@dataclass
class FilterReport:
    kept: list[Question] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (origin, reason)

    def reasons(self) -> Counter[str]:
        return Counter(reason.split(":")[0] for _, reason in self.rejected)


def rejection(q: Question, obs: dict[str, Obs], names: set[str]) -> str | None:
    """Why `q` must go, or None if it is fit to keep."""
    if not q.evidence:
        return "no evidence"
    if not 2 <= len(q.checklist) <= MAX_CHECKLIST.get(q.category, 5):
        return f"checklist size: {len(q.checklist)} items"
    for (item, keys), anchors in zip(q.checklist, q.anchors):
        if not keys:
            return f"unsupported checklist item: {item}"
        text = " ".join(obs[k].description.lower() for k in keys)
        missing = [a for a in anchors if a and a.lower() not in text]
        if missing:
            return f"answer fact not in evidence: {missing}"
        facts = [a for a in anchors if any(ch.isdigit() for ch in a) or " " in a.strip()]
        leaked = [a for a in facts if a.lower() in q.question.lower()]
        if leaked:
            return f"question leaks a checklist fact: {leaked}"
    if len(q.evidence) < MIN_EVIDENCE.get(q.category, 1):
        return f"too little evidence: {len(q.evidence)} events for {q.category}"
    devices = {obs[k].device for k in q.evidence}
    if len(devices) < MIN_DEVICES.get(q.category, 1):
        return f"too few sources: {len(devices)} devices for {q.category}"
    unsupported = unsupported_facts(
        to_question(q), [to_event(obs[k], obs[k].episode_id or "") for k in q.evidence], names
    )
    if unsupported:
        return f"answer states what its evidence does not: {unsupported}"
    answer = content_words(q.answer) - {n.lower() for n in names}
    question = content_words(q.question)
    if answer and len(answer & question) / len(answer) >= SHORTCUT_RATIO:
        return "shortcut: answer words already in the question"
    return None


def filter_questions(
    questions: list[Question],
    obs: dict[str, Obs],
    names: set[str],
    rng: random.Random,
    scenario_id: str,
    target: int = 60,
) -> FilterReport:
    report = FilterReport()
    fit: list[Question] = []
    seen_text: set[str] = set()
    for q in questions:
        reason = rejection(q, obs, names)
        norm = " ".join(sorted(content_words(q.plain or q.question)))
        if reason is None and norm in seen_text:
            reason = "duplicate: same question"
        if reason is None:
            ev = set(q.evidence)
            for other in fit:
                if other.category == q.category:
                    jac = len(ev & set(other.evidence)) / len(ev | set(other.evidence))
                    if jac >= DUPLICATE_JACCARD:
                        reason = f"duplicate: evidence overlaps {other.qid}"
                        break
        if reason:
            report.rejected.append((q.origin, reason))
            continue
        seen_text.add(norm)
        fit.append(q)
    report.kept = _balance(fit, rng, target)
    for q in fit:
        if q not in report.kept:
            report.rejected.append((q.origin, "quota: category already full"))
    order = {c: i for i, c in enumerate(CATEGORIES)}
    report.kept.sort(key=lambda q: (order[q.category], q.time, q.qid))
    for n, q in enumerate(report.kept, start=1):
        q.qid = f"{scenario_id}_Q{n:03d}"
    return report


def _balance(fit: list[Question], rng: random.Random, target: int) -> list[Question]:
    """Up to target/6 per category first, then fill the remaining places from the leftovers."""
    per = -(-target // len(CATEGORIES))
    pools = {c: [q for q in fit if q.category == c] for c in CATEGORIES}
    for pool in pools.values():
        rng.shuffle(pool)
    chosen = [q for c in CATEGORIES for q in pools[c][:per]]
    rest = [q for c in CATEGORIES for q in pools[c][per:]]
    rng.shuffle(rest)
    chosen += rest[: max(0, target - len(chosen))]
    return chosen[:target]
