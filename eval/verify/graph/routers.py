"""Where the verification graph goes next: the correction loop's bound is enforced here."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from eval.verify.graph.context import VerificationContext, context_of
from eval.verify.graph.state import State


def after_verify(
    state: State, runtime: Runtime[VerificationContext]
) -> Literal["correct", "report"]:
    """Findings and rounds left: correct them; else report (what is still flagged is dropped)."""
    if state.findings and state.round <= context_of(runtime).max_rounds:
        return "correct"
    return "report"
