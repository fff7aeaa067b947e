"""Run-time knobs of the answer graph: the retrieval controller's, plus a reader that only
Python callers (tests, the API) hand in; the configured LLM reads otherwise."""

from __future__ import annotations

from dataclasses import InitVar, dataclass, replace
from typing import Any

from graphs.context import Hidden
from graphs.retrieval.context import RetrievalContext


@dataclass(kw_only=True)
class AnswerContext(RetrievalContext):
    """Retrieval knobs; `reader` is a callable (context_lines, *, question, questioner,
    question_time, settings, full_context) -> str, never a form field."""

    reader: InitVar[Hidden] = None

    def __post_init__(self, store: Any, settings: Any, lm: Any, reader: Any) -> None:
        super().__post_init__(store, settings, lm)
        self._injected = replace(self._injected, reader=reader)
