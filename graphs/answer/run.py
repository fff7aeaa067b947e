"""`answer_question()`: one question through the compiled answer graph, on an open store
(the public API and the CLI call this); the graph's JSON output comes back typed, as it is."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphs.answer.context import AnswerContext
from graphs.answer.graph import graph
from graphs.answer.state import AnswerOutput
from graphs.resources import Reader
from memory.read_request import ReadRequest, read_request


def answer_question(
    store: Any,
    question: str | ReadRequest,
    *,
    question_time: datetime | str | None = None,
    requester: str | None = None,
    admin: bool = False,
    k: int = 20,
    settings: Any = None,
    reader: Reader | None = None,
) -> AnswerOutput:
    """Retrieve, then read: the answer (or why there is none), the evidence and the trace;
    as `requester` (only what they may see) or as an administrative read (`admin`). A
    `ReadRequest` its caller already checked is run as given (see `graphs.retrieval.run`)."""
    request = (
        question
        if isinstance(question, ReadRequest)
        else read_request(
            question, question_time=question_time, requester=requester, admin=admin, k=k
        )
    )
    context = AnswerContext(store=store, k=request.k, settings=settings, reader=reader)
    return AnswerOutput.model_validate(
        graph.invoke(  # type: ignore[call-overload]  # input given as the JSON dict a server run gets
            request.model_dump(), context=context.injecting(request=request)
        )
    )
