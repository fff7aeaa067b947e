"""The answer graph's input, output and state: retrieval's, plus the reader's answer.

The input and output are the retrieval controller's (`RetrievalInput`, `RetrievalOutput`)
so the two graphs cannot drift apart; run semantics are `graphs.state`'s.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from graphs.retrieval.state import PastQuestion, RetrievalInput, RetrievalOutput
from graphs.state import Input, keep_recent

AnswerInput = RetrievalInput


class AnswerOutput(RetrievalOutput):
    """What the answer graph returns: the retrieval's output and the reader's answer."""

    answer: str | None = Field(
        default=None, description="The reader's answer; None when no reader could run."
    )
    note: str = Field(
        default="", description="Why there is no answer (no LLM configured, no memory store…)."
    )
    reader_error: str | None = Field(
        default=None,
        description="Why the configured reader gave no usable answer (None when it did, or "
        "when offline).",
    )


class AnswerState(AnswerOutput):
    """The output's fields (the retrieval subgraph writes its part whole, every run), the
    input (one step, passed on to the subgraph by `begin`) and the thread's history."""

    question: Input[str] = ""
    question_time: Input[datetime | str | None] = None
    requester: Input[str | None] = None
    admin: Input[bool] = False
    k: Input[int | None] = None
    history: Annotated[list[PastQuestion], keep_recent] = Field(
        default_factory=list, description="What the thread keeps: its questions and answers."
    )
