"""The answer graph: the retrieval controller (as a subgraph) followed by a reader.

The reader is the paper's fixed prompt on an OpenAI-compatible chat model
(`graphs.reader.read_answer`). With no LLM configured the graph still runs and returns
the retrieved evidence with a note instead of an answer, so it is usable offline.
Tests inject a reader callable through the runtime context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.graph import graph as retrieval_graph
from graphs.retrieval.nodes import context_of, question_time_of, settings_of
from graphs.retrieval.state import InputState, Judgement, State
from memory.records import ContextEntry
from memory.search.plan import RoundPlan

NO_LLM_NOTE = "no LLM configured: showing retrieved evidence only"

Reader = Callable[..., str]


@dataclass(kw_only=True)
class AnswerContext(RetrievalContext):
    """Retrieval knobs plus the reader."""

    reader: Any = field(
        default=None,
        metadata={
            "description": "A reader callable (context_lines, *, question, questioner, "
            "question_time, settings, full_context) -> str; programmatic callers and tests only."
        },
    )


@dataclass
class AnswerState(State):
    """The controller's state plus the reader's answer."""

    answer: str | None = None
    """The reader's answer; None when no reader could run."""
    note: str = ""
    """Why there is no answer (e.g. no LLM configured)."""


@dataclass
class AnswerOutput:
    """What the answer graph returns."""

    answer: str | None = None
    """The reader's answer; None when no reader could run."""
    note: str = ""
    """Why there is no answer (e.g. no LLM configured)."""
    event_ids: list[str] = field(default_factory=list)
    """Event ids of the context, best first."""
    context: list[ContextEntry] = field(default_factory=list)
    """The reader's context, in time order."""
    round: int = 0
    """Retrieval rounds searched."""
    plans: list[RoundPlan] = field(default_factory=list)
    """Executed retrieval plans."""
    judgements: list[Judgement] = field(default_factory=list)
    """Evidence judgements, one per judged round."""
    notes: list[str] = field(default_factory=list)
    """What went differently than planned during retrieval."""
    stop_reason: str = ""
    """Why retrieval stopped."""


def read(state: AnswerState, runtime: Runtime[AnswerContext]) -> dict[str, Any]:
    """Answer from the retrieved context with the injected reader, or the configured LLM."""
    context = context_of(runtime)
    settings = settings_of(context)
    reader: Reader | None = getattr(context, "reader", None)
    if reader is None:
        if not getattr(settings, "llm_model", None):
            return {"answer": None, "note": NO_LLM_NOTE}
        from graphs.reader import read_answer  # the reader needs langchain-openai: load lazily

        reader = read_answer
    answer = reader(
        [entry.text for entry in state.context],
        question=state.question,
        questioner=state.requester,
        question_time=question_time_of(state),
        settings=settings,
        full_context=False,
    )
    return {"answer": answer, "note": ""}


builder = StateGraph(
    AnswerState, context_schema=AnswerContext, input_schema=InputState, output_schema=AnswerOutput
)
builder.add_node("retrieve", retrieval_graph)
builder.add_node("read", read)
builder.add_edge(START, "retrieve")
builder.add_edge("retrieve", "read")
builder.add_edge("read", END)

graph = builder.compile(name="answer")


def answer_question(
    store: Any,
    question: str,
    *,
    question_time: Any,
    requester: str | None = None,
    k: int = 20,
    settings: Any = None,
    reader: Reader | None = None,
) -> dict[str, Any]:
    """Run the compiled answer graph on an open store; the public API and CLI call this."""
    output = graph.invoke(
        {"question": question, "question_time": question_time, "requester": requester, "k": k},
        context=AnswerContext(store=store, k=k, settings=settings, reader=reader),
    )
    return {
        "question": question,
        "answer": output.get("answer"),
        "note": output.get("note") or None,
        "context": output.get("context", []),
        "rounds": output.get("round", 0),
    }
