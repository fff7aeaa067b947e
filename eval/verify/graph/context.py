"""Run-time knobs of the verification graph: how many correction rounds, which readers.

The shared fields (policy, LLM) are `graphs.context.RunContext`'s. Offline (no LLM configured,
or policy offline) the deterministic verifiers flag and the offline corrector repairs or drops;
with an LLM, each configured reader answers every question from the whole scenario and a judge
compares it with the gold, and the LLM corrector decides. The graph opens no memory store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from eval.verify.signatures import READER_PROMPTS
from graphs.context import RunContext, about, run_context
from graphs.resources import decision_lm, run_settings
from memory.errors import ConfigurationError

_NO_LM = object()


@dataclass(kw_only=True)
class VerificationContext(RunContext):
    """How one verification run reads, judges and corrects."""

    max_rounds: int = field(
        default=2,
        metadata=about(
            "Correction rounds: corrected questions are verified again this many times; a "
            "question still flagged after the last is dropped."
        ),
    )
    reader_prompts: list[str] = field(
        default_factory=lambda: list(READER_PROMPTS),
        metadata=about(
            "Reader prompts (direct, careful): each answers every question from the whole "
            "scenario; any that disagrees with the gold flags the question. LLM only."
        ),
    )
    reader_models: list[str] = field(
        default_factory=list,
        metadata=about(
            "Further chat models to read with (each with every prompt); empty: the decision LM "
            "only. They share the decision LM's endpoint."
        ),
    )

    def check(self) -> None:
        super().check()
        if self.max_rounds < 1:
            raise ConfigurationError(f"max_rounds must be >= 1, got {self.max_rounds}")
        unknown = [p for p in self.reader_prompts if p not in READER_PROMPTS]
        if unknown:
            raise ConfigurationError(
                f"reader_prompts: expected some of {', '.join(READER_PROMPTS)}, got {unknown}"
            )


def context_of(runtime: Runtime[VerificationContext] | None) -> VerificationContext:
    return run_context(runtime, VerificationContext)


def verification_lm(context: VerificationContext) -> Any | None:
    """The decision LM (None: offline), resolved once per context."""
    cached = context.__dict__.get("_verification_lm", _NO_LM)
    if cached is _NO_LM:
        cached = decision_lm(context, run_settings(context))
        context.__dict__["_verification_lm"] = cached
    return cached


def reader_lms(context: VerificationContext) -> list[tuple[str, Any]]:
    """(label, LM) of every reader model: the decision LM, then each of `reader_models`."""
    lm = verification_lm(context)
    if lm is None:
        return []
    found = [("default", lm)]
    if context.reader_models:
        from signatures.lm import lm_from_settings

        settings = run_settings(context)
        for model in context.reader_models:
            found.append(
                (model, lm_from_settings(settings.model_copy(update={"llm_model": model})))
            )
    return found
