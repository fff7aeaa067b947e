"""What the gold answer says: (a) facts its evidence does not hold, (f) no answer to the
question asked.

(a) reuses the synthesis pipeline's conservative support test
(`eval.synth.graph.checks_answers.unsupported_facts`: numbers by value, clock times with a few
minutes' tolerance, capitalised names), here applied to any file's questions. (f) reads the
question's shape from its first words, which is English rather than any generator's template:
a yes/no or comparison question needs an answer that affirms, denies or compares; "when" needs
a time; "how many / how much / how long" needs a number.
"""

from __future__ import annotations

import re

from eval.synth.graph.checks_answers import unsupported_facts
from eval.verify.findings import Finding, finding_for
from eval.verify.view import VerifyScenario
from eval.verify.words import has_number, has_phrase, has_time, words
from memory.formats.memfusebench import Question


def answer_unsupported(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(a) The answer's numbers, times and names that no cited event (nor the question) holds."""
    cited = [scenario.events[i] for i in question.evidence_event_ids if i in scenario.events]
    if not cited:
        return []  # nothing cited resolves: no support to test against
    missing = unsupported_facts(question, cited, scenario.names())
    if not missing:
        return []
    reason = f"the answer states {', '.join(map(repr, missing))}, which no cited event holds"
    return [finding_for(scenario.scenario_id, question.question_id, "answer_unsupported", reason)]


def unanswered(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(f) The answer does not answer the question's shape."""
    text = question.question.strip()
    answer = question.answer
    shape = question_shape(text)
    reason = None
    if shape == "yes_no" and not _affirms_denies_or_compares(answer):
        reason = "a yes/no or comparison question whose answer neither says yes/no nor compares"
    elif shape == "when" and not has_time(answer):
        reason = "a 'when' question whose answer names no time"
    elif shape == "how_many" and not has_number(answer):
        reason = "a 'how many / how much / how long' question whose answer has no number"
    if reason is None:
        return []
    return [finding_for(scenario.scenario_id, question.question_id, "unanswered", reason)]


def question_shape(text: str) -> str | None:
    """yes_no, when, how_many or None (a shape this verifier does not judge)."""
    clauses = [c.strip() for c in re.split(r"[—–:;,]|\?\s", text) if c.strip()]
    lowered = [c.lower() for c in clauses]
    if any(re.match(r"(how (many|much|long|often|far)\b)", c) for c in lowered):
        return "how_many"
    if any(re.match(r"(when|what time|at what time)\b", c) for c in lowered):
        return "when"
    for clause in lowered:  # "X said so — was it?" asks yes/no in its tag
        first = re.match(r"[a-z']+", clause)
        if first and first.group() in words("yes_no_openers") and " or " not in clause:
            return "yes_no"
    return None


def _affirms_denies_or_compares(answer: str) -> bool:
    if has_phrase(answer, words("yes_no_answers") + words("comparatives")):
        return True
    return re.search(r"\b\w+n't\b", answer.lower()) is not None
