"""`answer_question()`: one question through the compiled answer graph, on an open store
(the public API and the CLI call this); the graph's JSON output comes back typed."""

from __future__ import annotations

from typing import Any

from graphs.answer.context import AnswerContext
from graphs.answer.graph import graph
from graphs.answer.state import AnswerOutput
from graphs.resources import Reader


def answer_question(
    store: Any,
    question: str,
    *,
    question_time: Any,
    requester: str | None = None,
    admin: bool = False,
    k: int = 20,
    settings: Any = None,
    reader: Reader | None = None,
) -> dict[str, Any]:
    """Retrieve, then read: the answer (or why there is none), the evidence and the trace;
    as `requester` (only what they may see) or as an administrative read (`admin`)."""
    output = AnswerOutput.model_validate(
        graph.invoke(  # type: ignore[call-overload]  # input given as the JSON dict a server run gets
            {
                "question": question,
                "question_time": question_time,
                "requester": requester,
                "admin": admin,
                "k": k,
            },
            context=AnswerContext(store=store, k=k, settings=settings, reader=reader),
        )
    )
    return {
        "question": question,
        "answer": output.answer,
        "note": output.note or None,
        "reader_error": output.reader_error,
        "context": output.context,
        "rounds": output.round,
        "decisions": [d.model_dump() for d in output.decisions],
        "notes": output.notes,
        "stop_reason": output.stop_reason,
    }
