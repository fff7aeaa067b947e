"""The answer graph: the retrieval controller (as a subgraph) followed by a reader.

The reader is the paper's fixed prompt on an OpenAI-compatible chat model
(`graphs.reader.read_answer`). With no LLM configured the graph still runs and returns
the retrieved evidence with a note instead of an answer, so it is usable offline. A reader
that fails (its endpoint down past the retry budget) or replies with nothing usable gets the
same treatment: no answer, the evidence, and a one-line `reader_error` saying why, so a
guess is never passed off as an answer and the retrieval work is never thrown away.
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
from graphs.retrieval.state import Decision, InputState, Judgement, State
from memory.records import ContextEntry
from memory.search.plan import RoundPlan
from signatures.lm import DECIDED_BY_LLM, DECIDED_OFFLINE, describe_failure, offline_fallback
from signatures.retry import one_line

NO_LLM_NOTE = "no LLM configured: showing retrieved evidence only"
READER_STEP = "reader"
# The reader prompt's context-block markers (graphs/prompts/reader_user.md): a reply holding
# them is repeating the prompt, not answering.
PROMPT_MARKERS = ("<<<EVENTS", "EVENTS>>>")

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
    reader_error: str | None = None
    """Why the configured reader gave no usable answer (None when it did, or when offline)."""


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
    decisions: list[Decision] = field(default_factory=list)
    """Who made each decision: planner, judges, then the reader."""
    reader_error: str | None = None
    """Why the configured reader gave no usable answer (None when it did, or when offline)."""
    stop_reason: str = ""
    """Why retrieval stopped."""


def answer_problem(answer: object) -> str | None:
    """Why a reader reply is not an answer (None when it is one): nothing, no words, or the
    prompt echoed back. Deliberately narrow: only replies no reader should ever give."""
    if not isinstance(answer, str):
        return f"the reader returned {type(answer).__name__}, not text"
    text = answer.strip()
    if not text:
        return "the reader returned an empty answer"
    if not any(ch.isalnum() for ch in text):
        return f"the reader's reply has no words: {one_line(text, 40)!r}"
    if any(marker in text for marker in PROMPT_MARKERS):
        return "the reader's reply echoes the prompt's context block"
    return None


def _no_answer(reason: str) -> dict[str, Any]:
    """The evidence-only outcome of a configured reader that gave nothing usable."""
    why = reason.removeprefix(f"{READER_STEP}: ")
    return {
        "answer": None,
        "note": f"reader failed: {why}; showing retrieved evidence only",
        "reader_error": why,
        "decisions": [Decision(step=READER_STEP, decided_by=offline_fallback(
            f"reader failed: {why}"))],
    }


def read(state: AnswerState, runtime: Runtime[AnswerContext]) -> dict[str, Any]:
    """Answer from the retrieved context with the injected reader, or the configured LLM; a
    failed or empty reply leaves the evidence with a reason, never a traceback or a guess."""
    context = context_of(runtime)
    settings = settings_of(context)
    reader: Reader | None = getattr(context, "reader", None)
    if reader is None:
        if not getattr(settings, "llm_model", None):
            return {"answer": None, "note": NO_LLM_NOTE,
                    "decisions": [Decision(step=READER_STEP, decided_by=DECIDED_OFFLINE)]}
        from graphs.reader import read_answer  # the reader needs langchain-openai: load lazily

        reader = read_answer
    try:
        answer = reader(
            [entry.text for entry in state.context],
            question=state.question,
            questioner=state.requester,
            question_time=question_time_of(state),
            settings=settings,
            full_context=False,
        )
    except Exception as exc:  # noqa: BLE001 — endpoint down, refused request, a broken reader
        return _no_answer(describe_failure(exc))
    problem = answer_problem(answer)
    if problem is not None:
        return _no_answer(problem)
    return {"answer": answer.strip(), "note": "", "reader_error": None,
            "decisions": [Decision(step=READER_STEP, decided_by=DECIDED_BY_LLM)]}


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
        "reader_error": output.get("reader_error"),
        "context": output.get("context", []),
        "rounds": output.get("round", 0),
        "decisions": [d.model_dump() for d in output.get("decisions", [])],
        "notes": output.get("notes", []),
        "stop_reason": output.get("stop_reason", ""),
    }
