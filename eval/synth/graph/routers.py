"""Where the synthesis graph goes next: the review loop's bounds are enforced here."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from eval.synth.graph.context import SynthesisContext, context_of, synthesis_lm
from eval.synth.graph.repair import repairable
from eval.synth.graph.state import Progress


def after_review(
    state: Progress, runtime: Runtime[SynthesisContext]
) -> Literal["accept", "correct", "regenerate", "give_up"]:
    """Nothing found: accept. Issues: correct while there is a corrector for them (the LLM, or
    offline a rule that can repair them: `eval.synth.graph.repair`), a readable draft and
    corrections left; then regenerate while regenerations are left; then give up."""
    if not state.issues:
        return "accept"
    context = context_of(runtime)
    corrector = synthesis_lm(context) is not None or (
        state.stage is not None and repairable(state.stage, state.issues)
    )
    correctable = state.candidate is not None and corrector
    if correctable and state.corrections < context.max_corrections:
        return "correct"
    if state.regenerations < context.max_regenerations:
        return "regenerate"
    return "give_up"


def after_accept(state: Progress) -> Literal["generate", "finish"]:
    """The next stage, or the end when the last one was accepted."""
    return "generate" if state.stage is not None else "finish"
