"""The offline verifiers, in the issue's order (a–g), and one call that runs them all.

Each verifier is a function `(scenario, question) -> list[Finding]`; the record-conflict one also
takes the scenario's contradicted readings, computed once per scenario.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from eval.verify.answers import answer_unsupported, unanswered
from eval.verify.evidence import time_anchor_mismatch, unused_evidence
from eval.verify.findings import Finding
from eval.verify.household import household_inconsistent, role_error
from eval.verify.records import conflicts, record_conflict
from eval.verify.view import VerifyScenario
from memory.formats.memfusebench import Question

Verifier = Callable[[VerifyScenario, Question], list[Finding]]

VERIFIERS: dict[str, Verifier] = {
    "answer_unsupported": answer_unsupported,  # (a)
    "household_inconsistent": household_inconsistent,  # (b)
    "role_error": role_error,  # (c)
    "unused_evidence": unused_evidence,  # (e); (d) needs the scenario's readings, below
    "unanswered": unanswered,  # (f)
    "time_anchor_mismatch": time_anchor_mismatch,  # (g)
}


def verify_scenario(scenario: VerifyScenario, only: Iterable[str] | None = None) -> list[Finding]:
    """Every offline finding for the scenario's questions (`only`: these question ids)."""
    wanted = None if only is None else set(only)
    readings = conflicts(scenario)
    found: list[Finding] = []
    for question in scenario.questions:
        if wanted is not None and question.question_id not in wanted:
            continue
        for verifier in VERIFIERS.values():
            found += verifier(scenario, question)
        found += record_conflict(scenario, question, readings)
    return found
